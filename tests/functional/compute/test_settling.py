"""Work an API process left behind, settled by the conductor's periodic
task on the embedded system (real block storage, file backend): a local
detach it had accepted or decided is finished, and a server it was
deleting without a host is deleted. The process deaths
themselves are in tests/integration/test_crash_recovery.py; here the rows
are put in the state a death leaves."""

import datetime

from nova_lite import context
from nova_lite.db import models
from nova_lite import exception
from nova_lite import objects
from nova_lite import tasks
from nova_lite import utils
from nova_lite import volume_client as block_storage
from nova_lite.volume_client import local as local_client
from tests.functional.compute import test_volume_attachments as base

GONE_API = 'nova-lite-api:gone'


class SettlingTest(base.AttachmentTestCase):
    def conductor(self):
        for svc in self.sys.system.services:
            if svc.binary == 'nova-lite-conductor':
                return svc.manager
        raise AssertionError('no conductor')

    def settle(self):
        return self.conductor().periodic_tasks(self.admin_context())

    def admin_context(self):
        return context.get_admin_context()

    def long_ago(self):
        return utils.utcnow() - datetime.timedelta(
            seconds=self.conf.recovery.stalled_after + 60)

    def left_by_api(self, volume_id, step, **data):
        """The mapping of ``volume_id`` as an API process that died at
        ``step`` of a detach leaves it."""
        base.set_rows(
            models.BlockDeviceMapping,
            models.BlockDeviceMapping.volume_id == volume_id,
            task=tasks.DETACHING, task_owner=GONE_API, task_step=step,
            task_data='{"local": true}', task_updated_at=self.long_ago())

    def usable_again(self, old, new):
        """The server's volume ``old`` detaches and ``new`` attaches to
        it (what a swap would have done, the way a user does it)."""
        self.detach(self.server_id, old, api=self.at('2.20'))
        self.wait_for_volume_status(old, 'available')
        self.attach(self.server_id, new, api=self.at('2.20'))
        self.wait_for_volume_status(new, 'in-use')

    def statuses(self, *volume_ids):
        return tuple(self.show_volume(v)['status'] for v in volume_ids)

    def mapping(self, volume_id):
        return objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.admin_context(), volume_id, self.server_id)

    def test_decided_local_detach_is_finished(self):
        volume_id = self.attached_volume()
        self.left_by_api(volume_id, tasks.LOCAL_DETACHING)
        self.settle()
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))
        self.assertEqual([], self.attachments(self.server_id))
        # Usable again: another server attaches it.
        other = self.create_server(name='other')
        self.attach(other, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')

    def test_accepted_local_detach_is_finished(self):
        # The API process died after it accepted the local detach (the
        # user was told 202): re-driven, that is finished here.
        volume_id = self.attached_volume()
        self.left_by_api(volume_id, tasks.ACCEPTED)
        self.settle()
        self.assertRaises(exception.VolumeBDMNotFound, self.mapping,
                          volume_id)
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))
        self.assertEqual([], self.attachments(self.server_id))

    def test_attachment_a_dead_conductor_did_not_record_is_deleted(self):
        # The conductor died between block storage's attachment_create
        # and the write of its id on the mapping: the settling finds the
        # attachment by server and volume and deletes it.
        volume_id = self.create_volume()
        ctxt = context.RequestContext('demo', 'demo', roles=['member'])
        bdm = objects.BlockDeviceMapping.new_volume(ctxt, self.server_id,
                                                    volume_id)
        bdm.set_task(tasks.ATTACHING, 'nova-lite-conductor:gone',
                     tasks.RESERVING, tasks.task_data(ctxt))
        bdm.create()
        client = local_client.LocalClient(self.conf)
        svc = block_storage.service_context(ctxt)
        client.attachment_create(svc, volume_id, self.server_id)
        self.assertEqual('reserved', self.show_volume(volume_id)['status'])
        base.set_rows(models.BlockDeviceMapping,
                      models.BlockDeviceMapping.volume_id == volume_id,
                      task_updated_at=self.long_ago())
        self.settle()
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], client.attachment_get_all(svc,
                                                       volume_id=volume_id))
        self.assertRaises(exception.VolumeBDMNotFound, self.mapping,
                          volume_id)
        # Attachable again.
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')

    def test_swap_a_dead_api_process_left_is_rolled_back(self):
        # The API died after block storage made the new volume's
        # attachment but before it recorded its id: the old volume is
        # detaching, the new one reserved. The settling gives the server
        # its old volume back and frees the new one.
        old = self.attached_volume()
        new = self.create_volume()
        ctxt = context.RequestContext('demo', 'demo',
                                      roles=['member', 'reader'])
        client = local_client.LocalClient(self.conf)
        svc = block_storage.service_context(ctxt)
        bdm = self.mapping(old)
        bdm.start_task(tasks.SWAPPING, GONE_API, tasks.ACCEPTED,
                       tasks.task_data(ctxt, new_volume_id=new))
        client.begin_detaching(svc, old)
        client.attachment_create(svc, new, self.server_id)
        base.set_rows(models.BlockDeviceMapping,
                      models.BlockDeviceMapping.volume_id == old,
                      task_updated_at=self.long_ago())
        self.settle()
        self.assertEqual(('in-use', 'available'), self.statuses(old, new))
        self.assertEqual([], client.attachment_get_all(svc, volume_id=new))
        bdm = self.mapping(old)
        self.assertEqual((None, None), (bdm.task, bdm.task_owner))
        # Usable again: the server's volume detaches, the other attaches.
        self.usable_again(old, new)

    def offloaded_swap_left_by_api(self, step):
        """A shelved-offloaded server whose swap of its volume an API
        process left at ``step`` (``reserved``: the new attachment made;
        ``swapped``: completed too, and the mapping moved to the new
        volume). Returns the old and the new volume."""
        old = self.attached_volume()
        resp = self.api.post('/v2.1/servers/%s/action' % self.server_id,
                             body={'shelve': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(self.server_id, 'SHELVED_OFFLOADED')
        new = self.create_volume()
        ctxt = context.RequestContext('admin', 'admin', roles=['admin'])
        client = local_client.LocalClient(self.conf)
        svc = block_storage.service_context(ctxt)
        bdm = self.mapping(old)
        data = tasks.task_data(ctxt, new_volume_id=new)
        bdm.start_task(tasks.SWAPPING, GONE_API, tasks.ACCEPTED, data)
        attachment = client.attachment_create(svc, new, self.server_id)
        data['new_attachment_id'] = attachment['id']
        bdm.move_task(tasks.RESERVED, data=data)
        if step == tasks.SWAPPED:
            client.attachment_complete(svc, attachment['id'])
            bdm.move_task(tasks.SWAPPED, data=dict(
                data, old_volume_id=old,
                old_attachment_id=bdm.attachment_id),
                volume_id=new, attachment_id=attachment['id'],
                connection_info=None)
        base.set_rows(models.BlockDeviceMapping,
                      models.BlockDeviceMapping.instance_uuid ==
                      self.server_id, task_updated_at=self.long_ago())
        return old, new

    def test_offloaded_swap_not_moved_is_rolled_back(self):
        old, new = self.offloaded_swap_left_by_api(tasks.RESERVED)
        self.settle()
        self.assertEqual(('in-use', 'available'), self.statuses(old, new))
        self.assertEqual([], self.show_volume(new)['attachments'])
        bdm = self.mapping(old)
        self.assertEqual((None, None), (bdm.task, bdm.task_owner))
        # Usable again, while still offloaded.
        self.usable_again(old, new)
        self.assertIsNone(self.mapping(new).task)

    def test_offloaded_swap_moved_is_finished(self):
        old, new = self.offloaded_swap_left_by_api(tasks.SWAPPED)
        self.settle()
        self.assertEqual(('available', 'in-use'), self.statuses(old, new))
        self.assertEqual([], self.show_volume(old)['attachments'])
        bdm = self.mapping(new)
        self.assertEqual((None, None, '/dev/vdb'),
                         (bdm.task, bdm.task_owner, bdm.device_name))
        self.assertEqual([new], [a['volumeId'] for a in
                                 self.attachments(self.server_id)])
        # The server comes back with the new volume.
        resp = self.api.post('/v2.1/servers/%s/action' % self.server_id,
                             body={'unshelve': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertEqual('in-use', self.show_volume(new)['status'])

    def test_fresh_work_is_left_alone(self):
        volume_id = self.attached_volume()
        base.set_rows(
            models.BlockDeviceMapping,
            models.BlockDeviceMapping.volume_id == volume_id,
            task=tasks.DETACHING, task_owner=GONE_API,
            task_step=tasks.LOCAL_DETACHING,
            task_updated_at=utils.utcnow())
        self.settle()
        self.assertEqual(tasks.LOCAL_DETACHING,
                         self.mapping(volume_id).task_step)
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])

    def test_hostless_delete_left_by_an_api_process_is_finished(self):
        keep = self.attached_volume()
        drop = self.attached_volume(api=self.at('2.79'),
                                    delete_on_termination=True)
        base.set_rows(models.Instance,
                      models.Instance.uuid == self.server_id,
                      host=None, task_state='deleting', task_owner=GONE_API,
                      task_updated_at=self.long_ago())
        settled = self.settle()
        self.assertEqual([(self.server_id, 'finished')],
                         [(i.uuid, outcome) for i, outcome in settled])
        self.assertEqual(404, self.api.get(
            '/v2.1/servers/%s' % self.server_id).status)
        self.assertEqual('available', self.show_volume(keep)['status'])
        self.assertEqual(404, self.volume_api().get(
            '/v3/volumes/%s' % drop).status)
        self.assertEqual([], objects.BlockDeviceMapping.get_all_by_instance(
            self.admin_context(), self.server_id))
        # A second run finds nothing to do.
        self.assertEqual([], self.settle())

    def test_two_conductors_never_settle_one_item_twice(self):
        volume_id = self.attached_volume()
        self.left_by_api(volume_id, tasks.LOCAL_DETACHING)
        ctxt = self.admin_context()
        [first] = objects.BlockDeviceMapping.get_with_tasks(ctxt)
        [second] = objects.BlockDeviceMapping.get_with_tasks(ctxt)
        first.take_over_task('nova-lite-conductor:c1')
        self.assertRaises(exception.TaskOwnerChanged,
                          second.take_over_task, 'nova-lite-conductor:c2')
        self.assertEqual('nova-lite-conductor:c1',
                         self.mapping(volume_id).task_owner)


class ComputeSettlingTest(base.AttachmentTestCase):
    """An attach a compute host left at ``connected`` (block storage has
    the connection, the mapping its ``connection_info``) when its service
    died, and a hypervisor that kept the guest across the restart (as
    libvirt's does): the guest never got the disk."""

    def left_connected(self):
        """The server's attached volume, its mapping put back at
        ``connected`` and its disk taken from the guest; the host's
        manager."""
        from nova_lite.compute.host import recovery
        volume_id = self.attached_volume()
        host = self.admin_api.get('/v2.1/servers/%s' % self.server_id).body[
            'server']['OS-EXT-SRV-ATTR:host']
        [manager] = [s.manager for s in self.sys.system.services
                     if s.binary == 'nova-lite-compute' and s.host == host]
        base.set_rows(
            models.BlockDeviceMapping,
            models.BlockDeviceMapping.volume_id == volume_id,
            task=tasks.ATTACHING, task_owner='nova-lite-compute:%s' % host,
            task_step=tasks.CONNECTED, task_data='{}',
            task_updated_at=utils.utcnow())
        del manager.driver.guests[self.server_id].devices['/dev/vdb']

        def settle():
            return [(bdm.volume_id, outcome) for bdm, outcome in
                    recovery.settle(context.get_admin_context(),
                                    manager.driver, manager.volume_client,
                                    manager.notifier, host)]
        return volume_id, manager, settle

    def test_the_guest_gets_the_disk(self):
        volume_id, manager, settle = self.left_connected()
        self.assertEqual([(volume_id, 'finished')], settle())
        device = manager.driver.guests[self.server_id].devices['/dev/vdb']
        self.assertEqual((volume_id, 'rw'), (
            device['connection_info']['serial'], device['mode']))
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        mapping = objects.BlockDeviceMapping.get_by_volume_and_instance(
            context.get_admin_context(), volume_id, self.server_id)
        self.assertEqual((None, '/dev/vdb'),
                         (mapping.task, mapping.device_name))

    def test_rolled_back_when_the_guest_cannot_get_it(self):
        volume_id, manager, settle = self.left_connected()
        # The guest is gone: the disk cannot be given.
        del manager.driver.guests[self.server_id]
        self.assertEqual([(volume_id, 'rolled back')], settle())
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([], self.attachments(self.server_id))
