"""The virt driver interface and the in-process ``FakeDriver``.

A driver is what a compute host drives: guests and their block devices.
``[DEFAULT] compute_driver`` picks it (``load_driver``): the libvirt one
(``nova_lite.virt.libvirt``: real QEMU guests), or the fake one (the
embedded default and the test double):
it records each guest, its power state and its devices in memory, and can
be slowed down with ``[fake_driver] reserve_delay`` and ``attach_delay`` to
reproduce a busy hypervisor.

Volumes are used in two layers, as a real hypervisor host does (os-brick
and libvirt):

* the *host connection* (``connect_volume``/``disconnect_volume``): one per
  volume on this host, whatever number of the host's guests use it. The
  host may only disconnect when block storage says no other attachment on
  the host still uses the connection (``compute.host.volume_ops`` asks it);
* the *guest device* (``attach_volume``/``detach_volume``), in the mode of
  its attachment. Guests do I/O through it (``write_device``,
  ``read_device``): a write through a read-only device is refused
  (``DeviceIsReadOnly``), and I/O through a device whose host connection is
  gone fails (``VolumeNotConnected``), which is what a host that
  disconnected a connection another guest still used would cause. The
  ``file`` backend's volumes are read and written in their files (opened
  read-only for reads); other backends' data is kept in memory, per
  process.
"""

import abc
import os
import threading
import time

from oslo_log import log as logging

from nova_lite import device_names
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import states
from nova_lite import utils

LOG = logging.getLogger(__name__)


class ComputeDriver(abc.ABC):
    """What the compute manager needs from a hypervisor."""

    capabilities = {
        'supports_multiattach': False,
        'supports_tagged_attach_volume': False,
        'supports_extend_volume': False,
    }

    def __init__(self, conf, host):
        self.conf = conf
        self.host = host

    def get_volume_connector(self, instance):
        """The host connector block storage needs to export a volume."""
        return {
            'platform': 'x86_64',
            'os_type': 'linux',
            'ip': '127.0.0.1',
            'host': self.host,
            'initiator': 'iqn.2010-10.org.openstack:%s' % self.host,
            'multipath': False,
        }

    def get_device_name_for_instance(self, instance, used_names,
                                     requested=None):
        """The next free disk name of the server's bus (``/dev/vdb``...).

        A requested name is used when it is free and well formed; otherwise
        (as libvirt does, which ignores the request) the next free name of
        the root disk's bus is chosen.
        """
        root = device_names.split(
            instance.root_device_name or
            device_names.DEFAULT_ROOT_DEVICE) or ('vd', 'a')
        used = set(used_names)
        if (requested and requested not in used and
                device_names.split(requested)):
            return requested
        if requested:
            LOG.info('Device %s is in use or not a disk name on %s; '
                     'choosing another', requested, instance.uuid)
        used_letters = {p[1] for p in map(device_names.split, used)
                        if p and p[0] == root[0]}
        index = 0
        while True:
            letters = device_names.device_letters(index)
            if letters not in used_letters:
                return '/dev/%s%s' % (root[0], letters)
            index += 1

    def get_info(self, instance):
        """``{'power_state': ...}`` of the server's guest as the
        hypervisor has it (``states.RUNNING``, ``POWER_PAUSED``,
        ``SHUTDOWN``, ``NOSTATE``); ``InstanceNotFound`` when it has no
        such guest. What the power-state sync compares the database
        with (``compute.host.power_sync``)."""
        raise NotImplementedError()

    def register_event_listener(self, callback):
        """``callback(instance_uuid)`` is called (on a thread of the
        driver's, never under a lock of the caller's) each time the
        hypervisor says the power state of one of this host's guests
        changed, behind the control plane's back or not (a lifecycle
        event): the compute manager syncs that server. A driver without
        events never calls it."""
        self._event_listener = callback

    def emit_event(self, instance_uuid):
        """Tell the registered listener that the guest of
        ``instance_uuid`` changed power state."""
        listener = getattr(self, '_event_listener', None)
        if listener is None:
            return
        try:
            listener(instance_uuid)
        except Exception:
            LOG.exception('The lifecycle event of %s was not handled',
                          instance_uuid)

    def restore_guest(self, context, instance, block_device_info):
        """Called for each server of the host when the service starts.
        A hypervisor keeps its guests across a service restart: nothing to
        do by default."""

    @abc.abstractmethod
    def spawn(self, context, instance, block_device_info):
        pass

    @abc.abstractmethod
    def destroy(self, context, instance, block_device_info):
        pass

    @abc.abstractmethod
    def power_off(self, instance, timeout=None):
        """Stop the guest: a clean shutdown for ``timeout`` seconds
        (``[DEFAULT] shutdown_timeout`` when None), then a hard power-off;
        0 powers off at once."""

    @abc.abstractmethod
    def power_on(self, instance, block_device_info=None):
        """Start (or resume) the guest. ``block_device_info``, the
        server's attached volumes, is what a guest that was off starts
        with (Nova's hard reboot rebuilds the domain from its mappings):
        a disk the guest's definition lost (a detach that failed after it
        left the definition) is there again."""

    @abc.abstractmethod
    def pause(self, instance):
        pass

    @abc.abstractmethod
    def unpause(self, instance):
        pass

    @abc.abstractmethod
    def attach_volume(self, context, connection_info, instance, mountpoint,
                      mode='rw'):
        pass

    @abc.abstractmethod
    def detach_volume(self, context, connection_info, instance, mountpoint):
        pass

    @abc.abstractmethod
    def swap_volume(self, context, old_connection_info, new_connection_info,
                    instance, mountpoint):
        pass

    def disconnect_volume(self, connection_info):
        """Close this host's connection to the volume (after its last
        guest device on this host is gone). Nothing by default."""

    def remove_stale_disk(self, instance, mountpoint):
        """Remove a volume disk the guest must no longer have (its volume
        was freed without this host), in a bounded time: the running
        guest is asked once to release it, then it goes from the guest's
        persistent definition whatever the answer. True when the running
        guest no longer has it; False when it still holds it (the caller
        stops the guest). By default, ``detach_volume``."""
        self.detach_volume(None, None, instance, mountpoint)
        return True

    def extend_volume(self, context, connection_info, instance, new_size):
        """The guest's disk of the volume of ``connection_info`` (found by
        its serial, the volume id) gets ``new_size`` bytes, the size block
        storage grew the volume to, so that the guest sees it. Only for a
        driver whose capabilities say ``supports_extend_volume``."""
        raise exception.NotSupported(
            reason=_('this virt driver cannot resize a volume disk'))

    def has_volume(self, instance, mountpoint):
        """Whether the guest has a disk at ``mountpoint`` (settling an
        attach after a crash asks it). False by default: a driver that
        cannot tell has its interrupted attaches rolled back."""
        return False

    @abc.abstractmethod
    def list_instance_uuids(self):
        """The uuids of every guest the hypervisor has on this host,
        running or not: what a host that comes back compares with the
        database (the guests of servers deleted meanwhile are reaped)."""

    @abc.abstractmethod
    def volume_devices(self, instance):
        """``{mountpoint: serial}`` of the guest's volume disks as the
        hypervisor has them (the serial is the volume id the disk was
        attached with, ``connection_info['serial']``; None when it had
        none); ``{}`` when the hypervisor has no such guest."""


def connection_key(connection_info):
    """What identifies a volume's connection on a host: the file of the
    ``file`` backend, the target of others (Cinder's flat form, or the
    nested ``data`` of a driver's own answer)."""
    info = connection_info or {}
    data = info.get('data') if isinstance(info.get('data'), dict) else info
    for key in ('path', 'target', 'volume_id'):
        if data.get(key):
            return '%s:%s' % (info.get('driver_volume_type'), data[key])
    return None


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


class FakeDriver(ComputeDriver):
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


def load_driver(conf, host):
    """The virt driver of this compute host: ``[DEFAULT] compute_driver``
    (``fake``, the default, or ``libvirt``)."""
    if conf.compute_driver == 'libvirt':
        # Imported here: the libvirt extra is optional.
        from nova_lite.virt.libvirt import driver as libvirt_driver
        return libvirt_driver.LibvirtDriver(conf, host)
    return FakeDriver(conf, host)
