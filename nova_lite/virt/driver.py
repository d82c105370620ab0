"""The virt driver interface.

A driver is what a compute host drives: guests and their block devices.
``[DEFAULT] compute_driver`` picks it (``load_driver``): the libvirt one
(``nova_lite.virt.libvirt``: real QEMU guests), or the fake one
(``nova_lite.virt.fake``: the embedded default and the test double).

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

from oslo_log import log as logging

from nova_lite import device_names
from nova_lite import exception
from nova_lite.i18n import _

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


def load_driver(conf, host):
    """The virt driver of this compute host: ``[DEFAULT] compute_driver``
    (``fake``, the default, or ``libvirt``)."""
    # Imported here: each imports this module (and the libvirt extra is
    # optional).
    if conf.compute_driver == 'libvirt':
        from nova_lite.virt.libvirt import driver as libvirt_driver
        return libvirt_driver.LibvirtDriver(conf, host)
    from nova_lite.virt import fake
    return fake.FakeDriver(conf, host)
