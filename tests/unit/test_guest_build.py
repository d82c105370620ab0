"""tools/guest/build.py: builds never delete one another, ``--install``
copies to a directory of its own, the printed options name the files."""

import contextlib
import io
import json
import os
import struct

import fixtures
import testtools

from tests.guest import fixture as guest_fixture

MODULES = ('virtio_pci', 'virtio_blk', 'virtio_console')


def elf(interpreter=False):
    """A 64-bit ELF header, with a PT_INTERP program header or none."""
    phnum = 1 if interpreter else 0
    header = (b'\x7fELF' + bytes([2, 1, 1]) + bytes(9) +
              struct.pack('<HHIQQQIHHHHHH', 2, 62, 1, 0, 64, 0, 0, 64, 56,
                          phnum, 64, 0, 0))
    if interpreter:
        header += struct.pack('<IIQQQQQQ', 3, 4, 0, 0, 0, 0, 0, 1)
    return header


class BuildTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.builder = guest_fixture.load_builder()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.cache = os.path.join(self.tmp, 'cache')
        self.kernel_root = os.path.join(self.tmp, 'root')
        modules = os.path.join(self.kernel_root, 'lib', 'modules', '6.1.0')
        os.makedirs(os.path.join(modules, 'kernel'))
        os.makedirs(os.path.join(self.kernel_root, 'boot'))
        with open(os.path.join(modules, 'modules.dep'), 'w') as f:
            for name in MODULES:
                f.write('kernel/%s.ko:\n' % name)
                with open(os.path.join(modules, 'kernel', name + '.ko'),
                          'wb') as ko:
                    ko.write(name.encode())
        self.write('boot/vmlinuz-6.1.0', b'not a bzImage: copied as is')
        self.busybox = self.write('busybox', elf())

    def write(self, relative, data):
        path = os.path.join(self.kernel_root, relative)
        with open(path, 'wb') as f:
            f.write(data)
        return path

    def build(self):
        return self.builder.build(self.kernel_root, self.busybox, self.cache)

    def test_rebuild_keeps_the_earlier_build(self):
        first = self.build()
        self.write('boot/vmlinuz-6.1.0', b'a new kernel')
        second = self.build()
        self.assertNotEqual(first['kernel'], second['kernel'])
        with open(first['kernel'], 'rb') as f:
            self.assertEqual(b'not a bzImage: copied as is', f.read())
        self.assertTrue(os.path.exists(first['initramfs']))
        self.assertEqual(second, self.build())

    def test_install_copies_to_a_directory_of_its_own(self):
        dest = os.path.join(self.tmp, 'guest')
        first = self.builder.install(self.build(), dest)
        self.assertEqual(os.path.join(dest, os.path.basename(
            os.path.dirname(first['kernel']))),
            os.path.dirname(first['kernel']))
        with open(first['kernel'], 'rb') as f:
            self.assertEqual(b'not a bzImage: copied as is', f.read())
        with open(os.path.join(os.path.dirname(first['kernel']),
                               'guest.json')) as f:
            self.assertEqual(first, json.load(f))
        self.assertEqual(0o644, os.stat(first['kernel']).st_mode & 0o777)
        self.write('boot/vmlinuz-6.1.0', b'a new kernel')
        second = self.builder.install(self.build(), dest)
        self.assertNotEqual(first['kernel'], second['kernel'])
        # The first install is untouched, and the cache can be pruned
        # without touching either.
        self.builder.prune(self.cache, keep='none')
        self.assertEqual([], os.listdir(self.cache))
        with open(first['kernel'], 'rb') as f:
            self.assertEqual(b'not a bzImage: copied as is', f.read())
        with open(second['kernel'], 'rb') as f:
            self.assertEqual(b'a new kernel', f.read())

    def test_prune_keeps_the_named_build(self):
        first = self.build()
        self.write('boot/vmlinuz-6.1.0', b'a new kernel')
        second = self.build()
        keep = os.path.basename(os.path.dirname(second['kernel']))
        gone = self.builder.prune(self.cache, keep)
        self.assertEqual([os.path.dirname(first['kernel'])], gone)
        self.assertFalse(os.path.exists(first['kernel']))
        self.assertTrue(os.path.exists(second['kernel']))

    def test_main_prints_the_options_then_json(self):
        dest = os.path.join(self.tmp, 'guest')
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(0, self.builder.main([
                '--kernel-root', self.kernel_root, '--busybox', self.busybox,
                '--cache', self.cache, '--install', dest]))
        lines = out.getvalue().splitlines()
        result = json.loads(lines[-1])
        self.assertTrue(result['kernel'].startswith(dest + os.sep))
        self.assertIn('[libvirt]', lines)
        self.assertIn('kernel_path = %s' % result['kernel'], lines)
        self.assertIn('initrd_path = %s' % result['initramfs'], lines)
        self.assertIn('kernel_cmdline = %s' % self.builder.CMDLINE, lines)
        self.assertIn('guest_channels = %s' % self.builder.CHANNEL, lines)

    def test_dynamic_busybox_refused(self):
        self.busybox = self.write('busybox', elf(interpreter=True))
        e = self.assertRaises(SystemExit, self.build)
        self.assertIn('busybox-static', str(e))
        self.assertFalse(os.path.exists(self.cache))

    def test_missing_kernel_says_what_to_do(self):
        os.remove(os.path.join(self.kernel_root, 'boot', 'vmlinuz-6.1.0'))
        e = self.assertRaises(SystemExit, self.build)
        self.assertIn('--download-kernel', str(e))

    def test_unreachable_names_the_private_parent(self):
        private = os.path.join(self.tmp, 'private')
        kernel = os.path.join(private, 'guest', 'vmlinux')
        os.makedirs(os.path.dirname(kernel))
        os.chmod(self.tmp, 0o755)
        os.chmod(private, 0o700)
        found = self.builder.unreachable(kernel)
        # private itself, or a directory above it that is private too.
        self.assertIsNotNone(found)
        self.assertTrue((private + os.sep).startswith(found + os.sep))
        os.chmod(private, 0o755)
        self.assertNotEqual(private, self.builder.unreachable(kernel))
