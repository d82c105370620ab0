"""The libvirt driver's XML: domains and disks built, domain XML read.

Pure functions over plain data (no libvirt here), so that what the driver
asks libvirt for is tested without a hypervisor.

A domain (``Guest``) is a q35 machine with ACPI and ``num_pcie_ports``
PCIe root ports (the layout Nova's libvirt driver uses: a hot-plugged
virtio disk gets a root port of its own), booted from a kernel and
initramfs (direct kernel boot), its first serial port logged to a file
(virtlogd), no USB controller, no balloon (each would take a root port),
and virtio-serial channels on unix sockets libvirt creates. Its
``<metadata>`` names the compute host that made it: several compute
services may share one libvirtd (tests do), each sees its own domains.

A volume's disk (``Disk``) comes from its ``connection_info``:

* ``file`` (the ``file`` backend): ``<disk type='file'>`` on ``data.path``;
* ``iscsi`` (Cinder's form: ``target_portal``, ``target_iqn``,
  ``target_lun``, ``auth_*``): ``<disk type='network'>`` on QEMU's own
  iSCSI initiator (libiscsi), logging in with the host's initiator name
  (the target's ACL names it) and CHAP through a libvirt secret;
* ``rbd`` (Cinder's RBD driver: ``name`` ``pool/image``, ``hosts``,
  ``ports``, ``auth_*``, ``secret_uuid``): ``<disk type='network'>`` on
  QEMU's own librbd client, as Nova's libvirt network volume driver
  writes it, authenticating with cephx through the libvirt ``ceph``
  secret ``secret_uuid`` names. ``[libvirt] rbd_secret_uuid`` (and with
  it ``rbd_user``) replace Cinder's values when set: the operator's
  secret. ``ceph_key`` reads the key of a ``keyring`` Cinder sends, with
  which the driver defines the secret a host lacks.

Its ``<serial>`` is ``connection_info['serial']`` (the volume id), how the
guest and the driver find it; ``<readonly/>`` for a read-only attachment;
``<shareable/>`` and cache ``none`` for a multiattach volume.
"""

import base64
import binascii
import dataclasses
import typing
from xml.etree import ElementTree as etree

from nova_lite import exception
from nova_lite.i18n import _

NAMESPACE = 'urn:nova-lite:domain:1'
NS_PREFIX = 'novalite'
etree.register_namespace(NS_PREFIX, NAMESPACE)

# Bus of a disk by the prefix of its device name. virtio disks hot-plug
# (each on a PCIe root port); SATA ones exist only from the start.
BUSES = {'vd': 'virtio', 'sd': 'sata'}

DEFAULT_ISCSI_PORT = 3260
DEFAULT_CEPH_PORT = 6789
DEFAULT_PORTS = {'iscsi': str(DEFAULT_ISCSI_PORT),
                 'rbd': str(DEFAULT_CEPH_PORT)}
# How the usage name of a ceph secret the driver defined ends (the
# secret's uuid follows): the driver removes only those.
OWN_CEPH_SECRET_MARK = 'nova-lite:'


@dataclasses.dataclass
class Disk:
    target_dev: str
    bus: str
    source_type: str                    # 'file' | 'network'
    path: typing.Optional[str] = None   # file
    protocol: typing.Optional[str] = None   # network: 'iscsi' | 'rbd'
    name: typing.Optional[str] = None   # '<iqn>/<lun>' | '<pool>/<image>'
    hosts: typing.List[typing.Tuple[str, str]] = dataclasses.field(
        default_factory=list)
    auth_username: typing.Optional[str] = None
    secret_usage: typing.Optional[str] = None   # iscsi: the secret's usage
    secret_type: typing.Optional[str] = None    # 'iscsi' | 'ceph'
    secret_uuid: typing.Optional[str] = None    # ceph: the secret's uuid
    initiator: typing.Optional[str] = None
    serial: typing.Optional[str] = None
    readonly: bool = False
    shareable: bool = False
    cache: str = 'none'
    discard: bool = False


@dataclasses.dataclass
class Guest:
    uuid: str
    name: str
    virt_type: str
    memory_mb: int
    vcpus: int
    kernel: str
    initrd: typing.Optional[str]
    cmdline: typing.Optional[str]
    console_log: str
    host: str
    title: typing.Optional[str] = None
    num_pcie_ports: int = 8
    channels: typing.List[str] = dataclasses.field(default_factory=list)
    flavor: typing.Optional[str] = None
    disks: typing.List[Disk] = dataclasses.field(default_factory=list)


def target_dev(mountpoint):
    """'/dev/vdb' -> 'vdb'."""
    return (mountpoint or '').rsplit('/', 1)[-1]


def bus_of(dev):
    for prefix, bus in BUSES.items():
        if dev.startswith(prefix) and dev[len(prefix):].isalpha():
            return bus
    raise exception.NotSupported(
        reason=_('the libvirt driver names disks vdX (virtio) or sdX '
                 '(SATA); %s is neither') % dev)


def connection_data(connection_info):
    """The ``data`` of a connection_info, or the flat form itself."""
    info = connection_info or {}
    data = info.get('data')
    return data if isinstance(data, dict) else info


def parse_portal(portal):
    """'127.0.0.1:3260' -> ('127.0.0.1', '3260'); '[::1]:3260' ->
    ('::1', '3260'); a portal without a port gets 3260."""
    portal = portal.strip()
    if portal.startswith('['):
        host, _sep, rest = portal[1:].partition(']')
        port = rest.lstrip(':') or str(DEFAULT_ISCSI_PORT)
        return host, port
    if portal.count(':') == 1:
        host, port = portal.split(':')
        return host, port or str(DEFAULT_ISCSI_PORT)
    return portal, str(DEFAULT_ISCSI_PORT)


def cache_mode(source_type, shareable, cachemodes):
    """Nova's rule: ``none`` for shareable disks, else the mode
    ``[libvirt] disk_cachemodes`` gives the source type, else ``none``."""
    if shareable:
        return 'none'
    for item in cachemodes or []:
        kind, _sep, mode = item.partition('=')
        if kind.strip() == source_type and mode.strip():
            return mode.strip()
    return 'none'


def secret_usage(host, connection_info):
    """The usage name of the libvirt secret holding a volume's CHAP
    password on this compute host (one per host and target)."""
    data = connection_data(connection_info)
    return 'nova-lite:%s:%s' % (host, data.get('target_iqn'))


def ceph_secret_usage(username, uuid):
    """The usage name of a ceph secret the driver defines: libvirt's
    ``client.<user> secret``, marked as the driver's and unique by its
    uuid (libvirt allows one secret per usage name)."""
    return 'client.%s secret %s%s' % (username, OWN_CEPH_SECRET_MARK, uuid)


def is_own_ceph_secret(usage, uuid):
    """Whether the ceph secret ``uuid`` with usage name ``usage`` is one
    the driver defined (an operator's is never removed)."""
    return (usage or '').endswith(' %s%s' % (OWN_CEPH_SECRET_MARK, uuid))


def ceph_key(connection_info, username):
    """The base64 cephx key of ``client.<username>`` in the ``keyring``
    Cinder sends (a keyring file's text), None without one. A keyring
    whose sections name other clients only has no key for it."""
    keyring = connection_data(connection_info).get('keyring')
    if not keyring:
        return None
    section = None
    for line in keyring.splitlines():
        line = line.strip()
        if line.startswith('[') and line.endswith(']'):
            section = line[1:-1].strip()
            continue
        name, sep, value = line.partition('=')
        if not sep or name.strip() != 'key' or not value.strip():
            continue
        if section not in (None, 'client.%s' % username):
            continue
        key = value.strip()
        try:
            base64.b64decode(key, validate=True)
        except (binascii.Error, ValueError):
            raise exception.InvalidVolume(
                reason=_('the keyring of client.%s holds no base64 key') %
                username)
        return key
    return None


def _ceph_hosts(data):
    """``[(host, port)]`` of Cinder's ``hosts`` and ``ports`` (a host
    without a port: Ceph's monitor port)."""
    hosts = data.get('hosts') or []
    ports = data.get('ports') or []
    if isinstance(hosts, str) or isinstance(ports, str):
        raise exception.InvalidVolume(
            reason=_('rbd connection_info: hosts and ports are lists'))
    result = []
    for index, host in enumerate(hosts):
        port = ports[index] if index < len(ports) else None
        result.append((str(host).strip('[]'),
                       str(port) if port else str(DEFAULT_CEPH_PORT)))
    return result


def _rbd_disk(data, dev, rbd_user=None, rbd_secret_uuid=None):
    name = data.get('name')
    if not name or '/' not in name:
        raise exception.InvalidVolume(
            reason=_("rbd connection_info without a name "
                     "('<pool>/<image>')"))
    disk = Disk(target_dev=dev, bus=bus_of(dev), source_type='network',
                protocol='rbd', name=name, hosts=_ceph_hosts(data))
    auth_enabled = bool(data.get('auth_enabled'))
    username = data.get('auth_username')
    uuid = data.get('secret_uuid')
    # Nova's rule: block storage's user and secret when it names them,
    # the operator's ([libvirt] rbd_user, rbd_secret_uuid) where it does
    # not, and the operator's alone when block storage asks for no auth.
    if auth_enabled:
        username = username or rbd_user
        uuid = uuid or rbd_secret_uuid
    elif rbd_secret_uuid:
        auth_enabled = True
        uuid = rbd_secret_uuid
        username = rbd_user or username
    if not auth_enabled:
        return disk
    if not username or not uuid:
        raise exception.InvalidVolume(
            reason=_('rbd connection_info with auth_enabled and without '
                     'auth_username or secret_uuid (and no [libvirt] '
                     'rbd_secret_uuid)'))
    secret_type = data.get('secret_type') or 'ceph'
    if secret_type != 'ceph':
        raise exception.NotSupported(
            reason=_("rbd authentication with a secret of type '%s'") %
            secret_type)
    disk.auth_username = username
    disk.secret_type = secret_type
    disk.secret_uuid = uuid
    return disk


def volume_disk(connection_info, mountpoint, mode='rw', cachemodes=(),
                initiator=None, host=None, rbd_user=None,
                rbd_secret_uuid=None):
    """The ``Disk`` of a volume at ``mountpoint`` and, for a target with
    CHAP, its ``(secret usage, password)`` (else None; an rbd disk names
    its ceph secret in ``secret_uuid``). ``rbd_user`` and
    ``rbd_secret_uuid`` are ``[libvirt]``'s: the operator's ceph user and
    secret where block storage names none (Nova's rule)."""
    info = connection_info or {}
    data = connection_data(info)
    dev = target_dev(mountpoint)
    access = data.get('access_mode')
    if access not in (None, 'ro', 'rw'):
        raise exception.InvalidVolumeAttachMode(
            mode=access, volume_id=info.get('serial') or data.get(
                'volume_id'))
    readonly = mode == 'ro' or access == 'ro'
    shareable = bool(info.get('multiattach') or data.get('multiattach'))
    kind = info.get('driver_volume_type')
    secret = None
    if kind == 'file':
        if not data.get('path'):
            raise exception.InvalidVolume(
                reason=_('file connection_info without a path'))
        disk = Disk(target_dev=dev, bus=bus_of(dev), source_type='file',
                    path=data['path'])
    elif kind == 'iscsi':
        for key in ('target_portal', 'target_iqn'):
            if not data.get(key):
                raise exception.InvalidVolume(
                    reason=_('iscsi connection_info without %s') % key)
        if not initiator:
            raise exception.NotSupported(
                reason=_('this host has no iSCSI initiator name '
                         '(/etc/iscsi/initiatorname.iscsi, open-iscsi)'))
        lun = data.get('target_lun')
        disk = Disk(target_dev=dev, bus=bus_of(dev), source_type='network',
                    protocol='iscsi',
                    name='%s/%s' % (data['target_iqn'],
                                    0 if lun is None else lun),
                    hosts=[parse_portal(data['target_portal'])],
                    initiator=initiator)
        method = (data.get('auth_method') or '').upper()
        if method == 'CHAP':
            disk.auth_username = data.get('auth_username')
            disk.secret_type = 'iscsi'
            disk.secret_usage = secret_usage(host, info)
            secret = (disk.secret_usage, data.get('auth_password') or '')
        elif method not in ('', 'NONE'):
            raise exception.NotSupported(
                reason=_('iSCSI authentication method %s') % method)
    elif kind == 'rbd':
        disk = _rbd_disk(data, dev, rbd_user=rbd_user,
                         rbd_secret_uuid=rbd_secret_uuid)
    else:
        raise exception.NotSupported(
            reason=_("the libvirt driver cannot attach volumes of type "
                     "'%s'") % kind)
    disk.serial = info.get('serial') or data.get('volume_id')
    disk.readonly = readonly
    disk.shareable = shareable
    disk.cache = cache_mode(disk.source_type, shareable, cachemodes)
    disk.discard = data.get('discard') is True
    return disk, secret


def _sub(parent, tag, text=None, **attrs):
    element = etree.SubElement(parent, tag, {k: str(v) for k, v in
                                             attrs.items() if v is not None})
    if text is not None:
        element.text = str(text)
    return element


def disk_element(disk, for_copy=False):
    """``<disk>``; ``for_copy``: the destination of a block copy (its
    driver and source only, the source with its hosts and ``<auth>``)."""
    root = etree.Element('disk', {'type': disk.source_type,
                                  'device': 'disk'})
    driver = {'name': 'qemu', 'type': 'raw'}
    if not for_copy:
        driver['cache'] = disk.cache
        if disk.discard:
            driver['discard'] = 'unmap'
    _sub(root, 'driver', **driver)
    if disk.source_type == 'file':
        _sub(root, 'source', file=disk.path)
    else:
        source = _sub(root, 'source', protocol=disk.protocol,
                      name=disk.name)
        for host, port in disk.hosts:
            _sub(source, 'host', name=host, port=port)
        if disk.auth_username is not None:
            # In the source (where libvirt puts it): a block copy's
            # destination carries it too.
            auth = _sub(source, 'auth', username=disk.auth_username)
            _sub(auth, 'secret', type=disk.secret_type or 'iscsi',
                 usage=disk.secret_usage, uuid=disk.secret_uuid)
        if disk.initiator:
            initiator = _sub(source, 'initiator')
            _sub(initiator, 'iqn', name=disk.initiator)
    if for_copy:
        return root
    _sub(root, 'target', dev=disk.target_dev, bus=disk.bus)
    if disk.serial:
        _sub(root, 'serial', disk.serial)
    if disk.readonly:
        _sub(root, 'readonly')
    if disk.shareable:
        _sub(root, 'shareable')
    return root


def to_xml(element):
    return etree.tostring(element, encoding='unicode')


def disk_xml(disk, for_copy=False):
    return to_xml(disk_element(disk, for_copy=for_copy))


def domain_element(guest):
    root = etree.Element('domain', {'type': guest.virt_type})
    _sub(root, 'name', guest.name)
    _sub(root, 'uuid', guest.uuid)
    if guest.title:
        # One line, as libvirt wants it.
        _sub(root, 'title', ' '.join(guest.title.split()))
    meta = _sub(root, 'metadata')
    ours = _sub(meta, '{%s}instance' % NAMESPACE)
    _sub(ours, '{%s}host' % NAMESPACE, guest.host)
    if guest.flavor:
        _sub(ours, '{%s}flavor' % NAMESPACE, guest.flavor)
    _sub(root, 'memory', guest.memory_mb, unit='MiB')
    _sub(root, 'vcpu', guest.vcpus)
    os_ = _sub(root, 'os')
    _sub(os_, 'type', 'hvm', arch='x86_64', machine='q35')
    _sub(os_, 'kernel', guest.kernel)
    if guest.initrd:
        _sub(os_, 'initrd', guest.initrd)
    if guest.cmdline:
        _sub(os_, 'cmdline', guest.cmdline)
    features = _sub(root, 'features')
    _sub(features, 'acpi')
    _sub(features, 'apic')
    if guest.virt_type == 'kvm':
        _sub(root, 'cpu', mode='host-model')
    _sub(root, 'clock', offset='utc')
    _sub(root, 'on_poweroff', 'destroy')
    _sub(root, 'on_reboot', 'restart')
    _sub(root, 'on_crash', 'destroy')
    devices = _sub(root, 'devices')
    _sub(devices, 'controller', type='pci', index=0, model='pcie-root')
    for index in range(1, guest.num_pcie_ports + 1):
        _sub(devices, 'controller', type='pci', index=index,
             model='pcie-root-port')
    _sub(devices, 'controller', type='usb', model='none')
    for disk in guest.disks:
        devices.append(disk_element(disk))
    serial = _sub(devices, 'serial', type='pty')
    _sub(serial, 'log', file=guest.console_log, append='on')
    _sub(devices, 'console', type='pty')
    for name in guest.channels:
        channel = _sub(devices, 'channel', type='unix')
        # No path: libvirt makes one per domain and channel (a path of
        # our own could pass the 108 bytes of a unix socket's name).
        _sub(channel, 'source', mode='bind')
        _sub(channel, 'target', type='virtio', name=name)
    _sub(devices, 'memballoon', model='none')
    return root


def domain_xml(guest):
    return to_xml(domain_element(guest))


# -- reading domain XML --------------------------------------------------

def parse(xml):
    return etree.fromstring(xml)


def domain_host(root):
    """The compute host named in the domain's metadata; None for a domain
    nova_lite did not make."""
    element = root.find('metadata/{%(ns)s}instance/{%(ns)s}host' % {
        'ns': NAMESPACE})
    return element.text if element is not None else None


def disks(root):
    """``{target dev: {'serial', 'alias', 'element'}}`` of the domain's
    disks."""
    result = {}
    for disk in root.findall('devices/disk'):
        target = disk.find('target')
        if target is None or not target.get('dev'):
            continue
        serial = disk.find('serial')
        alias = disk.find('alias')
        result[target.get('dev')] = {
            'serial': serial.text if serial is not None else None,
            'alias': alias.get('name') if alias is not None else None,
            'mirror_ready': _mirror_ready(disk),
            'element': disk,
        }
    return result


def disk_source(disk):
    """What a ``Disk`` reads and writes: ``('file', path)`` or
    ``('network', protocol, name, host, port)`` (its first host)."""
    if disk.source_type == 'file':
        return ('file', disk.path)
    host, port = disk.hosts[0] if disk.hosts else (None, None)
    return ('network', disk.protocol, disk.name, host, port)


def volume_identity(connection_info):
    """``(serial, source)`` that tell a volume's disk in a domain: its
    ``<serial>`` (the volume id) and what it reads (``disk_source``'s
    form; None where ``connection_info`` does not say). A live disk keeps
    the serial it was plugged with (after a swap, the old volume's), so
    the source identifies it too."""
    info = connection_info or {}
    data = connection_data(info)
    serial = info.get('serial') or data.get('volume_id')
    kind = info.get('driver_volume_type')
    source = None
    if kind == 'file' and data.get('path'):
        source = ('file', data['path'])
    elif kind == 'iscsi' and data.get('target_iqn') and data.get(
            'target_portal'):
        lun = data.get('target_lun')
        host, port = parse_portal(data['target_portal'])
        source = ('network', 'iscsi', '%s/%s' % (
            data['target_iqn'], 0 if lun is None else lun), host, port)
    elif kind == 'rbd' and data.get('name'):
        hosts = data.get('hosts') or []
        ports = data.get('ports') or []
        source = ('network', 'rbd', data['name'],
                  hosts[0] if hosts else None,
                  str(ports[0]) if ports and hosts else
                  DEFAULT_PORTS.get('rbd') if hosts else None)
    return serial, source


def find_volume_disk(disks, dev, connection_info):
    """``(target dev, entry)`` of ``disks`` (``disks()``'s) that is the
    volume of ``connection_info``: the disk at ``dev`` when its serial or
    source is the volume's, else any disk that is (the device name is
    the control plane's record, the serial and the source are the
    disk's). A disk at ``dev`` that is another volume is never the
    answer. Without anything to tell the volume by, the disk at ``dev``.
    ``(None, None)`` when no disk is the volume."""
    serial, source = volume_identity(connection_info)
    if not serial and source is None:
        entry = disks.get(dev)
        return (dev, entry) if entry is not None else (None, None)

    def is_it(entry):
        if serial and entry['serial'] == serial:
            return True
        return (source is not None and
                _comparable(element_source(entry['element'])) ==
                _comparable(source))
    entry = disks.get(dev)
    if entry is not None and is_it(entry):
        return dev, entry
    for name, entry in sorted(disks.items()):
        if is_it(entry):
            return name, entry
    return None, None


def _comparable(source):
    """A source with its port as text (libvirt's XML has text)."""
    if source is None or source[0] != 'network':
        return source
    return source[:4] + (None if source[4] is None else str(source[4]),)


def element_source(element):
    """``disk_source`` of a ``<disk>`` or ``<mirror>`` element of a
    domain's XML (None without a source); a host without a port has its
    protocol's (iSCSI 3260, Ceph's monitors 6789)."""
    source = element.find('source')
    if source is None:
        return None
    if element.get('type') == 'file':
        return ('file', source.get('file'))
    protocol = source.get('protocol')
    host = source.find('host')
    if host is None:
        return ('network', protocol, source.get('name'), None, None)
    return ('network', protocol, source.get('name'), host.get('name'),
            host.get('port', DEFAULT_PORTS.get(protocol)))


def ceph_secret_uuids(root):
    """The uuids of the ceph secrets the disks of a domain's XML (and
    their block-copy destinations) authenticate with."""
    return {secret.get('uuid')
            for disk in root.findall('devices/disk')
            for auth in disk.iter('auth')
            for secret in auth.findall('secret')
            if secret.get('type') == 'ceph' and secret.get('uuid')}


def mirror_source(disk_element):
    """``element_source`` of a disk's block-copy destination; None when
    no copy runs."""
    mirror = disk_element.find('mirror')
    return element_source(mirror) if mirror is not None else None


def _mirror_ready(disk):
    mirror = disk.find('mirror')
    return mirror is not None and mirror.get('ready') == 'yes'


def channel_paths(root):
    """``{channel name: unix socket path}`` of the domain's virtio
    channels (the live XML has the paths libvirt made)."""
    result = {}
    for channel in root.findall('devices/channel'):
        target = channel.find('target')
        source = channel.find('source')
        if target is None or source is None:
            continue
        if target.get('name') and source.get('path'):
            result[target.get('name')] = source.get('path')
    return result
