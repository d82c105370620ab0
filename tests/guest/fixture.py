"""What a test needs to run real guests: a libvirtd that answers, the test
guest built (``tools/guest/build.py``), a directory QEMU can read.

Each is a fixture that skips the test saying what is missing, or fails
(``required.Unavailable``) when ``NOVA_LITE_REQUIRE_LIBVIRT=1`` (CI's
real-data tier sets it).

* ``GuestImage``: the kernel and initramfs (built once, cached under
  ``.cache/guest``); ``.guest`` is build.py's dict;
* ``Libvirtd``: ``qemu:///system`` (``NOVA_LITE_LIBVIRT_URI``) answers and
  can run ``qemu`` (TCG) domains;
* ``SharedDir``: a directory the ``libvirt-qemu`` user can reach (a test's
  temporary directory is private to root);
* ``LibvirtConf``: a nova_lite configuration for the libvirt driver on the
  guest (TCG, no shutdown grace), under a ``SharedDir``.
"""

import importlib.util
import os
import shutil
import tempfile

import fixtures

from tests.fixtures import required

REQUIRE_ENV = 'NOVA_LITE_REQUIRE_LIBVIRT'
URI_ENV = 'NOVA_LITE_LIBVIRT_URI'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, 'tools', 'guest', 'build.py')

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
    def _setUp(self):
        if 'guest' not in _built:
            try:
                _built['guest'] = load_builder().build()
            except (SystemExit, OSError) as e:
                _built['guest'] = e
        result = _built['guest']
        if isinstance(result, BaseException):
            required.unavailable('the test guest does not build (%s): '
                                 'install linux-image-amd64 and '
                                 'busybox-static' % result, REQUIRE_ENV)
        self.guest = result


class Libvirtd(fixtures.Fixture):
    def _setUp(self):
        try:
            import libvirt
        except ImportError:
            required.unavailable("libvirt-python is not installed (the "
                                 "'libvirt' extra)", REQUIRE_ENV)
        libvirt.registerErrorHandler(lambda ctx, err: None, None)
        try:
            conn = libvirt.open(uri())
        except libvirt.libvirtError as e:
            required.unavailable('libvirtd does not answer on %s (%s): '
                                 'start it with libvirtd -d and virtlogd '
                                 '-d' % (uri(), e), REQUIRE_ENV)
        try:
            caps = conn.getCapabilities()
        finally:
            conn.close()
        if "type='qemu'" not in caps:
            required.unavailable('libvirtd on %s cannot run qemu domains '
                                 '(qemu-system-x86)' % uri(), REQUIRE_ENV)


class SharedDir(fixtures.Fixture):
    """A new directory QEMU (another user) can search and read."""

    def _setUp(self):
        base = os.environ.get('NOVA_LITE_SHARED_TMP') or '/var/tmp'
        self.path = tempfile.mkdtemp(prefix='nova-lite-guest-', dir=base)
        self.addCleanup(shutil.rmtree, self.path, ignore_errors=True)
        os.chmod(self.path, 0o755)
        parent = base
        while parent != '/':
            if not os.stat(parent).st_mode & 0o001:
                required.unavailable('%s is not searchable by others: QEMU '
                                     'cannot reach %s' % (parent, self.path),
                                     REQUIRE_ENV)
            parent = os.path.dirname(parent)


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
