"""What a test needs to run real guests: a libvirtd that answers, the test
guest built (``tools/guest/build.py``), a directory QEMU can read.

Each is a fixture that skips the test saying what is missing, or fails
(``required.Unavailable``) when ``NOVA_LITE_REQUIRE_LIBVIRT=1`` (CI's
real-data tier sets it). The checks run before fixtures' own ``setUp``,
which would turn a skip into an error.

* ``GuestImage``: the kernel and initramfs (built once, cached under
  ``.cache/guest``, from the machine's kernel or, without one, the kernel
  ``build.py --download-kernel`` unpacked there); ``.guest`` is build.py's
  dict;
* ``Libvirtd``: ``qemu:///system`` (``NOVA_LITE_LIBVIRT_URI``) answers and
  can run ``qemu`` (TCG) domains. When it does not answer, libvirt is
  installed (``libvirtd`` on the PATH) and the test runs as root, it
  starts the node's daemons (``virtlogd -d``, ``libvirtd -d``) as the
  integration tier starts its other services; they keep running after
  the test, for the next ones, as tgtd does (``tests.fixtures.tgt``);
* ``SharedDir``: a directory the ``libvirt-qemu`` user can reach (a test's
  temporary directory is private to root);
* ``LibvirtConf``: a nova_lite configuration for the libvirt driver on the
  guest (TCG, no shutdown grace), under a ``SharedDir``.
"""

import importlib.util
import os
import shutil
import subprocess
import tempfile
import time

import fixtures

from tests.fixtures import required

REQUIRE_ENV = 'NOVA_LITE_REQUIRE_LIBVIRT'
URI_ENV = 'NOVA_LITE_LIBVIRT_URI'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, 'tools', 'guest', 'build.py')
# Seconds for daemons this module started to answer (polled).
DEADLINE = 30

_built = {}


def uri():
    return os.environ.get(URI_ENV) or 'qemu:///system'


def load_builder():
    spec = importlib.util.spec_from_file_location('nova_lite_guest_build',
                                                  BUILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GuestImage(fixtures.Fixture):
    def setUp(self):
        if 'guest' not in _built:
            try:
                _built['guest'] = load_builder().build()
            except (SystemExit, OSError, subprocess.SubprocessError) as e:
                _built['guest'] = e
        result = _built['guest']
        if isinstance(result, BaseException):
            required.unavailable('the test guest does not build (%s): '
                                 'install linux-image-amd64 (or run '
                                 'tools/guest/build.py --download-kernel), '
                                 'busybox-static and kmod' % result,
                                 REQUIRE_ENV)
        self.guest = result
        super().setUp()


def _start_daemons():
    """Start the node's virtlogd and libvirtd (root, libvirt installed);
    False when this process cannot."""
    if os.geteuid() != 0 or shutil.which('libvirtd') is None:
        return False
    for daemon in ('virtlogd', 'libvirtd'):
        if shutil.which(daemon):
            subprocess.run([daemon, '-d'], capture_output=True,
                           timeout=DEADLINE)
    return True


def _open(libvirt):
    """A connection to ``uri()``, waiting up to ``DEADLINE`` seconds for
    daemons this fixture started; raises ``libvirt.libvirtError``."""
    try:
        return libvirt.open(uri())
    except libvirt.libvirtError:
        if uri() != 'qemu:///system' or not _start_daemons():
            raise
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            return libvirt.open(uri())
        except libvirt.libvirtError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class Libvirtd(fixtures.Fixture):
    def setUp(self):
        try:
            import libvirt
        except ImportError:
            required.unavailable("libvirt-python is not installed (the "
                                 "'libvirt' extra; it builds against "
                                 "libvirt-dev)", REQUIRE_ENV)
        libvirt.registerErrorHandler(lambda ctx, err: None, None)
        try:
            conn = _open(libvirt)
        except libvirt.libvirtError as e:
            required.unavailable('libvirtd does not answer on %s (%s): '
                                 'install libvirt-daemon-system and start '
                                 'libvirtd -d and virtlogd -d' % (uri(), e),
                                 REQUIRE_ENV)
        try:
            caps = conn.getCapabilities()
        finally:
            conn.close()
        if "type='qemu'" not in caps:
            required.unavailable('libvirtd on %s cannot run qemu domains '
                                 '(qemu-system-x86)' % uri(), REQUIRE_ENV)
        super().setUp()


class SharedDir(fixtures.Fixture):
    """A new directory QEMU (another user) can search and read."""

    def setUp(self):
        base = os.environ.get('NOVA_LITE_SHARED_TMP') or '/var/tmp'
        parent = base
        while parent != '/':
            if not os.stat(parent).st_mode & 0o001:
                required.unavailable('%s is not searchable by others: QEMU '
                                     'cannot reach a directory under it' %
                                     parent, REQUIRE_ENV)
            parent = os.path.dirname(parent)
        super().setUp()

    def _setUp(self):
        base = os.environ.get('NOVA_LITE_SHARED_TMP') or '/var/tmp'
        self.path = tempfile.mkdtemp(prefix='nova-lite-guest-', dir=base)
        self.addCleanup(shutil.rmtree, self.path, ignore_errors=True)
        os.chmod(self.path, 0o755)


class LibvirtConf(fixtures.Fixture):
    """Overrides of ``conf`` for the libvirt driver on the test guest."""

    def __init__(self, conf, guest, state_path):
        super().__init__()
        self.conf = conf
        self.guest = guest
        self.state_path = state_path

    def _setUp(self):
        conf = self.conf
        conf.set_override('compute_driver', 'libvirt')
        conf.set_override('state_path', self.state_path)
        conf.set_override('shutdown_timeout', 0)
        conf.set_override('my_ip', '127.0.0.1')
        for name, value in (('virt_type', 'qemu'),
                            ('connection_uri', uri()),
                            ('kernel_path', self.guest['kernel']),
                            ('initrd_path', self.guest['initramfs']),
                            ('kernel_cmdline', self.guest['cmdline']),
                            ('guest_channels', [self.guest['channel']])):
            conf.set_override(name, value, group='libvirt')
