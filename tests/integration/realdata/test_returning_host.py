"""A fenced host that comes back to a wedged guest, on a real libvirt
guest (issue 37): the guest ignores unplug requests (as one blocked on
the disk does); its host's compute service is stopped (SIGSTOP: QEMU runs
on), forced down, and the volume freed without it. Until the host has
removed the disk it cannot be let go (409 naming the server); back, it
asks the guest once, waits ``[libvirt] device_detach_timeout``, then
powers the guest off (SHUTOFF: never left running with the disk). The
server then attaches the volume again and its new guest reads it."""

from tests.integration.realdata import base
from tests.integration.realdata import test_data_path as data_path
from tests.integration import test_fencing

HOST_BYTES = data_path.HOST_BYTES
DETACH_TIMEOUT = 5


class TestWedgedGuestOnReturn(test_fencing.FenceHelpers,
                              data_path.DataPathTestCase):
    EXTRA_CONF = {'libvirt': {'device_detach_timeout': DETACH_TIMEOUT}}

    def test_a_guest_that_does_not_let_go_is_stopped(self):
        server_id = self.active_server()
        host = self.show_server(server_id)['OS-EXT-SRV-ATTR:host']
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        device = self.attach(server_id, volume_id)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        guest.ignore_unplug()

        self.sigstop(host)
        self.force_down(host)
        self.addCleanup(self.unfence_quietly, host)
        self.detach_from(server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        resp = self.admin_api.as_(compute_version='2.53').put(
            '/v2.1/os-services/%s' % self.service_id(host),
            body={'forced_down': False})
        self.assertEqual(409, resp.status, resp)
        self.assertIn(server_id, resp.body['conflictingRequest']['message'])
        # Still running with the disk while its host is stopped.
        self.assertTrue(guest.has_disk(volume_id))

        self.sigcont(host)
        server = self.wait_for_server_status(server_id, 'SHUTOFF')
        self.assertIsNone(server['OS-EXT-STS:task_state'])
        self.assertEqual({}, {d: s for d, s in self.domain_disks(
            server_id, inactive=True).items() if s == volume_id})
        self.assertFalse(self._domain(server_id).isActive())
        self.assertIn('Stopping the guest of server %s' % server_id,
                      self.host_log(host))
        self.let_go(host, timeout=60)

        # The server attaches the volume again, at the same name; its
        # next guest reads the bytes.
        self.assertEqual(device, self.attach(server_id, volume_id))
        self.server_action(server_id, {'os-start': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        guest = self.guest(server_id, reconnect=True)
        guest.wait_for_disk(volume_id, timeout=base.BOOT_TIMEOUT)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
