"""The one-node Ceph of the rbd backend's tests (``tests.fixtures.ceph``):
the bytes the fixture writes are what QEMU reads through librbd (as a
guest's disk would), an image's watchers are the monitor's sessions of
the clients that have it open, a blocklisted client shows in the
blocklist and can no longer write, and a private cluster's daemons go
down and come back.

No nova_lite deployment: these tests check the fixture the rbd tests
stand on. They skip without Ceph (fail with ``NOVA_LITE_REQUIRE_CEPH=1``).
"""

import shutil
import subprocess
import uuid

import testtools

from tests.fixtures import ceph as ceph_fixture
from tests.fixtures import required
from tests.fixtures import tgt

MiB = 1024 * 1024


def _qemu_io(ceph, image, *commands, read_only=True):
    if shutil.which('qemu-io') is None:
        required.unavailable('qemu-io is not installed (Debian package '
                             'qemu-utils)', ceph_fixture.REQUIRE_ENV)
    cmd = ['qemu-io', '-f', 'raw']
    if read_only:
        cmd.append('-r')
    for command in commands:
        cmd += ['-c', command]
    cmd.append(ceph.rbd_uri(image))
    result = subprocess.run(cmd, capture_output=True, text=True,
                            timeout=ceph_fixture.DEADLINE)
    if result.returncode or 'failed' in result.stdout:
        raise AssertionError('qemu-io %s: %s %s' % (
            image, result.stdout.strip(), result.stderr.strip()))
    return result.stdout


class SharedCephTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.ceph = self.useFixture(ceph_fixture.Ceph())
        self.image = 'fixture-test-%s' % uuid.uuid4()
        self.ceph.create_image(self.image, 8 * MiB)
        self.addCleanup(self.ceph.remove_image, self.image)

    def test_fixture_bytes_read_by_qemu_through_librbd(self):
        data = uuid.uuid4().bytes * 32   # 512 bytes
        self.ceph.rbd_write(self.image, MiB + 512, data)

        out = _qemu_io(self.ceph, self.image,
                       'read -v %d %d' % (MiB + 512, len(data)))
        self.assertEqual(data, tgt.parse_dump(out, len(data)))
        # Around them: zeros, as a new image has.
        out = _qemu_io(self.ceph, self.image, 'read -v %d 512' % MiB)
        self.assertEqual(bytes(512), tgt.parse_dump(out, 512))
        self.assertIn(self.image, self.ceph.images())

    def test_qemu_writes_read_by_fixture(self):
        _qemu_io(self.ceph, self.image, 'write -P 0x5a 4096 4096',
                 read_only=False)
        self.assertEqual(b'\x5a' * 4096,
                         self.ceph.rbd_read(self.image, 4096, 4096))
        self.assertEqual(bytes(16), self.ceph.rbd_read(self.image, 0, 16))

    def test_watchers_are_the_sessions_with_the_image_open(self):
        _rados, rbd = ceph_fixture.bindings()
        self.assertEqual([], self.ceph.watchers(self.image))
        with self.ceph.client() as cluster:
            with cluster.open_ioctx(self.ceph.pool) as ioctx:
                with rbd.Image(ioctx, self.image):
                    watchers = self.ceph.watchers(self.image)
                    self.assertEqual(
                        [(cluster.get_addrs(), cluster.get_instance_id())],
                        [(w['addr'], w['id']) for w in watchers])
                    # The monitor knows that client by the same global id
                    # and address, with its cephx name.
                    sessions = {
                        s['global_id']: s for s in self.ceph.sessions()}
                    session = sessions[cluster.get_instance_id()]
                    self.assertEqual('client.admin', session['entity_name'])
                    self.assertIn(cluster.get_addrs(), [
                        '%s/%s' % (a['addr'], a['nonce'])
                        for a in session['addrs']['addrvec']])
        self.assertEqual([], self.ceph.watchers(self.image))

    def test_blocklisted_client_shows_and_cannot_write(self):
        _rados, rbd = ceph_fixture.bindings()
        cluster = self.ceph.connect()
        self.addCleanup(cluster.shutdown)
        ioctx = cluster.open_ioctx(self.ceph.pool)
        self.addCleanup(ioctx.close)
        image = rbd.Image(ioctx, self.image)
        self.addCleanup(image.close)
        image.write(b'before', 0)
        addr = cluster.get_addrs()
        self.assertNotIn(addr, [e['addr'] for e in self.ceph.blocklist()])

        self.ceph.ceph('osd', 'blocklist', 'add', addr)
        self.addCleanup(self.ceph.ceph, 'osd', 'blocklist', 'rm', addr)

        self.assertIn(addr, [e['addr'] for e in self.ceph.blocklist()])
        self.assertRaises(rbd.ConnectionShutdown, image.write, b'after!', 0)
        self.assertEqual(b'before', self.ceph.rbd_read(self.image, 0, 6))


class PrivateCephTest(testtools.TestCase):

    def test_daemons_stop_start_and_cleanup(self):
        ceph = ceph_fixture.Ceph(private=True)
        ceph.setUp()
        try:
            pids = ceph.pids()
            self.assertEqual({'mon.a', 'mgr.x', 'osd.0'}, set(pids))
            self.assertTrue(ceph.answers())

            ceph.stop_osd()
            self.assertNotIn('osd.0', ceph.pids())
            self.assertFalse(ceph.answers(timeout=2))
            ceph.start_osd()
            self.assertTrue(ceph.answers())

            ceph.stop_mon()
            self.assertNotIn('mon.a', ceph.pids())
            self.assertRaises(AssertionError, ceph.ceph, 'health')
            ceph.start_mon()
            ceph.wait_ready()
            self.assertIn('HEALTH', ceph.ceph('health'))
            pids = ceph.pids()
        finally:
            ceph.cleanUp()
        for name, pid in pids.items():
            self.assertFalse(ceph_fixture.pid_alive(pid), name)
