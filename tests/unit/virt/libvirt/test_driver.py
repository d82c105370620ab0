"""The libvirt driver's decisions, against a stand-in for libvirt-python
(``tests.fixtures.fakelibvirt``: libvirtd's domains, and the guest's
answer to an unplug)."""

import base64
import os
from unittest import mock

import fixtures

from nova_lite import exception
from nova_lite import states
from nova_lite.virt import driver as compute_driver
from nova_lite.virt import fake as virt_fake
from nova_lite.virt.libvirt import config as vconfig
from nova_lite.virt.libvirt import driver as libvirt_driver
from tests import base
from tests.fixtures import fakelibvirt
from tests.unit.compute import fakes

VOL1 = '11111111-2222-4333-8444-555555555501'
VOL2 = '11111111-2222-4333-8444-555555555502'
IQN = 'iqn.2010-10.org.openstack:volume-%s' % VOL2
VOL3 = '11111111-2222-4333-8444-555555555503'
SECRET_UUID = '3c1c9b9e-6c1b-4f7e-8a55-0d3c2b1a0f01'
OPERATORS_UUID = '0b0b0b0b-1111-4222-8333-444444444444'
CEPH_KEY = 'AQBmS/1lAAAAABAAw0aVJ0bP1tS2a4X2bFw0aQ=='


class DriverTestCase(base.TestCase):
    def setUp(self):
        super().setUp()
        self.libvirt = self.useFixture(fakelibvirt.LibvirtFixture())
        self.kernel = os.path.join(self.conf.state_path, 'vmlinuz')
        open(self.kernel, 'w').close()
        self.conf.set_override('compute_driver', 'libvirt')
        self.conf.set_override('kernel_path', self.kernel, group='libvirt')
        self.conf.set_override('initrd_path', '/srv/initrd', group='libvirt')
        self.conf.set_override('virt_type', 'qemu', group='libvirt')
        self.conf.set_override('device_detach_timeout', 1, group='libvirt')
        self.conf.set_override('device_detach_attempts', 3, group='libvirt')
        self.conf.set_override('shutdown_timeout', 0)
        self.driver = compute_driver.load_driver(self.conf, 'compute1')
        self.instance = fakes.FakeInstance()

    def dom(self, instance=None):
        return self.libvirt.libvirtd.domains[(instance or self.instance).uuid]

    def live_disks(self, instance=None):
        return vconfig.disks(vconfig.parse(self.dom(instance).XMLDesc(0)))

    def defined_disks(self, instance=None):
        return vconfig.disks(vconfig.parse(self.dom(instance).XMLDesc(
            fakelibvirt.VIR_DOMAIN_XML_INACTIVE)))

    def volume_file(self, name='volume-1'):
        path = os.path.join(self.conf.state_path, name)
        open(path, 'wb').close()
        return path

    def file_info(self, volume_id=VOL1, **extra):
        info = {'driver_volume_type': 'file',
                'data': {'path': self.volume_file('volume-%s' % volume_id),
                         'access_mode': 'rw'},
                'serial': volume_id}
        info.update(extra)
        return info

    def iscsi_info(self, volume_id=VOL2):
        return {'driver_volume_type': 'iscsi',
                'data': {'target_portal': '127.0.0.1:3260',
                         'target_iqn': IQN, 'target_lun': 1,
                         'auth_method': 'CHAP', 'auth_username': 'u2',
                         'auth_password': 'p2', 'access_mode': 'rw',
                         'volume_id': volume_id},
                'serial': volume_id}

    def rbd_info(self, volume_id=VOL3, keyring=True, **data):
        info = {'driver_volume_type': 'rbd',
                'data': {'name': 'volumes/volume-%s' % volume_id,
                         'hosts': ['127.0.0.1'], 'ports': ['6789'],
                         'cluster_name': 'ceph', 'auth_enabled': True,
                         'auth_username': 'cinder', 'secret_type': 'ceph',
                         'secret_uuid': SECRET_UUID, 'discard': True,
                         'access_mode': 'rw', 'volume_id': volume_id},
                'serial': volume_id}
        if keyring:
            info['data']['keyring'] = (
                '[client.cinder]\n\tkey = %s\n' % CEPH_KEY)
        info['data'].update(data)
        return info

    def spawn(self, disks=(), instance=None):
        self.driver.spawn(None, instance or self.instance, list(disks))
        return self.dom(instance)


class LoadTest(DriverTestCase):
    def test_compute_driver_picks_the_driver(self):
        self.assertIsInstance(self.driver, libvirt_driver.LibvirtDriver)
        self.conf.set_override('compute_driver', 'fake')
        self.assertIsInstance(
            compute_driver.load_driver(self.conf, 'compute1'),
            virt_fake.FakeDriver)

    def test_kernel_path_is_required(self):
        self.conf.clear_override('kernel_path', group='libvirt')
        self.assertRaises(exception.InvalidInput,
                          compute_driver.load_driver, self.conf, 'compute1')

    def test_libvirtd_down_is_hypervisor_unavailable(self):
        self.libvirt.module.OPEN_ERROR = 'Failed to connect socket'
        self.assertRaises(exception.HypervisorUnavailable, self.spawn)

    def test_a_dead_connection_is_opened_again(self):
        self.spawn()
        first = self.libvirt.libvirtd
        first.alive = False
        self.assertTrue(self.driver.has_volume(self.instance, '/dev/vda')
                        is False)
        self.assertIsNot(first, self.libvirt.libvirtd)
        self.assertIn(self.instance.uuid, self.driver.list_instance_uuids())

    def test_multiattach_is_supported(self):
        self.assertTrue(self.driver.capabilities['supports_multiattach'])


class VirtTypeTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_no_kvm_device_is_qemu(self):
        cpuinfo = self.write('cpuinfo', 'flags\t: fpu vmx sse\n')
        self.assertEqual('qemu', libvirt_driver.detect_virt_type(
            os.path.join(self.dir, 'missing'), cpuinfo))

    def test_kvm_device_without_hardware_support_is_qemu(self):
        kvm = self.write('kvm', '')
        cpuinfo = self.write('cpuinfo', 'flags\t: fpu hypervisor sse\n')
        self.assertEqual('qemu', libvirt_driver.detect_virt_type(
            kvm, cpuinfo))

    def test_kvm_device_with_vmx_or_svm_is_kvm(self):
        kvm = self.write('kvm', '')
        for flag in ('vmx', 'svm'):
            cpuinfo = self.write('cpuinfo', 'flags\t: fpu %s\n' % flag)
            self.assertEqual('kvm', libvirt_driver.detect_virt_type(
                kvm, cpuinfo))


class SpawnDestroyTest(DriverTestCase):
    def test_spawn_defines_and_starts_the_domain(self):
        dom = self.spawn([{'mount_device': '/dev/vdb',
                           'connection_info': self.file_info(),
                           'mode': 'ro'}])
        self.assertTrue(dom.isActive())
        self.assertTrue(dom.isPersistent())
        root = vconfig.parse(dom.XMLDesc(0))
        self.assertEqual('qemu', root.get('type'))
        self.assertEqual('instance-%s' % self.instance.uuid,
                         root.find('name').text)
        # m1.tiny
        self.assertEqual('512', root.find('memory').text)
        self.assertEqual('1', root.find('vcpu').text)
        self.assertEqual(self.kernel, root.find('os/kernel').text)
        self.assertEqual(os.path.join(self.conf.state_path, 'instances',
                                      self.instance.uuid, 'console.log'),
                         root.find('devices/serial/log').get('file'))
        self.assertTrue(os.path.isdir(self.driver.instance_dir(
            self.instance)))
        disk = self.live_disks()['vdb']
        self.assertEqual(VOL1, disk['serial'])
        self.assertIsNotNone(disk['element'].find('readonly'))
        self.assertEqual('/run/fake/%s/org.nova_lite.guest.0' %
                         self.instance.uuid, self.driver.channel_path(
                             self.instance, 'org.nova_lite.guest.0'))

    def test_spawn_replaces_a_leftover_domain(self):
        first = self.spawn()
        self.spawn()
        self.assertIsNot(first, self.dom())
        self.assertFalse(first.isActive())

    def test_spawn_with_a_missing_kernel_fails_clearly(self):
        os.unlink(self.kernel)
        self.assertRaises(exception.InvalidInput, self.spawn)
        self.assertNotIn(self.instance.uuid, self.libvirt.libvirtd.domains)

    def test_destroy_undefines_and_is_idempotent(self):
        self.spawn()
        self.driver.destroy(None, self.instance, None)
        self.assertNotIn(self.instance.uuid, self.libvirt.libvirtd.domains)
        self.assertFalse(os.path.exists(self.driver.instance_dir(
            self.instance)))
        self.driver.destroy(None, self.instance, None)
        self.assertEqual(set(), self.driver.list_instance_uuids())

    def test_destroy_of_a_shut_off_domain(self):
        self.spawn()
        self.driver.power_off(self.instance)
        self.driver.destroy(None, self.instance, None)
        self.assertNotIn(self.instance.uuid, self.libvirt.libvirtd.domains)


class PowerTest(DriverTestCase):
    def test_power_off_without_grace_and_on(self):
        dom = self.spawn()
        dom.obeys_shutdown = False
        self.driver.power_off(self.instance)
        self.assertFalse(dom.isActive())
        self.assertEqual(states.SHUTDOWN,
                         self.driver.get_info(self.instance)['power_state'])
        self.driver.power_off(self.instance)    # nothing to do
        self.driver.power_on(self.instance)
        self.assertEqual(states.RUNNING,
                         self.driver.get_info(self.instance)['power_state'])
        self.assertEqual(2, dom.created)
        self.driver.power_on(self.instance)     # nothing to do
        self.assertEqual(2, dom.created)

    def test_graceful_shutdown(self):
        self.conf.set_override('shutdown_timeout', 30)
        dom = self.spawn()
        with mock.patch.object(dom, 'destroy',
                               wraps=dom.destroy) as destroy:
            with mock.patch.object(dom, 'shutdown',
                                   wraps=dom.shutdown) as shutdown:
                self.driver.power_off(self.instance)
        shutdown.assert_called_once_with()
        # The guest shut down: it was never powered off.
        self.assertEqual(1, destroy.call_count)    # by the guest's shutdown
        self.assertFalse(dom.isActive())

    def test_guest_that_ignores_shutdown_is_powered_off(self):
        self.conf.set_override('shutdown_timeout', 1)
        dom = self.spawn()
        dom.obeys_shutdown = False
        self.driver.power_off(self.instance)
        self.assertFalse(dom.isActive())

    def test_pause_unpause(self):
        dom = self.spawn()
        self.driver.pause(self.instance)
        self.assertTrue(dom.paused)
        self.assertEqual(states.POWER_PAUSED,
                         self.driver.get_info(self.instance)['power_state'])
        self.driver.pause(self.instance)
        self.driver.unpause(self.instance)
        self.assertFalse(dom.paused)
        self.driver.pause(self.instance)
        self.driver.power_on(self.instance)
        self.assertFalse(dom.paused)

    def test_power_actions_without_a_domain(self):
        for action in (self.driver.power_off, self.driver.power_on,
                       self.driver.pause, self.driver.unpause):
            self.assertRaises(exception.InstanceNotFound, action,
                              self.instance)


class AttachTest(DriverTestCase):
    def test_attach_live_and_in_the_definition(self):
        self.spawn()
        self.driver.attach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        self.assertEqual(VOL1, self.defined_disks()['vdb']['serial'])
        self.assertTrue(self.driver.has_volume(self.instance, '/dev/vdb'))
        self.assertFalse(self.driver.has_volume(self.instance, '/dev/vdc'))
        self.assertEqual({'/dev/vdb': VOL1},
                         self.driver.volume_devices(self.instance))

    def test_attach_to_a_stopped_guest_changes_its_definition(self):
        self.spawn()
        self.driver.power_off(self.instance)
        self.driver.attach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertEqual(VOL1, self.defined_disks()['vdb']['serial'])
        self.driver.power_on(self.instance)
        self.assertIn('vdb', self.live_disks())

    def test_read_only_and_multiattach(self):
        self.spawn()
        self.driver.attach_volume(None, self.file_info(multiattach=True),
                                  self.instance, '/dev/vdb', mode='ro')
        disk = self.live_disks()['vdb']['element']
        self.assertIsNotNone(disk.find('readonly'))
        self.assertIsNotNone(disk.find('shareable'))
        self.assertEqual('none', disk.find('driver').get('cache'))

    def test_iscsi_volume_logs_in_with_the_hosts_initiator_and_chap(self):
        self.spawn()
        self.driver.attach_volume(None, self.iscsi_info(), self.instance,
                                  '/dev/vdc')
        source = self.live_disks()['vdc']['element'].find('source')
        self.assertEqual(fakelibvirt.CONNECTOR['initiator'],
                         source.find('initiator/iqn').get('name'))
        usage = source.find('auth/secret').get('usage')
        self.assertEqual(b'p2', self.libvirt.libvirtd.secrets[usage].value)
        # The host's connection closes: the secret goes.
        self.driver.disconnect_volume(self.iscsi_info())
        self.assertNotIn(usage, self.libvirt.libvirtd.secrets)

    def test_device_name_taken_by_another_volume(self):
        self.spawn()
        self.driver.attach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertRaises(exception.DevicePathInUse,
                          self.driver.attach_volume, None,
                          self.file_info(VOL2), self.instance, '/dev/vdb')

    def test_attach_again_of_the_same_volume_is_a_no_op(self):
        self.spawn()
        for _ in range(2):
            self.driver.attach_volume(None, self.file_info(), self.instance,
                                      '/dev/vdb')
        self.assertEqual(['vdb'], list(self.live_disks()))

    def test_attach_again_completes_what_is_missing(self):
        # In the definition only (a detach interrupted after the unplug).
        self.spawn()
        self.dom().attachDeviceFlags(
            vconfig.disk_xml(vconfig.volume_disk(self.file_info(),
                                                 '/dev/vdb')[0]),
            fakelibvirt.VIR_DOMAIN_AFFECT_CONFIG)
        self.assertEqual({}, self.live_disks())
        self.driver.attach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        self.assertEqual(['vdb'], list(self.defined_disks()))

    def test_attach_without_a_domain(self):
        self.assertRaises(exception.InstanceNotFound,
                          self.driver.attach_volume, None, self.file_info(),
                          self.instance, '/dev/vdb')

    def test_unsupported_volume_type(self):
        self.spawn()
        self.assertRaises(exception.NotSupported, self.driver.attach_volume,
                          None, {'driver_volume_type': 'sheepdog',
                                 'data': {}},
                          self.instance, '/dev/vdb')
        self.assertEqual({}, self.live_disks())

    def test_device_names_are_virtio(self):
        # A SATA root (sda) leaves every virtio name free.
        self.assertEqual('/dev/vda', self.driver.get_device_name_for_instance(
            fakes.FakeInstance(root_device_name='/dev/sda'), ['/dev/sda'],
            requested='/dev/sdc'))
        self.assertEqual('/dev/vdd', self.driver.get_device_name_for_instance(
            self.instance, ['/dev/vda'], requested='/dev/vdd'))


class DetachTest(DriverTestCase):
    def setUp(self):
        super().setUp()
        self.spawn()
        self.driver.attach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')

    def test_guest_releases_the_disk(self):
        self.driver.detach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertEqual({}, self.live_disks())
        self.assertEqual({}, self.defined_disks())
        self.assertEqual({}, self.driver.volume_devices(self.instance))

    def test_guest_releases_it_at_the_third_request(self):
        self.dom().ignore_requests = 2
        self.driver.detach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertEqual({}, self.live_disks())
        self.assertEqual({}, self.defined_disks())

    def test_guest_that_never_lets_go_fails_and_keeps_the_disk(self):
        self.dom().unplug = 'ignore'
        error = self.assertRaises(exception.DeviceDetachFailed,
                                  self.driver.detach_volume, None,
                                  self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertIn('after 3 requests', str(error))
        # The running guest keeps it; the definition lost it first
        # (Nova's order), so its next start has no such disk.
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        self.assertNotIn('vdb', self.defined_disks())
        self.assertTrue(self.driver.has_volume(self.instance, '/dev/vdb'))

    def test_guest_that_lets_go_late_keeps_it_gone(self):
        dom = self.dom()
        dom.unplug = 'ignore'
        self.assertRaises(exception.DeviceDetachFailed,
                          self.driver.detach_volume, None, self.file_info(),
                          self.instance, '/dev/vdb')
        # The guest answers a pending request after the driver gave up.
        dom.unplug = 'release'
        dom.pending_unplug.clear()
        dom.detachDeviceFlags(vconfig.to_xml(
            self.live_disks()['vdb']['element']),
            fakelibvirt.VIR_DOMAIN_AFFECT_LIVE)
        self.assertEqual({}, self.live_disks())
        # The detach asked again has nothing left to do.
        self.driver.detach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertFalse(self.driver.has_volume(self.instance, '/dev/vdb'))

    def test_a_start_gives_back_what_the_database_has_attached(self):
        # A detach that failed took the disk out of the definition; the
        # database still has the volume attached: the next start (as
        # Nova's hard reboot) rebuilds the definition's disks from it.
        self.dom().unplug = 'ignore'
        self.assertRaises(exception.DeviceDetachFailed,
                          self.driver.detach_volume, None, self.file_info(),
                          self.instance, '/dev/vdb')
        self.assertNotIn('vdb', self.defined_disks())
        self.driver.power_off(self.instance, timeout=0)
        self.driver.power_on(self.instance, block_device_info=[
            {'mount_device': '/dev/vdb', 'connection_info': self.file_info(),
             'mode': 'rw'}])
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        self.assertEqual(VOL1, self.defined_disks()['vdb']['serial'])
        # Asked again, it adds nothing.
        self.driver.power_off(self.instance, timeout=0)
        self.driver.power_on(self.instance, block_device_info=[
            {'mount_device': '/dev/vdb', 'connection_info': self.file_info(),
             'mode': 'rw'}])
        self.assertEqual(['vdb'], list(self.defined_disks()))

    def test_another_volume_at_the_device_is_left_alone(self):
        # The control plane's device name names a disk that is another
        # volume: it is not the one asked for.
        self.driver.detach_volume(None, self.file_info(VOL2), self.instance,
                                  '/dev/vdb')
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        self.assertEqual(VOL1, self.defined_disks()['vdb']['serial'])

    def test_the_volume_is_found_by_its_serial_not_its_name(self):
        self.driver.detach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdc')
        self.assertEqual({}, self.live_disks())
        self.assertEqual({}, self.defined_disks())

    def test_a_swapped_disk_is_found_by_what_it_reads(self):
        # After a swap the live disk keeps the old volume's serial.
        new = self.file_info(VOL2)
        self.driver.swap_volume(None, self.file_info(), new, self.instance,
                                '/dev/vdb')
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        self.driver.detach_volume(None, new, self.instance, '/dev/vdb')
        self.assertEqual({}, self.live_disks())
        self.assertEqual({}, self.defined_disks())

    def test_removal_failed_event_fails_at_once(self):
        dom = self.dom()
        dom.unplug = 'fail'
        with mock.patch.object(dom, 'detachDeviceFlags',
                               wraps=dom.detachDeviceFlags) as detach:
            self.assertRaises(exception.DeviceDetachFailed,
                              self.driver.detach_volume, None,
                              self.file_info(), self.instance, '/dev/vdb')
        live = [c for c in detach.call_args_list
                if c.args[1] == fakelibvirt.VIR_DOMAIN_AFFECT_LIVE]
        self.assertEqual(1, len(live))
        self.assertIn('vdb', self.live_disks())

    def test_nothing_to_detach(self):
        self.driver.detach_volume(None, self.file_info(VOL3), self.instance,
                                  '/dev/vdc')
        self.assertIn('vdb', self.live_disks())
        self.driver.destroy(None, self.instance, None)
        self.driver.detach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')

    def test_detach_from_a_stopped_guest(self):
        self.driver.power_off(self.instance)
        self.driver.detach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')
        self.assertEqual({}, self.defined_disks())

    def test_waits_for_the_event_before_looking_again(self):
        # The event is awaited for the device's alias, registered before
        # the request (a fast guest's event is not lost).
        waiters = []
        original = self.driver._host.device_waiter

        def record(uuid, alias):
            waiter = original(uuid, alias)
            waiters.append(waiter)
            return waiter
        with mock.patch.object(self.driver._host, 'device_waiter', record):
            self.driver.detach_volume(None, self.file_info(), self.instance,
                                      '/dev/vdb')
        self.assertEqual(['removed'], [w.result for w in waiters])
        self.assertEqual([self.instance.uuid], [w.uuid for w in waiters])


class SwapTest(DriverTestCase):
    def setUp(self):
        super().setUp()
        self.spawn()
        self.old = self.file_info(VOL1)
        self.new = self.file_info(VOL2)
        self.driver.attach_volume(None, self.old, self.instance, '/dev/vdb')

    def test_block_copy_then_pivot(self):
        dom = self.dom()
        with mock.patch.object(dom, 'blockCopy',
                               wraps=dom.blockCopy) as copy:
            self.driver.swap_volume(None, self.old, self.new, self.instance,
                                    '/dev/vdb')
        flags = copy.call_args[0][3]
        self.assertTrue(flags & fakelibvirt.VIR_DOMAIN_BLOCK_COPY_REUSE_EXT)
        live = self.live_disks()['vdb']['element']
        self.assertEqual(self.new['data']['path'],
                         live.find('source').get('file'))
        # The live disk keeps its serial; the definition has the new one.
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        defined = self.defined_disks()['vdb']
        self.assertEqual(VOL2, defined['serial'])
        self.assertEqual(self.new['data']['path'],
                         defined['element'].find('source').get('file'))
        self.assertIsNone(dom.job)

    def test_asked_again_it_copies_nothing(self):
        # Settling a swap the host's restart interrupted after the pivot.
        self.driver.swap_volume(None, self.old, self.new, self.instance,
                                '/dev/vdb')
        dom = self.dom()
        with mock.patch.object(dom, 'blockCopy') as copy:
            self.driver.swap_volume(None, self.old, self.new, self.instance,
                                    '/dev/vdb')
        copy.assert_not_called()
        self.assertEqual(VOL2, self.defined_disks()['vdb']['serial'])

    def test_asked_again_of_a_guest_restarted_on_the_new_volume(self):
        self.driver.swap_volume(None, self.old, self.new, self.instance,
                                '/dev/vdb')
        self.driver.power_off(self.instance)
        self.driver.swap_volume(None, self.old, self.new, self.instance,
                                '/dev/vdb')
        self.driver.power_on(self.instance)
        self.assertEqual(VOL2, self.live_disks()['vdb']['serial'])

    def test_disconnecting_the_new_volume_cancels_a_copy_left_running(self):
        # A swap interrupted while copying, rolled back by settling: the
        # new volume is disconnected; the copy into it must stop.
        dom = self.dom()
        dom.blockCopy('vdb', vconfig.disk_xml(vconfig.volume_disk(
            self.new, '/dev/vdb')[0], for_copy=True), None, 0)
        self.driver.disconnect_volume(self.old)
        self.assertIsNotNone(dom.job)
        self.driver.disconnect_volume(self.new)
        self.assertIsNone(dom.job)
        self.assertEqual(self.old['data']['path'], self.live_disks()['vdb'][
            'element'].find('source').get('file'))

    def test_file_to_iscsi(self):
        self.driver.swap_volume(None, self.old, self.iscsi_info(),
                                self.instance, '/dev/vdb')
        live = self.live_disks()['vdb']['element']
        self.assertEqual('network', live.get('type'))
        self.assertEqual('%s/1' % IQN, live.find('source').get('name'))

    def test_copy_failure_keeps_the_old_volume(self):
        self.dom().copy_error = 'unable to open the destination'
        self.assertRaises(exception.VolumeRebaseFailed,
                          self.driver.swap_volume, None, self.old, self.new,
                          self.instance, '/dev/vdb')
        live = self.live_disks()['vdb']['element']
        self.assertEqual(self.old['data']['path'],
                         live.find('source').get('file'))
        self.assertEqual(VOL1, self.defined_disks()['vdb']['serial'])

    def test_stopped_guest_cannot_swap(self):
        self.driver.power_off(self.instance)
        self.assertRaises(exception.NotSupported, self.driver.swap_volume,
                          None, self.old, self.new, self.instance,
                          '/dev/vdb')

    def test_shareable_disk_cannot_swap(self):
        self.driver.attach_volume(
            None, self.file_info(VOL2, multiattach=True), self.instance,
            '/dev/vdc')
        self.assertRaises(exception.NotSupported, self.driver.swap_volume,
                          None, self.file_info(VOL2, multiattach=True),
                          self.old, self.instance, '/dev/vdc')

    def test_not_attached(self):
        self.assertRaises(exception.NotSupported, self.driver.swap_volume,
                          None, self.old, self.new, self.instance,
                          '/dev/vdd')


class RbdTest(DriverTestCase):
    """rbd disks and their ceph secrets."""

    def secrets(self):
        """``{uuid: (usage, value)}`` of libvirtd's secrets."""
        return {secret.uuid: (secret.usage, secret.value)
                for secret in self.libvirt.libvirtd.secrets.values()}

    def operators_secret(self, uuid=OPERATORS_UUID):
        self.driver._host.get_connection()   # libvirtd's first client
        secret = self.libvirt.libvirtd.secretDefineXML(
            "<secret ephemeral='no' private='yes'><uuid>%s</uuid>"
            "<usage type='ceph'><name>client.cinder secret</name></usage>"
            "</secret>" % uuid)
        secret.setValue(b'operators-key')
        return secret

    def test_attach_defines_the_secret_once_from_the_keyring(self):
        self.spawn()
        conn = self.libvirt.libvirtd
        with mock.patch.object(conn, 'secretDefineXML',
                               wraps=conn.secretDefineXML) as define:
            self.driver.attach_volume(None, self.rbd_info(), self.instance,
                                      '/dev/vdb')
            self.driver.attach_volume(None, self.rbd_info(VOL2),
                                      self.instance, '/dev/vdc')
        self.assertEqual(1, define.call_count)
        usage, value = self.secrets()[SECRET_UUID]
        self.assertEqual(vconfig.ceph_secret_usage('cinder', SECRET_UUID),
                         usage)
        self.assertTrue(usage.startswith('client.cinder secret'))
        # libvirt keeps the key's bytes, not its base64.
        self.assertEqual(base64.b64decode(CEPH_KEY), value)
        secret = conn.secretLookupByUUIDString(SECRET_UUID)
        self.assertEqual(fakelibvirt.VIR_SECRET_USAGE_TYPE_CEPH,
                         secret.usageType())
        source = self.live_disks()['vdb']['element'].find('source')
        self.assertEqual(('rbd', 'volumes/volume-%s' % VOL3),
                         (source.get('protocol'), source.get('name')))
        self.assertEqual({'type': 'ceph', 'uuid': SECRET_UUID},
                         source.find('auth/secret').attrib)
        self.assertEqual(VOL3, self.defined_disks()['vdb']['serial'])

    def test_a_secret_libvirt_has_is_used_as_it_is(self):
        self.operators_secret(SECRET_UUID)
        self.spawn()
        self.driver.attach_volume(None, self.rbd_info(), self.instance,
                                  '/dev/vdb')
        self.assertEqual({SECRET_UUID: ('client.cinder secret',
                                        b'operators-key')}, self.secrets())
        # Not the driver's: it stays when the volume goes.
        self.driver.detach_volume(None, self.rbd_info(), self.instance,
                                  '/dev/vdb')
        self.driver.disconnect_volume(self.rbd_info())
        self.assertIn(SECRET_UUID, self.secrets())

    def test_no_secret_and_no_keyring_fails_clearly(self):
        self.spawn()
        error = self.assertRaises(
            exception.InvalidConfiguration, self.driver.attach_volume,
            None, self.rbd_info(keyring=False), self.instance, '/dev/vdb')
        self.assertIn(SECRET_UUID, str(error))
        self.assertIn('operator must define', str(error))
        self.assertIn('rbd_secret_uuid', str(error))
        self.assertEqual({}, self.live_disks())
        self.assertEqual({}, self.defined_disks())
        self.assertEqual({}, self.secrets())

    def test_a_keyring_of_another_client_is_no_key(self):
        self.spawn()
        self.assertRaises(
            exception.InvalidConfiguration, self.driver.attach_volume,
            None, self.rbd_info(auth_username='nova'), self.instance,
            '/dev/vdb')
        self.assertEqual({}, self.secrets())

    def test_the_operators_secret_is_never_defined_by_the_driver(self):
        self.conf.set_override('rbd_secret_uuid', OPERATORS_UUID,
                               group='libvirt')
        self.conf.set_override('rbd_user', 'nova', group='libvirt')
        self.spawn()
        # Block storage names no secret: the operator's, which the driver
        # never defines, even with a keyring at hand.
        info = self.rbd_info(secret_uuid=None, auth_username=None)
        error = self.assertRaises(
            exception.InvalidConfiguration, self.driver.attach_volume,
            None, info, self.instance, '/dev/vdb')
        self.assertIn(OPERATORS_UUID, str(error))
        self.assertEqual({}, self.secrets())
        self.operators_secret()
        self.driver.attach_volume(None, info, self.instance, '/dev/vdb')
        auth = self.live_disks()['vdb']['element'].find('source/auth')
        self.assertEqual('nova', auth.get('username'))
        self.assertEqual(OPERATORS_UUID, auth.find('secret').get('uuid'))
        self.driver.detach_volume(None, info, self.instance, '/dev/vdb')
        self.driver.disconnect_volume(info)
        self.assertEqual([OPERATORS_UUID], list(self.secrets()))

    def test_disconnect_removes_its_secret_once_no_disk_uses_it(self):
        self.spawn()
        for volume_id, dev in ((VOL3, '/dev/vdb'), (VOL2, '/dev/vdc')):
            self.driver.attach_volume(None, self.rbd_info(volume_id),
                                      self.instance, dev)
        self.driver.detach_volume(None, self.rbd_info(), self.instance,
                                  '/dev/vdb')
        self.driver.disconnect_volume(self.rbd_info())
        self.assertIn(SECRET_UUID, self.secrets())   # vdc uses it
        self.driver.detach_volume(None, self.rbd_info(VOL2), self.instance,
                                  '/dev/vdc')
        self.driver.disconnect_volume(self.rbd_info(VOL2))
        self.assertEqual({}, self.secrets())
        # Asked again: nothing to do.
        self.driver.disconnect_volume(self.rbd_info(VOL2))

    def test_a_stopped_guests_definition_keeps_the_secret(self):
        stopped = fakes.FakeInstance(power_state=states.SHUTDOWN)
        self.spawn([{'mount_device': '/dev/vdb',
                     'connection_info': self.rbd_info(VOL2)}],
                   instance=stopped)
        self.driver.power_off(stopped)
        self.spawn()
        self.driver.attach_volume(None, self.rbd_info(), self.instance,
                                  '/dev/vdb')
        self.driver.detach_volume(None, self.rbd_info(), self.instance,
                                  '/dev/vdb')
        self.driver.disconnect_volume(self.rbd_info())
        self.assertIn(SECRET_UUID, self.secrets())
        # It starts again with its disk.
        self.driver.power_on(stopped)
        self.assertEqual(VOL2, self.live_disks(stopped)['vdb']['serial'])

    def test_another_hosts_disk_keeps_the_secret(self):
        other = compute_driver.load_driver(self.conf, 'compute2')
        theirs = fakes.FakeInstance()
        other.spawn(None, theirs, [{'mount_device': '/dev/vdb',
                                    'connection_info': self.rbd_info(VOL2)}])
        self.spawn([{'mount_device': '/dev/vdb',
                     'connection_info': self.rbd_info()}])
        self.driver.destroy(None, self.instance, None)
        self.driver.disconnect_volume(self.rbd_info())
        self.assertIn(SECRET_UUID, self.secrets())
        other.destroy(None, theirs, None)
        other.disconnect_volume(self.rbd_info(VOL2))
        self.assertEqual({}, self.secrets())

    def test_spawn_power_cycle_and_unshelve_with_an_rbd_disk(self):
        disks = [{'mount_device': '/dev/vdb',
                  'connection_info': self.rbd_info(), 'mode': 'ro'}]
        self.spawn(disks)
        disk = self.live_disks()['vdb']['element']
        self.assertIsNotNone(disk.find('readonly'))
        self.assertIn(SECRET_UUID, self.secrets())
        self.driver.power_off(self.instance)
        self.driver.power_on(self.instance)
        self.assertEqual(VOL3, self.live_disks()['vdb']['serial'])
        # Shelve offload: the domain goes, then the host's connection.
        self.driver.destroy(None, self.instance, None)
        self.driver.disconnect_volume(self.rbd_info())
        self.assertEqual({}, self.secrets())
        # Unshelve: defined again from the keyring.
        self.spawn(disks)
        self.assertIn(SECRET_UUID, self.secrets())
        self.assertEqual(VOL3, self.live_disks()['vdb']['serial'])

    def test_multiattach_read_only_rbd(self):
        self.spawn()
        info = dict(self.rbd_info(access_mode='ro'), multiattach=True)
        self.driver.attach_volume(None, info, self.instance, '/dev/vdb')
        disk = self.live_disks()['vdb']['element']
        self.assertIsNotNone(disk.find('readonly'))
        self.assertIsNotNone(disk.find('shareable'))
        self.assertEqual('none', disk.find('driver').get('cache'))

    def test_swap_file_to_rbd_and_back(self):
        self.spawn()
        old = self.file_info(VOL1)
        self.driver.attach_volume(None, old, self.instance, '/dev/vdb')
        dom = self.dom()
        with mock.patch.object(dom, 'blockCopy',
                               wraps=dom.blockCopy) as copy:
            self.driver.swap_volume(None, old, self.rbd_info(),
                                    self.instance, '/dev/vdb')
        dest = vconfig.parse(copy.call_args[0][1])
        self.assertEqual('network', dest.get('type'))
        self.assertEqual({'type': 'ceph', 'uuid': SECRET_UUID},
                         dest.find('source/auth/secret').attrib)
        self.assertEqual({'name': '127.0.0.1', 'port': '6789'},
                         dest.find('source/host').attrib)
        live = self.live_disks()['vdb']['element']
        self.assertEqual(('network', 'rbd', 'volumes/volume-%s' % VOL3,
                          '127.0.0.1', '6789'),
                         vconfig.element_source(live))
        self.assertEqual(SECRET_UUID,
                         live.find('source/auth/secret').get('uuid'))
        self.assertEqual(VOL3, self.defined_disks()['vdb']['serial'])
        # Asked again: no copy.
        with mock.patch.object(dom, 'blockCopy') as copy:
            self.driver.swap_volume(None, old, self.rbd_info(),
                                    self.instance, '/dev/vdb')
        copy.assert_not_called()
        # Back to a file: the rbd volume's secret goes at its disconnect.
        back = self.file_info(VOL2)
        self.driver.swap_volume(None, self.rbd_info(), back, self.instance,
                                '/dev/vdb')
        self.driver.disconnect_volume(self.rbd_info())
        self.assertEqual({}, self.secrets())
        self.assertEqual(('file', back['data']['path']),
                         vconfig.element_source(
                             self.live_disks()['vdb']['element']))

    def test_swap_iscsi_to_rbd(self):
        self.spawn()
        self.driver.attach_volume(None, self.iscsi_info(), self.instance,
                                  '/dev/vdb')
        self.driver.swap_volume(None, self.iscsi_info(), self.rbd_info(),
                                self.instance, '/dev/vdb')
        source = self.live_disks()['vdb']['element'].find('source')
        self.assertEqual('rbd', source.get('protocol'))
        self.assertIsNone(source.find('initiator'))

    def test_a_copy_into_an_rbd_volume_keeps_its_secret_and_stops(self):
        # A swap interrupted while copying, rolled back by settling.
        self.spawn()
        old = self.file_info(VOL1)
        self.driver.attach_volume(None, old, self.instance, '/dev/vdb')
        dom = self.dom()
        self.driver._volume_disk(self.rbd_info(), '/dev/vdb', 'rw')
        dom.blockCopy('vdb', vconfig.disk_xml(vconfig.volume_disk(
            self.rbd_info(), '/dev/vdb')[0], for_copy=True), None, 0)
        mirror = self.live_disks()['vdb']['element'].find('mirror')
        self.assertEqual(SECRET_UUID,
                         mirror.find('source/auth/secret').get('uuid'))
        self.driver.disconnect_volume(self.rbd_info())
        self.assertIsNone(dom.job)
        self.assertEqual({}, self.secrets())
        self.assertEqual(old['data']['path'], self.live_disks()['vdb'][
            'element'].find('source').get('file'))


class RestoreTest(DriverTestCase):
    def disks(self):
        return [{'mount_device': '/dev/vdb',
                 'connection_info': self.file_info(), 'mode': 'rw'}]

    def test_a_running_domain_is_left_alone(self):
        dom = self.spawn()
        with mock.patch.object(self.libvirt.libvirtd, 'defineXML') as define:
            self.driver.restore_guest(None, self.instance, self.disks())
        define.assert_not_called()
        self.assertEqual(1, dom.created)
        self.assertEqual({}, self.live_disks())

    def test_a_shut_off_domain_stays_off_by_default(self):
        dom = self.spawn()
        self.driver.power_off(self.instance)
        self.driver.restore_guest(None, self.instance, self.disks())
        self.assertFalse(dom.isActive())

    def test_resume_guests_state_on_host_boot(self):
        self.conf.set_override('resume_guests_state_on_host_boot', True)
        dom = self.spawn()
        self.driver.power_off(self.instance)
        self.driver.restore_guest(None, self.instance, self.disks())
        self.assertTrue(dom.isActive())
        stopped = fakes.FakeInstance(power_state=states.SHUTDOWN)
        self.spawn(instance=stopped)
        self.driver.power_off(stopped)
        self.driver.restore_guest(None, stopped, [])
        self.assertFalse(self.dom(stopped).isActive())

    def test_a_domain_that_is_gone_is_defined_again(self):
        self.driver.restore_guest(None, self.instance, self.disks())
        self.assertTrue(self.dom().isActive())
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])

    def test_gone_domains_of_stopped_and_paused_servers(self):
        stopped = fakes.FakeInstance(power_state=states.SHUTDOWN)
        paused = fakes.FakeInstance(power_state=states.POWER_PAUSED)
        self.driver.restore_guest(None, stopped, [])
        self.driver.restore_guest(None, paused, [])
        self.assertFalse(self.dom(stopped).isActive())
        self.assertTrue(self.dom(stopped).isPersistent())
        self.assertTrue(self.dom(paused).paused)


class HostDomainsTest(DriverTestCase):
    def test_only_this_hosts_domains(self):
        self.spawn()
        other = compute_driver.load_driver(self.conf, 'compute2')
        theirs = fakes.FakeInstance()
        other.spawn(None, theirs, [])
        self.libvirt.libvirtd.defineXML(
            "<domain type='kvm'><name>by-hand</name>"
            "<uuid>3f8d6a9e-0000-4000-8000-000000000001</uuid></domain>")
        self.assertEqual({self.instance.uuid},
                         self.driver.list_instance_uuids())
        self.assertEqual({theirs.uuid}, other.list_instance_uuids())

    def test_volume_devices_of_a_server_without_a_domain(self):
        self.assertEqual({}, self.driver.volume_devices(self.instance))
        self.assertFalse(self.driver.has_volume(self.instance, '/dev/vdb'))


class ConnectorTest(DriverTestCase):
    def test_os_bricks_properties_of_this_host(self):
        self.conf.set_override('my_ip', '192.0.2.7')
        props = self.driver.get_volume_connector(self.instance)
        self.assertEqual('192.0.2.7', props['ip'])
        self.assertEqual('compute1', props['host'])
        self.assertEqual(fakelibvirt.CONNECTOR['initiator'],
                         props['initiator'])
        self.libvirt.connector.assert_called_once_with(
            'sudo', '192.0.2.7', False, False, host='compute1')

    def test_read_once_while_the_host_is_the_same(self):
        first = self.driver.get_volume_connector(self.instance)
        first['initiator'] = 'changed by a caller'
        second = self.driver.get_volume_connector(None)
        self.assertEqual(fakelibvirt.CONNECTOR['initiator'],
                         second['initiator'])
        self.assertEqual(1, self.libvirt.connector.call_count)

    def test_read_again_when_my_ip_changes(self):
        self.driver.get_volume_connector(self.instance)
        self.conf.set_override('my_ip', '192.0.2.9')
        props = self.driver.get_volume_connector(self.instance)
        self.assertEqual('192.0.2.9', props['ip'])
        self.assertEqual(2, self.libvirt.connector.call_count)

    def test_the_configured_initiator_name(self):
        # Each compute host its own, where several share a machine: the
        # connector block storage exports to, and what the disks log in
        # with.
        name = 'iqn.2024-01.org.example:compute1'
        self.conf.set_override('iscsi_initiator_name', name,
                               group='libvirt')
        props = self.driver.get_volume_connector(self.instance)
        self.assertEqual(name, props['initiator'])
        self.assertEqual(name, self.driver._initiator_name())
        self.assertRaises(ValueError, self.conf.set_override,
                          'iscsi_initiator_name', '10.0.0.1',
                          group='libvirt')
