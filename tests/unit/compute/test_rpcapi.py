"""Each compute and conductor RPC client method: call or cast, the version
it pins, the host it goes to and its arguments."""

from unittest import mock

from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import rpcapi as conductor_rpcapi
from nova_lite import exception
from tests import base
from tests.unit.compute import fakes


class _RPCTestBase(base.TestCase):
    def setUp(self):
        super().setUp()
        # The long calls wait up to long_rpc_timeout for a peer that
        # heartbeats, and rpc_response_timeout for one that does not
        # (call_monitor_timeout): a value no default has.
        self.conf.set_override('rpc_response_timeout', 7)

    def _test(self, api, method, rpc_method, expected_prepare, args,
              expected_kwargs):
        with mock.patch.object(api.client, 'prepare') as prepare, \
                mock.patch.object(api.client, 'can_send_version',
                                  return_value=True):
            cctxt = prepare.return_value
            getattr(api, method)('ctxt', *args)
        prepare.assert_called_once_with(**expected_prepare)
        sent = getattr(cctxt, rpc_method)
        sent.assert_called_once_with('ctxt', method, **expected_kwargs)
        return sent


class ComputeRPCTest(_RPCTestBase):
    def setUp(self):
        super().setUp()
        self.api = compute_rpcapi.ComputeAPI(self.conf)
        self.instance = fakes.FakeInstance(host='h1')

    def test_casts_to_the_instance_host(self):
        for method in ('terminate_instance', 'stop_instance',
                       'start_instance', 'pause_instance',
                       'unpause_instance'):
            self._test(self.api, method, 'cast',
                       {'server': 'h1', 'version': '1.1'},
                       [self.instance], {'instance': self.instance})

    def test_shelve_and_deferred_delete_casts(self):
        for method in ('shelve_instance', 'shelve_offload_instance',
                       'unshelve_instance', 'soft_delete_instance',
                       'restore_instance'):
            self._test(self.api, method, 'cast',
                       {'server': 'h1', 'version': '1.3'},
                       [self.instance], {'instance': self.instance})
        self.conf.set_override('compute', '1.2', group='upgrade_levels')
        api = compute_rpcapi.ComputeAPI(self.conf)
        self.assertRaises(exception.ServiceTooOld, api.shelve_instance,
                          'ctxt', self.instance)

    def test_build(self):
        self._test(self.api, 'build_and_run_instance', 'cast',
                   {'server': 'h2', 'version': '1.1'},
                   [self.instance, 'h2'], {'instance': self.instance})

    def test_reserve_is_a_long_call(self):
        self._test(self.api, 'reserve_block_device_name', 'call',
                   {'server': 'h1', 'version': '1.1',
                    'timeout': self.conf.long_rpc_timeout,
                    'call_monitor_timeout': 7},
                   [self.instance, '/dev/vdb', 'vol'],
                   {'instance': self.instance, 'device': '/dev/vdb',
                    'volume_id': 'vol', 'tag': None, 'multiattach': False,
                    'delete_on_termination': False})

    def test_reserve_an_existing_mapping(self):
        self._test(self.api, 'reserve_block_device_name', 'call',
                   {'server': 'h1', 'version': '1.2',
                    'timeout': self.conf.long_rpc_timeout,
                    'call_monitor_timeout': 7},
                   [self.instance, None, 'vol', None, True, False, 'bdm'],
                   {'instance': self.instance, 'device': None,
                    'volume_id': 'vol', 'tag': None, 'multiattach': True,
                    'delete_on_termination': False, 'bdm': 'bdm'})
        self.conf.set_override('compute', '1.1', group='upgrade_levels')
        api = compute_rpcapi.ComputeAPI(self.conf)
        self.assertFalse(api.can_reserve_existing_bdm())
        self.assertTrue(self.api.can_reserve_existing_bdm())

    def test_volume_casts(self):
        self._test(self.api, 'attach_volume', 'cast',
                   {'server': 'h1', 'version': '1.1'},
                   [self.instance, 'bdm'],
                   {'instance': self.instance, 'bdm': 'bdm'})
        self._test(self.api, 'detach_volume', 'cast',
                   {'server': 'h1', 'version': '1.1'},
                   [self.instance, 'vol', 'att'],
                   {'instance': self.instance, 'volume_id': 'vol',
                    'attachment_id': 'att'})
        self._test(self.api, 'swap_volume', 'cast',
                   {'server': 'h1', 'version': '1.1'},
                   [self.instance, 'old', 'new', 'att'],
                   {'instance': self.instance, 'old_volume_id': 'old',
                    'new_volume_id': 'new', 'new_attachment_id': 'att'})

    def test_volume_casts_carry_their_task(self):
        # 1.4: detach and swap name the task they act for.
        ref = {'task': 'detaching', 'owner': 'nova-lite-api:a',
               'step': 'accepted', 'generation': 3}
        self._test(self.api, 'detach_volume', 'cast',
                   {'server': 'h1', 'version': '1.4'},
                   [self.instance, 'vol', 'att', ref],
                   {'instance': self.instance, 'volume_id': 'vol',
                    'attachment_id': 'att', 'task_ref': ref})
        self._test(self.api, 'swap_volume', 'cast',
                   {'server': 'h1', 'version': '1.4'},
                   [self.instance, 'old', 'new', 'att', ref],
                   {'instance': self.instance, 'old_volume_id': 'old',
                    'new_volume_id': 'new', 'new_attachment_id': 'att',
                    'task_ref': ref})

    def test_volume_casts_to_hosts_older_than_1_4(self):
        # Capped (a rolling upgrade): the 1.1 cast, without the task; the
        # old host decides from the mapping, as it always did.
        self.conf.set_override('compute', '1.3', group='upgrade_levels')
        api = compute_rpcapi.ComputeAPI(self.conf)
        self.assertFalse(api.client.can_send_version('1.4'))
        self.assertTrue(api.client.can_send_version('1.3'))
        ref = {'task': 'detaching', 'owner': 'nova-lite-api:a',
               'step': 'accepted', 'generation': 3}
        for method, args, kwargs in (
                ('detach_volume', ['vol', 'att'],
                 {'volume_id': 'vol', 'attachment_id': 'att'}),
                ('swap_volume', ['old', 'new', 'att'],
                 {'old_volume_id': 'old', 'new_volume_id': 'new',
                  'new_attachment_id': 'att'})):
            with mock.patch.object(api.client, 'prepare') as prepare, \
                    mock.patch.object(api.client, 'can_send_version',
                                      side_effect=lambda v: v != '1.4'):
                getattr(api, method)('ctxt', self.instance, *args,
                                     task_ref=ref)
            prepare.assert_called_once_with(server='h1', version='1.1')
            prepare.return_value.cast.assert_called_once_with(
                'ctxt', method, instance=self.instance, **kwargs)

    def test_version_cap(self):
        self.conf.set_override('compute', '1.0', group='upgrade_levels')
        api = compute_rpcapi.ComputeAPI(self.conf)
        self.assertRaises(exception.ServiceTooOld, api.stop_instance,
                          'ctxt', self.instance)


class ConductorRPCTest(_RPCTestBase):
    def setUp(self):
        super().setUp()
        self.api = conductor_rpcapi.ConductorAPI(self.conf)
        self.kwargs = {'instance': 'i', 'volume_id': 'v', 'device': None,
                       'tag': 't', 'delete_on_termination': True,
                       'multiattach': False}

    def test_attach_call(self):
        self._test(self.api, 'attach_volume', 'call',
                   {'version': '1.1', 'timeout': self.conf.long_rpc_timeout,
                    'call_monitor_timeout': 7},
                   ['i', 'v', None, 't', True, False], self.kwargs)

    def test_attach_call_with_mapping(self):
        self._test(self.api, 'attach_volume', 'call',
                   {'version': '1.2', 'timeout': self.conf.long_rpc_timeout,
                    'call_monitor_timeout': 7},
                   ['i', 'v', None, 't', True, False, 'bdm'],
                   dict(self.kwargs, bdm='bdm'))

    def test_attach_cast(self):
        with mock.patch.object(self.api.client, 'prepare') as prepare, \
                mock.patch.object(self.api.client, 'can_send_version',
                                  return_value=True):
            result = self.api.attach_volume('ctxt', 'i', 'v', None, 't',
                                            True, False, bdm='bdm',
                                            do_cast=True)
        self.assertIsNone(result)
        prepare.assert_called_once_with(version='1.2')
        prepare.return_value.cast.assert_called_once_with(
            'ctxt', 'attach_volume', bdm='bdm', **self.kwargs)

    def test_build(self):
        self._test(self.api, 'build_instances', 'cast', {'version': '1.1'},
                   [['i']], {'instances': ['i']})

    def test_unshelve(self):
        self._test(self.api, 'unshelve_instance', 'cast', {'version': '1.3'},
                   ['i', 'h2'], {'instance': 'i', 'host': 'h2'})
        self.conf.set_override('conductor', '1.2', group='upgrade_levels')
        api = conductor_rpcapi.ConductorAPI(self.conf)
        self.assertRaises(exception.ServiceTooOld, api.unshelve_instance,
                          'ctxt', 'i')

    def test_too_old_conductor(self):
        self.conf.set_override('conductor', '1.0', group='upgrade_levels')
        api = conductor_rpcapi.ConductorAPI(self.conf)
        exc = self.assertRaises(exception.ServiceTooOld, api.attach_volume,
                                'ctxt', 'i', 'v', None, None, False, False)
        self.assertEqual(503, exc.code)
        self.conf.set_override('conductor', '1.1', group='upgrade_levels')
        api = conductor_rpcapi.ConductorAPI(self.conf)
        self.assertRaises(exception.ServiceTooOld, api.check_version, '1.2')
        self.assertRaises(exception.ServiceTooOld, api.attach_volume,
                          'ctxt', 'i', 'v', None, None, False, False,
                          bdm='bdm')
