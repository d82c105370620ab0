"""The libvirt driver against a real libvirtd and QEMU (TCG), judged by
the test guest: what its agent reads from, and fails to write to, the
disks the driver gives it (found by their serial, the volume id).

Runs when libvirtd answers on ``qemu:///system`` and the test guest
builds (``tests.guest.fixture``); skips saying why otherwise (fails with
``NOVA_LITE_REQUIRE_LIBVIRT=1``). Each test boots its own guests (a few
seconds each under TCG) on a compute host name of its own, and destroys
them at the end.
"""

import os
import subprocess
import uuid

import testtools
from testtools import content

from nova_lite import exception
from nova_lite import states
from nova_lite.virt import driver as compute_driver
from nova_lite.virt.libvirt import config as vconfig
from tests.fixtures import ceph as ceph_fixture
from tests.fixtures import conf as conf_fixture
from tests.fixtures import required
from tests.guest import agent
from tests.guest import fixture as guest_fixture

MiB = 1024 * 1024
BOOT_TIMEOUT = 180


class Instance(object):
    def __init__(self, name='guest', power_state=states.RUNNING):
        self.uuid = str(uuid.uuid4())
        self.display_name = name
        self.flavor_id = '1'
        self.power_state = power_state
        self.root_device_name = '/dev/vda'


class GuestTestCase(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.useFixture(guest_fixture.Libvirtd())
        self.image = self.useFixture(guest_fixture.GuestImage()).guest
        self.dir = self.useFixture(guest_fixture.SharedDir()).path
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.useFixture(guest_fixture.LibvirtConf(self.conf, self.image,
                                                  self.dir))
        # Generous for a loaded machine; the test of a guest that never
        # releases a disk makes them short.
        self.conf.set_override('device_detach_attempts', 3, group='libvirt')
        self.conf.set_override('device_detach_timeout', 10, group='libvirt')
        self.host = 'itest-%s' % uuid.uuid4().hex[:8]
        self.driver = compute_driver.load_driver(self.conf, self.host)
        self.addCleanup(self._destroy_all)

    def _destroy_all(self):
        for guest_uuid in self.driver.list_instance_uuids():
            self.driver.destroy(None, _ByUuid(guest_uuid), None)

    def boot(self, disks=(), name='guest'):
        """A running guest whose agent answers: (instance, agent)."""
        instance = Instance(name)
        self.driver.spawn(None, instance, list(disks))
        path = self.driver.console_log_path(instance)
        self.addOnException(lambda exc_info: self.addDetail(
            'console-%s' % instance.uuid[:8],
            content.text_content(_read(path))))
        return instance, self.agent(instance)

    def agent(self, instance):
        path = self.driver.channel_path(instance, self.image['channel'])
        self.assertIsNotNone(path, 'the guest has no agent channel')
        guest = agent.wait_ready(path, timeout=BOOT_TIMEOUT)
        self.addCleanup(guest.close)
        return guest

    def volume(self, content=b'', size=16 * MiB):
        """A ``file`` volume with ``content`` at offset 0:
        (connection_info, path)."""
        volume_id = str(uuid.uuid4())
        path = os.path.join(self.dir, 'volume-%s' % volume_id)
        with open(path, 'wb') as f:
            f.truncate(size)
            f.write(content)
        info = {'driver_volume_type': 'file',
                'data': {'path': path, 'access_mode': 'rw'},
                'serial': volume_id}
        return info, path

    @staticmethod
    def host_read(path, length, offset=0):
        with open(path, 'rb') as f:
            f.seek(offset)
            return f.read(length)

    def domain_disks(self, instance, inactive=False):
        import libvirt
        dom = self.driver._host.lookup(instance.uuid)
        flags = libvirt.VIR_DOMAIN_XML_INACTIVE if inactive else 0
        return {dev: disk['serial'] for dev, disk in vconfig.disks(
            vconfig.parse(dom.XMLDesc(flags))).items()}


class _ByUuid(object):
    def __init__(self, uuid):
        self.uuid = uuid


def _read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError as e:
        return str(e)


class AttachDetachTest(GuestTestCase):
    def test_guest_reads_by_serial_writes_and_loses_the_disk(self):
        instance, guest = self.boot()
        info, path = self.volume(b'written-on-host!')
        volume_id = info['serial']
        self.driver.attach_volume(None, info, instance, '/dev/vdb')
        guest.wait_for_disk(volume_id)
        self.assertEqual(b'written-on-host!', guest.read(volume_id, 0, 16))
        self.assertEqual({'/dev/vdb': volume_id},
                         self.driver.volume_devices(instance))
        guest.write(volume_id, 4096, b'written-by-guest')
        self.assertEqual(b'written-by-guest', self.host_read(path, 16, 4096))

        self.driver.detach_volume(None, info, instance, '/dev/vdb')
        self.assertFalse(guest.has_disk(volume_id))
        self.assertEqual({}, self.domain_disks(instance))
        self.assertEqual({}, self.domain_disks(instance, inactive=True))
        self.assertFalse(self.driver.has_volume(instance, '/dev/vdb'))
        # What the guest wrote stays in the volume.
        self.assertEqual(b'written-by-guest', self.host_read(path, 16, 4096))

    def test_read_only_disk_refuses_the_guests_write(self):
        instance, guest = self.boot()
        info, path = self.volume(b'read-only-bytes!')
        volume_id = info['serial']
        self.driver.attach_volume(None, info, instance, '/dev/vdb',
                                  mode='ro')
        guest.wait_for_disk(volume_id)
        self.assertTrue(guest.disks()[agent.guest_serial(volume_id)]['ro'])
        self.assertEqual(b'read-only-bytes!', guest.read(volume_id, 0, 16))
        self.assertRaises(agent.GuestError, guest.write, volume_id, 0,
                          b'overwritten-----')
        self.assertEqual(b'read-only-bytes!', self.host_read(path, 16))
        self.assertEqual(b'read-only-bytes!', guest.read(volume_id, 0, 16))

    def test_multiattach_both_guests_read_and_see_each_others_writes(self):
        (first, guest1), (second, guest2) = self.boot(), self.boot()
        info, path = self.volume(b'shared-by-two!!!')
        info['multiattach'] = True
        volume_id = info['serial']
        for instance in (first, second):
            self.driver.attach_volume(None, info, instance, '/dev/vdb')
        for guest in (guest1, guest2):
            guest.wait_for_disk(volume_id)
            self.assertEqual(b'shared-by-two!!!',
                             guest.read(volume_id, 0, 16))
        guest1.write(volume_id, 512, b'from-the-first--')
        self.assertEqual(b'from-the-first--', guest2.read(volume_id, 512, 16))
        # One guest lets go; the other keeps the disk.
        self.driver.detach_volume(None, info, first, '/dev/vdb')
        self.assertFalse(guest1.has_disk(volume_id))
        self.assertEqual(b'shared-by-two!!!', guest2.read(volume_id, 0, 16))

    def test_spawn_with_volumes_at_their_device_names(self):
        # What an unshelve does: the guest comes back with its volumes.
        info1, _ = self.volume(b'first-volume----')
        info2, _ = self.volume(b'second-volume---')
        instance, guest = self.boot([
            {'mount_device': '/dev/vdb', 'connection_info': info1,
             'mode': 'rw'},
            {'mount_device': '/dev/vdc', 'connection_info': info2,
             'mode': 'ro'}])
        self.assertEqual({'/dev/vdb': info1['serial'],
                          '/dev/vdc': info2['serial']},
                         self.driver.volume_devices(instance))
        guest.wait_for_disk(info2['serial'])
        self.assertEqual(b'first-volume----',
                         guest.read(info1['serial'], 0, 16))
        self.assertEqual(b'second-volume---',
                         guest.read(info2['serial'], 0, 16))
        self.assertTrue(guest.disks()[agent.guest_serial(
            info2['serial'])]['ro'])


class UnplugIgnoredTest(GuestTestCase):
    def test_detach_fails_cleanly_and_the_disk_stays(self):
        instance, guest = self.boot()
        info, _ = self.volume(b'still-attached!!')
        volume_id = info['serial']
        self.driver.attach_volume(None, info, instance, '/dev/vdb')
        guest.wait_for_disk(volume_id)
        guest.ignore_unplug()
        self.conf.set_override('device_detach_attempts', 2, group='libvirt')
        self.conf.set_override('device_detach_timeout', 2, group='libvirt')
        error = self.assertRaises(exception.DeviceDetachFailed,
                                  self.driver.detach_volume, None, info,
                                  instance, '/dev/vdb')
        self.assertIn('did not release it after 2 requests', str(error))
        # The guest and the live domain keep it; the definition lost it
        # first (Nova's order), so the next start is without it.
        self.assertEqual(b'still-attached!!', guest.read(volume_id, 0, 16))
        self.assertEqual({'vdb': volume_id}, self.domain_disks(instance))
        self.assertEqual({}, self.domain_disks(instance, inactive=True))
        self.assertTrue(self.driver.has_volume(instance, '/dev/vdb'))


class SwapTest(GuestTestCase):
    def test_block_copy_moves_the_disk_under_the_guest(self):
        instance, guest = self.boot()
        old, old_path = self.volume(b'data-of-old-vol!')
        new, new_path = self.volume(b'', size=16 * MiB)
        self.driver.attach_volume(None, old, instance, '/dev/vdb')
        guest.wait_for_disk(old['serial'])

        # A copy left running (a swap whose host restarted, rolled back by
        # settling) stops when the host disconnects the new volume.
        import libvirt
        dom = self.driver._host.lookup(instance.uuid)
        dom.blockCopy('vdb', vconfig.disk_xml(vconfig.volume_disk(
            new, '/dev/vdb')[0], for_copy=True), None,
            libvirt.VIR_DOMAIN_BLOCK_COPY_REUSE_EXT |
            libvirt.VIR_DOMAIN_BLOCK_COPY_TRANSIENT_JOB)
        self.assertEqual(('file', new_path), vconfig.mirror_source(
            vconfig.disks(vconfig.parse(dom.XMLDesc(0)))['vdb']['element']))
        self.driver.disconnect_volume(new)
        self.assertEqual({}, dom.blockJobInfo('vdb', 0))

        self.driver.swap_volume(None, old, new, instance, '/dev/vdb')
        # Asked again (settling after a restart): nothing more happens.
        self.driver.swap_volume(None, old, new, instance, '/dev/vdb')
        # The guest's disk (same serial, same name) is the new volume now,
        # holding the old one's data.
        self.assertEqual(b'data-of-old-vol!', self.host_read(new_path, 16))
        self.assertEqual(b'data-of-old-vol!',
                         guest.read(old['serial'], 0, 16))
        guest.write(old['serial'], 8192, b'after-the-swap--')
        self.assertEqual(b'after-the-swap--',
                         self.host_read(new_path, 16, 8192))
        self.assertEqual(b'\0' * 16, self.host_read(old_path, 16, 8192))
        self.assertEqual({'vdb': new['serial']},
                         self.domain_disks(instance, inactive=True))
        # From its next start the guest sees the new volume's serial.
        self.driver.power_off(instance)
        self.driver.power_on(instance)
        guest = self.agent(instance)
        guest.wait_for_disk(new['serial'])
        self.assertEqual(b'after-the-swap--',
                         guest.read(new['serial'], 8192, 16))


class LifecycleTest(GuestTestCase):
    def test_power_off_on_keeps_the_disks_and_destroy_is_idempotent(self):
        instance, guest = self.boot()
        info, _ = self.volume(b'survives-restart')
        self.driver.attach_volume(None, info, instance, '/dev/vdb')
        guest.wait_for_disk(info['serial'])
        self.driver.power_off(instance)
        self.assertEqual(states.SHUTDOWN,
                         self.driver.get_info(instance)['power_state'])
        self.driver.power_on(instance)
        guest = self.agent(instance)
        guest.wait_for_disk(info['serial'])
        self.assertEqual(b'survives-restart',
                         guest.read(info['serial'], 0, 16))
        self.driver.pause(instance)
        self.assertEqual(states.POWER_PAUSED,
                         self.driver.get_info(instance)['power_state'])
        self.driver.unpause(instance)
        self.assertTrue(guest.ping())

        self.driver.destroy(None, instance, None)
        self.assertNotIn(instance.uuid, self.driver.list_instance_uuids())
        self.assertIsNone(self.driver._host.lookup(instance.uuid))
        self.driver.destroy(None, instance, None)

    def test_restore_after_a_service_restart(self):
        instance, guest = self.boot()
        info, _ = self.volume(b'restored-guest!!')
        disks = [{'mount_device': '/dev/vdb', 'connection_info': info,
                  'mode': 'rw'}]
        self.driver.attach_volume(None, info, instance, '/dev/vdb')
        guest.wait_for_disk(info['serial'])
        dom_id = self.driver._host.lookup(instance.uuid).ID()

        # A new service (a new driver, a new connection): the running
        # domain is the truth, never recreated.
        restarted = compute_driver.load_driver(self.conf, self.host)
        self.assertEqual({instance.uuid}, restarted.list_instance_uuids())
        restarted.restore_guest(None, instance, disks)
        self.assertEqual(dom_id, restarted._host.lookup(instance.uuid).ID())
        self.assertTrue(guest.ping())
        self.assertTrue(restarted.has_volume(instance, '/dev/vdb'))

        # A domain that is gone is defined again from the database.
        guest.close()
        dom = restarted._host.lookup(instance.uuid)
        dom.destroy()
        dom.undefine()
        restarted.restore_guest(None, instance, disks)
        guest = self.agent(instance)
        guest.wait_for_disk(info['serial'])
        self.assertEqual(b'restored-guest!!',
                         guest.read(info['serial'], 0, 16))


class IscsiTest(GuestTestCase):
    """A LUN exported by tgtd (a target of this test's own), attached as a
    network disk on QEMU's iSCSI initiator with CHAP."""

    def setUp(self):
        super().setUp()
        if subprocess.run(['tgtadm', '--lld', 'iscsi', '--op', 'show',
                           '--mode', 'sys'], capture_output=True
                          ).returncode != 0:
            required.unavailable('tgtd does not run (start it with tgtd)',
                                 guest_fixture.REQUIRE_ENV)

    def export(self, content):
        """A target with one LUN (a file holding ``content``), its ACL the
        host's initiator, CHAP: the connection_info."""
        info, path = self.volume(content)
        initiator = self.driver.get_volume_connector(None)['initiator']
        tag = uuid.uuid4().hex[:12]
        iqn = 'iqn.2010-10.org.nova-lite:itest-%s' % tag
        user, password = 'u%s' % tag, 'p%s' % tag
        tid = self._free_tid()

        def tgtadm(*args):
            subprocess.run(['tgtadm', '--lld', 'iscsi'] + list(args),
                           check=True, capture_output=True)
        tgtadm('--op', 'new', '--mode', 'target', '--tid', tid, '-T', iqn)
        self.addCleanup(tgtadm, '--op', 'delete', '--mode', 'target',
                        '--tid', tid, '--force')
        tgtadm('--op', 'new', '--mode', 'logicalunit', '--tid', tid,
               '--lun', '1', '-b', path)
        tgtadm('--op', 'bind', '--mode', 'target', '--tid', tid, '-Q',
               initiator)
        tgtadm('--op', 'new', '--mode', 'account', '--user', user,
               '--password', password)
        self.addCleanup(tgtadm, '--op', 'delete', '--mode', 'account',
                        '--user', user)
        tgtadm('--op', 'bind', '--mode', 'account', '--tid', tid, '--user',
               user)
        iscsi = {'driver_volume_type': 'iscsi',
                 'data': {'target_portal': '127.0.0.1:3260',
                          'target_iqn': iqn, 'target_lun': 1,
                          'auth_method': 'CHAP', 'auth_username': user,
                          'auth_password': password, 'access_mode': 'rw',
                          'volume_id': info['serial']},
                 'serial': info['serial']}
        # The host's side of the connection (its libvirt secret).
        self.addCleanup(self.driver.disconnect_volume, iscsi)
        return iscsi, path

    @staticmethod
    def _free_tid():
        shown = subprocess.run(['tgtadm', '--lld', 'iscsi', '--op', 'show',
                                '--mode', 'target'], capture_output=True,
                               text=True).stdout
        used = {int(line.split()[1].rstrip(':'))
                for line in shown.splitlines() if line.startswith('Target ')}
        tid = 30000 + uuid.uuid4().int % 20000
        while tid in used:
            tid += 1
        return str(tid)

    def test_guest_reads_an_iscsi_lun_and_loses_it(self):
        instance, guest = self.boot()
        info, path = self.export(b'bytes-over-iscsi')
        volume_id = info['serial']
        self.driver.attach_volume(None, info, instance, '/dev/vdb')
        guest.wait_for_disk(volume_id)
        self.assertEqual(b'bytes-over-iscsi', guest.read(volume_id, 0, 16))
        guest.write(volume_id, 4096, b'guest-over-iscsi')
        self.assertEqual(b'guest-over-iscsi', self.host_read(path, 16, 4096))
        self.driver.detach_volume(None, info, instance, '/dev/vdb')
        self.driver.disconnect_volume(info)
        self.assertFalse(guest.has_disk(volume_id))
        self.assertEqual({}, self.domain_disks(instance))

    def test_swap_file_to_iscsi(self):
        instance, guest = self.boot()
        old, _ = self.volume(b'file-then-iscsi!')
        new, new_path = self.export(b'')
        self.driver.attach_volume(None, old, instance, '/dev/vdb')
        guest.wait_for_disk(old['serial'])
        self.driver.swap_volume(None, old, new, instance, '/dev/vdb')
        self.assertEqual(b'file-then-iscsi!', self.host_read(new_path, 16))
        self.assertEqual(b'file-then-iscsi!',
                         guest.read(old['serial'], 0, 16))


class RbdTest(GuestTestCase):
    """Images of the shared one-node Ceph (``tests.fixtures.ceph``)
    attached as Cinder's RBD driver hands them out (client ``admin``, its
    keyring in the connection_info, a secret uuid of the test's own): a
    network disk on QEMU's librbd, cephx through the libvirt secret the
    driver defines from the keyring."""

    def setUp(self):
        super().setUp()
        self.ceph = self.useFixture(ceph_fixture.Ceph())
        with open(self.ceph.admin_keyring) as f:
            self.keyring = f.read()
        self.secret_uuid = str(uuid.uuid4())
        self.addCleanup(self.driver._host.delete_secret_by_uuid,
                        self.secret_uuid)

    def rbd(self, *args):
        subprocess.run(['rbd', '-c', self.ceph.conf_path, '--id', 'admin',
                        '--keyring', self.ceph.admin_keyring] + list(args),
                       check=True, capture_output=True, timeout=60)

    def rbd_volume(self, content=b'', size=64 * MiB):
        """An image holding ``content`` at offset 0 and Cinder's
        connection_info of it: (connection_info, image)."""
        volume_id = str(uuid.uuid4())
        image = 'volume-%s' % volume_id
        self.rbd('create', '--size', '%dM' % (size // MiB),
                 '%s/%s' % (self.ceph.pool, image))
        self.addCleanup(self._remove_image, image)
        if content:
            self.ceph.rbd_write(image, 0, content)
        info = {'driver_volume_type': 'rbd',
                'data': {'name': '%s/%s' % (self.ceph.pool, image),
                         'hosts': [self.ceph.mon_host],
                         'ports': [str(self.ceph.mon_port)],
                         'cluster_name': 'ceph', 'auth_enabled': True,
                         'auth_username': 'admin', 'secret_type': 'ceph',
                         'secret_uuid': self.secret_uuid,
                         'keyring': self.keyring, 'volume_id': volume_id,
                         'discard': True, 'access_mode': 'rw',
                         'encrypted': False},
                'serial': volume_id}
        return info, image

    def _remove_image(self, image):
        # QEMU lets go of it with its guest.
        self._destroy_all()
        self.rbd('rm', '--no-progress', '%s/%s' % (self.ceph.pool, image))

    def secret(self):
        return self.driver._host.lookup_secret_by_uuid(self.secret_uuid)

    def test_guest_reads_writes_and_loses_an_rbd_volume(self):
        instance, guest = self.boot()
        info, image = self.rbd_volume(b'bytes-over-rbd!!')
        volume_id = info['serial']
        self.driver.attach_volume(None, info, instance, '/dev/vdb')
        secret = self.secret()
        self.assertIsNotNone(secret)
        self.assertTrue(vconfig.is_own_ceph_secret(secret.usageID(),
                                                   self.secret_uuid))
        guest.wait_for_disk(volume_id)
        self.assertEqual(b'bytes-over-rbd!!', guest.read(volume_id, 0, 16))
        guest.write(volume_id, 4096, b'guest-wrote-rbd!')
        self.assertEqual(b'guest-wrote-rbd!',
                         self.ceph.rbd_read(image, 4096, 16))

        # A second volume of the same client shares the secret.
        other, _ = self.rbd_volume(b'second-rbd-vol!!')
        self.driver.attach_volume(None, other, instance, '/dev/vdc')
        guest.wait_for_disk(other['serial'])

        self.driver.detach_volume(None, info, instance, '/dev/vdb')
        self.driver.disconnect_volume(info)
        self.assertFalse(guest.has_disk(volume_id))
        self.assertEqual({'vdc': other['serial']},
                         self.domain_disks(instance))
        self.assertIsNotNone(self.secret())
        self.assertEqual(b'guest-wrote-rbd!',
                         self.ceph.rbd_read(image, 4096, 16))
        self.driver.detach_volume(None, other, instance, '/dev/vdc')
        self.driver.disconnect_volume(other)
        self.assertFalse(guest.has_disk(other['serial']))
        self.assertEqual({}, self.domain_disks(instance, inactive=True))
        self.assertIsNone(self.secret())

    def test_read_only_rbd_disk_refuses_the_guests_write(self):
        instance, guest = self.boot()
        info, image = self.rbd_volume(b'rbd-read-only!!!')
        volume_id = info['serial']
        self.driver.attach_volume(None, info, instance, '/dev/vdb',
                                  mode='ro')
        guest.wait_for_disk(volume_id)
        self.assertTrue(guest.disks()[agent.guest_serial(volume_id)]['ro'])
        self.assertEqual(b'rbd-read-only!!!', guest.read(volume_id, 0, 16))
        self.assertRaises(agent.GuestError, guest.write, volume_id, 0,
                          b'overwritten-----')
        self.assertEqual(b'rbd-read-only!!!',
                         self.ceph.rbd_read(image, 0, 16))

    def test_swap_file_to_rbd_keeps_the_guests_data(self):
        instance, guest = self.boot()
        old, old_path = self.volume(b'file-then-rbd!!!', size=64 * MiB)
        new, image = self.rbd_volume()
        self.driver.attach_volume(None, old, instance, '/dev/vdb')
        guest.wait_for_disk(old['serial'])
        self.driver.swap_volume(None, old, new, instance, '/dev/vdb')
        self.assertEqual(b'file-then-rbd!!!',
                         self.ceph.rbd_read(image, 0, 16))
        self.assertEqual(b'file-then-rbd!!!',
                         guest.read(old['serial'], 0, 16))
        guest.write(old['serial'], 8192, b'after-swap-rbd!!')
        self.assertEqual(b'after-swap-rbd!!',
                         self.ceph.rbd_read(image, 8192, 16))
        self.assertEqual(b'\0' * 16, self.host_read(old_path, 16, 8192))
        self.assertEqual({'vdb': new['serial']},
                         self.domain_disks(instance, inactive=True))
        # The old volume's host connection goes; the rbd one stays.
        self.driver.disconnect_volume(old)
        # From its next start the guest sees the rbd volume's serial.
        self.driver.power_off(instance)
        self.driver.power_on(instance)
        guest = self.agent(instance)
        guest.wait_for_disk(new['serial'])
        self.assertEqual(b'after-swap-rbd!!',
                         guest.read(new['serial'], 8192, 16))
        self.driver.detach_volume(None, new, instance, '/dev/vdb')
        self.driver.disconnect_volume(new)
        self.assertIsNone(self.secret())
