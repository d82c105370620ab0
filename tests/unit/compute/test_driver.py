"""The fake virt driver and device-name choice."""

import os
from unittest import mock

import fixtures

from nova_lite import device_names
from nova_lite import exception
from nova_lite import states
from nova_lite.virt import driver
from nova_lite.virt import fake as virt_fake
from tests import base
from tests.unit.compute import fakes


class DeviceNameTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.driver = virt_fake.FakeDriver(self.conf, 'compute1')
        self.instance = fakes.FakeInstance()

    def test_letters(self):
        self.assertEqual(['a', 'b', 'z', 'aa', 'ab', 'az', 'ba'],
                         [device_names.device_letters(i)
                          for i in (0, 1, 25, 26, 27, 51, 52)])

    def test_next_free_name_after_root(self):
        name = self.driver.get_device_name_for_instance(
            self.instance, ['/dev/vda'])
        self.assertEqual('/dev/vdb', name)
        name = self.driver.get_device_name_for_instance(
            self.instance, ['/dev/vda', '/dev/vdb', '/dev/vdd'])
        self.assertEqual('/dev/vdc', name)

    def test_requested_name_used_when_free(self):
        name = self.driver.get_device_name_for_instance(
            self.instance, ['/dev/vda'], requested='/dev/vdz')
        self.assertEqual('/dev/vdz', name)

    def test_requested_name_in_use_picks_the_next_free(self):
        name = self.driver.get_device_name_for_instance(
            self.instance, ['/dev/vda', '/dev/vdb'], requested='/dev/vdb')
        self.assertEqual('/dev/vdc', name)

    def test_bus_of_the_root_device(self):
        instance = fakes.FakeInstance(root_device_name='/dev/sda')
        self.assertEqual('/dev/sdb', self.driver.get_device_name_for_instance(
            instance, ['/dev/sda']))

    def test_beyond_z(self):
        used = ['/dev/vd%s' % device_names.device_letters(i)
                for i in range(26)]
        self.assertEqual('/dev/vdaa',
                         self.driver.get_device_name_for_instance(
                             self.instance, used))

    def test_reserve_delay_honoured(self):
        self.conf.set_override('reserve_delay', 0.5, group='fake_driver')
        with mock.patch.object(virt_fake.time, 'sleep') as sleep:
            self.driver.get_device_name_for_instance(self.instance, [])
        sleep.assert_called_once_with(0.5)


class FakeDriverTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.driver = virt_fake.FakeDriver(self.conf, 'compute1')
        self.instance = fakes.FakeInstance()
        self.driver.spawn(None, self.instance, [
            {'mount_device': '/dev/vdb', 'connection_info': {'a': 1}}])

    def test_spawn_records_guest_and_volumes(self):
        guest = self.driver.guests[self.instance.uuid]
        self.assertEqual(states.RUNNING, guest.power_state)
        self.assertEqual({'/dev/vdb': {'connection_info': {'a': 1},
                                       'mode': 'rw'}}, guest.devices)

    def test_attach_detach(self):
        self.driver.attach_volume(None, {'b': 2}, self.instance, '/dev/vdc',
                                  mode='ro')
        guest = self.driver.guests[self.instance.uuid]
        self.assertEqual('ro', guest.devices['/dev/vdc']['mode'])
        self.driver.detach_volume(None, {'b': 2}, self.instance, '/dev/vdc')
        self.assertNotIn('/dev/vdc', guest.devices)

    def test_attach_to_a_used_device_fails(self):
        self.assertRaises(exception.DevicePathInUse,
                          self.driver.attach_volume, None, {},
                          self.instance, '/dev/vdb')

    def test_attach_delay_honoured(self):
        self.conf.set_override('attach_delay', 0.25, group='fake_driver')
        with mock.patch.object(virt_fake.time, 'sleep') as sleep:
            self.driver.attach_volume(None, {}, self.instance, '/dev/vdc')
        sleep.assert_called_once_with(0.25)

    def test_power(self):
        guest = self.driver.guests[self.instance.uuid]
        self.driver.power_off(self.instance)
        self.assertEqual(states.SHUTDOWN, guest.power_state)
        self.driver.power_on(self.instance)
        self.driver.pause(self.instance)
        self.assertEqual(states.POWER_PAUSED, guest.power_state)
        self.driver.unpause(self.instance)
        self.assertEqual(states.RUNNING, guest.power_state)

    def test_destroy(self):
        self.driver.destroy(None, self.instance, None)
        self.assertNotIn(self.instance.uuid, self.driver.guests)
        # Detaching from a destroyed guest is a no-op.
        self.driver.detach_volume(None, {}, self.instance, '/dev/vdb')

    def test_guests_and_their_volume_devices(self):
        self.driver.attach_volume(None, {'serial': 'vol-c'}, self.instance,
                                  '/dev/vdc')
        self.assertEqual({self.instance.uuid},
                         self.driver.list_instance_uuids())
        self.assertEqual({'/dev/vdb': None, '/dev/vdc': 'vol-c'},
                         self.driver.volume_devices(self.instance))
        self.driver.destroy(None, self.instance, None)
        self.assertEqual(set(), self.driver.list_instance_uuids())
        self.assertEqual({}, self.driver.volume_devices(self.instance))

    def test_swap(self):
        self.driver.swap_volume(None, {'a': 1}, {'c': 3}, self.instance,
                                '/dev/vdb')
        self.assertEqual(
            {'c': 3},
            self.driver.guests[self.instance.uuid].devices['/dev/vdb'][
                'connection_info'])

    def test_extend_volume_records_the_size(self):
        self.driver.attach_volume(None, {'serial': 'vol'}, self.instance,
                                  '/dev/vdc')
        self.assertIsNone(self.driver.device_size(self.instance, '/dev/vdc'))
        self.driver.extend_volume(None, {'serial': 'vol'}, self.instance,
                                  2048)
        self.assertEqual(2048,
                         self.driver.device_size(self.instance, '/dev/vdc'))
        self.assertIsNone(self.driver.device_size(self.instance, '/dev/vdb'))
        self.assertRaises(exception.VolumeNotFound,
                          self.driver.extend_volume, None,
                          {'serial': 'other'}, self.instance, 2048)
        self.assertRaises(exception.NotSupported,
                          driver.ComputeDriver.extend_volume, self.driver,
                          None, {}, self.instance, 1)

    def test_restore_guest(self):
        instance = fakes.FakeInstance(power_state=states.SHUTDOWN)
        self.driver.restore_guest(None, instance, [
            {'mount_device': '/dev/vdc', 'connection_info': {'c': 3},
             'mode': 'ro'}])
        guest = self.driver.guests[instance.uuid]
        self.assertEqual(states.SHUTDOWN, guest.power_state)
        self.assertEqual('ro', guest.devices['/dev/vdc']['mode'])
        # A guest the driver still has is left alone.
        self.driver.restore_guest(None, self.instance, [])
        self.assertIn('/dev/vdb',
                      self.driver.guests[self.instance.uuid].devices)


class GuestIOTest(base.TestCase):
    """Host connections and guest I/O of the fake driver."""

    def setUp(self):
        super().setUp()
        self.driver = virt_fake.FakeDriver(self.conf, 'compute1')
        self.instance = fakes.FakeInstance()
        self.driver.spawn(None, self.instance, [])
        self.path = os.path.join(self.useFixture(
            fixtures.TempDir()).path, 'volume-1')
        with open(self.path, 'wb') as f:
            f.truncate(4096)
        self.info = {'driver_volume_type': 'file', 'path': self.path,
                     'access_mode': 'rw'}

    def test_file_volume_read_write(self):
        self.driver.attach_volume(None, self.info, self.instance,
                                  '/dev/vdb')
        self.assertTrue(self.driver.is_connected(self.info))
        self.driver.write_device(self.instance, '/dev/vdb', b'abc', 10)
        with open(self.path, 'rb') as f:
            f.seek(10)
            self.assertEqual(b'abc', f.read(3))
        self.assertEqual(b'abc', self.driver.read_device(
            self.instance, '/dev/vdb', 3, 10))

    def test_swap_moves_the_data(self):
        # A volume migration's swap: the guest reads on the new volume
        # what it wrote on the old one (file to file, file to memory,
        # memory to file), as libvirt's block copy does.
        new_path = self.path + '-new'
        with open(new_path, 'wb') as f:
            f.truncate(1 << 20)
        new_info = {'driver_volume_type': 'file', 'path': new_path,
                    'access_mode': 'rw'}
        memory = {'driver_volume_type': 'fake', 'target': 'fake://b/v2'}
        self.driver.attach_volume(None, self.info, self.instance,
                                  '/dev/vdb')
        self.driver.write_device(self.instance, '/dev/vdb', b'abc', 100)
        for target in (new_info, memory, dict(new_info)):
            self.driver.swap_volume(None, None, target, self.instance,
                                    '/dev/vdb')
            self.assertEqual(b'abc', self.driver.read_device(
                self.instance, '/dev/vdb', 3, 100), target)
            self.driver.write_device(self.instance, '/dev/vdb', b'abc',
                                     100)
        # Swapped to the device it has: nothing copied, nothing lost.
        self.driver.write_device(self.instance, '/dev/vdb', b'xyz', 100)
        self.driver.swap_volume(None, None, new_info, self.instance,
                                '/dev/vdb')
        self.assertEqual(b'xyz', self.driver.read_device(
            self.instance, '/dev/vdb', 3, 100))

    def test_read_only_device_refuses_writes(self):
        self.driver.attach_volume(None, dict(self.info, access_mode='ro'),
                                  self.instance, '/dev/vdb', mode='ro')
        self.assertRaises(exception.DeviceIsReadOnly,
                          self.driver.write_device, self.instance,
                          '/dev/vdb', b'abc')
        with open(self.path, 'rb') as f:
            self.assertEqual(b'\0' * 3, f.read(3))
        self.assertEqual(b'\0\0', self.driver.read_device(
            self.instance, '/dev/vdb', 2))

    def test_io_fails_once_the_host_disconnected(self):
        self.driver.attach_volume(None, self.info, self.instance,
                                  '/dev/vdb')
        self.driver.disconnect_volume(self.info)
        self.assertFalse(self.driver.is_connected(self.info))
        self.assertRaises(exception.VolumeNotConnected,
                          self.driver.read_device, self.instance,
                          '/dev/vdb', 1)

    def test_guest_detach_keeps_the_host_connection(self):
        other = fakes.FakeInstance()
        self.driver.spawn(None, other, [])
        self.driver.attach_volume(None, self.info, self.instance,
                                  '/dev/vdb')
        self.driver.attach_volume(None, self.info, other, '/dev/vdb',
                                  mode='ro')
        self.driver.detach_volume(None, self.info, self.instance,
                                  '/dev/vdb')
        # Only the host may decide to disconnect (volume_ops asks block
        # storage); the other guest goes on reading.
        self.assertEqual(b'\0', self.driver.read_device(other, '/dev/vdb',
                                                        1))

    def test_memory_volume(self):
        info = {'driver_volume_type': 'fake', 'target': 'fake://b/v1'}
        self.driver.attach_volume(None, info, self.instance, '/dev/vdb')
        self.driver.write_device(self.instance, '/dev/vdb', b'xy', 2)
        self.assertEqual(b'\0\0xy\0', self.driver.read_device(
            self.instance, '/dev/vdb', 5))

    def test_connection_key(self):
        self.assertEqual('file:/a', driver.connection_key(
            {'driver_volume_type': 'file', 'path': '/a'}))
        self.assertEqual('file:/a', driver.connection_key(
            {'driver_volume_type': 'file', 'data': {'path': '/a'}}))
        self.assertIsNone(driver.connection_key({}))
