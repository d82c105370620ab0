#!/usr/bin/env python3
"""Hot-plug latency of libvirt alone, judged by a real guest.

Boots the test guest (``tools/guest/build.py``) with the libvirt driver on
libvirtd (TCG unless ``--virt-type kvm``) and, ``--runs`` times,
hot-plugs a volume's disk and unplugs it again with libvirt's own calls
and the disk XML nova_lite's libvirt driver writes for it
(``nova_lite.virt.libvirt.config.volume_disk``; the flags the driver
uses: the running guest and the persistent definition). The volume is:

* ``--backend file`` (the default): a sparse file;
* ``--backend iscsi``: a file exported by hand on the node's tgtd
  (``tests/fixtures/tgt.py``) as the ``iscsi`` backend would export it
  (a target, LUN 1 on the file, a CHAP account bound, the initiator's
  ACL; ``HandExport`` below), the disk QEMU's own iSCSI initiator;
* ``--backend rbd``: an RBD image of the tests' one-node Ceph
  (``tests/fixtures/ceph.py``, started when it does not answer), the disk
  QEMU's librbd client as ``client.admin``.

The disk's secret (CHAP, cephx) is defined before each attach and
removed after the unplug, not timed. Timed, in the order of events:

``attach_call``
    libvirt's ``attachDeviceFlags`` (QEMU's ``blockdev-add`` and
    ``device_add``).
``attach_to_guest``
    From just before that call to the guest's agent listing the disk by
    its serial (polled every ``--poll-interval`` over the virtio-serial
    channel while the call runs): the guest's ACPI hot-plug handler and
    virtio-blk probe included.
``detach_to_guest``
    From just before ``detachDeviceFlags`` (the running guest) to the
    guest no longer listing the disk.
``detach_to_event``
    From just before that call to libvirt's ``DEVICE_REMOVED`` event (the
    guest released the disk; QEMU removed it).
``detach_call``
    The whole unplug: that call, the event, then the disk's removal from
    the domain's definition.

Figures in milliseconds: median, p99 (with 20 runs, the slowest), min,
max. Needs root (``qemu:///system``), libvirtd and virtlogd, and the
``libvirt`` extra; run it with the repository's ``.venv/bin/python``.
Under TCG the guest's side depends on the host's load: report it with
the load average the output gives.

``HotPlug``, ``HandExport`` and ``prepare_disk`` are what
``tools/bench/realdata_attach.py`` times as the floor beside nova_lite.
"""

import argparse
import atexit
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from oslo_config import cfg  # noqa: E402

from nova_lite.virt import driver as compute_driver  # noqa: E402
from nova_lite import conf as nl_conf  # noqa: E402
from nova_lite import states  # noqa: E402
from nova_lite.virt.libvirt import config as vconfig  # noqa: E402
from nova_lite.virt.libvirt import host as vhost  # noqa: E402
from nova_lite.volume_service.drivers import iscsi  # noqa: E402
from tests.guest import agent  # noqa: E402
from tests.guest import fixture as guest_fixture  # noqa: E402

TIMEOUT = 120
MOUNTPOINT = '/dev/vdb'


class Instance(object):
    def __init__(self):
        self.uuid = str(uuid.uuid4())
        self.display_name = 'bench'
        self.flavor_id = '1'
        self.power_state = states.RUNNING
        self.root_device_name = '/dev/vda'


def summary(samples):
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * len(ordered))))]
    return {'p50_ms': round(statistics.median(ordered) * 1000, 1),
            'p99_ms': round(p99 * 1000, 1),
            'min_ms': round(ordered[0] * 1000, 1),
            'max_ms': round(ordered[-1] * 1000, 1),
            'samples': len(ordered)}


def stamped(method, *args):
    """``(method(*args), the monotonic time halfway through the call)``:
    when a poll saw what it returns, to half a call's length (an agent call
    takes 10 to 25 ms under TCG)."""
    before = time.monotonic()
    result = method(*args)
    return result, (before + time.monotonic()) / 2


def _in_thread(method, *args):
    """Start ``method(*args)`` on a thread; returns ``(t0, thread,
    result)``, ``result`` filled with ``at`` (its return, seconds after
    ``t0``) or ``error``."""
    result = {}
    t0 = time.monotonic()

    def call():
        try:
            method(*args)
            result['at'] = time.monotonic() - t0
        except Exception as e:
            result['error'] = e
    thread = threading.Thread(target=call)
    thread.start()
    return t0, thread, result


class HotPlug(object):
    """libvirt's own hot-plug of disks into the running domain
    ``domain_uuid``, judged by its guest's agent ``guest`` (polled every
    ``interval`` seconds). Its own connection to ``uri`` listens for the
    domain's ``DEVICE_REMOVED`` events."""

    def __init__(self, uri, domain_uuid, guest, interval):
        import libvirt
        self.libvirt = libvirt
        self.guest = guest
        self.interval = interval
        vhost.start_event_loop()
        self.conn = libvirt.open(uri)
        self.dom = self.conn.lookupByUUIDString(domain_uuid)
        self.removed = {}
        self._callback = self.conn.domainEventRegisterAny(
            self.dom, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
            self._removed, None)

    def _removed(self, conn, dom, alias, opaque):
        # On libvirt's event loop thread.
        self.removed.setdefault(alias, time.monotonic())

    def close(self):
        try:
            self.conn.domainEventDeregisterAny(self._callback)
        finally:
            self.conn.close()

    def disks(self, inactive=False):
        """``{target dev: {'serial', 'alias', 'element'}}``: the running
        guest's disks, or the definition's (``inactive``)."""
        flags = self.libvirt.VIR_DOMAIN_XML_INACTIVE if inactive else 0
        return vconfig.disks(vconfig.parse(self.dom.XMLDesc(flags)))

    def _until_guest(self, serial, present, t0):
        """Seconds after ``t0`` when the guest first (not) listed the disk
        of ``serial`` (None: a disk without one), ``stamped``."""
        deadline = t0 + TIMEOUT
        while True:
            has, at = stamped(self.guest.has_disk, serial)
            if has == present:
                return at - t0
            if time.monotonic() > deadline:
                raise RuntimeError('the guest %s disk %s within %ss' % (
                    'never listed' if present else 'still lists',
                    serial, TIMEOUT))
            time.sleep(self.interval)

    def attach(self, xml, serial):
        """``attachDeviceFlags(xml)`` to the running guest and the
        persistent definition (as nova_lite's driver does); returns
        ``{'call': seconds of the call, 'to_guest': seconds until the
        guest lists the disk}`` (from just before the call)."""
        flags = self.libvirt.VIR_DOMAIN_AFFECT_LIVE
        if self.dom.isPersistent():
            flags |= self.libvirt.VIR_DOMAIN_AFFECT_CONFIG
        t0, thread, result = _in_thread(self.dom.attachDeviceFlags, xml,
                                        flags)
        try:
            to_guest = self._until_guest(serial, True, t0)
        finally:
            thread.join(TIMEOUT)
        if 'error' in result:
            raise result['error']
        return {'call': result['at'], 'to_guest': to_guest}

    def detach(self, dev):
        """``detachDeviceFlags`` of the running guest's disk ``dev``, the
        wait for its ``DEVICE_REMOVED`` event, then the definition's (as
        nova_lite's driver does); returns seconds from just before the
        first call: ``call`` (its return), ``to_guest`` (the guest no
        longer lists the disk), ``to_event`` and ``total``."""
        live = self.disks()[dev]
        defined = (self.disks(inactive=True).get(dev)
                   if self.dom.isPersistent() else None)
        self.removed.pop(live['alias'], None)
        t0, thread, result = _in_thread(
            self.dom.detachDeviceFlags, vconfig.to_xml(live['element']),
            self.libvirt.VIR_DOMAIN_AFFECT_LIVE)
        try:
            to_guest = self._until_guest(live['serial'], False, t0)
        finally:
            thread.join(TIMEOUT)
        if 'error' in result:
            raise result['error']
        deadline = t0 + TIMEOUT
        while live['alias'] not in self.removed:
            if time.monotonic() > deadline:
                raise RuntimeError('no DEVICE_REMOVED event of %s' % dev)
            time.sleep(self.interval)
        to_event = self.removed[live['alias']] - t0
        if defined is not None:
            self.dom.detachDeviceFlags(
                vconfig.to_xml(defined['element']),
                self.libvirt.VIR_DOMAIN_AFFECT_CONFIG)
        return {'call': result['at'], 'to_guest': to_guest,
                'to_event': to_event, 'total': time.monotonic() - t0}


def prepare_disk(host, connection_info, mountpoint=MOUNTPOINT, mode='rw',
                 initiator=None, host_name='bench'):
    """The disk XML nova_lite's libvirt driver writes for
    ``connection_info`` (no ``[libvirt] disk_cachemodes``), its secret
    defined on ``host`` (a ``nova_lite.virt.libvirt.host.Host``) as the
    driver defines it: the CHAP password under ``host_name``'s usage, the
    cephx key from the ``keyring``. Returns ``(xml, undo)``; ``undo()``
    removes the secret this defined."""
    disk, secret = vconfig.volume_disk(connection_info, mountpoint,
                                       mode=mode, initiator=initiator,
                                       host=host_name)
    if secret is not None:
        host.ensure_secret(*secret)
        return vconfig.disk_xml(disk), lambda: host.delete_secret(secret[0])
    if disk.secret_type == 'ceph':
        defined = host.ensure_ceph_secret(
            disk.secret_uuid,
            vconfig.ceph_secret_usage(disk.auth_username, disk.secret_uuid),
            vconfig.ceph_key(connection_info, disk.auth_username))
        if defined:
            return vconfig.disk_xml(disk), lambda: host.delete_secret_by_uuid(
                disk.secret_uuid)
    return vconfig.disk_xml(disk), lambda: None


class HandExport(object):
    """A file exported by hand on tgtd (``tgtadm``, as the ``iscsi``
    backend exports a volume to one host): target ``iqn``, LUN 1 on the
    file (read-only for a read-only attach), a CHAP account of its own
    bound, the ACL naming the host's initiator alone."""

    def __init__(self, iqn, portal, control_port=0):
        self.iqn = iqn
        self.portal = portal
        self.tgtadm = iscsi.Tgtadm(control_port)
        self.tid = None
        self.user = None

    def _new_target(self):
        digest = int(hashlib.sha256(self.iqn.encode()).hexdigest()[:8], 16)
        tid = 1 + digest % iscsi.TID_RANGE
        for _attempt in range(64):
            used = {t.tid for t in self.tgtadm.targets().values()}
            while tid in used:
                tid = tid % iscsi.TID_RANGE + 1
            if self.tgtadm('--op', 'new', '--mode', 'target', '--tid', tid,
                           '--targetname', self.iqn,
                           ok=(iscsi.EXISTS,)) is not None:
                return tid
        raise RuntimeError('no free target id for %s' % self.iqn)

    def export(self, path, initiator, mode='rw'):
        """Export ``path`` to ``initiator``; the ``connection_info`` a
        host would get (without the volume's id: the disk has no
        serial)."""
        self.tid = self._new_target()
        self.tgtadm('--op', 'new', '--mode', 'logicalunit', '--tid',
                    self.tid, '--lun', iscsi.LUN, '--backing-store', path)
        if mode == 'ro':
            self.tgtadm('--op', 'update', '--mode', 'logicalunit', '--tid',
                        self.tid, '--lun', iscsi.LUN, '--params',
                        'readonly=1')
        self.user = uuid.uuid4().hex[:24]
        secret = uuid.uuid4().hex[:16]
        self.tgtadm('--op', 'new', '--mode', 'account', '--user', self.user,
                    '--password', secret)
        self.tgtadm('--op', 'bind', '--mode', 'account', '--tid', self.tid,
                    '--user', self.user)
        self.tgtadm('--op', 'bind', '--mode', 'target', '--tid', self.tid,
                    '--initiator-name', initiator)
        return {'driver_volume_type': 'iscsi', 'data': {
            'target_discovered': False, 'target_portal': self.portal,
            'target_iqn': self.iqn, 'target_lun': iscsi.LUN,
            'auth_method': 'CHAP', 'auth_username': self.user,
            'auth_password': secret, 'encrypted': False,
            'access_mode': mode}}

    def unexport(self):
        """The target and its account gone (whatever part was made)."""
        if self.tid is not None:
            self.tgtadm('--op', 'delete', '--force', '--mode', 'target',
                        '--tid', self.tid, ok=iscsi.GONE)
            self.tid = None
        if self.user is not None:
            self.tgtadm('--op', 'delete', '--mode', 'account', '--user',
                        self.user, ok=iscsi.GONE)
            self.user = None


def _volume(backend, work):
    """A 16 MiB volume of ``backend``: its ``connection_info`` (without
    ``serial``) and the initiator name its disk logs in with (iscsi)."""
    size = 16 * 1024 * 1024
    path = os.path.join(work, 'volume')
    if backend in ('file', 'iscsi'):
        with open(path, 'wb') as f:
            f.truncate(size)
    if backend == 'file':
        return {'driver_volume_type': 'file',
                'data': {'path': path, 'access_mode': 'rw'}}, None
    if backend == 'iscsi':
        from tests.fixtures import tgt as tgt_fixture
        tgtd = tgt_fixture.Tgtd()
        tgtd.setUp()
        atexit.register(tgtd.cleanUp)
        initiator = 'iqn.2010-10.org.nova-lite.bench:%s' % (
            uuid.uuid4().hex[:12])
        export = HandExport('%sbench-%s' % (tgtd.prefix, uuid.uuid4().hex[
            :12]), tgtd.portal, tgtd.control_port)
        atexit.register(export.unexport)
        return export.export(path, initiator), initiator
    from tests.fixtures import ceph as ceph_fixture
    ceph = ceph_fixture.Ceph()
    ceph.setUp()
    image = 'bench-%s' % uuid.uuid4().hex[:12]
    ceph.create_image(image, size)
    atexit.register(ceph.remove_image, image)
    with open(ceph.admin_keyring) as f:
        keyring = f.read()
    return {'driver_volume_type': 'rbd', 'data': {
        'name': '%s/%s' % (ceph.pool, image), 'hosts': [ceph.mon_host],
        'ports': [str(ceph.mon_port)], 'auth_enabled': True,
        'auth_username': 'admin', 'secret_type': 'ceph',
        'secret_uuid': str(uuid.uuid4()), 'keyring': keyring,
        'access_mode': 'rw', 'discard': True}}, None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=20)
    parser.add_argument('--poll-interval', type=float, default=0.02)
    parser.add_argument('--virt-type', default='qemu')
    parser.add_argument('--uri', default=guest_fixture.uri())
    parser.add_argument('--backend', choices=('file', 'iscsi', 'rbd'),
                        default='file')
    args = parser.parse_args(argv)

    guest_image = guest_fixture.load_builder().build()
    work = tempfile.mkdtemp(prefix='nova-lite-bench-', dir='/var/tmp')
    os.chmod(work, 0o755)
    conf = cfg.ConfigOpts()
    nl_conf.register_opts(conf)
    conf([], project='nova-lite', default_config_files=[])
    conf.set_override('compute_driver', 'libvirt')
    conf.set_override('state_path', work)
    conf.set_override('shutdown_timeout', 0)
    for name, value in (('virt_type', args.virt_type),
                        ('connection_uri', args.uri),
                        ('kernel_path', guest_image['kernel']),
                        ('initrd_path', guest_image['initramfs']),
                        ('kernel_cmdline', guest_image['cmdline']),
                        ('guest_channels', [guest_image['channel']])):
        conf.set_override(name, value, group='libvirt')
    host_name = 'bench-%s' % uuid.uuid4().hex[:8]
    driver = compute_driver.load_driver(conf, host_name)

    instance = Instance()
    started = time.monotonic()
    driver.spawn(None, instance, [])
    undo = plug = None
    try:
        guest = agent.wait_ready(driver.channel_path(
            instance, guest_image['channel']), timeout=300)
        boot = time.monotonic() - started
        info, initiator = _volume(args.backend, work)
        plug = HotPlug(args.uri, instance.uuid, guest, args.poll_interval)
        results = {'attach_call': [], 'attach_to_guest': [],
                   'detach_to_guest': [], 'detach_to_event': [],
                   'detach_call': []}
        secrets = vhost.Host(args.uri, host_name)
        for _ in range(args.runs):
            # A new serial each run: the guest tells the disks apart.
            volume_id = str(uuid.uuid4())
            xml, undo = prepare_disk(secrets, dict(info, serial=volume_id),
                                     initiator=initiator,
                                     host_name=host_name)
            attached = plug.attach(xml, volume_id)
            detached = plug.detach(vconfig.target_dev(MOUNTPOINT))
            undo()
            undo = None
            results['attach_call'].append(attached['call'])
            results['attach_to_guest'].append(attached['to_guest'])
            results['detach_to_guest'].append(detached['to_guest'])
            results['detach_to_event'].append(detached['to_event'])
            results['detach_call'].append(detached['total'])
        out = {name: summary(samples) for name, samples in results.items()}
        out['backend'] = args.backend
        out['boot_to_agent_s'] = round(boot, 1)
        out['virt_type'] = args.virt_type
        out['load_average_1m'] = round(os.getloadavg()[0], 2)
        out['cpus'] = os.cpu_count()
        print(json.dumps(out, indent=1, sort_keys=True))
    finally:
        if plug is not None:
            plug.close()
        driver.destroy(None, instance, None)
        if undo is not None:
            undo()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
