"""The in-process virt driver (``[DEFAULT] compute_driver = fake``, the
embedded default and the test double): it records each guest, its power
state and its devices in memory, and can be slowed down with
``[fake_driver] reserve_delay`` and ``attach_delay`` to reproduce a busy
hypervisor. The two layers of a volume it keeps (the host connection and
the guest device) are ``nova_lite.virt.driver``'s.
"""

import os
import threading
import time

from oslo_log import log as logging

from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import states
from nova_lite import utils
from nova_lite.virt import driver

LOG = logging.getLogger(__name__)

connection_key = driver.connection_key


def _path(connection_info):
    info = connection_info or {}
    data = info.get('data') if isinstance(info.get('data'), dict) else info
    if info.get('driver_volume_type') == 'file':
        return data.get('path')
    return None


class FakeGuest(object):
    def __init__(self, uuid):
        self.uuid = uuid
        self.power_state = states.RUNNING
        # mountpoint -> {'connection_info': ..., 'mode': 'rw'|'ro'}
        self.devices = {}
        # Mountpoints whose unplug this guest never answers while it runs
        # (a guest blocked on the disk): ``remove_stale_disk`` leaves
        # them, and a power-off drops them (the persistent definition no
        # longer has them).
        self.holds = set()
        self.unplug_pending = set()


class FakeDriver(driver.ComputeDriver):
    """Guests in memory. Thread safe: RPC workers call it concurrently."""

    capabilities = {
        'supports_multiattach': True,
        'supports_tagged_attach_volume': True,
        'supports_extend_volume': True,
    }

    # Data of volumes without a file, per process: connection key ->
    # bytearray (what the guests of this process's hosts wrote).
    _memory = {}

    def __init__(self, conf, host):
        super().__init__(conf, host)
        self.guests = {}
        # connection key -> connection_info: this host's connections.
        self.host_connections = {}
        self._lock = threading.Lock()

    def _guest(self, instance):
        guest = self.guests.get(instance.uuid)
        if guest is None:
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        return guest

    def get_device_name_for_instance(self, instance, used_names,
                                     requested=None):
        delay = self.conf.fake_driver.reserve_delay
        if delay:
            time.sleep(delay)  # a slow hypervisor, by configuration
        return super().get_device_name_for_instance(instance, used_names,
                                                    requested)

    def _connect(self, connection_info):
        key = connection_key(connection_info)
        if key is None:
            return
        path = _path(connection_info)
        if path is not None and not os.path.exists(path):
            raise exception.VolumeBackendAPIException(
                data='the volume file %s does not exist' % path)
        self.host_connections.setdefault(key, connection_info)

    def spawn(self, context, instance, block_device_info):
        guest = FakeGuest(instance.uuid)
        with self._lock:
            for disk in block_device_info or []:
                info = disk.get('connection_info')
                self._connect(info)
                guest.devices[disk['mount_device']] = {
                    'connection_info': info,
                    'mode': disk.get('mode') or 'rw'}
            self.guests[instance.uuid] = guest

    def restore_guest(self, context, instance, block_device_info):
        # Guests live in memory: a restarted service rebuilds them from the
        # database (the server's power state and volume devices).
        if instance.uuid in self.guests:
            return
        self.spawn(context, instance, block_device_info)
        self.guests[instance.uuid].power_state = instance.power_state

    def destroy(self, context, instance, block_device_info):
        with self._lock:
            self.guests.pop(instance.uuid, None)

    def power_off(self, instance, timeout=None):
        guest = self._guest(instance)
        with self._lock:
            guest.power_state = states.SHUTDOWN
            for mountpoint in guest.unplug_pending:
                guest.devices.pop(mountpoint, None)
            guest.unplug_pending.clear()

    def get_info(self, instance):
        return {'power_state': self._guest(instance).power_state}

    def power_on(self, instance, block_device_info=None):
        guest = self._guest(instance)
        with self._lock:
            if guest.power_state != states.POWER_PAUSED:
                for disk in block_device_info or []:
                    guest.devices.setdefault(disk['mount_device'], {
                        'connection_info': disk.get('connection_info'),
                        'mode': disk.get('mode') or 'rw'})
            guest.power_state = states.RUNNING

    def pause(self, instance):
        self._guest(instance).power_state = states.POWER_PAUSED

    def unpause(self, instance):
        self._guest(instance).power_state = states.RUNNING

    # -- behind the control plane's back (tests) ---------------------------
    def set_power_state_behind(self, instance_uuid, power_state,
                               event=True):
        """The guest of ``instance_uuid`` changes power state without the
        control plane (shut down from inside, crashed, destroyed or
        started by someone else), with a lifecycle event if ``event``."""
        with self._lock:
            self.guests[instance_uuid].power_state = power_state
        if event:
            self.emit_event(instance_uuid)

    def attach_volume(self, context, connection_info, instance, mountpoint,
                      mode='rw'):
        delay = self.conf.fake_driver.attach_delay
        if delay:
            time.sleep(delay)  # a slow hypervisor, by configuration
        guest = self._guest(instance)
        with self._lock:
            if mountpoint in guest.devices:
                raise exception.DevicePathInUse(path=mountpoint)
            self._connect(connection_info)
            guest.devices[mountpoint] = {'connection_info': connection_info,
                                         'mode': mode or 'rw'}

    def detach_volume(self, context, connection_info, instance, mountpoint):
        guest = self.guests.get(instance.uuid)
        if guest is None:
            return
        with self._lock:
            if guest.devices.pop(mountpoint, None) is None:
                LOG.info('%s was not attached to %s; nothing to detach',
                         mountpoint, instance.uuid)

    def remove_stale_disk(self, instance, mountpoint):
        guest = self.guests.get(instance.uuid)
        if guest is None:
            return True
        with self._lock:
            if (mountpoint in guest.holds and mountpoint in guest.devices
                    and guest.power_state != states.SHUTDOWN):
                guest.unplug_pending.add(mountpoint)
                return False
            guest.devices.pop(mountpoint, None)
            return True

    def swap_volume(self, context, old_connection_info, new_connection_info,
                    instance, mountpoint):
        """The guest's disk at ``mountpoint`` moves to the new volume with
        its data, as libvirt's block copy does (a volume migration's
        swap): the old device's bytes are copied into the new volume
        first. A device already on the new volume is left as it is."""
        guest = self._guest(instance)
        with self._lock:
            device = guest.devices.get(mountpoint)
            if device is None:
                raise exception.NotSupported(
                    reason=_('%s is not attached') % mountpoint)
            self._connect(new_connection_info)
            if connection_key(device['connection_info']) != connection_key(
                    new_connection_info):
                self._copy_device(device['connection_info'],
                                  new_connection_info)
            device['connection_info'] = new_connection_info

    def _copy_device(self, old_info, new_info):
        """Copy the data of volume ``old_info`` into volume ``new_info``
        (files, or this process's memory for volumes without one)."""
        old_path, new_path = _path(old_info), _path(new_info)
        if old_path and new_path:
            utils.copy_data(old_path, new_path)
            return
        old = self._memory.get(connection_key(old_info))
        if old_path:
            old = bytearray()
            with open(old_path, 'rb') as f:
                for offset, length in utils.data_extents(f.fileno()):
                    old.extend(b'\0' * (offset - len(old)))
                    old.extend(os.pread(f.fileno(), length, offset))
        if not old:
            return
        if new_path:
            fd = os.open(new_path, os.O_WRONLY)
            try:
                os.pwrite(fd, bytes(old), 0)
            finally:
                os.close(fd)
            return
        self._memory[connection_key(new_info)] = bytearray(old)

    def extend_volume(self, context, connection_info, instance, new_size):
        """The device's ``size`` (``device_size``) becomes ``new_size``;
        the guest must have the volume (``VolumeNotFound`` otherwise)."""
        volume_id = (connection_info or {}).get('serial')
        guest = self._guest(instance)
        with self._lock:
            for device in guest.devices.values():
                if (device['connection_info'] or {}).get(
                        'serial') == volume_id:
                    device['size'] = new_size
                    return
        raise exception.VolumeNotFound(volume_id=volume_id)

    def device_size(self, instance, mountpoint):
        """The size in bytes the guest was last told its device at
        ``mountpoint`` has (None: never resized since it was attached)."""
        return self._guest(instance).devices[mountpoint].get('size')

    def disconnect_volume(self, connection_info):
        key = connection_key(connection_info)
        with self._lock:
            self.host_connections.pop(key, None)

    def has_volume(self, instance, mountpoint):
        guest = self.guests.get(instance.uuid)
        return guest is not None and mountpoint in guest.devices

    def list_instance_uuids(self):
        with self._lock:
            return set(self.guests)

    def volume_devices(self, instance):
        guest = self.guests.get(instance.uuid)
        if guest is None:
            return {}
        with self._lock:
            return {mountpoint: (device['connection_info'] or {}).get(
                'serial') for mountpoint, device in guest.devices.items()}

    def is_connected(self, connection_info):
        return connection_key(connection_info) in self.host_connections

    # -- guest I/O ----------------------------------------------------------
    def _device(self, instance, mountpoint):
        device = self._guest(instance).devices.get(mountpoint)
        if device is None:
            raise exception.NotSupported(
                reason=_('%s is not attached') % mountpoint)
        key = connection_key(device['connection_info'])
        if key not in self.host_connections:
            raise exception.VolumeNotConnected(mountpoint=mountpoint,
                                               instance_uuid=instance.uuid)
        return device, key

    def write_device(self, instance, mountpoint, data, offset=0):
        """The guest writes ``data`` at ``offset`` of a volume device;
        refused (``DeviceIsReadOnly``) on a read-only attachment."""
        device, key = self._device(instance, mountpoint)
        if device['mode'] != 'rw':
            raise exception.DeviceIsReadOnly(mountpoint=mountpoint,
                                             instance_uuid=instance.uuid)
        path = _path(device['connection_info'])
        if path is not None:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.pwrite(fd, data, offset)
            finally:
                os.close(fd)
            return
        with self._lock:
            buf = self._memory.setdefault(key, bytearray())
            if len(buf) < offset + len(data):
                buf.extend(b'\0' * (offset + len(data) - len(buf)))
            buf[offset:offset + len(data)] = data

    def read_device(self, instance, mountpoint, length, offset=0):
        """What the guest reads from a volume device (any mode)."""
        device, key = self._device(instance, mountpoint)
        path = _path(device['connection_info'])
        if path is not None:
            fd = os.open(path, os.O_RDONLY)
            try:
                return os.pread(fd, length, offset)
            finally:
                os.close(fd)
        with self._lock:
            buf = self._memory.get(key, bytearray())
            data = bytes(buf[offset:offset + length])
        return data + b'\0' * (length - len(data))
