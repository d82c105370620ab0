"""A fenced host that comes back, on the whole system in-process (issue
37): it removes every disk it no longer owns, each server under its
instance lock; a guest that does not let go is stopped (SHUTOFF, its
fault saying why) and attaches volumes again; until the host removed
them, it cannot be let go (``forced_down: false`` answers 409 naming the
servers)."""

import contextlib
from unittest import mock

from nova_lite import context as nl_context
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_fault
from nova_lite.objects import stale_disk
from nova_lite import states
from tests.functional.compute import test_fencing

ASYNC = test_fencing.ASYNC


class ReturningHostTest(test_fencing.FencingTestCase):
    def setUp(self):
        super().setUp()
        self.ctxt = nl_context.get_admin_context()
        self.guest = self.manager.driver.guests[self.server_id]

    def let_go(self, expect=200):
        resp = self.admin.put('/v2.1/os-services/%s' % self.service_view()[
            'id'], body={'forced_down': False})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def freed_while_fenced(self):
        """A volume of the server detached without its host (silent,
        then forced down); the host answers again, its periodic tasks
        not run yet."""
        volume_id = self.attached_volume()
        self.silence()
        self.force_down()
        self.detach(self.server_id, volume_id)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertIn('/dev/vdb', self.guest.devices)
        self.answer()
        return volume_id

    def test_a_guest_that_does_not_let_go_is_stopped(self):
        self.guest.holds.add('/dev/vdb')     # blocked on the disk
        volume_id = self.freed_while_fenced()
        self.assertEqual(
            [(self.server_id, '/dev/vdb', volume_id)],
            [(d.instance_uuid, d.device_name, d.volume_id)
             for d in stale_disk.get_by_host(self.ctxt, 'compute1')])
        resp = self.let_go(expect=409)
        self.assertIn(self.server_id, self.message(resp))
        self.assertTrue(self.service_view()['forced_down'])

        self.manager.periodic_tasks(self.ctxt)
        # Asked once, then powered off: the guest no longer has the disk.
        self.assertEqual(states.SHUTDOWN, self.guest.power_state)
        self.assertNotIn('/dev/vdb', self.guest.devices)
        server = self.show_server(self.server_id)
        self.assertEqual(('SHUTOFF', None, states.SHUTDOWN),
                         (server['status'], server['OS-EXT-STS:task_state'],
                          server['OS-EXT-STS:power_state']))
        fault = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctxt, [self.server_id])[self.server_id]
        self.assertIn('did not release volume %s (/dev/vdb)' % volume_id,
                      fault.message)
        self.assertEqual([], stale_disk.get_by_host(self.ctxt, 'compute1'))
        self.let_go()

        # The server attaches volumes again, the same one at the same
        # name included.
        self.attach(self.server_id, volume_id, api=self.at(ASYNC),
                    expect=202)
        self.wait_for_volume_status(volume_id, 'in-use')
        [item] = self.attachments(self.server_id, api=self.at(ASYNC))
        self.assertEqual('/dev/vdb', item['device'])
        self.assertEqual(volume_id, self.guest.devices['/dev/vdb'][
            'connection_info']['serial'])

    def test_a_guest_that_lets_go_keeps_running(self):
        self.freed_while_fenced()
        self.manager.periodic_tasks(self.ctxt)
        self.assertNotIn('/dev/vdb', self.guest.devices)
        self.assertEqual(states.RUNNING, self.guest.power_state)
        self.assertEqual('ACTIVE',
                         self.show_server(self.server_id)['status'])
        self.assertEqual({}, instance_fault.InstanceFault
                         .get_latest_for_instances(self.ctxt,
                                                   [self.server_id]))
        self.let_go()

    def test_a_disk_even_a_stop_leaves_is_recorded(self):
        # The hypervisor cannot stop the guest: the host records the disk
        # it still has, and stays fenced until it is gone.
        self.guest.holds.add('/dev/vdb')
        self.freed_while_fenced()
        with mock.patch.object(self.manager.driver, 'power_off',
                               side_effect=RuntimeError('hypervisor')):
            self.manager.periodic_tasks(self.ctxt)
        self.assertIn('/dev/vdb', self.guest.devices)
        self.assertEqual(['/dev/vdb'], [
            d.device_name
            for d in stale_disk.get_by_host(self.ctxt, 'compute1')])
        self.let_go(expect=409)
        self.manager.periodic_tasks(self.ctxt)
        self.assertNotIn('/dev/vdb', self.guest.devices)
        self.let_go()

    def test_the_reap_reads_the_mappings_under_the_instance_lock(self):
        self.freed_while_fenced()
        lock = self.manager.instance_lock
        held = set()

        @contextlib.contextmanager
        def watched_lock(uuid):
            with lock(uuid):
                held.add(uuid)
                try:
                    yield
                finally:
                    held.discard(uuid)
        read = bdm_obj.BlockDeviceMapping.get_all_by_instance
        reads = []

        def watched_read(context, uuid):
            reads.append((uuid, uuid in held))
            return read(context, uuid)
        with mock.patch.object(self.manager, 'instance_lock',
                               watched_lock), \
                mock.patch.object(bdm_obj.BlockDeviceMapping,
                                  'get_all_by_instance',
                                  side_effect=watched_read):
            self.manager.periodic_tasks(self.ctxt)
        self.assertNotIn('/dev/vdb', self.guest.devices)
        self.assertEqual([(self.server_id, True)], reads)
