#!/usr/bin/env python3
"""Hot-plug latency of the libvirt driver, judged by a real guest.

Boots the test guest (``tools/guest/build.py``) on libvirtd (TCG unless
``--virt-type kvm``) and, ``--runs`` times, attaches a volume with the
driver and detaches it again: a ``file`` (``--backend file``, the
default) or an RBD image of the tests' one-node Ceph (``--backend rbd``,
``tests/fixtures/ceph.py``, started when it does not answer; the disk is
QEMU's librbd client as ``client.admin``, its libvirt secret defined at
the first attach), timing:

``attach_call``
    ``LibvirtDriver.attach_volume`` (libvirt's ``attachDeviceFlags``:
    QEMU's ``blockdev-add`` and ``device_add``).
``attach_to_guest``
    From just before the attach call to the guest's agent listing the
    disk by its serial (polled every ``--poll-interval`` over the
    virtio-serial channel): the guest's ACPI hot-plug handler and
    virtio-blk probe included.
``detach_to_event``
    From just before ``detach_volume`` to libvirt's ``DEVICE_REMOVED``
    event (the guest released the disk; QEMU removed it).
``detach_call``
    ``detach_volume`` as a whole (the event, then the disk's removal from
    the domain's definition).

Figures in milliseconds: median, p99 (with 20 runs, the slowest), min,
max. Needs root (``qemu:///system``), libvirtd and virtlogd, and the
``libvirt`` extra; run it with the repository's ``.venv/bin/python``.
Under TCG the guest's side depends on the host's load: report it with
the load average the output gives.
"""

import argparse
import atexit
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from oslo_config import cfg  # noqa: E402

from nova_lite.compute.host import driver as compute_driver  # noqa: E402
from nova_lite import conf as nl_conf  # noqa: E402
from nova_lite import states  # noqa: E402
from tests.guest import agent  # noqa: E402
from tests.guest import fixture as guest_fixture  # noqa: E402


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


def _volume(backend, work):
    """A 16 MiB volume of ``backend``: a callable giving its
    ``connection_info`` (without ``serial``)."""
    size = 16 * 1024 * 1024
    if backend == 'file':
        path = os.path.join(work, 'volume')
        with open(path, 'wb') as f:
            f.truncate(size)
        return lambda: {'driver_volume_type': 'file',
                        'data': {'path': path, 'access_mode': 'rw'}}
    from tests.fixtures import ceph as ceph_fixture
    ceph = ceph_fixture.Ceph()
    ceph.setUp()
    image = 'bench-%s' % uuid.uuid4().hex[:12]
    ceph.create_image(image, size)
    atexit.register(ceph.remove_image, image)
    with open(ceph.admin_keyring) as f:
        keyring = f.read()
    secret_uuid = str(uuid.uuid4())
    return lambda: {'driver_volume_type': 'rbd', 'data': {
        'name': '%s/%s' % (ceph.pool, image), 'hosts': [ceph.mon_host],
        'ports': [str(ceph.mon_port)], 'auth_enabled': True,
        'auth_username': 'admin', 'secret_type': 'ceph',
        'secret_uuid': secret_uuid, 'keyring': keyring,
        'access_mode': 'rw', 'discard': True}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=20)
    parser.add_argument('--poll-interval', type=float, default=0.02)
    parser.add_argument('--virt-type', default='qemu')
    parser.add_argument('--uri', default=guest_fixture.uri())
    parser.add_argument('--backend', choices=('file', 'rbd'),
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
    host = 'bench-%s' % uuid.uuid4().hex[:8]
    driver = compute_driver.load_driver(conf, host)

    events = {}
    original = driver._host._notify

    def notify(dom, alias, result):
        events.setdefault(alias, time.monotonic())
        original(dom, alias, result)
    driver._host._notify = notify

    instance = Instance()
    started = time.monotonic()
    driver.spawn(None, instance, [])
    volume_info = None
    try:
        guest = agent.wait_ready(driver.channel_path(
            instance, guest_image['channel']), timeout=300)
        boot = time.monotonic() - started
        volume_info = _volume(args.backend, work)
        results = {'attach_call': [], 'attach_to_guest': [],
                   'detach_to_event': [], 'detach_call': []}
        for _ in range(args.runs):
            volume_id = str(uuid.uuid4())
            info = dict(volume_info(), serial=volume_id)
            t0 = time.monotonic()
            driver.attach_volume(None, info, instance, '/dev/vdb')
            t1 = time.monotonic()
            while not guest.has_disk(volume_id):
                if time.monotonic() - t0 > 120:
                    raise SystemExit('the guest never saw %s' % volume_id)
                time.sleep(args.poll_interval)
            t2 = time.monotonic()
            results['attach_call'].append(t1 - t0)
            results['attach_to_guest'].append(t2 - t0)
            events.clear()
            t0 = time.monotonic()
            driver.detach_volume(None, info, instance, '/dev/vdb')
            t1 = time.monotonic()
            if not events:
                raise SystemExit('no DEVICE_REMOVED event')
            results['detach_to_event'].append(
                min(events.values()) - t0)
            results['detach_call'].append(t1 - t0)
        out = {name: summary(samples) for name, samples in results.items()}
        out['backend'] = args.backend
        out['boot_to_agent_s'] = round(boot, 1)
        out['virt_type'] = args.virt_type
        out['load_average_1m'] = round(os.getloadavg()[0], 2)
        out['cpus'] = os.cpu_count()
        print(json.dumps(out, indent=1, sort_keys=True))
    finally:
        driver.destroy(None, instance, None)
        if volume_info is not None:
            # The rbd disk's secret, once no domain uses it.
            driver.disconnect_volume(volume_info())
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
