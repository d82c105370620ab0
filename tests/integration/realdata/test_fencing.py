"""A fenced host's guest never writes an iSCSI volume again once it was
freed, judged by the LUN's backing file on the host.

Production layout, default timers but for the heartbeats: host A's
compute service stopped with SIGSTOP (its QEMU runs on), the user's
detach answered 409, A fenced and the volume freed without it, then a
write queued in A's guest (its iSCSI session was cut: the write waits for
QEMU to log in again). The volume goes to a server on host B, whose guest
writes the new owner's bytes; later it comes back to host A, for a new
server there and then for the first server itself. Through each bounded
wait, long enough for the queued write to land were its QEMU let in
again, the LUN holds the new owner's bytes alone: A's connection had a
CHAP account of its own, deleted when the volume was freed, which no later
connection of A (or of a host with A's initiator name) is given again.

* ``TestIscsiFence``: each compute host with its own initiator name (as
  the tier's hosts are).
* ``TestIscsiFenceSharedInitiator``: both hosts with one initiator name
  (misconfigured): the target's ACL cannot tell them apart; the accounts
  do.
"""

import base64
import time

from tests.guest import agent
from tests.integration.realdata import base
from tests.integration.realdata import test_data_path as data_path
from tests.integration import test_fencing

HOST_BYTES = data_path.HOST_BYTES
GUEST_BYTES = data_path.GUEST_BYTES
GUEST_OFFSET = data_path.GUEST_OFFSET
OWNER_BYTES = b'the-new-owner-01'
STALE_BYTES = b'stale-guest-wr01'
# The stale write landed 0.2-15 s after the volume returned to its host
# when it was let in (issue 37): more than that.
STALE_WINDOW = 20


class _IscsiFence(object):
    """The fence's tests (a mixin: run by the two classes below, each
    with its initiator names)."""

    def queue_write(self, guest, volume_id, offset, data):
        """Have the guest write ``data`` without waiting for its answer
        (the write waits for its disk; the agent answers nothing until
        it is done)."""
        line = '%d WRITE %s %d %s\n' % (
            10 ** 6, agent.guest_serial(volume_id), offset,
            base64.b64encode(data).decode())
        guest.sock.sendall(line.encode())

    def attach_and_wait(self, server_id, volume_id):
        """Attach, and wait until the host connected the volume."""
        self.attach(server_id, volume_id)
        self.wait_for_attached(server_id, volume_id)

    def unfence(self, host):
        """Clear ``host``'s fence; False while it answers 409 (the host
        still holds a freed disk)."""
        resp = self.admin_api.as_(compute_version='2.53').put(
            '/v2.1/os-services/%s' % self.service_id(host),
            body={'forced_down': False})
        if resp.status == 409:
            return False
        self.assertEqual(200, resp.status, resp)
        return True

    def assert_owner_bytes_stay(self, volume_id, seconds=STALE_WINDOW):
        """The LUN's file holds the new owner's bytes, never the stale
        write's, through ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            self.assertEqual(OWNER_BYTES, self.host_read(
                volume_id, GUEST_OFFSET, len(OWNER_BYTES)))
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)

    def assert_exported_to(self, volume_id, hosts):
        """The volume's target admits the initiator names of ``hosts``
        alone (none: no target)."""
        target = self.target(volume_id)
        names = sorted({self.deployment.initiator(h) for h in hosts})
        self.assertEqual(names, sorted(target.acl) if target else [],
                         'targets: %s; volume: %s' % (
                             self.deployment.tgtd.targets(),
                             self.show_volume(volume_id)))
        return target

    def test_fenced_hosts_guest_never_writes_the_freed_volume(self):
        host_a, host_b = self.deployment.compute_hosts
        servers = self.create_server_on_each_host()
        first, second = servers[host_a], servers[host_b]
        volume_id = self.create_volume(backend=base.ISCSI)
        self.host_write(volume_id, 0, HOST_BYTES)
        self.attach_and_wait(first, volume_id)
        self.assert_exported_to(volume_id, [host_a])
        stale = self.guest(first)
        stale.wait_for_disk(volume_id)
        self.assertEqual(HOST_BYTES, stale.read(volume_id, 0, 16))
        stale.write(volume_id, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(GUEST_BYTES,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        first_user = self.target(volume_id).accounts

        # Host A silent: the user's detach waits for it.
        self.sigstop(host_a)
        resp = self.detach_volume(first, volume_id)
        self.assertEqual(409, resp.status, resp)
        # Fenced: the volume is freed without it; its QEMU runs on, its
        # session cut, and the guest's next write waits.
        self.force_down(host_a)
        self.addCleanup(self.force_down, host_a, False)
        self.detach_from(first, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertIsNone(self.target(volume_id))
        self.queue_write(stale, volume_id, GUEST_OFFSET, STALE_BYTES)

        # The volume goes to the server on host B.
        self.attach_and_wait(second, volume_id)
        target = self.assert_exported_to(volume_id, [host_b])
        self.assertNotEqual(first_user, target.accounts)
        owner = self.guest(second)
        owner.wait_for_disk(volume_id)
        self.assertEqual(GUEST_BYTES, owner.read(volume_id, GUEST_OFFSET,
                                                 16))
        owner.write(volume_id, GUEST_OFFSET, OWNER_BYTES)
        self.assert_owner_bytes_stay(volume_id)

        # Host A returns and, once it removed the freed disk from its
        # guest (or stopped the guest), is unfenced; the volume comes back
        # to it, for a new server there.
        self.sigcont(host_a)
        self.wait_for(lambda: self.unfence(host_a),
                      message='host %s stayed fenced' % host_a)
        self.wait_for_service_state('nova-lite-compute', host_a, 'up')
        self.detach_from(second, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.set_compute_status(host_b, 'disabled')
        third = self.create_server()
        self.wait_for_server_status(third, 'ACTIVE', host=host_a)
        self.attach_and_wait(third, volume_id)
        self.assert_exported_to(volume_id, [host_a])
        returned = self.guest(third)
        returned.wait_for_disk(volume_id)
        self.assertEqual(OWNER_BYTES, returned.read(volume_id, GUEST_OFFSET,
                                                    16))
        self.assert_owner_bytes_stay(volume_id)

        # And for the first server itself.
        self.detach_from(third, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.attach_and_wait(first, volume_id)
        self.assert_exported_to(volume_id, [host_a])
        self.assert_owner_bytes_stay(volume_id)


class TestIscsiFence(_IscsiFence, test_fencing.FenceHelpers,
                     data_path.DataPathTestCase):
    """Each compute host with an initiator name of its own."""


class TestIscsiFenceSharedInitiator(_IscsiFence, test_fencing.FenceHelpers,
                                    data_path.DataPathTestCase):
    """Both compute hosts with one initiator name."""
    SHARED_INITIATOR = True
