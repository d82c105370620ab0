"""The libvirt virt driver: each server a QEMU domain, each volume a disk.

``[DEFAULT] compute_driver = libvirt``. What it does, by the seams of
``compute.host.driver.ComputeDriver``:

* **spawn**: define and start a persistent domain (``config.Guest``): the
  flavor's vCPUs and RAM, q35 with ACPI and ``[libvirt] num_pcie_ports``
  root ports, direct kernel boot (``[libvirt] kernel_path``...), the
  console logged to ``$instances_path/<uuid>/console.log``, the guest
  channels, and the server's volumes at their device names. A domain left
  by an earlier build of the same server is replaced.
* **destroy**: stop and undefine (idempotent: no domain, nothing to do),
  then remove the server's directory.
* **power off/on, pause/unpause**: ACPI shutdown (``[DEFAULT]
  shutdown_timeout``) then power-off; start; suspend; resume.
* **attach**: hot-plug the disk at the device name the control plane
  reserved, in the live domain and its persistent definition at once
  (``<serial>`` the volume id, ``<readonly/>``, ``<shareable/>``). The
  guest may name it otherwise (it names disks in the order it finds
  them): guests and tests find a disk by its serial.
* **detach**: the volume's disk is found by its serial (the volume id)
  or by what it reads (a swapped live disk keeps the old serial), never
  by the device name alone: a disk at that name that is another volume
  is left alone. As Nova, it leaves the persistent definition first;
  then the guest is asked to release it and libvirt's
  ``DEVICE_REMOVED`` event awaited; asked again after
  ``device_detach_timeout`` seconds, up to ``device_detach_attempts``
  times; then ``DeviceDetachFailed`` (the compute manager records the
  instance fault and the volume stays attached). A guest that lets go
  late does not get the disk back at its next start, and the detach
  asked again finds nothing left to do and completes.
* **swap**: libvirt's block copy of the disk into the new volume, then a
  pivot (as Nova's ``swap_volume``): the guest keeps its disk, now backed
  by the new volume, with the old volume's data. Needs a running (or
  paused) guest; any pair of ``file``, ``iscsi`` and ``rbd`` volumes
  (the copy's destination carries its hosts and ``<auth>``). The live
  disk keeps the old volume's serial (libvirt cannot change it under a
  running guest); the definition gets the new one, which the guest sees
  from its next start.
* **restore_guest** (service start): libvirt's domains are the truth. A
  domain that exists is left as it is (a shut-off one is started again
  only with ``[DEFAULT] resume_guests_state_on_host_boot``); a server
  whose domain is gone gets it defined again from the database, and
  started if the server was running.
* **get_info / lifecycle events**: the power state of the domain (what
  the compute manager's power-state sync compares the database with),
  and libvirt's lifecycle events of the domains, which make that sync
  for their server (``host``).
* **has_volume / volume_devices / list_instance_uuids**: read from the
  domains (the live XML of a running domain, the definition otherwise);
  only domains whose metadata names this host count.
* **get_volume_connector**: os-brick's connector properties of the host
  (its iSCSI initiator name, which the disks log in with), read at start
  and again only when what they read changes (``connector``).
* **secrets**: an ``iscsi`` disk's CHAP password is a libvirt secret of
  this host and target, set at every attach and removed at disconnect.
  An ``rbd`` disk names the ``ceph`` secret of its ``secret_uuid`` (or,
  where block storage names none, ``[libvirt] rbd_secret_uuid``, the
  operator's). A host without it gets it defined from the keyring block
  storage sends (nova_lite's ``rbd`` backend: the host's own cephx
  identity's; Cinder's with ``rbd_keyring_conf``), marked as the
  driver's in its usage name, once, and shared by every disk with that
  uuid; without a keyring the disk fails (``InvalidConfiguration``: the
  operator defines it). At disconnect, a secret the driver defined goes
  when no disk of any domain of libvirtd (live or defined, block-copy
  destinations included) names it; an operator's never does. Building disks and
  removing secrets are serialized in the process, so a secret is not
  removed between its check and its first use.
"""

import os
import shutil
import threading
import time

from oslo_log import log as logging
from oslo_utils import excutils

from nova_lite.compute import flavors
from nova_lite.compute import names
from nova_lite.conf import base as conf_base
from nova_lite import device_names
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import states
from nova_lite.virt import driver
from nova_lite.virt.libvirt import config as vconfig
from nova_lite.virt.libvirt import connector as vconnector
from nova_lite.virt.libvirt import host as vhost

try:
    import libvirt
except ImportError:     # the ``libvirt`` extra is not installed
    libvirt = None

LOG = logging.getLogger(__name__)

DEFAULT_URI = 'qemu:///system'

# How often a shutdown, a block job or an unplug is looked at while the
# driver waits for it (libvirt has no event for the first two that the
# driver listens to).
POLL_INTERVAL = 0.5

# Held from a ceph secret's check (or definition) until a domain uses it,
# and while a disconnect looks for users of one and removes it.
_SECRETS_LOCK = threading.RLock()


def detect_virt_type(kvm_device='/dev/kvm', cpuinfo='/proc/cpuinfo'):
    """``kvm`` when the device opens and the CPU advertises hardware
    virtualization, else ``qemu`` (TCG)."""
    try:
        fd = os.open(kvm_device, os.O_RDWR)
    except OSError:
        return 'qemu'
    os.close(fd)
    try:
        with open(cpuinfo) as f:
            flags = set()
            for line in f:
                if line.startswith('flags'):
                    flags.update(line.partition(':')[2].split())
    except OSError:
        return 'qemu'
    return 'kvm' if flags & {'vmx', 'svm'} else 'qemu'


def _power_state(state):
    """nova_lite's power state of a libvirt domain state."""
    return {
        libvirt.VIR_DOMAIN_RUNNING: states.RUNNING,
        libvirt.VIR_DOMAIN_BLOCKED: states.RUNNING,
        libvirt.VIR_DOMAIN_PAUSED: states.POWER_PAUSED,
        libvirt.VIR_DOMAIN_SHUTDOWN: states.SHUTDOWN,
        libvirt.VIR_DOMAIN_SHUTOFF: states.SHUTDOWN,
        libvirt.VIR_DOMAIN_CRASHED: states.SHUTDOWN,
    }.get(state, states.NOSTATE)


class LibvirtDriver(driver.ComputeDriver):
    capabilities = {
        'supports_multiattach': True,
        'supports_tagged_attach_volume': True,
        'supports_extend_volume': True,
    }

    def __init__(self, conf, host):
        super().__init__(conf, host)
        vhost.require_libvirt()
        if not conf.libvirt.kernel_path:
            raise exception.InvalidInput(
                reason=_('[libvirt] kernel_path must name the kernel the '
                         'guests boot'))
        self.virt_type = conf.libvirt.virt_type or detect_virt_type()
        LOG.info('libvirt driver of host %s: domain type %s%s', host,
                 self.virt_type, '' if conf.libvirt.virt_type else
                 ' (detected)')
        self._host = vhost.Host(conf.libvirt.connection_uri or DEFAULT_URI,
                                host)
        self._initiator = None
        self._connector = vconnector.ConnectorProperties(
            self._read_connector,
            lambda: (self.conf.my_ip, False, False, self.host))

    # -- paths and names ------------------------------------------------
    def instances_path(self):
        return os.path.abspath(self.conf.instances_path or
                               conf_base.state_path(self.conf, 'instances'))

    def instance_dir(self, instance):
        return os.path.join(self.instances_path(), instance.uuid)

    def console_log_path(self, instance):
        return os.path.join(self.instance_dir(instance), 'console.log')

    def domain_name(self, instance):
        """The server's instance name (``[DEFAULT] instance_name_template``,
        as the API shows it). Domains are looked up by uuid: a domain of
        another name (an older template) is renamed the next time it is
        off (``_rename``)."""
        return names.instance_name(self.conf.instance_name_template,
                                   instance)

    def _rename(self, dom, instance):
        """Give the shut-off domain of ``instance`` its instance name, if it
        has another (libvirt renames only inactive domains)."""
        name = self.domain_name(instance)
        try:
            if dom.isActive() or dom.name() == name:
                return
            old = dom.name()
            dom.rename(name, 0)
        except libvirt.libvirtError as e:
            LOG.warning('Could not rename the domain of server %s to %s: '
                        '%s', instance.uuid, name, e)
            return
        LOG.info('Renamed the domain of server %s from %s to %s',
                 instance.uuid, old, name)

    def channel_path(self, instance, name):
        """The host's unix socket of the guest's channel ``name`` (None
        when the guest does not run)."""
        dom = self._host.lookup(instance.uuid)
        if dom is None or not dom.isActive():
            return None
        return vconfig.channel_paths(vconfig.parse(
            dom.XMLDesc(0))).get(name)

    # -- building domains -------------------------------------------------
    def _initiator_name(self):
        if self._initiator is None:
            self.get_volume_connector(None)
        return self._initiator

    def _rbd_conf(self):
        return {'rbd_user': self.conf.libvirt.rbd_user,
                'rbd_secret_uuid': self.conf.libvirt.rbd_secret_uuid}

    def _volume_disk(self, connection_info, mountpoint, mode):
        """The disk of a volume, its secret (CHAP, cephx) there first.
        Callers hold ``_SECRETS_LOCK`` until a domain uses the disk."""
        info = connection_info or {}
        initiator = (self._initiator_name()
                     if info.get('driver_volume_type') == 'iscsi' else None)
        disk, secret = vconfig.volume_disk(
            info, mountpoint, mode=mode,
            cachemodes=self.conf.libvirt.disk_cachemodes,
            initiator=initiator, host=self.host, **self._rbd_conf())
        if secret is not None:
            self._host.ensure_secret(*secret)
        if disk.secret_type == 'ceph':
            self._ensure_ceph_secret(disk, info)
        return disk

    def _ensure_ceph_secret(self, disk, connection_info):
        """The ceph secret of an rbd disk exists on this host: defined
        from block storage's keyring when missing (never the operator's
        ``[libvirt] rbd_secret_uuid``)."""
        uuid = disk.secret_uuid
        if self._host.lookup_secret_by_uuid(uuid) is not None:
            return
        if uuid == self.conf.libvirt.rbd_secret_uuid:
            raise exception.InvalidConfiguration(
                reason=_('libvirt on host %(host)s has no ceph secret '
                         '%(uuid)s ([libvirt] rbd_secret_uuid): the '
                         'operator must define it (virsh secret-define '
                         'with usage type ceph, then virsh secret-set-value '
                         'with the key of client.%(user)s)') % {
                    'host': self.host, 'uuid': uuid,
                    'user': disk.auth_username})
        key = vconfig.ceph_key(connection_info, disk.auth_username)
        if key is None:
            raise exception.InvalidConfiguration(
                reason=_('libvirt on host %(host)s has no ceph secret '
                         '%(uuid)s for rbd volume %(volume)s and Cinder '
                         'sent no keyring of client.%(user)s: the operator '
                         'must define that libvirt ceph secret (virsh '
                         'secret-define with usage type ceph, then virsh '
                         'secret-set-value with the key), or one of its '
                         'own that [libvirt] rbd_secret_uuid names') % {
                    'host': self.host, 'uuid': uuid, 'volume': disk.serial,
                    'user': disk.auth_username})
        if self._host.ensure_ceph_secret(
                uuid, vconfig.ceph_secret_usage(disk.auth_username, uuid),
                key):
            LOG.info('Defined the ceph secret %s of client.%s from the '
                     "volume's keyring", uuid, disk.auth_username)

    def _guest(self, instance, block_device_info):
        lv = self.conf.libvirt
        if not os.path.exists(lv.kernel_path):
            raise exception.InvalidInput(
                reason=_('[libvirt] kernel_path %s does not exist') %
                lv.kernel_path)
        flavor = flavors.get(instance.flavor_id)
        guest = vconfig.Guest(
            uuid=instance.uuid, name=self.domain_name(instance),
            title=instance.display_name, virt_type=self.virt_type,
            memory_mb=flavor.memory_mb, vcpus=flavor.vcpus,
            kernel=lv.kernel_path, initrd=lv.initrd_path,
            cmdline=lv.kernel_cmdline,
            console_log=self.console_log_path(instance), host=self.host,
            num_pcie_ports=lv.num_pcie_ports,
            channels=[c for c in lv.guest_channels if c],
            flavor=flavor.name)
        for disk in block_device_info or []:
            guest.disks.append(self._volume_disk(
                disk.get('connection_info'), disk['mount_device'],
                disk.get('mode') or 'rw'))
        return guest

    def _define(self, instance, block_device_info):
        with _SECRETS_LOCK:
            guest = self._guest(instance, block_device_info)
            os.makedirs(self.instance_dir(instance), mode=0o755,
                        exist_ok=True)
            return self._host.get_connection().defineXML(
                vconfig.domain_xml(guest))

    # -- domains ---------------------------------------------------------
    def _domain(self, instance):
        dom = self._host.lookup(instance.uuid)
        if dom is None:
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        return dom

    def _ours(self, dom):
        try:
            return vconfig.domain_host(vconfig.parse(
                dom.XMLDesc(0))) == self.host
        except libvirt.libvirtError:
            return False

    @staticmethod
    def _current_disks(dom):
        """Disks of the running domain (live XML), else of its
        definition."""
        return vconfig.disks(vconfig.parse(dom.XMLDesc(0)))

    @staticmethod
    def _defined_disks(dom):
        if not dom.isPersistent():
            return {}
        return vconfig.disks(vconfig.parse(
            dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)))

    def get_info(self, instance):
        """``{'power_state': ...}`` of the server's domain;
        ``InstanceNotFound`` when libvirt has none."""
        try:
            state = self._domain(instance).state()[0]
        except libvirt.libvirtError as e:
            if vhost.error_code(e) != libvirt.VIR_ERR_NO_DOMAIN:
                raise
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        return {'power_state': _power_state(state)}

    def register_event_listener(self, callback):
        """libvirt's lifecycle events of the domains (``host``: a stop
        held a moment, in case a start follows) reach ``callback``."""
        super().register_event_listener(callback)
        self._host.set_lifecycle_handler(self.emit_event)

    # -- ComputeDriver ---------------------------------------------------
    def get_device_name_for_instance(self, instance, used_names,
                                     requested=None):
        """The next free virtio name (``/dev/vdb``...): hot-plugged
        disks are virtio, whatever bus the request names (as Nova's
        libvirt driver, which ignores requested names)."""
        if requested and not vconfig.target_dev(requested).startswith(
                'vd'):
            LOG.info('%s is not a virtio disk name; choosing one for %s',
                     requested, instance.uuid)
            requested = None
        return super().get_device_name_for_instance(
            _VirtioRoot(instance), used_names, requested)

    def get_volume_connector(self, instance):
        """os-brick's properties of this host (the iSCSI initiator name
        from ``/etc/iscsi/initiatorname.iscsi`` among them), read once
        and kept while the host stays the same (``connector``).
        os-brick's privileged helpers run in this process when it runs
        as root (as a compute service on ``qemu:///system`` does), else
        through its privsep daemon (``sudo privsep-helper``).
        ``[libvirt] iscsi_initiator_name`` replaces os-brick's initiator
        name."""
        props = self._connector.get()
        if self.conf.libvirt.iscsi_initiator_name:
            props['initiator'] = self.conf.libvirt.iscsi_initiator_name
        if props.get('initiator'):
            self._initiator = props['initiator']
        return props

    @staticmethod
    def _read_connector(my_ip, multipath, enforce_multipath, host):
        from os_brick.initiator import connector
        from os_brick import privileged
        if os.geteuid() == 0:
            privileged.default.set_client_mode(False)
        return connector.get_connector_properties(
            'sudo', my_ip, multipath, enforce_multipath, host=host)

    def spawn(self, context, instance, block_device_info):
        old = self._host.lookup(instance.uuid)
        if old is not None:
            LOG.warning('Server %s already has a domain; replacing it',
                        instance.uuid)
            self._destroy_domain(old)
        dom = self._define(instance, block_device_info)
        try:
            dom.create()
        except Exception:
            with excutils.save_and_reraise_exception():
                self._destroy_domain(dom)
        LOG.info('Started domain %s of server %s', dom.name(),
                 instance.uuid)

    def _destroy_domain(self, dom):
        try:
            if dom.isActive():
                dom.destroy()
        except libvirt.libvirtError as e:
            if vhost.error_code(e) == libvirt.VIR_ERR_NO_DOMAIN:
                return
            if dom.isActive():
                raise
        try:
            if dom.isPersistent():
                dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_NVRAM |
                                  libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
        except libvirt.libvirtError as e:
            if vhost.error_code(e) != libvirt.VIR_ERR_NO_DOMAIN:
                raise

    def destroy(self, context, instance, block_device_info):
        dom = self._host.lookup(instance.uuid)
        if dom is not None:
            self._destroy_domain(dom)
            LOG.info('Destroyed the domain of server %s', instance.uuid)
        shutil.rmtree(self.instance_dir(instance), ignore_errors=True)

    def power_off(self, instance, timeout=None):
        dom = self._domain(instance)
        if not dom.isActive():
            return
        if timeout is None:
            timeout = self.conf.shutdown_timeout
        if timeout > 0:
            try:
                dom.shutdown()
            except libvirt.libvirtError as e:
                LOG.info('Shutdown of %s refused (%s); powering off',
                         instance.uuid, e)
            else:
                deadline = time.monotonic() + timeout
                while dom.isActive() and time.monotonic() < deadline:
                    time.sleep(POLL_INTERVAL)
                if not dom.isActive():
                    return
                LOG.warning('Server %s did not shut down within %ss; '
                            'powering it off', instance.uuid, timeout)
        try:
            dom.destroy()
        except libvirt.libvirtError:
            if dom.isActive():
                raise

    def power_on(self, instance, block_device_info=None):
        """Resume a paused guest; start one that is off, its definition
        first given every attached volume it lacks (``block_device_info``:
        as Nova's hard reboot, which rebuilds the domain from the
        mappings, so a disk a failed detach took out of the definition is
        back with the volume the database says is attached)."""
        dom = self._domain(instance)
        state = dom.state()[0]
        if state == libvirt.VIR_DOMAIN_PAUSED:
            dom.resume()
        elif not dom.isActive():
            self._rename(dom, instance)
            if block_device_info:
                self._define_missing_disks(dom, block_device_info)
            dom.create()

    def _define_missing_disks(self, dom, block_device_info):
        with _SECRETS_LOCK:
            defined = self._defined_disks(dom)
            for disk in block_device_info:
                info = disk.get('connection_info')
                dev = vconfig.target_dev(disk['mount_device'])
                _name, present = vconfig.find_volume_disk(defined, dev, info)
                if present is not None or dev in defined:
                    continue
                new = self._volume_disk(info, disk['mount_device'],
                                        disk.get('mode') or 'rw')
                dom.attachDeviceFlags(vconfig.disk_xml(new),
                                      libvirt.VIR_DOMAIN_AFFECT_CONFIG)
                LOG.info('Volume %s is back in the definition of %s at %s',
                         new.serial, dom.UUIDString(), disk['mount_device'])

    def pause(self, instance):
        dom = self._domain(instance)
        if dom.state()[0] != libvirt.VIR_DOMAIN_PAUSED:
            dom.suspend()

    def unpause(self, instance):
        dom = self._domain(instance)
        if dom.state()[0] == libvirt.VIR_DOMAIN_PAUSED:
            dom.resume()

    def restore_guest(self, context, instance, block_device_info):
        dom = self._host.lookup(instance.uuid)
        if dom is not None:
            self._rename(dom, instance)
            if (not dom.isActive() and
                    self.conf.resume_guests_state_on_host_boot and
                    instance.power_state == states.RUNNING):
                LOG.info('Starting the domain of server %s again',
                         instance.uuid)
                dom.create()
            return
        LOG.warning('Server %s has no domain on %s: defining it again',
                    instance.uuid, self.host)
        dom = self._define(instance, block_device_info)
        if instance.power_state in (states.RUNNING, states.POWER_PAUSED):
            dom.create()
            if instance.power_state == states.POWER_PAUSED:
                dom.suspend()

    # -- volumes -----------------------------------------------------------
    def attach_volume(self, context, connection_info, instance, mountpoint,
                      mode='rw'):
        with _SECRETS_LOCK:
            self._attach_volume(connection_info, instance, mountpoint, mode)

    def _attach_volume(self, connection_info, instance, mountpoint, mode):
        dom = self._domain(instance)
        disk = self._volume_disk(connection_info, mountpoint, mode)
        # The running guest and the definition, each unless it has this
        # volume there already (an attach asked again).
        parts = []
        if dom.isActive():
            parts.append((self._current_disks(dom),
                          libvirt.VIR_DOMAIN_AFFECT_LIVE))
        if dom.isPersistent():
            parts.append((self._defined_disks(dom),
                          libvirt.VIR_DOMAIN_AFFECT_CONFIG))
        flags = 0
        for disks, flag in parts:
            present = disks.get(disk.target_dev)
            if present is None:
                flags |= flag
            elif not disk.serial or present['serial'] != disk.serial:
                raise exception.DevicePathInUse(path=mountpoint)
        if not flags:
            LOG.info('Volume %s is at %s of %s already', disk.serial,
                     mountpoint, instance.uuid)
            return
        dom.attachDeviceFlags(vconfig.disk_xml(disk), flags)
        LOG.info('Attached volume %s to %s at %s%s', disk.serial,
                 instance.uuid, mountpoint,
                 ' (read-only)' if disk.readonly else '')

    def detach_volume(self, context, connection_info, instance, mountpoint):
        """The volume's disk (found by its serial or what it reads, not by
        the device name alone) leaves the persistent definition first,
        then the running guest (Nova's order): a guest that lets go only
        after ``DeviceDetachFailed`` does not get the disk back at its
        next start, and a detach asked again finds nothing left to do."""
        dom = self._host.lookup(instance.uuid)
        if dom is None:
            return
        dev = vconfig.target_dev(mountpoint)
        if dom.isPersistent():
            _name, defined = vconfig.find_volume_disk(
                self._defined_disks(dom), dev, connection_info)
            if defined is not None:
                self._detach_sync(dom, defined['element'],
                                  libvirt.VIR_DOMAIN_AFFECT_CONFIG)
        if dom.isActive():
            name, live = vconfig.find_volume_disk(
                self._current_disks(dom), dev, connection_info)
            if live is not None:
                self._detach_live(dom, instance, name, live,
                                  connection_info)
        LOG.info('Detached %s from %s', mountpoint, instance.uuid)

    def remove_stale_disk(self, instance, mountpoint):
        """One unplug request to the running guest, waiting at most
        ``device_detach_timeout`` for it, then the persistent definition
        (whatever the guest answered: a guest stopped now starts without
        the disk)."""
        dom = self._host.lookup(instance.uuid)
        if dom is None:
            return True
        dev = vconfig.target_dev(mountpoint)
        held = False
        live = self._current_disks(dom).get(dev) if dom.isActive() else None
        if live is not None:
            waiter = self._host.device_waiter(instance.uuid, live['alias'])
            try:
                if self._detach_sync(dom, live['element'],
                                     libvirt.VIR_DOMAIN_AFFECT_LIVE):
                    waiter.wait(self.conf.libvirt.device_detach_timeout)
            finally:
                self._host.forget_waiter(waiter)
            held = dom.isActive() and dev in self._current_disks(dom)
        defined = self._defined_disks(dom).get(dev)
        if defined is not None:
            self._detach_sync(dom, defined['element'],
                              libvirt.VIR_DOMAIN_AFFECT_CONFIG)
        if held:
            LOG.warning('The guest of %s did not release %s within %ss',
                        instance.uuid, mountpoint,
                        self.conf.libvirt.device_detach_timeout)
        return not held

    @staticmethod
    def _detach_sync(dom, element, flags):
        """Ask libvirt to remove the disk; False when the domain has it
        no longer (or is gone), True when the request is made (or one is
        in progress already)."""
        try:
            dom.detachDeviceFlags(vconfig.to_xml(element), flags)
        except libvirt.libvirtError as e:
            code = vhost.error_code(e)
            msg = vhost.error_message(e)
            if code == libvirt.VIR_ERR_DEVICE_MISSING or (
                    code == libvirt.VIR_ERR_OPERATION_FAILED and
                    'not found' in msg):
                return False
            if code == libvirt.VIR_ERR_NO_DOMAIN:
                return False
            if (code == libvirt.VIR_ERR_OPERATION_INVALID and
                    flags == libvirt.VIR_DOMAIN_AFFECT_LIVE and
                    not dom.isActive()):
                return False    # stopped meanwhile: no live device
            if (code == libvirt.VIR_ERR_INTERNAL_ERROR and
                    'already in the process of unplug' in msg):
                return True     # an earlier request is still pending
            raise
        return True

    def _detach_live(self, dom, instance, dev, disk, connection_info=None):
        attempts = self.conf.libvirt.device_detach_attempts
        timeout = self.conf.libvirt.device_detach_timeout
        for attempt in range(1, attempts + 1):
            waiter = self._host.device_waiter(instance.uuid, disk['alias'])
            try:
                requested = self._detach_sync(
                    dom, disk['element'], libvirt.VIR_DOMAIN_AFFECT_LIVE)
                if not requested:
                    return
                LOG.debug('(%d/%d) waiting %ss for the guest of %s to '
                          'release %s', attempt, attempts, timeout,
                          instance.uuid, dev)
                result = waiter.wait(timeout)
            finally:
                self._host.forget_waiter(waiter)
            if result == vhost.REMOVAL_FAILED:
                raise exception.DeviceDetachFailed(
                    device='/dev/%s' % dev,
                    reason=_('libvirt reported that the guest of server %s '
                             'failed to release it') % instance.uuid)
            if not dom.isActive():
                return
            name, current = vconfig.find_volume_disk(
                self._current_disks(dom), dev, connection_info)
            if current is None:
                return
            dev, disk = name, current
            LOG.warning('(%d/%d) the guest of %s has not released %s '
                        'after %ss', attempt, attempts, instance.uuid, dev,
                        timeout)
        raise exception.DeviceDetachFailed(
            device='/dev/%s' % dev,
            reason=_('the guest of server %(uuid)s did not release it '
                     'after %(n)d requests, %(t)ss apart; the volume stays '
                     'attached') % {'uuid': instance.uuid, 'n': attempts,
                                    't': timeout})

    def swap_volume(self, context, old_connection_info, new_connection_info,
                    instance, mountpoint):
        """Idempotent: a disk that reads the new volume already (the swap
        is asked again when settling one the host's restart interrupted)
        only has its definition checked."""
        dom = self._domain(instance)
        dev = vconfig.target_dev(mountpoint)
        current = self._current_disks(dom).get(dev)
        if current is None:
            raise exception.NotSupported(
                reason=_('%s is not attached') % mountpoint)
        element = current['element']
        mode = 'ro' if element.find('readonly') is not None else 'rw'
        with _SECRETS_LOCK:
            new = self._volume_disk(new_connection_info, mountpoint, mode)
            if vconfig.element_source(element) == vconfig.disk_source(new):
                LOG.info('%s of %s is volume %s already', mountpoint,
                         instance.uuid, new.serial)
                self._define_disk(dom, new)
                return
            if not dom.isActive():
                raise exception.NotSupported(
                    reason=_('swapping a volume needs a running guest '
                             '(block copy); server %s is not running') %
                    instance.uuid)
            if element.find('shareable') is not None:
                raise exception.NotSupported(
                    reason=_('a shareable (multiattach) disk cannot be '
                             'block-copied'))
            # From here the copy's destination uses the new disk's secret.
            self._start_copy(dom, instance, dev, new)
        self._finish_copy(dom, instance, dev)
        self._define_disk(dom, new)
        LOG.info('Swapped %s of %s to volume %s', mountpoint, instance.uuid,
                 new.serial)

    def _define_disk(self, dom, disk):
        """The domain's definition gets ``disk`` at its name (from the
        next start on, the guest has that volume and its serial)."""
        if not dom.isPersistent():
            return
        defined = self._defined_disks(dom).get(disk.target_dev)
        if defined is not None:
            if (vconfig.element_source(defined['element']) ==
                    vconfig.disk_source(disk) and
                    defined['serial'] == disk.serial):
                return
            self._detach_sync(dom, defined['element'],
                              libvirt.VIR_DOMAIN_AFFECT_CONFIG)
        dom.attachDeviceFlags(vconfig.disk_xml(disk),
                              libvirt.VIR_DOMAIN_AFFECT_CONFIG)

    def _start_copy(self, dom, instance, dev, new):
        try:
            dom.blockJobAbort(dev, 0)
        except libvirt.libvirtError:
            pass    # no job: the usual case
        try:
            dom.blockCopy(dev, vconfig.disk_xml(new, for_copy=True), None,
                          libvirt.VIR_DOMAIN_BLOCK_COPY_REUSE_EXT |
                          libvirt.VIR_DOMAIN_BLOCK_COPY_TRANSIENT_JOB)
        except Exception as e:
            self._copy_failed(dom, instance, dev, e)

    def _finish_copy(self, dom, instance, dev):
        try:
            deadline = time.monotonic() + \
                self.conf.libvirt.swap_volume_timeout
            while not self._copy_ready(dom, dev):
                if time.monotonic() > deadline:
                    raise exception.VolumeRebaseFailed(
                        reason=_('the copy of %(dev)s of %(uuid)s did not '
                                 'finish within %(t)ss') % {
                            'dev': dev, 'uuid': instance.uuid,
                            't': self.conf.libvirt.swap_volume_timeout})
                time.sleep(POLL_INTERVAL)
            dom.blockJobAbort(dev, libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT)
        except Exception as e:
            self._copy_failed(dom, instance, dev, e)

    @staticmethod
    def _copy_failed(dom, instance, dev, error):
        """Cancel the copy (the guest keeps the old volume) and raise
        ``VolumeRebaseFailed``."""
        LOG.warning('Block copy of %s of %s failed: %s', dev,
                    instance.uuid, error)
        try:
            dom.blockJobAbort(dev, 0)
        except libvirt.libvirtError:
            pass
        if isinstance(error, exception.VolumeRebaseFailed):
            raise error
        raise exception.VolumeRebaseFailed(reason=str(error)) from error

    def _copy_ready(self, dom, dev):
        info = dom.blockJobInfo(dev, 0)
        if not info:
            raise exception.VolumeRebaseFailed(
                reason=_('the block copy of %s ended before the pivot') % dev)
        if info.get('cur') != info.get('end'):
            return False
        disk = self._current_disks(dom).get(dev)
        return bool(disk and disk['mirror_ready'])

    def disconnect_volume(self, connection_info):
        """This host stops using the volume: no block copy of this host's
        guests may go on writing into it (a swap that a restart
        interrupted and settling rolled back), its CHAP secret goes, and
        so does the ceph secret the driver defined for it once no disk
        uses that secret."""
        info = connection_info or {}
        try:
            disk, _secret = vconfig.volume_disk(info, '/dev/vda',
                                                initiator='-',
                                                **self._rbd_conf())
        except exception.NovaLiteException:
            return
        self._abort_copies_into(vconfig.disk_source(disk))
        data = vconfig.connection_data(info)
        if (info.get('driver_volume_type') == 'iscsi' and
                (data.get('auth_method') or '').upper() == 'CHAP'):
            self._host.delete_secret(vconfig.secret_usage(self.host, info))
        if (disk.secret_type == 'ceph' and
                disk.secret_uuid != self.conf.libvirt.rbd_secret_uuid):
            self._release_ceph_secret(disk.secret_uuid)

    def _release_ceph_secret(self, uuid):
        """Remove the ceph secret ``uuid`` if the driver defined it and no
        disk of libvirtd's domains names it."""
        with _SECRETS_LOCK:
            secret = self._host.lookup_secret_by_uuid(uuid)
            if secret is None or not vconfig.is_own_ceph_secret(
                    secret.usageID(), uuid):
                return
            if uuid in self._ceph_secrets_in_use():
                LOG.info('Keeping the ceph secret %s: disks still use it',
                         uuid)
                return
            self._host.delete_secret_by_uuid(uuid)
            LOG.info('Removed the ceph secret %s: no disk uses it', uuid)

    def _ceph_secrets_in_use(self):
        """The uuids of the ceph secrets the disks of every domain of
        libvirtd name: live, defined, and block-copy destinations."""
        used = set()
        for dom in self._host.list_domains():
            try:
                used |= vconfig.ceph_secret_uuids(vconfig.parse(
                    dom.XMLDesc(0)))
                if dom.isPersistent():
                    used |= vconfig.ceph_secret_uuids(vconfig.parse(
                        dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)))
            except libvirt.libvirtError as e:
                if vhost.error_code(e) != libvirt.VIR_ERR_NO_DOMAIN:
                    raise
        return used

    def _abort_copies_into(self, source):
        for dom in self._host.list_domains():
            try:
                if not dom.isActive() or not self._ours(dom):
                    continue
                for dev, disk in self._current_disks(dom).items():
                    if vconfig.mirror_source(disk['element']) == source:
                        LOG.warning('Cancelling the copy of %s of %s into '
                                    'a volume this host disconnects', dev,
                                    dom.UUIDString())
                        dom.blockJobAbort(dev, 0)
            except libvirt.libvirtError as e:
                if vhost.error_code(e) != libvirt.VIR_ERR_NO_DOMAIN:
                    raise

    def extend_volume(self, context, connection_info, instance, new_size):
        """``blockResize`` of the running guest's disk of the volume
        (found by its serial, the volume id) to ``new_size`` bytes, as
        Nova's driver: block storage grew the volume already, QEMU takes
        the new size (librbd's image, QEMU's iSCSI LUN, the file) and the
        guest is told (virtio's capacity change). Every volume disk here is
        QEMU's own client (no host block device for os-brick to rescan).
        A guest that does not run is left as it is: it reads the size when
        it starts. Asked again, QEMU keeps the size it has."""
        volume_id = (connection_info or {}).get('serial')
        dom = self._domain(instance)
        if not dom.isActive():
            LOG.info('Not resizing the disk of volume %s: server %s does '
                     'not run', volume_id, instance.uuid)
            return
        for dev, disk in self._current_disks(dom).items():
            if disk['serial'] == volume_id:
                break
        else:
            raise exception.VolumeNotFound(volume_id=volume_id)
        dom.blockResize(dev, new_size, libvirt.VIR_DOMAIN_BLOCK_RESIZE_BYTES)
        LOG.info('Resized %s of %s (volume %s) to %s bytes', dev,
                 instance.uuid, volume_id, new_size)

    def has_volume(self, instance, mountpoint):
        dom = self._host.lookup(instance.uuid)
        return dom is not None and \
            vconfig.target_dev(mountpoint) in self._current_disks(dom)

    def list_instance_uuids(self):
        return {dom.UUIDString() for dom in self._host.list_domains()
                if self._ours(dom)}

    def volume_devices(self, instance):
        dom = self._host.lookup(instance.uuid)
        if dom is None:
            return {}
        return {'/dev/%s' % dev: disk['serial']
                for dev, disk in self._current_disks(dom).items()}


class _VirtioRoot(object):
    """An instance whose root disk is virtio, for the base class's
    naming."""

    def __init__(self, instance):
        self.uuid = instance.uuid
        self.root_device_name = device_names.DEFAULT_ROOT_DEVICE
