"""Ceph RBD volumes through the public API, judged by the guests.

The ``rbd`` backend keeps each volume as an image of the machine's
one-node Ceph (``tests.fixtures.ceph``); the guests' disks are QEMU's own
librbd client, each compute host logging in with the cephx identity the
backend made for it. Bytes written into the image from the host
(``rbd_write``) are what the guest reads, found by the disk's serial; what
a guest writes is in the image. Every test skips, saying so, where Ceph is
not installed (and fails with ``NOVA_LITE_REQUIRE_CEPH=1``, as in CI).

* ``TestRbdDataPath``: the production layout (uWSGI, RabbitMQ, MariaDB,
  two compute hosts): attach at 2.100 (synchronous), 2.101 (asynchronous)
  and 2.105 read-only, multiattach across the two hosts, shelve-offload
  and unshelve, and migrations onto and off ``rbd`` under a running
  guest.
* ``TestRbdFence``: a fenced host's guest never writes the volume again
  once it was freed, also after the volume returns to that host.
* ``TestRbdCephOutage``: a Ceph of the deployment's own, its OSD and
  then its monitor stopped: creates and attaches fail within the
  timeout and leave nothing stuck; back, the guest reads the volume.
* ``TestRbdAllInOne``: the same attaches on the embedded default
  (``nova-lite-all``, one process, SQLite).
"""

from tests.guest import agent
from tests.integration.realdata import base
from tests.integration.realdata import test_data_path as data_path
from tests.integration import test_fencing

HOST_BYTES = data_path.HOST_BYTES
GUEST_BYTES = data_path.GUEST_BYTES
GUEST_OFFSET = data_path.GUEST_OFFSET
dev = data_path.dev


class _RbdTestCase(data_path.DataPathTestCase):

    def setUp(self):
        super().setUp()
        self.require_rbd()

    def create_rbd_volume(self, multiattach=False):
        volume_id = self.create_volume(backend=base.RBD,
                                       multiattach=multiattach)
        self.assertEqual(base.RBD, self.volume_backend(volume_id))
        self.assertIn(self.image(volume_id),
                      self.deployment.ceph.images())
        return volume_id

    def rbd_disk(self, server_id, volume_id):
        """``(image, cephx user)`` of the guest's disk of the volume, from
        the domain's live XML; fails unless it is a librbd disk."""
        from nova_lite.virt.libvirt import config as vconfig
        root = vconfig.parse(self._domain(server_id).XMLDesc(0))
        for disk in vconfig.disks(root).values():
            if disk['serial'] != volume_id:
                continue
            source = disk['element'].find('source')
            self.assertEqual('network', disk['element'].get('type'))
            self.assertEqual('rbd', source.get('protocol'))
            auth = source.find('auth')
            return (source.get('name'),
                    auth.get('username') if auth is not None else None)
        raise AssertionError('server %s has no disk of volume %s' % (
            server_id, volume_id))

    def assert_guest_reads_and_writes(self, server_id, volume_id):
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        guest.write(volume_id, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(GUEST_BYTES,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        return guest


class _Attaches(object):
    """Attach at 2.100, 2.101 and 2.105 read-only: on both layouts."""

    def test_attached_sync_and_async_the_guest_reads_the_image(self):
        server_id = self.active_server()
        volume_id = self.create_rbd_volume()
        self.host_write(volume_id, 0, HOST_BYTES)

        # 2.100: answered once the host plugged the disk.
        device = self.attach(server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        guest = self.assert_guest_reads_and_writes(server_id, volume_id)
        self.assertEqual({dev(device): volume_id},
                         self.domain_disks(server_id))
        image, user = self.rbd_disk(server_id, volume_id)
        self.assertEqual('%s/%s' % (self.deployment.ceph.pool,
                                    self.image(volume_id)), image)
        # The host's own cephx identity, not the backend's.
        self.assertNotEqual('admin', user)
        self.detach_from(server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        guest.wait_for_no_disk(volume_id)
        self.assertEqual({}, self.domain_disks(server_id, inactive=True))
        self.assertEqual([], self.deployment.ceph.watchers(
            self.image(volume_id)))

        # 2.101: 202 at once, the guest sees the disk when it is done.
        api = self.api.as_(compute_version='2.101')
        resp = self.attach_volume(server_id, volume_id, api=api)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_attached(server_id, volume_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(GUEST_BYTES,
                         guest.read(volume_id, GUEST_OFFSET, 16))
        guest.write(volume_id, 2 * GUEST_OFFSET, b'async-attached!!')
        self.assertEqual(b'async-attached!!',
                         self.host_read(volume_id, 2 * GUEST_OFFSET, 16))
        self.detach_from(server_id, volume_id, api)
        self.wait_for_volume_status(volume_id, 'available')
        guest.wait_for_no_disk(volume_id)

    def test_read_only_attachment_refuses_the_guests_write(self):
        server_id = self.active_server()
        volume_id = self.create_rbd_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        api = self.api.as_(compute_version='2.105')
        resp = self.attach_volume(server_id, volume_id, api=api,
                                  attach_mode='ro')
        self.assertEqual(202, resp.status, resp)
        self.wait_for_attached(server_id, volume_id)

        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertTrue(guest.disks()[agent.guest_serial(volume_id)]['ro'])
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.assertRaises(agent.GuestError, guest.write, volume_id,
                          GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(b'\0' * 16,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        self.detach_from(server_id, volume_id, api)
        self.wait_for_volume_status(volume_id, 'available')


class TestRbdDataPath(_Attaches, _RbdTestCase):

    def test_multiattach_guests_on_two_hosts_share_the_bytes(self):
        servers = self.create_server_on_each_host()
        first, second = (servers[h] for h in self.deployment.compute_hosts)
        shared = self.create_rbd_volume(multiattach=True)
        self.host_write(shared, 0, HOST_BYTES)
        api = self.api.as_(compute_version='2.60')
        guests = {}
        users = set()
        for server_id in (first, second):
            self.attach(server_id, shared, api=api)
            guests[server_id] = self.guest(server_id)
            guests[server_id].wait_for_disk(shared)
            self.assertEqual(HOST_BYTES, guests[server_id].read(shared, 0,
                                                                16))
            users.add(self.rbd_disk(server_id, shared)[1])
        # Each host with its own identity.
        self.assertEqual(2, len(users))
        guests[first].write(shared, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(GUEST_BYTES,
                         guests[second].read(shared, GUEST_OFFSET, 16))
        guests[second].write(shared, 2 * GUEST_OFFSET, b'second-host-wr!!')
        self.assertEqual(b'second-host-wr!!',
                         guests[first].read(shared, 2 * GUEST_OFFSET, 16))

        # One host lets go: the other keeps reading and writing.
        self.detach_from(first, shared, api)
        guests[first].wait_for_no_disk(shared)
        guests[second].write(shared, 3 * GUEST_OFFSET, b'still-connected!')
        self.assertEqual(b'still-connected!',
                         self.host_read(shared, 3 * GUEST_OFFSET, 16))
        self.detach_from(second, shared, api)
        self.wait_for_volume_status(shared, 'available')
        self.assertEqual([], self.deployment.ceph.watchers(
            self.image(shared)))

    def test_shelve_offload_and_unshelve_keep_the_rbd_disk(self):
        server_id = self.active_server()
        volume_id = self.create_rbd_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        device = self.attach(server_id, volume_id)
        self.assert_guest_reads_and_writes(server_id, volume_id)

        self.server_action(server_id, {'shelve': None})
        self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')
        # No host holds the image open.
        self.wait_for(lambda: not self.deployment.ceph.watchers(
            self.image(volume_id)), message='the image is still open')

        self.server_action(server_id, {'unshelve': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.assertEqual({dev(device): volume_id},
                         self.domain_disks(server_id))
        guest = self.guest(server_id, reconnect=True)
        guest.wait_for_disk(volume_id)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.assertEqual(GUEST_BYTES, guest.read(volume_id, GUEST_OFFSET, 16))

    def test_migrated_onto_and_off_rbd_under_the_running_guest(self):
        server_id = self.active_server()
        volume_id = self.create_volume(backend=base.FILE)
        self.host_write(volume_id, 0, HOST_BYTES)
        device = self.attach(server_id, volume_id)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        guest.write(volume_id, GUEST_OFFSET, GUEST_BYTES)

        # file -> rbd: the block copy moves the bytes into the image under
        # the guest, which goes on reading and writing it.
        self.retype(volume_id, base.RBD)
        self.assertIn(self.image(volume_id), self.deployment.ceph.images())
        self.assertEqual(HOST_BYTES, self.host_read(volume_id, 0, 16))
        self.assertEqual(GUEST_BYTES,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        guest.write(volume_id, 2 * GUEST_OFFSET, b'now-on-rbd-image')
        self.assertEqual(b'now-on-rbd-image',
                         self.host_read(volume_id, 2 * GUEST_OFFSET, 16))
        self.assertEqual({dev(device): volume_id},
                         self.domain_disks(server_id, inactive=True))
        image = self.image(volume_id)

        # rbd -> iscsi: and off again, onto a LUN.
        self.retype(volume_id, base.ISCSI)
        self.assertEqual(b'now-on-rbd-image',
                         self.host_read(volume_id, 2 * GUEST_OFFSET, 16))
        guest.write(volume_id, 3 * GUEST_OFFSET, b'now-on-iscsi-lun')
        self.assertEqual(b'now-on-iscsi-lun',
                         self.host_read(volume_id, 3 * GUEST_OFFSET, 16))
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.assert_exported_to_one_host(volume_id)
        # The image the volume left is deleted with the temporary volume.
        self.wait_for(lambda: image not in self.deployment.ceph.images(),
                      message='image %s was not deleted' % image)


class TestRbdFence(test_fencing.FenceHelpers, _RbdTestCase):
    """Production layout, default timers but for the heartbeats: host A's
    compute service stopped with SIGSTOP (its QEMU runs on), the volume
    freed by fencing A and given to a server on host B. The first
    guest's writes fail from then on: the backend blocklisted its Ceph
    client when A's connection was torn down, so the image holds only the
    new owner's bytes, also once the volume is attached on A again."""

    def test_fenced_hosts_guest_cannot_write_the_freed_volume(self):
        host_a, host_b = self.deployment.compute_hosts
        servers = self.create_server_on_each_host()
        first, second = servers[host_a], servers[host_b]
        volume_id = self.create_rbd_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        self.attach(first, volume_id)
        stale = self.assert_guest_reads_and_writes(first, volume_id)

        self.sigstop(host_a)
        resp = self.detach_volume(first, volume_id)
        self.assertEqual(409, resp.status, resp)
        self.force_down(host_a)
        self.addCleanup(self.unfence_quietly, host_a)
        # Fenced: the detach is done without the host.
        self.detach_from(first, volume_id)
        self.wait_for_volume_status(volume_id, 'available')

        self.attach(second, volume_id)
        owner = self.guest(second)
        owner.wait_for_disk(volume_id)
        self.assertEqual(GUEST_BYTES, owner.read(volume_id, GUEST_OFFSET,
                                                 16))
        owner.write(volume_id, GUEST_OFFSET, b'the-new-owner-01')
        # The fenced host's guest still runs, still has the disk, and its
        # write fails: its client is blocklisted.
        self.assertTrue(stale.has_disk(volume_id))
        self.assertRaises(agent.GuestError, stale.write, volume_id,
                          GUEST_OFFSET, b'stale-guest-wr01')
        self.assertEqual(b'the-new-owner-01',
                         self.host_read(volume_id, GUEST_OFFSET, 16))

        # Host A returns and is unfenced; the volume comes back to it, for
        # a new server there: the stale guest's writes still fail.
        self.sigcont(host_a)
        # Let go once it removed the freed disk (or stopped the guest
        # that held it).
        self.let_go(host_a, timeout=120)
        self.wait_for_service_state('nova-lite-compute', host_a, 'up')
        self.detach_from(second, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.set_compute_status(host_b, 'disabled')
        third = self.create_server()
        self.wait_for_server_status(third, 'ACTIVE', host=host_a)
        self.attach(third, volume_id)
        returned = self.guest(third)
        returned.wait_for_disk(volume_id)
        self.assertEqual(b'the-new-owner-01',
                         returned.read(volume_id, GUEST_OFFSET, 16))
        if stale.has_disk(volume_id):
            self.assertRaises(agent.GuestError, stale.write, volume_id,
                              GUEST_OFFSET, b'stale-guest-wr02')
        self.assertEqual(b'the-new-owner-01',
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        self.assertEqual(b'the-new-owner-01',
                         returned.read(volume_id, GUEST_OFFSET, 16))


class TestRbdCephOutage(_RbdTestCase):
    """The ``rbd`` backend on a Ceph of the deployment's own, whose OSD
    and then monitor stop: what block storage asks of Ceph fails within
    ``rados_connect_timeout`` (10 s) with a fault naming Ceph, and
    nothing is left ``creating``, ``attaching`` or ``reserved``; once Ceph
    is back, the same volume attaches and the guest reads it."""
    PRIVATE_CEPH = True
    # Well above the timeout: what settles here is settled by the failure
    # itself, not by a stall.
    OUTAGE_TIMEOUT = 120

    def create_while_down(self):
        resp = self.api.post('/v3/demo/volumes', body={'volume': {
            'size': 1, 'volume_type': self.deployment.volume_type(
                base.RBD)}})
        self.assertEqual(202, resp.status, resp)
        volume_id = resp.body['volume']['id']
        self.addCleanup(self._delete_volume, volume_id, 'demo')
        self.wait_for(lambda: self.show_volume(volume_id)['status'] ==
                      'error', timeout=self.OUTAGE_TIMEOUT,
                      message=lambda: 'volume %s: %s' % (
                          volume_id, self.show_volume(volume_id)))
        return volume_id

    def test_ceph_down_fails_clearly_and_leaves_nothing_stuck(self):
        ceph = self.deployment.ceph
        server_id = self.active_server()
        volume_id = self.create_rbd_volume()
        self.host_write(volume_id, 0, HOST_BYTES)

        ceph.stop_osd()
        self.addCleanup(ceph.start_osd)
        self.create_while_down()
        # An attach at 2.101: accepted, then undone when the connect
        # fails; the volume usable again, the server without it.
        api = self.api.as_(compute_version='2.101')
        resp = self.attach_volume(server_id, volume_id, api=api)
        self.assertEqual(202, resp.status, resp)

        def undone():
            volume = self.show_volume(volume_id)
            return (volume['status'] == 'available' and
                    not volume['attachments'] and
                    volume_id not in [a['volumeId'] for a in
                                      self.list_attachments(server_id)])
        self.wait_for(undone, timeout=self.OUTAGE_TIMEOUT,
                      message=lambda: 'attach not undone: %s' %
                      self.show_volume(volume_id))
        # The driver's error, in the volume service that runs it and in
        # the API's answer.
        self.assertIn('Ceph cluster', self.deployment.processes[
            self.deployment.VOLUME].log_text())
        self.assertEqual({}, self.domain_disks(server_id))

        # Back: the same volume attaches, the guest reads the bytes.
        ceph.start_osd()
        self.attach(server_id, volume_id)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.detach_from(server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')

        # The monitor down: a create fails within the timeout too.
        ceph.stop_mon()
        self.addCleanup(ceph.start_mon)
        self.create_while_down()
        ceph.start_mon()


class TestRbdAllInOne(_Attaches, _RbdTestCase):
    """The embedded default: one ``nova-lite-all`` process."""
    ALL_IN_ONE = True
