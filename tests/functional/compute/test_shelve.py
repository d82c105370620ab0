"""Shelve, offload, unshelve, deferred delete, and volume operations on
shelved servers (volume-ops-when-shelved, API-CONTRACT.md 3).

The first tests reproduce tempest's AttachVolumeShelveTestJSON scenarios;
then the state machine, the 2.20 gate, no compute RPC for an offloaded
server, swap, unshelve failures, unshelve targets and soft delete.
"""

from unittest import mock

import oslo_messaging as messaging

from nova_lite import context as nl_context
from nova_lite.db import models
from nova_lite import exception
from nova_lite import objects
from nova_lite.volume import rpcapi as volume_rpcapi
from nova_lite import volume_client as block_storage
from nova_lite.volume_client import local as local_client
from nova_lite.volume_service import drivers
from tests.fixtures import system
from tests.functional.compute import base
from tests.functional.compute import test_servers
from tests.functional.compute import test_volume_attachments as tva


class ShelveTestCase(base.TestCase):
    COMPUTE_HOSTS = ['compute1', 'compute2']
    CONF = {'long_rpc_timeout': 20}

    def setUp(self):
        super().setUp()
        self.server_id = self.create_server()

    def at(self, version, api=None):
        return (api or self.api).as_(compute_version=version)

    def action(self, name, body=None, api=None, expect=202,
               server_id=None):
        resp = (api or self.api).post(
            '/v2.1/servers/%s/action' % (server_id or self.server_id),
            body={name: body})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def url(self, volume_id=None, server_id=None):
        url = '/v2.1/servers/%s/os-volume_attachments' % (
            server_id or self.server_id)
        return url + ('/%s' % volume_id if volume_id else '')

    def host(self, server_id=None):
        return self.show_server(server_id or self.server_id)[
            'OS-EXT-SRV-ATTR:host']

    def shelve(self, server_id=None, status='SHELVED_OFFLOADED'):
        self.action('shelve', server_id=server_id)
        return self.wait_for_server_status(server_id or self.server_id,
                                           status)

    def unshelve(self, server_id=None, body=None, api=None):
        self.action('unshelve', body, api=api, server_id=server_id)
        return self.wait_for_server_status(server_id or self.server_id,
                                           'ACTIVE')

    def guest(self, server_id=None):
        server_id = server_id or self.server_id
        for host in self.COMPUTE_HOSTS:
            guest = self.compute_manager(host).driver.guests.get(server_id)
            if guest is not None:
                return host, guest
        return None, None

    def mappings(self, server_id=None):
        return [b for b in objects.BlockDeviceMapping.get_all_by_instance(
            nl_context.get_admin_context(), server_id or self.server_id)
            if b.volume_id]

    def attachment_of(self, volume_id):
        [attachment] = self.show_volume(volume_id)['attachments']
        return attachment


class TempestScenariosTest(ShelveTestCase):
    """tempest AttachVolumeShelveTestJSON, at 2.20."""

    def test_attach_volume_shelved_or_offload_server(self):
        api = self.at('2.20')
        self.shelve()
        volume_id = self.create_volume()
        resp = self.attach(self.server_id, volume_id, api=api)
        self.assertIsNone(resp.body['volumeAttachment']['device'])
        self.wait_for_volume_status(volume_id, 'in-use')
        server = self.unshelve(api=api)
        self.assertEqual('ACTIVE', server['status'])
        self.wait_for_volume_status(volume_id, 'in-use')
        shown = api.get(self.url(volume_id)).body['volumeAttachment']
        self.assertEqual((volume_id, self.server_id),
                         (shown['id'], shown['serverId']))
        # The device name was chosen at unshelve.
        self.assertEqual('/dev/vdb', shown['device'])
        host, guest = self.guest()
        self.assertEqual(self.host(), host)
        self.assertIn('/dev/vdb', guest.devices)
        attachment = self.attachment_of(volume_id)
        self.assertEqual(('/dev/vdb', host),
                         (attachment['device'], attachment['host_name']))

    def test_detach_volume_shelved_or_offload_server(self):
        api = self.at('2.20')
        self.shelve()
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id, api=api)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.detach(self.server_id, volume_id, api=api)
        self.wait_for_volume_status(volume_id, 'available')
        self.unshelve(api=api)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], self.attachments(self.server_id, api=api))
        _host, guest = self.guest()
        self.assertEqual({}, guest.devices)

    def test_detach_from_server_shelved_on_its_host_then_unshelve(self):
        self.conf.set_override('shelved_offload_time', -1)
        api = self.at('2.20')
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id, api=api)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.shelve(status='SHELVED')
        self.detach(self.server_id, volume_id, api=api)
        self.wait_for_volume_status(volume_id, 'available')
        self.unshelve(api=api)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], self.attachments(self.server_id, api=api))

    def test_409_below_2_20(self):
        volume_id = self.create_volume()
        attached = self.create_volume()
        self.attach(self.server_id, attached)
        self.wait_for_volume_status(attached, 'in-use')
        self.conf.set_override('shelved_offload_time', -1)
        for status in ('SHELVED', 'SHELVED_OFFLOADED'):
            if status == 'SHELVED':
                self.shelve(status=status)
            else:
                self.action('shelveOffload', api=self.admin_api)
                self.wait_for_server_status(self.server_id, status)
            old = self.at('2.19')
            resp = self.attach(self.server_id, volume_id, api=old,
                               expect=409)
            self.assertIn("Cannot 'attach_volume' instance", resp.text)
            resp = self.detach(self.server_id, attached, api=old,
                               expect=409)
            self.assertIn("Cannot 'detach_volume' instance", resp.text)
            resp = self.at('2.19', self.admin_api).put(
                self.url(attached),
                body={'volumeAttachment': {'volumeId': volume_id}})
            self.assertEqual(409, resp.status, resp.text)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual('in-use', self.show_volume(attached)['status'])


class StateMachineTest(ShelveTestCase):
    def test_shelve_offloads_at_once_keeping_the_volumes(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        host = self.host()
        server = self.shelve()
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual((None, None), self.guest())
        # Still attached, no longer connected to any host.
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        attachment = self.attachment_of(volume_id)
        self.assertEqual((self.server_id, None),
                         (attachment['server_id'], attachment['host_name']))
        [bdm] = self.mappings()
        self.assertEqual(('/dev/vdb', None),
                         (bdm.device_name, bdm.connection_info))
        self.assertEqual(attachment['attachment_id'], bdm.attachment_id)
        self.assertNotIn(self.server_id,
                         self.compute_manager(host).driver.guests)
        actions = [a['action'] for a in self.api.get(
            '/v2.1/servers/%s/os-instance-actions' % self.server_id).body[
                'instanceActions']]
        self.assertEqual('shelve', actions[0])

    def test_shelved_keeps_its_host_until_offloaded(self):
        self.conf.set_override('shelved_offload_time', -1)
        host = self.host()
        server = self.shelve(status='SHELVED')
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(4, self.guest()[1].power_state)
        # Offloading is for administrators.
        self.action('shelveOffload', expect=403)
        self.action('shelveOffload', api=self.admin_api)
        server = self.wait_for_server_status(self.server_id,
                                             'SHELVED_OFFLOADED')
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        self.action('shelveOffload', api=self.admin_api, expect=409)
        self.action('shelve', expect=409)
        self.unshelve()
        self.assertEqual(1, self.guest()[1].power_state)

    def test_unshelve_a_server_shelved_on_its_host(self):
        self.conf.set_override('shelved_offload_time', -1)
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        host = self.host()
        self.shelve(status='SHELVED')
        server = self.unshelve()
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(['/dev/vdb'], list(self.guest()[1].devices))

    def test_periodic_offload(self):
        self.conf.set_override('shelved_offload_time', 1)
        self.conf.set_override('periodic_interval', 0.2, group='compute')
        # The periodic task starts with the service: restart the host.
        manager = self.restart_compute(self.host())
        self.assertEqual(0.2, manager.periodic_interval)
        self.shelve(status='SHELVED')
        self.wait_for_server_status(self.server_id, 'SHELVED_OFFLOADED',
                                    timeout=20)

    def restart_compute(self, host):
        return tva.ComputeRestartTest.restart_compute(self, host)

    def test_states_that_cannot_be_shelved(self):
        tva.set_rows(models.Instance,
                     models.Instance.uuid == self.server_id,
                     vm_state='rescued')
        resp = self.action('shelve', expect=409)
        self.assertIn("Cannot 'shelve' instance", resp.text)
        self.action('unshelve', expect=409)
        self.api.post('/v2.1/servers/%s/action' % self.server_id,
                      body={'lock': None})
        tva.set_rows(models.Instance,
                     models.Instance.uuid == self.server_id,
                     vm_state='active')
        resp = self.action('shelve', expect=409)
        self.assertIn('is locked', resp.text)


class NoComputeRPCForOffloadedTest(ShelveTestCase):
    def _spy(self):
        sent = []
        context_class = messaging.rpc.client._BaseCallContext

        def spy(kind):
            real = getattr(context_class, kind)

            def send(context, ctxt, method, **kwargs):
                sent.append((context.target.topic, method))
                return real(context, ctxt, method, **kwargs)
            return send
        patches = [mock.patch.object(context_class, kind, spy(kind))
                   for kind in ('call', 'cast')]
        for patch in patches:
            patch.start()
            self.addCleanup(patch.stop)
        return sent

    def test_attach_and_detach_send_nothing_to_a_host(self):
        self.shelve()
        sent = self._spy()
        volumes = [self.create_volume() for _ in range(2)]
        self.attach(self.server_id, volumes[0], api=self.at('2.100'))
        self.attach(self.server_id, volumes[1], api=self.at('2.101'),
                    expect=202)
        for volume_id in volumes:
            self.wait_for_volume_status(volume_id, 'in-use')
            self.detach(self.server_id, volume_id, api=self.at('2.101'))
            self.wait_for_volume_status(volume_id, 'available')
        # The attaches went to the conductor; nothing to a compute host
        # (block storage's calls to its volume service aside).
        self.assertEqual([('conductor', 'attach_volume')] * 2,
                         [s for s in sent if s[1] != 'ping' and
                          s[0] != volume_rpcapi.TOPIC])

    def test_multiattach_and_tag_refused(self):
        self.shelve()
        api = self.at('2.101')
        resp = self.attach(self.server_id,
                           self.create_volume(multiattach=True), api=api,
                           expect=400)
        self.assertIn('shelved', resp.text)
        resp = self.attach(self.server_id, self.create_volume(), api=api,
                           expect=400, tag='db')
        self.assertIn('shelved', resp.text.lower())
        self.assertEqual([], self.attachments(self.server_id, api=api))


class SwapTest(ShelveTestCase):
    """The shelved spec's swap, as nova_lite carries swaps out: a volume
    migration's (block storage's ``os-migrate_volume`` to the other
    backend swaps the server's disk to its temporary volume)."""

    CONF = dict(ShelveTestCase.CONF, **{
        'volume.enabled_backends': ['file', 'file2'],
        'file2.volume_driver': 'file'})

    def migrate(self, volume_id, expect=202):
        resp = self.volume_api(self.admin_api).post(
            '/v3/volumes/%s/action' % volume_id,
            body={'os-migrate_volume': {'host': 'file2'}})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def attached(self, **extra):
        volume_id = self.create_volume(**extra)
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        return volume_id

    def assert_swapped(self, volume_id, old_attachment, device='/dev/vdb'):
        system.wait_for(lambda: self.show_volume(volume_id)[
            'migration_status'] == 'success')
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertTrue(volume['os-vol-host-attr:host'].endswith('#file2'))
        [item] = self.attachments(self.server_id, api=self.at('2.89'))
        self.assertEqual((volume_id, device), (item['volumeId'],
                                               item.get('device')))
        self.assertNotEqual(old_attachment, item['attachment_id'])
        self.assertEqual(self.attachment_of(volume_id)['attachment_id'],
                         item['attachment_id'])

    def test_swap_active_server(self):
        volume_id = self.attached()
        [before] = self.mappings()
        self.migrate(volume_id)
        self.assert_swapped(volume_id, before.attachment_id)
        _host, guest = self.guest()
        [bdm] = self.mappings()
        self.assertEqual(volume_id, bdm.volume_id)
        self.assertEqual(bdm.get_connection_info(),
                         guest.devices['/dev/vdb']['connection_info'])

    def test_swap_shelved_server_on_its_host(self):
        self.conf.set_override('shelved_offload_time', -1)
        volume_id = self.attached()
        [before] = self.mappings()
        self.shelve(status='SHELVED')
        self.migrate(volume_id)
        self.assert_swapped(volume_id, before.attachment_id)
        self.unshelve()
        self.assert_swapped(volume_id, before.attachment_id)

    def test_swap_offloaded_server_keeps_the_mapping(self):
        volume_id = self.attached()
        tva.set_rows(models.BlockDeviceMapping,
                     models.BlockDeviceMapping.volume_id == volume_id,
                     attach_mode='rw', tag='data')
        [before] = self.mappings()
        self.shelve()
        sent = NoComputeRPCForOffloadedTest._spy(self)
        self.migrate(volume_id)
        self.assertEqual([], [s for s in sent if s[0] == 'compute'])
        self.assert_swapped(volume_id, before.attachment_id)
        [bdm] = self.mappings()
        self.assertEqual((volume_id, '/dev/vdb', 'rw', 'data', None),
                         (bdm.volume_id, bdm.device_name, bdm.attach_mode,
                          bdm.tag, bdm.task))
        self.unshelve()
        self.assert_swapped(volume_id, before.attachment_id)
        self.assertIn('/dev/vdb', self.guest()[1].devices)

    def test_policy_and_checks(self):
        old = self.attached()
        new = self.create_volume()

        def put(path_volume, body_volume, expect, api=None):
            resp = (api or self.at('2.20', self.admin_api)).put(
                self.url(path_volume),
                body={'volumeAttachment': {'volumeId': body_volume}})
            self.assertEqual(expect, resp.status, resp.text)
            return resp
        # Swap is for administrators and services, and only a migration's.
        put(old, new, 403, api=self.at('2.20'))
        put(base.IMAGE, new, 404)
        resp = put(old, new, 409)
        self.assertIn('is not migrating', resp.text)
        # Nothing was left detaching or reserved.
        self.assertEqual('in-use', self.show_volume(old)['status'])
        self.assertEqual('available', self.show_volume(new)['status'])

    def test_multiattach_with_two_writers_refused(self):
        volume_id = self.create_volume(multiattach=True)
        api = self.at('2.60')
        other = self.create_server(name='other')
        for server_id in (self.server_id, other):
            self.attach(server_id, volume_id, api=api)
            system.wait_for(lambda: server_id in [
                a['server_id'] for a in self.show_volume(volume_id)[
                    'attachments']])
        resp = self.migrate(volume_id, expect=400)
        self.assertIn('attached more than once', resp.text)
        volume = self.show_volume(volume_id)
        self.assertEqual(('in-use', None), (volume['status'],
                                            volume['migration_status']))


class InterruptedUnshelveTest(ShelveTestCase):
    def test_restart_during_unshelve_goes_back_to_offloaded(self):
        # The host was chosen and connected the volume, then its compute
        # service died: at its restart the server is offloaded again, the
        # volume attached to it and connected to no host; unshelve works.
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.shelve()
        [bdm] = self.mappings()
        ctxt = nl_context.RequestContext('demo', 'demo',
                                         roles=['member', 'reader'])
        client = local_client.LocalClient(self.conf)
        svc = block_storage.service_context(ctxt)
        connected = client.attachment_update(
            svc, bdm.attachment_id, {'host': 'compute1', 'mode': 'rw'},
            mountpoint='/dev/vdb')
        bdm.set_connection_info(connected['connection_info'])
        bdm.save()
        test_servers.set_instance(self.server_id, host='compute1',
                                  task_state='spawning')
        tva.ComputeRestartTest.restart_compute(self, 'compute1')
        self.wait_for_server_status(self.server_id, 'SHELVED_OFFLOADED')
        system.wait_for(lambda: self.show_server(self.server_id)[
            'OS-EXT-STS:task_state'] is None)
        self.assertIsNone(self.host())
        [bdm] = self.mappings()
        attachment = client.attachment_get(svc, bdm.attachment_id)
        self.assertEqual(('attached', {}), (attachment['status'],
                                            attachment['connection_info']))
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        self.unshelve()
        _host, guest = self.guest()
        self.assertEqual(['/dev/vdb'], list(guest.devices))


class UnshelveTest(ShelveTestCase):
    CONF = dict(ShelveTestCase.CONF, **{'volume.enabled_backends': ['fake']})

    def setUp(self):
        super().setUp()
        drivers.register_backend_opts(self.conf)

    def test_failed_connection_goes_back_to_offloaded(self):
        volumes = [self.create_volume() for _ in range(2)]
        self.attach(self.server_id, volumes[0])
        self.wait_for_volume_status(volumes[0], 'in-use')
        self.shelve()
        self.attach(self.server_id, volumes[1], api=self.at('2.20'))
        self.wait_for_volume_status(volumes[1], 'in-use')
        # The second volume cannot be connected; the first one was, and
        # must be disconnected again.
        failing = [b.attachment_id for b in self.mappings()
                   if b.volume_id == volumes[1]]
        real_update = local_client.LocalClient.attachment_update

        def update(client, ctxt, attachment_id, connector, **kwargs):
            if attachment_id in failing:
                raise exception.VolumeBackendAPIException(
                    data='no path to the storage')
            return real_update(client, ctxt, attachment_id, connector,
                               **kwargs)
        with mock.patch.object(local_client.LocalClient,
                               'attachment_update', update):
            self.action('unshelve')
            server = self.wait_for_server_status(self.server_id,
                                                 'SHELVED_OFFLOADED')
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual((None, None), self.guest())
        fault = system.wait_for(lambda: objects.InstanceFault
                                .get_latest_for_instances(
                                    nl_context.get_admin_context(),
                                    [self.server_id]).get(self.server_id))
        message = fault.message
        self.assertIn('Volume %s could not be connected' % volumes[1],
                      message)
        self.assertIn('no path to the storage', message)
        # Every volume is still attached to the server, none connected.
        for volume_id in volumes:
            self.assertEqual('in-use', self.show_volume(volume_id)['status'])
            self.assertIsNone(self.attachment_of(volume_id)['host_name'])
        self.assertEqual(2, len(self.mappings()))
        self.assertEqual([None, None],
                         [b.connection_info for b in self.mappings()])
        # Fixed: the next unshelve works.
        self.unshelve()
        self.assertEqual({'/dev/vdb', '/dev/vdc'},
                         set(self.guest()[1].devices))

    def test_unshelve_to_a_host(self):
        host = self.host()
        other = [h for h in self.COMPUTE_HOSTS if h != host][0]
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.shelve()
        body = {'host': other}
        self.action('unshelve', body, api=self.at('2.90', self.admin_api),
                    expect=400)
        self.action('unshelve', body, api=self.at('2.91'), expect=403)
        resp = self.action('unshelve', {'host': 'nowhere'},
                           api=self.at('2.91', self.admin_api), expect=400)
        self.assertIn('nowhere', resp.text)
        self.action('unshelve', {'availability_zone': 'elsewhere'},
                    api=self.at('2.77'), expect=400)
        server = self.unshelve(body=body,
                               api=self.at('2.91', self.admin_api))
        self.assertEqual(other, server['OS-EXT-SRV-ATTR:host'])
        attachment = self.attachment_of(volume_id)
        self.assertEqual((other, '/dev/vdb'),
                         (attachment['host_name'], attachment['device']))
        self.assertIn('/dev/vdb',
                      self.compute_manager(other).driver.guests[
                          self.server_id].devices)

    def test_target_needs_an_offloaded_server(self):
        self.conf.set_override('shelved_offload_time', -1)
        self.shelve(status='SHELVED')
        resp = self.action('unshelve', {'availability_zone': 'nova'},
                           api=self.at('2.77'), expect=409)
        self.assertIn('SHELVED_OFFLOADED', resp.text)
        # Below 2.77 the body is ignored.
        self.unshelve(body={'availability_zone': 'x'}, api=self.at('2.76'))

    def test_no_host_to_go_to(self):
        self.shelve()
        self.update_compute_services(disabled=True)
        self.action('unshelve')
        fault = system.wait_for(lambda: objects.InstanceFault
                                .get_latest_for_instances(
                                    nl_context.get_admin_context(),
                                    [self.server_id]).get(self.server_id))
        self.assertIn('No valid host', fault.message)
        system.wait_for(lambda: self.show_server(self.server_id)[
            'OS-EXT-STS:task_state'] is None)
        self.assertEqual('SHELVED_OFFLOADED',
                         self.show_server(self.server_id)['status'])


class SoftDeleteTest(ShelveTestCase):
    CONF = dict(ShelveTestCase.CONF, reclaim_instance_interval=3600)

    def test_soft_delete_restore_and_volumes(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(204, self.api.delete(
            '/v2.1/servers/%s' % self.server_id).status)
        self.wait_for_server_status(self.server_id, 'SOFT_DELETED')
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        # Volume operations work on a soft-deleted server.
        second = self.create_volume()
        self.attach(self.server_id, second)
        self.wait_for_volume_status(second, 'in-use')
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.action('restore')
        self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertEqual(['/dev/vdc'], list(self.guest()[1].devices))
        self.action('restore', expect=409)
        self.action('forceDelete', expect=409)

    def test_force_delete(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.api.delete('/v2.1/servers/%s' % self.server_id)
        self.wait_for_server_status(self.server_id, 'SOFT_DELETED')
        self.action('forceDelete')
        self.wait_for_server_gone(self.server_id)
        self.wait_for_volume_status(volume_id, 'available')

    def test_periodic_reclaim(self):
        self.conf.set_override('reclaim_instance_interval', 1)
        self.conf.set_override('periodic_interval', 0.2, group='compute')
        tva.ComputeRestartTest.restart_compute(self, self.host())
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.api.delete('/v2.1/servers/%s' % self.server_id)
        self.wait_for_server_gone(self.server_id, timeout=20)
        self.wait_for_volume_status(volume_id, 'available')

    def test_unlaunched_or_offloaded_servers_are_deleted_at_once(self):
        self.shelve()
        self.api.delete('/v2.1/servers/%s' % self.server_id)
        self.wait_for_server_gone(self.server_id)
