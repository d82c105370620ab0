"""The volume service's RPC API (``nova_lite.volume.rpcapi``) and its
manager (``nova_lite.volume_service.manager``) over a real transport (the
in-process one): messages go to the backend's queue, the driver's answer
comes back, a driver's failure comes back as an exception the callers
catch, and the handlers asked twice are no error. No database: the
operations that beat a row (a clone's, a migration's copy) are the
functional tests' (tests/functional/volume)."""

import fixtures
from oslo_utils import uuidutils
import oslo_messaging as messaging

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import rpc
from nova_lite.volume import api as volume_api
from nova_lite.volume import backends as backend_conf
from nova_lite.volume import placement
from nova_lite.volume import rpcapi
from nova_lite.volume_service import drivers
from nova_lite.volume_service import manager as volume_manager
from tests import base


class VolumeRPCTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf.set_override('transport_url', 'inproc:///volume-%s' %
                               uuidutils.generate_uuid())
        self.conf.set_override('rpc_response_timeout', 2)
        self.conf.set_override('long_rpc_timeout', 10)
        self.conf.set_override('enabled_backends', ['fake1', 'fake2'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        for backend in ('fake1', 'fake2'):
            self.conf.set_override('volume_driver', 'fake', group=backend)
        drivers.register_backend_opts(self.conf)
        self.addCleanup(rpc.cleanup, self.conf)
        self.ctxt = nl_context.get_admin_context()
        self.api = rpcapi.VolumeAPI(self.conf)
        self.volume = {'id': uuidutils.generate_uuid(), 'name_id': None,
                       'size': 1, 'host': 'fake1', 'provider_location': None,
                       'provider_auth': None, 'multiattach': False,
                       'encrypted': False}

    def serve(self, backends=('fake1', 'fake2')):
        """A volume service's RPC servers (no service row: no database)."""
        mgr = volume_manager.VolumeManager(self.conf, 'storage1')
        for backend in backends:
            server = rpc.get_server(
                self.conf, messaging.Target(topic=rpcapi.TOPIC,
                                            server=backend), [mgr])
            server.start()
            self.addCleanup(server.wait)
            self.addCleanup(server.stop)
        return mgr

    def test_versions_in_sync(self):
        self.assertEqual(rpcapi.RPC_API_VERSION,
                         volume_manager.VolumeManager.target.version)
        self.assertIn('* %s -' % rpcapi.RPC_API_VERSION, rpcapi.__doc__)

    def test_operations_reach_the_backends_driver(self):
        mgr = self.serve()
        updates = self.api.create_volume(self.ctxt, 'fake1',
                                         volume=self.volume)
        self.assertEqual({'provider_location': 'fake://fake1/%s' %
                          self.volume['id']}, updates)
        self.assertEqual(1, self.api.volume_size(self.ctxt, 'fake1',
                                                 volume=self.volume))
        # Asked twice (a message delivered again): no error, one size.
        for _ in range(2):
            self.api.extend_volume(self.ctxt, 'fake1', volume=self.volume,
                                   new_size=3)
        self.assertEqual(3, mgr.backends['fake1'].volume_size(self.volume))
        info = self.api.initialize_connection(
            self.ctxt, 'fake1', volume=self.volume,
            connector={'host': 'compute1', 'mode': 'rw'})
        self.assertEqual('rw', info['data']['access_mode'])
        self.assertIn('compute1',
                      mgr.backends['fake1'].connections(self.volume))
        for _ in range(2):
            self.assertIsNone(self.api.terminate_connection(
                self.ctxt, 'fake1', volume=self.volume,
                connector={'host': 'compute1'}))
        self.assertEqual({}, mgr.backends['fake1'].connections(self.volume))
        for _ in range(2):
            self.api.delete_volume(self.ctxt, 'fake1', volume=self.volume)
        self.assertIsNone(self.api.volume_size(self.ctxt, 'fake1',
                                               volume=self.volume))

    def test_a_backend_failure_comes_back_as_itself(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='nova_lite.volume_service.manager'))
        self.serve()
        self.conf.set_override('fail_extend', True, group='fake1')
        error = self.assertRaises(
            exception.VolumeBackendAPIException, self.api.extend_volume,
            self.ctxt, 'fake1', volume=self.volume, new_size=2)
        self.assertIn('fail_extend', str(error))
        # ... and the service's log says it, as cinder-volume's does.
        self.assertIn('extend_volume on backend fake1 failed', log.output)
        self.assertIn('fail_extend', log.output)

    def test_a_backend_the_service_does_not_enable_is_an_error(self):
        self.serve()
        # A migration's copy between backends of two services.
        self.conf.set_override('enabled_backends', ['fake1'],
                               group='volume')
        mgr = volume_manager.VolumeManager(self.conf, 'storage2')
        server = rpc.get_server(
            self.conf, messaging.Target(topic=rpcapi.TOPIC,
                                        server='lone'), [mgr])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        error = self.assertRaises(
            exception.VolumeBackendAPIException, self.api.create_volume,
            self.ctxt, 'lone', volume=self.volume)
        self.assertIn('lone', str(error))

    def test_a_copy_needs_both_backends_in_one_service(self):
        self.serve(backends=('fake1',))
        target = dict(self.volume, id=uuidutils.generate_uuid(),
                      host='elsewhere')
        error = self.assertRaises(
            exception.VolumeBackendAPIException, self.api.copy_volume_data,
            self.ctxt, 'fake1', source=self.volume, target=target)
        self.assertIn('does not enable backend elsewhere', str(error))

    def test_capabilities_of_the_backends_whose_service_answers(self):
        self.serve(backends=('fake1',))
        caps = placement.capabilities(self.conf)
        # fake2's service does not answer (none runs): not placeable.
        self.assertEqual(['fake1'], list(caps))
        self.assertEqual('fake1', caps['fake1']['volume_backend_name'])
        self.assertEqual('fake1', placement.choose_backend(
            self.conf, {}, False))
        self.assertIsNone(placement.choose_backend(
            self.conf, {}, False, exclude={'fake1'}))

    def test_capabilities_are_kept_capabilities_cache_time(self):
        self.conf.set_override('capabilities_cache_time', 3600,
                               group='volume')
        self.serve(backends=('fake1',))
        self.conf.set_override('multiattach', True, group='fake1')
        self.assertTrue(placement.capability(self.conf, 'fake1')[
            'multiattach'])
        self.conf.set_override('multiattach', False, group='fake1')
        self.assertTrue(placement.capability(self.conf, 'fake1')[
            'multiattach'])
        self.assertFalse(placement.capability(
            self.conf, 'fake1', refresh=True)['multiattach'])

    def test_block_storage_sends_bounded_and_mandatory(self):
        self.conf.set_override('rpc_send_retries', 3)
        client = volume_api.API(self.conf).backends.client.prepare()
        self.assertEqual(3, client.retry)
        self.assertTrue(client.transport_options.at_least_once)

    def test_the_api_processes_load_no_driver(self):
        # What the views and the placement read of a backend comes from
        # the configuration.
        self.conf.set_override('backend_host', 'shared', group='fake2')
        self.assertEqual('shared@fake2#fake2',
                         backend_conf.volume_host(self.conf, 'fake2'))
        self.assertEqual('compute1@fake1#fake1',
                         backend_conf.volume_host(self.conf, 'fake1'))
        self.assertEqual(['fake1', 'fake2'], placement.enabled(self.conf))
        self.assertNotIn(id(self.conf), drivers._BACKENDS)
