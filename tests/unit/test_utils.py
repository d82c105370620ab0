"""nova_lite.utils: the data copy of volume migrations."""

import os

import fixtures
import testtools

from nova_lite import utils


class CopyDataTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir()).path
        self.source = os.path.join(tmp, 'source')
        self.dest = os.path.join(tmp, 'dest')
        for path in (self.source, self.dest):
            with open(path, 'wb') as f:
                f.truncate(64 << 20)

    def write(self, path, data, offset):
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, data, offset)
        finally:
            os.close(fd)

    def read(self, path, length, offset):
        with open(path, 'rb') as f:
            f.seek(offset)
            return f.read(length)

    def test_copies_the_data_skips_the_holes(self):
        self.write(self.source, b'first', 4096)
        self.write(self.source, b'last', (40 << 20) + 3)
        calls = []
        copied = utils.copy_data(self.source, self.dest,
                                 progress=lambda: calls.append(1))
        self.assertEqual(b'first', self.read(self.dest, 5, 4096))
        self.assertEqual(b'last', self.read(self.dest, 4, (40 << 20) + 3))
        # Only the data extents (whole file-system blocks), not 64 MiB.
        self.assertLess(copied, 1 << 20)
        self.assertGreaterEqual(copied, 9)
        self.assertEqual(len(calls) > 0, True)
        # The holes stayed holes in the copy.
        self.assertLess(os.stat(self.dest).st_blocks * 512, 1 << 20)

    def test_progress_may_stop_the_copy(self):
        self.write(self.source, b'x' * (12 << 20), 0)

        def stop():
            raise RuntimeError('settled meanwhile')
        self.assertRaises(RuntimeError, utils.copy_data, self.source,
                          self.dest, progress=stop)
        # The first chunk only.
        self.assertEqual(b'\0', self.read(self.dest, 1, utils.COPY_CHUNK))
