"""/v2.1/servers/{id}/os-volume_attachments against the real block storage
(LocalClient, the file backend): views by microversion, request fields,
and every guard of API-CONTRACT.md 2.5 to 2.7 with its status code."""

import datetime
from unittest import mock

import sqlalchemy as sa

from nova_lite.compute.host import service as compute_service
from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite.objects import block_device as bdm_obj
from tests.fixtures import system
from tests.functional.compute import base
from tests.functional.compute import test_servers


def set_rows(model, where, **values):
    @db_api.context_manager.writer
    def update(context):
        context.session.execute(sa.update(model).where(where).values(
            **values))
    update(nl_context.get_admin_context())


def get_rows(model, where):
    @db_api.context_manager.reader
    def select(context):
        return context.session.execute(
            sa.select(model).where(where)).scalars().all()
    return select(nl_context.get_admin_context())


class AttachmentTestCase(base.TestCase):
    def setUp(self):
        super().setUp()
        self.server_id = self.create_server()

    def url(self, volume_id=None, server_id=None):
        url = '/v2.1/servers/%s/os-volume_attachments' % (
            server_id or self.server_id)
        return url + ('/%s' % volume_id if volume_id else '')

    def at(self, version, api=None):
        return (api or self.api).as_(compute_version=version)

    def attached_volume(self, server_id=None, **extra):
        volume_id = self.create_volume()
        self.attach(server_id or self.server_id, volume_id, **extra)
        self.wait_for_volume_status(volume_id, 'in-use')
        return volume_id

    def message(self, resp):
        return list(resp.body.values())[0]['message']

    def error_code(self, resp):
        """A 409's kind (``exception.CONFLICT_CODES``)."""
        return list(resp.body.values())[0]['error_code']

    def _compute_host_down(self, forced=False):
        old = datetime.datetime.utcnow() - datetime.timedelta(
            seconds=self.conf.service_down_time + 60)
        # Block storage's volume service stays (the API detaches through
        # it); the conductor and the compute host stop.
        stopping = [svc for svc in self.sys.system.services
                    if svc.binary != 'nova-lite-volume']
        for svc in stopping:
            svc.stop()
        for svc in stopping:
            svc.wait()
        self.sys.system.services = [svc for svc in self.sys.system.services
                                    if svc not in stopping]
        set_rows(models.Service, models.Service.host == 'compute1',
                 last_seen_up=old, forced_down=forced)


class ViewsTest(AttachmentTestCase):
    POST_KEYS = {
        '2.1': {'id', 'serverId', 'volumeId', 'device'},
        '2.70': {'id', 'serverId', 'volumeId', 'device', 'tag'},
        '2.79': {'id', 'serverId', 'volumeId', 'device', 'tag',
                 'delete_on_termination'},
        # 2.89 did not change the POST response (Nova's oversight).
        '2.89': {'id', 'serverId', 'volumeId', 'device', 'tag',
                 'delete_on_termination'},
    }
    VIEW_KEYS = {
        '2.1': {'id', 'serverId', 'volumeId', 'device'},
        '2.70': {'id', 'serverId', 'volumeId', 'device', 'tag'},
        '2.79': {'id', 'serverId', 'volumeId', 'device', 'tag',
                 'delete_on_termination'},
        '2.89': {'serverId', 'volumeId', 'device', 'tag',
                 'delete_on_termination', 'attachment_id', 'bdm_uuid'},
    }

    def test_post_response_by_microversion(self):
        for version, keys in sorted(self.POST_KEYS.items()):
            volume_id = self.create_volume()
            resp = self.attach(self.server_id, volume_id,
                               api=self.at(version))
            body = resp.body['volumeAttachment']
            self.assertEqual(keys, set(body), version)
            self.assertEqual(volume_id, body['id'])
            self.assertEqual(self.server_id, body['serverId'])
            self.assertTrue(body['device'].startswith('/dev/vd'))
            self.wait_for_volume_status(volume_id, 'in-use')

    def test_list_and_show_by_microversion(self):
        volume_id = self.attached_volume()
        bdm_devices = set()
        for version, keys in sorted(self.VIEW_KEYS.items()):
            [item] = self.attachments(self.server_id, api=self.at(version))
            self.assertEqual(keys, set(item), version)
            shown = self.at(version).get(self.url(volume_id))
            self.assertEqual(200, shown.status)
            self.assertEqual(item, shown.body['volumeAttachment'])
            bdm_devices.add(item['device'])
        self.assertEqual({'/dev/vdb'}, bdm_devices)
        [item] = self.attachments(self.server_id, api=self.at('2.89'))
        volume = self.show_volume(volume_id)
        self.assertEqual(volume['attachments'][0]['attachment_id'],
                         item['attachment_id'])
        self.assertEqual(self.server_id,
                         volume['attachments'][0]['server_id'])

    def test_tag_and_delete_on_termination_by_microversion(self):
        volume_id = self.create_volume()
        resp = self.attach(self.server_id, volume_id, api=self.at('2.48'),
                           expect=400, tag='data')
        self.assertIn('Additional properties', self.message(resp))
        self.attach(self.server_id, volume_id, api=self.at('2.78'),
                    expect=400, delete_on_termination=True)
        resp = self.attach(self.server_id, volume_id, api=self.at('2.79'),
                           tag='data', delete_on_termination='yes')
        body = resp.body['volumeAttachment']
        self.assertEqual(('data', True), (body['tag'],
                                          body['delete_on_termination']))
        self.attach(self.server_id, self.create_volume(),
                    api=self.at('2.79'), expect=400, tag='a/b')
        self.attach(self.server_id, self.create_volume(),
                    api=self.at('2.79'), expect=400,
                    delete_on_termination='maybe')

    def test_requested_device_is_honoured_when_free(self):
        first = self.create_volume()
        resp = self.attach(self.server_id, first, device='/dev/vdf')
        self.assertEqual('/dev/vdf', resp.body['volumeAttachment']['device'])
        second = self.create_volume()
        resp = self.attach(self.server_id, second, device='/dev/vdf')
        self.assertEqual('/dev/vdb', resp.body['volumeAttachment']['device'])
        resp = self.attach(self.server_id, self.create_volume(),
                           device='vdc', expect=400)

    def test_list_paging(self):
        volumes = [self.attached_volume() for _ in range(3)]
        # Paging counts every mapping, the root disk included.
        items = self.at('2.1').get(self.url() + '?limit=2').body[
            'volumeAttachments']
        self.assertEqual([volumes[0]], [i['volumeId'] for i in items])
        items = self.at('2.1').get(self.url() + '?offset=2&limit=5').body[
            'volumeAttachments']
        self.assertEqual(volumes[1:], [i['volumeId'] for i in items])
        self.assertEqual(200, self.at('2.74').get(
            self.url() + '?foo=1').status)
        self.assertEqual(400, self.at('2.75').get(
            self.url() + '?foo=1').status)
        self.assertEqual(400, self.at('2.1').get(
            self.url() + '?limit=-1').status)

    def test_legacy_mapping_hidden_from_2_89(self):
        volume_id = self.attached_volume()
        set_rows(models.BlockDeviceMapping,
                 models.BlockDeviceMapping.volume_id == volume_id,
                 attachment_id=None)
        self.assertEqual(1, len(self.attachments(self.server_id)))
        self.assertEqual([], self.attachments(self.server_id,
                                              api=self.at('2.89')))
        self.assertEqual(200, self.at('2.88').get(self.url(volume_id))
                         .status)
        self.assertEqual(404, self.at('2.89').get(self.url(volume_id))
                         .status)

    def test_show_not_attached(self):
        volume_id = self.create_volume()
        resp = self.api.get(self.url(volume_id))
        self.assertEqual(404, resp.status)
        self.assertEqual('Instance %s is not attached to volume %s' % (
            self.server_id, volume_id), self.message(resp))

    def test_server_show_lists_attached_volumes(self):
        volume_id = self.attached_volume(delete_on_termination=True,
                                         api=self.at('2.79'))
        server = self.api.get('/v2.1/servers/%s' % self.server_id).body[
            'server']
        self.assertEqual([{'id': volume_id}],
                         server['os-extended-volumes:volumes_attached'])
        server = self.at('2.3').get('/v2.1/servers/%s' % self.server_id)\
            .body['server']
        self.assertEqual([{'id': volume_id, 'delete_on_termination': True}],
                         server['os-extended-volumes:volumes_attached'])


class AttachGuardsTest(AttachmentTestCase):
    def _assert_refused_unchanged(self, volume_id, resp):
        self.assertEqual('Service is unavailable at this time.',
                         self.message(resp))
        self.assertEqual('compute.host_unavailable', self.error_code(resp))
        # Nothing was written: no mapping, no action, the volume free.
        self.assertEqual([], self.attachments(self.server_id))
        self.assertEqual([], get_rows(
            models.BlockDeviceMapping,
            models.BlockDeviceMapping.volume_id == volume_id))
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))
        self.assertNotIn('attach_volume', [
            a['action'] for a in self.api.get(
                '/v2.1/servers/%s/os-instance-actions' % self.server_id
            ).body['instanceActions']])

    def test_compute_host_down_answers_409_at_once(self):
        # A host that is down would never name the device: below 2.101,
        # where the caller waits for it, the attach is refused before
        # anything is written, as the detach is.
        volume_id = self.create_volume()
        self._compute_host_down()
        for version in ('2.1', '2.100'):
            resp = self.attach(self.server_id, volume_id,
                               api=self.at(version), expect=409)
            self._assert_refused_unchanged(volume_id, resp)
        # From 2.101 nothing waits: accepted, and undone by the conductor
        # when the host does not answer (tests/functional/conductor).
        self.attach(self.server_id, volume_id, api=self.at('2.101'),
                    expect=202)

    def test_compute_host_forced_down_answers_409(self):
        volume_id = self.create_volume()
        self._compute_host_down(forced=True)
        resp = self.attach(self.server_id, volume_id, expect=409)
        self._assert_refused_unchanged(volume_id, resp)

    def test_detach_as_soon_as_in_use_takes_over_the_attach(self):
        # The host completes the attachment (the volume is in-use, which
        # is what a client waits for) and clears its task right after:
        # a detach in between is accepted, not 409.
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        set_rows(models.BlockDeviceMapping,
                 models.BlockDeviceMapping.volume_id == volume_id,
                 task='attaching', task_step='connected',
                 task_owner='nova-lite-compute:compute1')
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        system.wait_for(lambda: self.attachments(self.server_id) == [])
        # An attach whose attachment is not complete is another matter:
        # 409.
        other = self.create_volume()
        self.attach(self.server_id, other)
        self.wait_for_volume_status(other, 'in-use')
        set_rows(models.BlockDeviceMapping,
                 models.BlockDeviceMapping.volume_id == other,
                 task='attaching', task_step='connecting',
                 attachment_id='00000000-0000-4000-8000-000000000000',
                 task_owner='nova-lite-compute:compute1')
        resp = self.detach(self.server_id, other, expect=409)
        self.assertIn('busy with another operation (attaching)',
                      self.message(resp))
        self.assertEqual('compute.mapping_busy', self.error_code(resp))

    def test_detach_while_the_host_finishes_the_attach_message(self):
        # The detach took the completed attach over while the host was
        # still finishing the attach's message (its event): the host runs
        # the detach, it is not taken for a second delivery of the attach.
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        manager = self.compute_manager()
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            nl_context.get_admin_context(), volume_id, self.server_id)

        def host_done():
            # The volume reads in-use once the attachment is complete,
            # before the host ends the attach's task and leaves it.
            with manager._working_on(bdm, 'attach') as mine:
                return mine
        system.wait_for(host_done)
        with manager._working_on(bdm, 'attach') as mine:
            self.assertTrue(mine)
            self.detach(self.server_id, volume_id)
            self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([], self.attachments(self.server_id))

    def test_detach_again_while_detaching_is_accepted(self):
        # A second DELETE while the first one's detach is in flight is
        # 202 and changes nothing (Nova accepts it too); once the mapping
        # is gone, 404.
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        in_flight = dict(task='detaching', task_step='guest_detaching',
                         task_owner='nova-lite-compute:compute9')
        set_rows(models.BlockDeviceMapping,
                 models.BlockDeviceMapping.volume_id == volume_id,
                 **in_flight)
        self.detach(self.server_id, volume_id)
        row = get_rows(models.BlockDeviceMapping,
                       models.BlockDeviceMapping.volume_id == volume_id)[0]
        self.assertEqual(in_flight, {k: getattr(row, k) for k in in_flight})
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        set_rows(models.BlockDeviceMapping,
                 models.BlockDeviceMapping.volume_id == volume_id,
                 task=None, task_step=None, task_owner=None)
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.detach(self.server_id, volume_id, expect=404)

    def test_attach_detach_round_trip(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(self.server_id,
                         volume['attachments'][0]['server_id'])
        manager = self.compute_manager()
        self.assertIn('/dev/vdb', manager.driver.guests[self.server_id]
                      .devices)
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        system.wait_for(lambda: self.attachments(self.server_id) == [])
        self.assertNotIn('/dev/vdb', manager.driver.guests[self.server_id]
                         .devices)

    def test_unknown_server_and_volume(self):
        volume_id = self.create_volume()
        self.attach(base.IMAGE, volume_id, expect=404)
        resp = self.attach(self.server_id, base.IMAGE, expect=404)
        self.assertIn('could not be found', self.message(resp))
        other = self.api.as_(token='other:other')
        self.attach(self.server_id, volume_id, api=other, expect=404)

    def test_same_volume_twice(self):
        volume_id = self.attached_volume()
        resp = self.attach(self.server_id, volume_id, expect=400)
        self.assertEqual(
            'Invalid volume: volume %s is already attached to instances: '
            '%s' % (volume_id, self.server_id), self.message(resp))

    def test_in_use_volume_to_another_server(self):
        volume_id = self.attached_volume()
        other = self.create_server(name='other')
        resp = self.attach(other, volume_id, expect=400)
        self.assertIn('is already attached to instances', self.message(resp))
        self.assertEqual([], self.attachments(other))

    def test_locked_server(self):
        self.api.post('/v2.1/servers/%s/action' % self.server_id,
                      body={'lock': None})
        volume_id = self.create_volume()
        resp = self.attach(self.server_id, volume_id, expect=409)
        self.assertEqual('Instance %s is locked' % self.server_id,
                         self.message(resp))
        self.assertEqual('compute.server_locked', self.error_code(resp))
        # An administrator may act on a locked server.
        self.attach(self.server_id, volume_id, api=self.admin_api)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.detach(self.server_id, volume_id, expect=409)
        self.detach(self.server_id, volume_id, api=self.admin_api)

    def test_states(self):
        volume_id = self.create_volume()
        test_servers.set_instance(self.server_id, vm_state='building')
        resp = self.attach(self.server_id, volume_id, expect=409)
        self.assertEqual(
            "Cannot 'attach_volume' instance %s while it is in vm_state "
            "building" % self.server_id, self.message(resp))
        self.assertEqual('compute.server_state', self.error_code(resp))
        test_servers.set_instance(self.server_id, vm_state='rescued')
        self.attach(self.server_id, volume_id, expect=409)
        test_servers.set_instance(self.server_id, vm_state='active',
                                  task_state='spawning')
        resp = self.attach(self.server_id, volume_id, expect=409)
        self.assertIn('task_state spawning', self.message(resp))
        test_servers.set_instance(self.server_id, task_state=None)
        # Stopped and paused servers take volumes.
        self.api.post('/v2.1/servers/%s/action' % self.server_id,
                      body={'os-stop': None})
        self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')

    def test_shelved_needs_2_20(self):
        volume_id = self.create_volume()
        test_servers.set_instance(self.server_id, vm_state='shelved')
        resp = self.attach(self.server_id, volume_id, api=self.at('2.19'),
                           expect=409)
        self.assertEqual(
            "Cannot 'attach_volume' instance %s while it is in vm_state "
            "shelved" % self.server_id, self.message(resp))
        self.attach(self.server_id, volume_id, api=self.at('2.20'))
        self.wait_for_volume_status(volume_id, 'in-use')
        self.detach(self.server_id, volume_id, api=self.at('2.19'),
                    expect=409)

    def test_shelved_offloaded_attach_and_detach_inline(self):
        test_servers.set_instance(self.server_id,
                                  vm_state='shelved_offloaded', host=None)
        api = self.at('2.79')
        volume_id = self.create_volume()
        resp = self.attach(self.server_id, volume_id, api=api,
                           delete_on_termination=True)
        self.assertIsNone(resp.body['volumeAttachment']['device'])
        # Completed without a connector: in-use at once.
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        [item] = self.attachments(self.server_id, api=api)
        self.assertNotIn('device', item)
        self.attach(self.server_id, self.create_volume(), api=api,
                    tag='x', expect=400)
        self.detach(self.server_id, volume_id, api=api)
        # delete_on_termination: the volume goes with the detach.
        self.assertEqual(404, self.volume_api().get(
            '/v3/volumes/%s' % volume_id).status)
        self.assertEqual([], self.attachments(self.server_id))

    def test_multiattach(self):
        volume_id = self.create_volume(multiattach=True)
        resp = self.attach(self.server_id, volume_id, api=self.at('2.59'),
                           expect=400)
        self.assertEqual('Multiattach volumes are only supported starting '
                         'with compute API version 2.60.',
                         self.message(resp))
        other = self.create_server(name='other')
        api = self.at('2.60')
        self.attach(self.server_id, volume_id, api=api)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.attach(other, volume_id, api=api)
        system.wait_for(lambda: len(self.show_volume(volume_id)[
            'attachments']) == 2)
        resp = self.attach(other, volume_id, api=api, expect=400)
        self.assertEqual('Invalid volume: volume %s already attached' %
                         volume_id, self.message(resp))
        # Detaching one of two leaves the volume in-use.
        self.detach(other, volume_id)
        system.wait_for(lambda: len(self.show_volume(volume_id)[
            'attachments']) == 1)
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')

    def test_conductor_too_old_is_a_500(self):
        from nova_lite.compute import api as compute_api
        api = compute_api.get_api(self.conf)
        client = api.conductor_rpcapi.client
        volume_id = self.create_volume()
        with mock.patch.object(client, 'can_send_version',
                               return_value=False):
            resp = self.attach(self.server_id, volume_id, expect=500)
        self.assertIn('ServiceTooOld', resp.body['computeFault']['message'])
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], self.attachments(self.server_id))

    def test_too_many_devices(self):
        self.conf.set_override('max_disk_devices_to_attach', 2,
                               group='compute')
        self.attached_volume()
        volume_id = self.create_volume()
        resp = self.attach(self.server_id, volume_id, expect=403)
        self.assertIn('(2)', self.message(resp))
        self.assertEqual('available', self.show_volume(volume_id)['status'])


class DetachGuardsTest(AttachmentTestCase):
    def test_not_attached(self):
        volume_id = self.create_volume()
        resp = self.detach(self.server_id, volume_id, expect=404)
        self.assertEqual('Instance %s is not attached to volume %s' % (
            self.server_id, volume_id), self.message(resp))
        self.detach(self.server_id, base.IMAGE, expect=404)

    def test_root_volume(self):
        boot = self.create_volume()
        server_id = self.create_server(
            name='bfv', imageRef='', block_device_mapping_v2=[{
                'source_type': 'volume', 'destination_type': 'volume',
                'uuid': boot, 'boot_index': 0}])
        self.assertEqual('in-use', self.show_volume(boot)['status'])
        resp = self.detach(server_id, boot, expect=400)
        self.assertEqual('Cannot detach a root device volume',
                         self.message(resp))

    def test_volume_not_in_use(self):
        volume_id = self.attached_volume()
        set_rows(models.Volume, models.Volume.id == volume_id,
                 status='attaching')
        resp = self.detach(self.server_id, volume_id, expect=400)
        self.assertIn("Volume status must be 'in-use'", self.message(resp))

    def test_compute_host_down_answers_409(self):
        # As Nova's check_instance_host(check_is_up=True): a host that is
        # only down is silent, not dead (its guest may still use the
        # disk): 409, nothing changes, the host is not named.
        volume_id = self.attached_volume()
        self._compute_host_down()
        resp = self.detach(self.server_id, volume_id, expect=409)
        self.assertEqual('Service is unavailable at this time.',
                         self.message(resp))
        self.assertEqual('compute.host_unavailable', self.error_code(resp))
        volume = self.show_volume(volume_id)
        self.assertEqual(('in-use', [self.server_id]),
                         (volume['status'], [a['server_id'] for a in
                                             volume['attachments']]))
        self.assertEqual([volume_id], [a['volumeId'] for a in
                                       self.attachments(self.server_id)])

    def test_compute_host_forced_down_detaches_locally(self):
        # Fenced by an administrator: the API deletes the attachment and
        # the mapping itself (the host removes the disk from its guest
        # when it comes back).
        volume_id = self.attached_volume()
        self._compute_host_down(forced=True)
        self.detach(self.server_id, volume_id)
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))
        self.assertEqual([], self.attachments(self.server_id))
        self.detach(self.server_id, volume_id, expect=404)

    def test_local_detach_again_while_detaching_is_accepted(self):
        # As through the host: a local detach in flight (here one whose
        # API process died; the conductor finishes it) makes the same
        # DELETE 202 and changes nothing; another operation is 409.
        volume_id = self.attached_volume()
        busy = self.attached_volume()
        self._compute_host_down(forced=True)
        in_flight = dict(task='detaching', task_step='local_detaching',
                         task_owner='nova-lite-api:gone',
                         task_data='{"local": true}')
        set_rows(models.BlockDeviceMapping,
                 models.BlockDeviceMapping.volume_id == volume_id,
                 **in_flight)
        set_rows(models.BlockDeviceMapping,
                 models.BlockDeviceMapping.volume_id == busy,
                 task='attaching', task_step='connecting',
                 task_owner='nova-lite-compute:compute1')
        self.detach(self.server_id, volume_id)
        row = get_rows(models.BlockDeviceMapping,
                       models.BlockDeviceMapping.volume_id == volume_id)[0]
        self.assertEqual(in_flight, {k: getattr(row, k) for k in in_flight})
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        resp = self.detach(self.server_id, busy, expect=409)
        self.assertIn('busy with another operation (attaching)',
                      self.message(resp))

    def test_delete_attached_volume_is_refused_by_block_storage(self):
        volume_id = self.attached_volume()
        resp = self.volume_api().delete('/v3/volumes/%s' % volume_id)
        self.assertEqual(400, resp.status)

    def test_server_delete_detaches(self):
        keep = self.attached_volume()
        drop = self.attached_volume(api=self.at('2.79'),
                                    delete_on_termination=True)
        self.assertEqual(204, self.api.delete(
            '/v2.1/servers/%s' % self.server_id).status)
        self.wait_for_server_gone(self.server_id)
        self.wait_for_volume_status(keep, 'available')
        system.wait_for(lambda: self.volume_api().get(
            '/v3/volumes/%s' % drop).status == 404)

    def test_boot_from_volume_and_delete_on_termination(self):
        boot = self.create_volume()
        server_id = self.create_server(
            name='bfv', imageRef='', block_device_mapping_v2=[{
                'source_type': 'volume', 'destination_type': 'volume',
                'uuid': boot, 'boot_index': 0,
                'delete_on_termination': True}])
        server = self.show_server(server_id)
        self.assertEqual('', server['image'])
        [item] = self.attachments(server_id, api=self.at('2.89'))
        self.assertEqual(('/dev/vda', boot), (item['device'],
                                              item['volumeId']))
        self.api.delete('/v2.1/servers/%s' % server_id)
        system.wait_for(lambda: self.volume_api().get(
            '/v3/volumes/%s' % boot).status == 404)

    def test_boot_volume_must_be_available(self):
        boot = self.attached_volume()
        resp = self.api.as_(compute_version='2.37').post(
            '/v2.1/servers', body={'server': {
                'name': 'x', 'flavorRef': '1', 'networks': 'none',
                'block_device_mapping_v2': [{
                    'source_type': 'volume', 'destination_type': 'volume',
                    'uuid': boot, 'boot_index': 0}]}})
        self.assertEqual(400, resp.status)
        resp = self.api.as_(compute_version='2.37').post(
            '/v2.1/servers', body={'server': {
                'name': 'x', 'flavorRef': '1', 'networks': 'none',
                'min_count': 2,
                'block_device_mapping_v2': [{
                    'source_type': 'volume', 'destination_type': 'volume',
                    'uuid': self.create_volume(), 'boot_index': 0}]}})
        self.assertEqual(400, resp.status)
        self.assertEqual('Cannot attach one or more volumes to multiple '
                         'instances', self.message(resp))


class UpdateAndSwapTest(AttachmentTestCase):
    def put(self, volume_id, attachment, api, expect):
        resp = api.put(self.url(volume_id),
                       body={'volumeAttachment': attachment})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def test_update_delete_on_termination(self):
        volume_id = self.attached_volume()
        api = self.at('2.85')
        self.put(volume_id, {'volumeId': volume_id,
                             'delete_on_termination': True}, api, 202)
        item = self.at('2.79').get(self.url(volume_id)).body[
            'volumeAttachment']
        self.assertTrue(item['delete_on_termination'])
        # Echoing the current values is fine; changing them is not.
        self.put(volume_id, {'volumeId': volume_id, 'id': volume_id,
                             'serverId': self.server_id,
                             'device': '/dev/vdb', 'tag': None}, api, 400)
        self.put(volume_id, {'volumeId': volume_id, 'id': volume_id,
                             'serverId': self.server_id,
                             'device': '/dev/vdb'}, api, 202)
        resp = self.put(volume_id, {'volumeId': volume_id,
                                    'device': '/dev/vdz'}, api, 400)
        self.assertEqual('The device property is not mutable',
                         self.message(resp))
        self.put(volume_id, {'volumeId': volume_id,
                             'delete_on_termination': True},
                 self.at('2.84'), 400)
        other = self.create_volume()
        self.put(other, {'volumeId': other}, api, 404)

    def test_swap_is_for_administrators_and_services(self):
        volume_id = self.attached_volume()
        new = self.create_volume()
        self.put(volume_id, {'volumeId': new}, self.at('2.84'), 403)
        self.put(base.IMAGE, {'volumeId': new},
                 self.at('2.84', self.admin_api), 404)
        # Only a volume migration's (Nova 32+, bug 2112187;
        # test_migration has the swaps that happen).
        for api in (self.admin_api, self.api.as_(token='service:demo')):
            resp = self.put(volume_id, {'volumeId': new},
                            self.at('2.84', api), 409)
            self.assertEqual('volume %s is not migrating; this API should '
                             'only be called by Cinder' % volume_id,
                             self.message(resp))
            self.assertEqual('volume.migration', self.error_code(resp))
        # From 2.85 a PUT naming the same volume is an update, not a swap.
        self.put(volume_id, {'volumeId': volume_id,
                             'delete_on_termination': True},
                 self.at('2.85'), 202)
        self.assertEqual(('in-use', 'available'),
                         (self.show_volume(volume_id)['status'],
                          self.show_volume(new)['status']))

    def test_swap_of_a_migrating_volume(self):
        old = self.attached_volume()
        new = self.create_volume()
        set_rows(models.Volume, models.Volume.id == old,
                 migration_status='migrating')
        admin = self.at('2.84', self.admin_api)
        # An unknown new volume is in the body: 400, not 404.
        resp = self.put(old, {'volumeId': base.IMAGE}, admin, 400)
        self.assertIn('could not be found', self.message(resp))
        # Not the migration's own (block storage, as the service): 409,
        # and nothing is left reserved.
        resp = self.put(old, {'volumeId': new}, admin, 409)
        self.assertIn('only its migration swaps it', self.message(resp))
        self.assertEqual('available', self.show_volume(new)['status'])
        self.assertEqual('in-use', self.show_volume(old)['status'])
        [item] = self.attachments(self.server_id)
        self.assertEqual(old, item['volumeId'])


class ComputeRestartTest(AttachmentTestCase):
    def restart_compute(self, host='compute1'):
        old = [s for s in self.sys.system.services
               if s.binary == 'nova-lite-compute' and s.host == host][0]
        old.stop()
        old.wait()
        self.sys.system.services.remove(old)
        new = compute_service.create(self.conf, host)
        new.start()
        self.sys.system.services.append(new)
        return new.manager

    def test_servers_survive_a_restart(self):
        volume_id = self.attached_volume()
        stopped = self.create_server(name='stopped')
        self.api.post('/v2.1/servers/%s/action' % stopped,
                      body={'os-stop': None})
        self.wait_for_server_status(stopped, 'SHUTOFF')
        test_servers.set_instance(stopped, task_state='powering-on')
        manager = self.restart_compute()
        guest = manager.driver.guests[self.server_id]
        self.assertEqual(['/dev/vdb'], list(guest.devices))
        self.assertEqual(4, manager.driver.guests[stopped].power_state)
        # The lost power action is dropped: the server can be used again.
        self.wait_for_server_status(stopped, 'SHUTOFF')
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.attached_volume()

    def test_interrupted_build_and_delete(self):
        building = self.create_server(name='b')
        # As a build in progress: never launched.
        test_servers.set_instance(building, vm_state='building',
                                  task_state='spawning', launched_at=None)
        doomed = self.create_server(name='d')
        volume_id = self.attached_volume(server_id=doomed)
        test_servers.set_instance(doomed, task_state='deleting')
        manager = self.restart_compute()
        server = self.wait_for_server_status(building, 'ERROR')
        self.assertIn('restarted', server['fault']['message'])
        self.wait_for_server_gone(doomed)
        self.wait_for_volume_status(volume_id, 'available')
        # A failed build has no guest to restore at the next restart.
        self.assertNotIn(building, manager.driver.guests)
        manager = self.restart_compute()
        system.wait_for(lambda: self.server_id in manager.driver.guests)
        self.assertNotIn(building, manager.driver.guests)

    def test_delete_finished_at_restart_ends_its_event(self):
        # The host died in the middle of a delete: its restart finishes
        # the delete, and the event the dead process left open ends.
        from nova_lite.objects import instance_action
        doomed = self.create_server(name='d')
        volume_id = self.attached_volume(server_id=doomed)
        ctxt = nl_context.get_admin_context()
        instance_action.InstanceAction.action_start(
            ctxt, doomed, instance_action.DELETE)
        instance_action.InstanceActionEvent.event_start(
            ctxt, doomed, 'compute_terminate_instance', 'compute1')
        test_servers.set_instance(doomed, task_state='deleting')
        self.restart_compute()
        self.wait_for_server_gone(doomed)
        self.wait_for_volume_status(volume_id, 'available')
        action = instance_action.InstanceAction.get_by_request_id(
            ctxt, doomed, ctxt.request_id)
        [event] = action.events
        self.assertEqual(('compute_terminate_instance',
                          instance_action.RESULT_SUCCESS),
                         (event.event, event.result))
        self.assertIsNotNone(event.finish_time)

    def test_build_whose_message_never_came_is_settled_once_stalled(self):
        # Placed on compute1 (scheduling) and never taken: a restart leaves
        # it (its message may still be queued); the periodic task fails it
        # once it stalled, giving its volume back.
        lost = self.create_server(name='lost')
        volume_id = self.attached_volume(server_id=lost)
        test_servers.set_instance(lost, vm_state='building',
                                  task_state='scheduling', launched_at=None)
        manager = self.restart_compute()
        self.assertEqual('BUILD', self.show_server(lost)['status'])
        ctxt = nl_context.get_admin_context()
        manager.periodic_tasks(ctxt)
        self.assertEqual('BUILD', self.show_server(lost)['status'])
        test_servers.set_instance(lost, updated_at=datetime.datetime(
            2026, 1, 1))
        manager.periodic_tasks(ctxt)
        server = self.show_server(lost)
        self.assertEqual('ERROR', server['status'])
        self.assertIn('restarted', server['fault']['message'])
        self.assertEqual('available', self.show_volume(volume_id)['status'])

    def test_interrupted_build_gives_its_volumes_back(self):
        # A build the restart interrupted after it connected a volume
        # (block_device_mapping_v2, multi-create): as a failed build, the
        # volume is free again and the server holds no mapping of it.
        building = self.create_server(name='b')
        volume_id = self.attached_volume(server_id=building)
        test_servers.set_instance(building, vm_state='building',
                                  task_state='spawning', launched_at=None)
        self.restart_compute()
        server = self.wait_for_server_status(building, 'ERROR')
        self.assertIn('restarted', server['fault']['message'])
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([], self.attachments(building))
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
