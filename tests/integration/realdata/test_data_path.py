"""The data path through the public API, judged by the guests: bytes
written on the host into a volume (the iSCSI LUN's backing file, or the
``file`` volume) are read by the guest it is attached to, found by the
disk's serial (the volume id), and what a guest writes is in that file.
Actions go through the REST API only; tgtd (``tgtadm --op show``) and the
domain XML say where a disk is, or is no longer, exported and plugged.

Volumes are on the ``iscsi`` backend (the deployment's default) unless a
test says otherwise; each test boots as few guests as it can.
``TestMigrationAndSettling`` has a deployment of its own that settles
every second.
"""

from tests.guest import agent
from tests.integration.realdata import base

HOST_BYTES = b'from-the-host-01'
GUEST_BYTES = b'from-the-guest-1'
# Where the guests write (the host's bytes are at 0).
GUEST_OFFSET = 4096


def dev(device):
    """``vdb`` of ``/dev/vdb``."""
    return device.rsplit('/', 1)[-1]


class DataPathTestCase(base.RealDataTestCase):

    def attach(self, server_id, volume_id, api=None, **fields):
        """Attach below 2.101 (synchronous: 200 once the host plugged
        it); the device name the API answered."""
        resp = self.attach_volume(server_id, volume_id, api=api, **fields)
        self.assertEqual(200, resp.status, resp)
        return resp.body['volumeAttachment']['device']

    def detach_from(self, server_id, volume_id, api=None):
        """Detach and wait until the volume no longer names the server."""
        resp = self.detach_volume(server_id, volume_id, api=api)
        self.assertEqual(202, resp.status, resp)
        self.wait_for(lambda: server_id not in [
            a['server_id'] for a in self.show_volume(volume_id)[
                'attachments']], message='volume %s still on %s' % (
                    volume_id, server_id))

    def retype(self, volume_id, backend):
        """Retype with a migration (``on-demand``) onto ``backend``; waits
        until the migration succeeded."""
        resp = self.api.post('/v3/demo/volumes/%s/action' % volume_id,
                             body={'os-retype': {
                                 'new_type': self.deployment.volume_type(
                                     backend),
                                 'migration_policy': 'on-demand'}})
        self.assertEqual(202, resp.status, resp)

        def migrated():
            volume = self.show_volume(volume_id)
            if volume['migration_status'] == 'error':
                raise AssertionError('migration failed: %s' % volume)
            return (volume['migration_status'] == 'success' and
                    volume['os-vol-host-attr:host'].endswith(
                        '@%s#%s' % (backend, backend)))

        self.wait_for(migrated, message=lambda: 'volume %s not migrated '
                      'to %s: %s' % (volume_id, backend,
                                     self.show_volume(volume_id)))

    def assert_exported_to_one_host(self, volume_id):
        """The volume's target exports its file, read/write, to one
        initiator (one host's: each has its own) that is logged in (the
        guest's QEMU); returns the initiator."""
        target = self.target(volume_id)
        self.assertIsNotNone(target, 'volume %s has no target' % volume_id)
        self.assertEqual({'path': self.volume_path(volume_id),
                          'readonly': False}, target.luns[1])
        self.assertEqual(1, len(target.acl), target)
        initiator = target.acl[0]
        self.assertIn(initiator, [s[2] for s in target.sessions], target)
        return initiator

    def assert_exported_to_hosts(self, volume_id, hosts):
        """The volume's target exports its file to the initiators of
        ``hosts`` alone, each logged in, each host connection with a CHAP
        account of its own."""
        target = self.target(volume_id)
        self.assertIsNotNone(target, 'volume %s has no target' % volume_id)
        names = sorted(self.deployment.initiator(h) for h in hosts)
        self.assertEqual(names, sorted(target.acl), target)
        self.assertEqual(names, sorted({s[2] for s in target.sessions}),
                         target)
        self.assertEqual(len(hosts), len(target.accounts), target)


class TestDataPath(DataPathTestCase):

    def test_host_bytes_reach_the_guest_and_its_writes_the_next_one(self):
        servers = self.create_server_on_each_host()
        first, second = (servers[h] for h in self.deployment.compute_hosts)
        volume_id = self.create_volume()
        self.assertEqual(base.ISCSI, self.volume_backend(volume_id))
        self.host_write(volume_id, 0, HOST_BYTES)

        device = self.attach(first, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        guest = self.guest(first)
        guest.wait_for_disk(volume_id)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.assertEqual({dev(device): volume_id}, self.domain_disks(first))
        self.assert_exported_to_one_host(volume_id)
        guest.write(volume_id, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(GUEST_BYTES,
                         self.host_read(volume_id, GUEST_OFFSET, 16))

        # Detach: gone from the guest, the domain (live and defined) and
        # tgtd (no host has the volume exported any more).
        resp = self.detach_volume(first, volume_id)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertFalse(guest.has_disk(volume_id))
        self.assertEqual({}, self.domain_disks(first))
        self.assertEqual({}, self.domain_disks(first, inactive=True))
        self.assertIsNone(self.target(volume_id))

        # The first guest's write stayed in the volume: the second server,
        # on the other host, reads it.
        device = self.attach(second, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        other = self.guest(second)
        other.wait_for_disk(volume_id)
        self.assertEqual(GUEST_BYTES,
                         other.read(volume_id, GUEST_OFFSET, 16))
        self.assertEqual(HOST_BYTES, other.read(volume_id, 0, 16))
        self.assertEqual({dev(device): volume_id}, self.domain_disks(second))
        self.assert_exported_to_one_host(volume_id)

    def test_read_only_attachment_refuses_the_guests_write(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        api = self.api.as_(compute_version='2.105')

        resp = self.attach_volume(server_id, volume_id, api=api,
                                  attach_mode='ro')
        self.assertEqual(202, resp.status, resp)
        self.wait_for_attached(server_id, volume_id)
        shown = api.get('/v2.1/servers/%s/os-volume_attachments/%s' % (
            server_id, volume_id))
        self.assertEqual('ro', shown.body['volumeAttachment']['attach_mode'])

        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertTrue(guest.disks()[agent.guest_serial(volume_id)]['ro'])
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.assertRaises(agent.GuestError, guest.write, volume_id, 0,
                          GUEST_BYTES)
        self.assertRaises(agent.GuestError, guest.write, volume_id,
                          GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(HOST_BYTES, self.host_read(volume_id, 0, 16))
        self.assertEqual(b'\0' * 16,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        # The only host connected is read-only: so is the LUN.
        self.assertTrue(self.target(volume_id).luns[1]['readonly'])

    def test_multiattach_guests_share_the_bytes(self):
        here, there = self.deployment.compute_hosts
        shared = self.create_volume(multiattach=True)
        self.host_write(shared, 0, HOST_BYTES)
        # A multi-create at 2.105 onto one host (the other takes no new
        # server): both servers boot with the volume, on one connection
        # of their host.
        self.set_compute_status(there, 'disabled')
        pair = self.create_servers(2, networks='none',
                                   block_device_mapping_v2=[{
                                       'source_type': 'volume',
                                       'destination_type': 'volume',
                                       'uuid': shared,
                                       'attach_mode': 'rw'}])
        guests = {}
        for server_id in pair:
            self.wait_for_server_status(server_id, 'ACTIVE', host=here)
            guests[server_id] = guest = self.guest(server_id)
            guest.wait_for_disk(shared)
            self.assertEqual(HOST_BYTES, guest.read(shared, 0, 16))
            self.assertEqual([shared],
                             list(self.domain_disks(server_id).values()))
        # And attached through the API (2.60: multiattach, synchronous)
        # to a server of the other host.
        self.set_compute_status(there, 'enabled')
        third = self.create_server()
        self.wait_for_server_status(third, 'ACTIVE', host=there)
        api = self.api.as_(compute_version='2.60')
        device = self.attach(third, shared, api=api)
        guests[third] = self.guest(third)
        guests[third].wait_for_disk(shared)
        self.assertEqual(HOST_BYTES, guests[third].read(shared, 0, 16))
        self.assertEqual({dev(device): shared}, self.domain_disks(third))
        self.assert_exported_to_hosts(shared, [here, there])

        # One guest's write is what the others read.
        first, second = pair
        guests[first].write(shared, GUEST_OFFSET, GUEST_BYTES)
        for server_id in (second, third):
            self.assertEqual(GUEST_BYTES,
                             guests[server_id].read(shared, GUEST_OFFSET, 16))

        # Detached from one server of the pair: gone from its guest and
        # domain; its host keeps the connection the other one uses.
        self.detach_from(first, shared, api)
        self.assertFalse(guests[first].has_disk(shared))
        self.assertEqual({}, self.domain_disks(first))
        self.assertEqual({}, self.domain_disks(first, inactive=True))
        guests[second].write(shared, 2 * GUEST_OFFSET, b'second-guest-wr!')
        self.assertEqual(b'second-guest-wr!',
                         guests[third].read(shared, 2 * GUEST_OFFSET, 16))
        self.assert_exported_to_hosts(shared, [here, there])

        # Detached from the other host: the first host's guest still
        # reads and writes it.
        self.detach_from(third, shared, api)
        self.assertFalse(guests[third].has_disk(shared))
        self.assertEqual({}, self.domain_disks(third, inactive=True))
        guests[second].write(shared, 3 * GUEST_OFFSET, b'still-connected!')
        self.assertEqual(b'still-connected!',
                         self.host_read(shared, 3 * GUEST_OFFSET, 16))
        self.assertEqual(GUEST_BYTES,
                         guests[second].read(shared, GUEST_OFFSET, 16))
        self.assert_exported_to_hosts(shared, [here])

        # And from the last one: exported to no host.
        self.detach_from(second, shared, api)
        self.wait_for_volume_status(shared, 'available')
        self.assertFalse(guests[second].has_disk(shared))
        self.assertIsNone(self.target(shared))

    def test_shelve_offload_and_unshelve_keep_devices_and_data(self):
        # [DEFAULT] shelved_offload_time is 0: shelve offloads at once.
        server_id = self.active_server()
        volumes = {backend: self.create_volume(backend=backend)
                   for backend in base.BACKENDS}
        devices = {}
        guest = self.guest(server_id)
        for backend, volume_id in volumes.items():
            self.host_write(volume_id, 0, ('kept-over-%-6s' % backend)
                            .encode())
            devices[dev(self.attach(server_id, volume_id))] = volume_id
            guest.wait_for_disk(volume_id)
            guest.write(volume_id, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(devices, self.domain_disks(server_id))

        self.server_action(server_id, {'shelve': None})
        self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')
        import libvirt
        self.assertRaises(libvirt.libvirtError, self._domain, server_id)
        # Offloaded, the server is on no host: its volume is exported to
        # none.
        self.assertIsNone(self.target(volumes[base.ISCSI]))

        self.server_action(server_id, {'unshelve': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.assertEqual(devices, self.domain_disks(server_id))
        guest = self.guest(server_id, reconnect=True)
        for backend, volume_id in volumes.items():
            guest.wait_for_disk(volume_id)
            self.assertEqual(('kept-over-%-6s' % backend).encode(),
                             guest.read(volume_id, 0, 16))
            self.assertEqual(GUEST_BYTES,
                             guest.read(volume_id, GUEST_OFFSET, 16))
        self.assert_exported_to_one_host(volumes[base.ISCSI])


class TestMigrationAndSettling(DataPathTestCase):
    # The conductor and block storage (in the volume service) settle,
    # every second, what stopped moving 5 s ago (and block storage's sweep
    # of tgtd's targets unexports what no connected attachment needs).
    EXTRA_CONF = {'recovery': {'settle_interval': 1, 'stalled_after': 5}}

    GHOST = {'host': 'ghost-host', 'mode': 'rw',
             'initiator': 'iqn.2010-10.org.nova-lite.test:ghost'}

    def leave_a_dead_connection(self, volume_id):
        """What a process that died in ``initialize_connection`` leaves:
        the volume's target exported to one more initiator, its host
        record written now, no attachment (the iscsi driver of the
        deployment's configuration, in this process)."""
        from nova_lite.volume_service import drivers
        driver = drivers.get_driver(self.deployment.conf, base.ISCSI)
        driver.initialize_connection(
            {'id': volume_id, 'name_id': self.storage_id(volume_id),
             'size': 1}, self.GHOST)

    def test_migrated_onto_iscsi_the_volume_stays_with_its_guest(self):
        server_id = self.active_server()
        volume_id = self.create_volume(backend=base.FILE)
        self.host_write(volume_id, 0, HOST_BYTES)
        device = self.attach(server_id, volume_id)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        guest.write(volume_id, GUEST_OFFSET, GUEST_BYTES)

        # The block copy moves the bytes into the LUN under the guest,
        # which reads and writes the iSCSI volume from then on (the live
        # disk keeps its serial: the volume keeps its id).
        self.retype(volume_id, base.ISCSI)
        self.assertNotEqual(volume_id, self.storage_id(volume_id))
        self.assertEqual(HOST_BYTES, self.host_read(volume_id, 0, 16))
        self.assertEqual(GUEST_BYTES,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        guest.write(volume_id, 2 * GUEST_OFFSET, b'after-migration!')
        self.assertEqual(b'after-migration!',
                         self.host_read(volume_id, 2 * GUEST_OFFSET, 16))
        self.assertEqual({dev(device): volume_id},
                         self.domain_disks(server_id, inactive=True))
        initiator = self.assert_exported_to_one_host(volume_id)

        # Once the dead connection's record is older than stalled_after,
        # settling unexports it, and only it: the guest keeps its disk.
        self.leave_a_dead_connection(volume_id)
        self.assertIn(self.GHOST['initiator'], self.target(volume_id).acl)
        self.wait_for(lambda: self.GHOST['initiator'] not in getattr(
            self.target(volume_id), 'acl', ()), timeout=base.BOOT_TIMEOUT,
            message='the dead connection was never unexported')
        guest.write(volume_id, 3 * GUEST_OFFSET, b'after-settling!!')
        self.assertEqual(b'after-settling!!',
                         self.host_read(volume_id, 3 * GUEST_OFFSET, 16))
        self.assertEqual(b'after-migration!',
                         guest.read(volume_id, 2 * GUEST_OFFSET, 16))
        self.assertEqual(initiator,
                         self.assert_exported_to_one_host(volume_id))

        resp = self.detach_volume(server_id, volume_id)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertFalse(guest.has_disk(volume_id))
        self.assertIsNone(self.target(volume_id))
