"""The first real-data scenarios: bytes through the API's attach reach
the guest, found by serial; detach takes the disk from the guest and the
domain; shelve-offload and unshelve bring the guest back with the disk at
its device name and its data. (The scaffolding's examples; the tier's
scenarios join here.)"""

from tests.integration.realdata import base


class TestDataPath(base.RealDataTestCase):
    def test_bytes_written_into_a_volume_reach_the_guest(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, b'from-the-host-01')
        resp = self.attach_volume(server_id, volume_id)
        self.assertEqual(200, resp.status, resp)
        device = resp.body['volumeAttachment']['device']
        self.wait_for_volume_status(volume_id, 'in-use')
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(b'from-the-host-01', guest.read(volume_id, 0, 16))
        self.assertEqual({device.rsplit('/', 1)[-1]: volume_id},
                         self.domain_disks(server_id))
        guest.write(volume_id, 4096, b'from-the-guest-1')
        self.assertEqual(b'from-the-guest-1',
                         self.host_read(volume_id, 4096, 16))

        resp = self.detach_volume(server_id, volume_id)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertFalse(guest.has_disk(volume_id))
        self.assertEqual({}, self.domain_disks(server_id))
        self.assertEqual({}, self.domain_disks(server_id, inactive=True))

    def test_shelve_offload_and_unshelve_keep_devices_and_data(self):
        # [DEFAULT] shelved_offload_time is 0: shelve offloads at once.
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, b'kept-over-shelve')
        resp = self.attach_volume(server_id, volume_id)
        self.assertEqual(200, resp.status, resp)
        device = resp.body['volumeAttachment']['device']
        self.wait_for_volume_status(volume_id, 'in-use')
        self.guest(server_id).wait_for_disk(volume_id)

        self.server_action(server_id, {'shelve': None})
        self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')
        import libvirt
        self.assertRaises(libvirt.libvirtError, self._domain, server_id)

        self.server_action(server_id, {'unshelve': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.assertEqual({device.rsplit('/', 1)[-1]: volume_id},
                         self.domain_disks(server_id))
        guest = self.guest(server_id, reconnect=True)
        guest.wait_for_disk(volume_id)
        self.assertEqual(b'kept-over-shelve', guest.read(volume_id, 0, 16))
