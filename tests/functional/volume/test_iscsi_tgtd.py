"""The ``iscsi`` backend on a real tgtd, judged by a real initiator.

Each test exports volumes with the driver and connects to them with QEMU's
own iSCSI initiator (libiscsi, ``qemu-io``), as a QEMU guest's disk would:
what the initiator reads, and whether its login is refused, decides.

Needs ``tgtd``/``tgtadm`` (Debian's tgt; the node's tgtd is started when
none runs) and ``qemu-io`` (qemu-utils, with qemu-block-extra's libiscsi
driver): without them the tests skip, unless ``NOVA_LITE_REQUIRE_TGT=1``.
"""

import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import fixtures
from oslo_utils import uuidutils
import testtools

from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import iscsi
from tests.fixtures import conf as conf_fixture
from tests.fixtures import tgt

GiB = 1024 ** 3
I1 = 'iqn.2024-01.org.nova-lite.test:host1'
I2 = 'iqn.2024-01.org.nova-lite.test:host2'
H1 = {'host': 'host1', 'initiator': I1}
H2 = {'host': 'host2', 'initiator': I2}
DATA = b'nova-lite iSCSI!'


class TgtdTestCase(testtools.TestCase):
    PRIVATE = False

    def setUp(self):
        super().setUp()
        self.tgtd = self.useFixture(tgt.Tgtd(private=self.PRIVATE))
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.conf.set_override('enabled_backends', ['iscsi1'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'iscsi', group='iscsi1')
        drivers.register_backend_opts(self.conf)
        for key, value in self.tgtd.conf_overrides('iscsi1').items():
            group, name = key.split('.')
            self.conf.set_override(name, value, group=group)
        self.driver = drivers.get_driver(self.conf, 'iscsi1')

    def create(self, size=1, data=DATA, offset=0):
        volume = {'id': uuidutils.generate_uuid(), 'size': size,
                  'host': 'iscsi1', 'provider_location': None,
                  'multiattach': True}
        volume.update(self.driver.create_volume(volume))
        self.addCleanup(self.driver.delete_volume, volume)
        with open(volume['provider_location'], 'r+b') as f:
            f.seek(offset)
            f.write(data)
        return volume

    def connect(self, volume, connector=H1, mode='rw'):
        return self.driver.initialize_connection(
            volume, dict(connector, mode=mode))['data']


class DataPathTest(TgtdTestCase):

    def test_the_bound_initiator_reads_the_bytes_of_the_file(self):
        volume = self.create(data=DATA, offset=GiB - 4096)
        data = self.connect(volume)
        self.assertEqual(self.tgtd.portal, data['target_portal'])
        self.assertEqual(self.tgtd.prefix + 'volume-' + volume['id'],
                         data['target_iqn'])
        self.assertEqual((1, 'CHAP'), (data['target_lun'],
                                       data['auth_method']))
        self.assertEqual(DATA, tgt.qemu_read(data, I1, GiB - 4096,
                                             len(DATA)))
        result = tgt.qemu_io(data, ['length'], I1)
        self.assertEqual('1 GiB', result.stdout.strip(), result.stderr)

    def test_an_initiator_not_bound_is_refused(self):
        volume = self.create()
        data = self.connect(volume)
        error = self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I2,
                                  0, len(DATA))
        self.assertIn('Target not found', str(error))

    def test_a_wrong_chap_secret_is_refused(self):
        volume = self.create()
        data = self.connect(volume)
        error = self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I1,
                                  0, len(DATA), password='x' * 16)
        self.assertIn('Authentication failure', str(error))
        # And no credentials at all.
        bare = {k: v for k, v in data.items()
                if not k.startswith('auth_')}
        error = self.assertRaises(tgt.LoginRefused, tgt.qemu_read, bare, I1,
                                  0, len(DATA))
        self.assertIn('Authentication failure', str(error))
        # Another volume's credentials do not open this one.
        other = self.connect(self.create())
        forged = dict(data, auth_username=other['auth_username'],
                      auth_password=other['auth_password'])
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, forged, I1, 0,
                          len(DATA))
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))

    def test_after_the_last_disconnect_no_one_gets_in(self):
        volume = self.create()
        data = self.connect(volume)
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))
        self.driver.terminate_connection(volume, H1)
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I1, 0,
                          len(DATA))
        # The target stays for the next connection, admitting no one.
        target = self.tgtd.targets()[data['target_iqn']]
        self.assertEqual(([], []), (target.acl, target.accounts))
        self.assertNotIn(data['auth_username'], self.tgtd.accounts())
        self.assertEqual({}, self.driver.connections(volume))
        # Connected again, it is exported again.
        data = self.connect(volume)
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))

    def test_multiattach_two_initiators(self):
        volume = self.create()
        d1 = self.connect(volume, H1)
        d2 = self.connect(volume, H2)
        # One target, an account per host.
        self.assertEqual(d1['target_iqn'], d2['target_iqn'])
        self.assertNotEqual(d1['auth_username'], d2['auth_username'])
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, d1, I1, 0,
                          len(DATA), password=d2['auth_password'])
        self.assertEqual(DATA, tgt.qemu_read(d1, I1, 0, len(DATA)))
        self.assertEqual(DATA, tgt.qemu_read(d2, I2, 0, len(DATA)))
        # host2 writes, host1 reads it.
        written = tgt.qemu_io(d2, ['write -P 0x5a 4096 512'], I2,
                              read_only=False)
        self.assertEqual(0, written.returncode, written.stderr)
        self.assertEqual(b'\x5a' * 512, tgt.qemu_read(d1, I1, 4096, 512))
        self.assertEqual(['host1', 'host2'],
                         sorted(self.driver.connections(volume)))

        self.driver.terminate_connection(volume, H1)
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, d1, I1, 0,
                          len(DATA))
        self.assertEqual(DATA, tgt.qemu_read(d2, I2, 0, len(DATA)))
        self.assertEqual(['host2'], list(self.driver.connections(volume)))
        self.driver.terminate_connection(volume, H2)
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, d2, I2, 0,
                          len(DATA))
        self.assertEqual([], self.tgtd.targets()[d2['target_iqn']].acl)

    def test_a_read_only_lun_refuses_writes(self):
        volume = self.create()
        ro = self.connect(volume, H1, mode='ro')
        self.assertEqual('ro', ro['access_mode'])
        # Opened for writing: refused by the target.
        result = tgt.qemu_io(ro, ['write -P 0x41 0 512'], I1,
                             read_only=False)
        self.assertNotEqual(0, result.returncode)
        self.assertIn('write protected', result.stderr)
        self.assertEqual(DATA, tgt.qemu_read(ro, I1, 0, len(DATA)))
        # A read-write host arrives: the LUN takes writes (host1's own
        # attachment stays read-only in its access_mode).
        rw = self.connect(volume, H2, mode='rw')
        result = tgt.qemu_io(rw, ['write -P 0x42 0 512'], I2,
                             read_only=False)
        self.assertEqual(0, result.returncode, result.stderr)
        with open(volume['provider_location'], 'rb') as f:
            self.assertEqual(b'\x42' * 512, f.read(512))
        # It leaves: read-only again.
        self.driver.terminate_connection(volume, H2)
        result = tgt.qemu_io(ro, ['write -P 0x43 0 512'], I1,
                             read_only=False)
        self.assertIn('write protected', result.stderr)

    def test_extend_is_seen_by_the_initiator(self):
        volume = self.create()
        data = self.connect(volume)
        self.driver.extend_volume(volume, 3)
        self.assertEqual(3, self.driver.volume_size(volume))
        result = tgt.qemu_io(data, ['length'], I1)
        self.assertEqual('3 GiB', result.stdout.strip(), result.stderr)
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))

    def test_a_disconnected_hosts_session_is_cut(self):
        volume = self.create()
        d1 = self.connect(volume, H1)
        self.connect(volume, H2)
        # host1 stays logged in (qemu-io waits between two reads).
        reader = subprocess.Popen(
            ['qemu-io', '-r', '-c', 'read 0 512', '-c', 'sleep 60000',
             '--image-opts', ','.join([
                 'driver=iscsi', 'transport=tcp',
                 'portal=%s' % d1['target_portal'],
                 'target=%s' % d1['target_iqn'], 'lun=1',
                 'initiator-name=%s' % I1,
                 'user=%s' % d1['auth_username'],
                 'password=%s' % d1['auth_password']])],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(reader.wait)
        self.addCleanup(reader.kill)
        iqn = d1['target_iqn']

        def sessions():
            return [s[2] for s in self.tgtd.targets()[iqn].sessions]
        deadline = time.monotonic() + tgt.DEADLINE
        while I1 not in sessions():
            self.assertLess(time.monotonic(), deadline, 'no session')
            self.assertIsNone(reader.poll())
            time.sleep(0.05)
        self.driver.terminate_connection(volume, H1)
        self.assertEqual([], [s for s in sessions() if s == I1])
        self.assertEqual([I2], [e for e in self.tgtd.targets()[iqn].acl])


class FenceTest(TgtdTestCase):
    """A host whose connection ended (its detach, or its fence's free)
    never logs in again with what it was given, whether the volume goes
    to a host with another initiator name or with the same one, or comes
    back to that host."""

    def stale_writer(self, data, initiator, pattern):
        """A QEMU initiator logged in with ``data`` that reads, waits, then
        writes ``pattern`` at 0: a guest's write queued behind the end of
        its connection. Returns the process once its session is up."""
        writer = subprocess.Popen(
            ['qemu-io', '-c', 'read 0 512', '-c', 'sleep 2000', '-c',
             'write -P %s 0 512' % pattern, '--image-opts', ','.join([
                 'driver=iscsi', 'transport=tcp',
                 'portal=%s' % data['target_portal'],
                 'target=%s' % data['target_iqn'], 'lun=1',
                 'initiator-name=%s' % initiator,
                 'user=%s' % data['auth_username'],
                 'password=%s' % data['auth_password']])],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(writer.wait)
        self.addCleanup(writer.kill)
        deadline = time.monotonic() + tgt.DEADLINE
        while initiator not in [s[2] for s in self.tgtd.targets()[
                data['target_iqn']].sessions]:
            self.assertLess(time.monotonic(), deadline, 'no session')
            self.assertIsNone(writer.poll())
            time.sleep(0.05)
        return writer

    def assert_never_written(self, volume, writer, seconds=8):
        """The LUN's first 512 bytes stay the owner's for ``seconds``
        (long enough for the writer to log in again and write, 2 s after
        its read, were it let in)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with open(volume['provider_location'], 'rb') as f:
                self.assertEqual(DATA, f.read(len(DATA)))
            time.sleep(0.2)

    def _test_the_ended_connection_stays_out(self, twin):
        volume = self.create()
        stale = self.connect(volume, H1)
        writer = self.stale_writer(stale, I1, '0x66')
        # host1's connection ends (it was fenced; the volume is freed).
        self.driver.terminate_connection(volume, H1)
        # The volume goes to ``twin``, then back to host1 besides.
        owner = self.connect(volume, twin)
        back = self.connect(volume, H1)
        self.assertNotIn(stale['auth_username'], self.tgtd.accounts())
        self.assertEqual(DATA, tgt.qemu_read(owner, twin['initiator'], 0,
                                             len(DATA)))
        self.assertEqual(DATA, tgt.qemu_read(back, I1, 0, len(DATA)))
        self.assert_never_written(volume, writer)
        error = self.assertRaises(tgt.LoginRefused, tgt.qemu_read, stale,
                                  I1, 0, len(DATA))
        self.assertIn('Authentication failure', str(error))

    def test_an_ended_connection_stays_out_with_distinct_names(self):
        self._test_the_ended_connection_stays_out(H2)

    def test_an_ended_connection_stays_out_with_a_shared_name(self):
        self._test_the_ended_connection_stays_out(
            {'host': 'host2', 'initiator': I1})


class IdempotenceTest(TgtdTestCase):

    def test_every_call_twice(self):
        volume = self.create()
        data = self.connect(volume)
        self.assertEqual(data, self.connect(volume))
        self.assertEqual(2, self.driver.connections(volume)['host1'][
            'initialized'])
        self.driver.terminate_connection(volume, H1)
        self.driver.terminate_connection(volume, H1)
        self.driver.delete_volume(volume)
        self.driver.delete_volume(volume)
        self.assertFalse(os.path.exists(volume['provider_location']))

    def test_what_a_dead_process_left_is_completed(self):
        # A target made, its LUN not yet (a create that died: the file
        # of what the driver knows of the target removed, not written
        # again), an address ACL someone bound.
        volume = self.create()
        iqn = self.tgtd.prefix + 'volume-' + volume['id']
        tgt._tgtadm(self.tgtd.control_port, '--lld', 'iscsi', '--op',
                    'delete', '--force', '--mode', 'target', '--tid',
                    str(self.tgtd.targets()[iqn].tid))
        os.unlink(os.path.join(self.driver._records_dir(volume),
                               iscsi.TARGET_FILE))
        tgt._tgtadm(self.tgtd.control_port, '--lld', 'iscsi', '--op', 'new',
                    '--mode', 'target', '--tid', '77', '--targetname', iqn)
        tgt._tgtadm(self.tgtd.control_port, '--lld', 'iscsi', '--op', 'bind',
                    '--mode', 'target', '--tid', '77', '--initiator-address',
                    'ALL')
        data = self.connect(volume)
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))
        # Exported to the bound initiator alone, with CHAP.
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I2, 0,
                          len(DATA))
        target = self.tgtd.targets()[iqn]
        # The connection's account, and the spare (bound again).
        self.assertEqual((77, [I1], sorted([
            data['auth_username'], self.driver._spare(volume)[0]])),
            (target.tid, target.acl, sorted(target.accounts)))


class RestartTest(TgtdTestCase):
    """A private tgtd, killed and started again: it has no targets."""
    PRIVATE = True

    def test_ensure_exports_after_tgtd_was_killed(self):
        v1, v2 = self.create(), self.create(data=b'second volume...')
        d1 = self.connect(v1, H1)
        d2 = self.connect(v2, H2, mode='ro')
        connected = {v1['id']: (v1, [dict(H1, mode='rw')]),
                     v2['id']: (v2, [dict(H2, mode='ro')])}
        self.assertEqual([], self.driver.ensure_exports(lambda **_: connected))

        self.tgtd.kill()
        self.tgtd.start()
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, d1, I1, 0,
                          len(DATA))
        self.assertEqual(sorted([(v1['id'], 'exported'),
                                 (v2['id'], 'exported')]),
                         self.driver.ensure_exports(lambda **_: connected))
        self.assertEqual(DATA, tgt.qemu_read(d1, I1, 0, len(DATA)))
        self.assertEqual(b'second volume...',
                         tgt.qemu_read(d2, I2, 0, 16))
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, d1, I2, 0,
                          len(DATA))
        result = tgt.qemu_io(d2, ['write -P 0x41 0 512'], I2,
                             read_only=False)
        self.assertIn('write protected', result.stderr)
        # Done once: the next run finds the sentinel.
        self.assertEqual([], self.driver.ensure_exports(lambda **_: connected))

    def test_a_session_resumes_once_exported_again(self):
        volume = self.create()
        data = self.connect(volume, H1)
        connected = {volume['id']: (volume, [dict(H1, mode='rw')])}
        # The initiator reads, pauses, reads again: the second read waits
        # for the target to come back, as a guest's I/O would.
        reader = subprocess.Popen(
            ['qemu-io', '-r', '-c', 'read -v 0 16', '-c', 'sleep 3000',
             '-c', 'read -v 0 16', '--image-opts', ','.join([
                 'driver=iscsi', 'transport=tcp',
                 'portal=%s' % data['target_portal'],
                 'target=%s' % data['target_iqn'], 'lun=1',
                 'initiator-name=%s' % I1,
                 'user=%s' % data['auth_username'],
                 'password=%s' % data['auth_password']])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(reader.wait)
        self.addCleanup(reader.kill)
        deadline = time.monotonic() + tgt.DEADLINE
        while not self.tgtd.targets()[data['target_iqn']].sessions:
            self.assertLess(time.monotonic(), deadline, 'no session')
            time.sleep(0.05)
        self.tgtd.kill()
        self.tgtd.start()
        self.assertEqual([(volume['id'], 'exported')],
                         self.driver.ensure_exports(lambda **_: connected))
        out, err = reader.communicate(timeout=tgt.DEADLINE)
        self.assertEqual(0, reader.returncode, err)
        self.assertEqual(DATA + DATA, tgt.parse_dump(out, 32))
        # It logged in again (tgtd reset the session).
        self.assertIn('BUS_RESET', err)

    def test_a_connection_after_a_restart_makes_its_target(self):
        volume = self.create()
        self.connect(volume, H1)
        self.tgtd.stop()
        self.tgtd.start()
        data = self.connect(volume, H2)
        self.assertEqual(DATA, tgt.qemu_read(data, I2, 0, len(DATA)))
        # host1 is the settling's to export again (the database knows it).
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I1, 0,
                          len(DATA))

    def test_tgtd_stopped(self):
        volume = self.create()
        self.tgtd.stop()
        error = self.assertRaises(Exception, self.connect, volume)
        self.assertIn('tgtd is not running', str(error))
        self.tgtd.start()


class SharedTgtdTest(TgtdTestCase):
    """Two backends, and two deployments, on one tgtd under one target
    prefix: each touches only its own targets."""
    PRIVATE = True

    def other_backend(self, name, state_path=None):
        """An iscsi backend ``name`` on this tgtd with this prefix: of
        this deployment, or (``state_path``) of another one."""
        return tgt.backend_driver(self, self.tgtd, name,
                                  state_path or self.conf.state_path)

    def _test_left_alone(self, other, owned):
        volume = self.create()
        data = self.connect(volume, H1)
        mine = {volume['id']: (volume, [dict(H1, mode='rw')])}
        self.driver.ensure_exports(lambda **_: mine)
        # The other's first pass, and its sweep an hour past
        # stalled_after: its database has no connected attachment.
        stalled = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        self.assertEqual([], other.ensure_exports(lambda **_: {}, stalled,
                                                  owned=owned))
        self.assertEqual([], other.ensure_exports(lambda **_: {}, stalled,
                                                  owned=owned))
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))
        targets = self.tgtd.targets()
        self.assertIn(self.driver._sentinel(), targets)
        self.assertIn(other._sentinel(), targets)
        # tgtd restarted: the other's pass does not hide it from this
        # backend, which exports its volume again.
        self.tgtd.kill()
        self.tgtd.start()
        other.ensure_exports(lambda **_: {}, stalled, owned=owned)
        self.assertEqual([(volume['id'], 'exported')],
                         self.driver.ensure_exports(lambda **_: mine))
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))

    def test_two_backends_on_one_tgtd(self):
        other = self.other_backend('iscsi2')
        self.assertEqual(self.driver._dir(), other._dir())
        self._test_left_alone(other, lambda ids: set())

    def test_two_deployments_on_one_tgtd(self):
        other = self.other_backend(
            'iscsi1', self.useFixture(fixtures.TempDir()).path)
        self._test_left_alone(other, lambda ids: set())

    def test_forget_a_retired_backend(self):
        other = self.other_backend('iscsi2')
        other.ensure_exports(lambda **_: {})
        self.assertIn(other._sentinel(), self.tgtd.targets())
        self.assertEqual([other._sentinel()],
                         other.forget(lambda ids: set()))
        self.assertNotIn(other._sentinel(), self.tgtd.targets())


# A process that runs one driver call with the test's configuration.
CHILD = r'''
import json, sys
from oslo_config import cfg
from nova_lite import config
from nova_lite.volume_service import drivers
args = json.loads(sys.argv[1])
conf = cfg.ConfigOpts()
config.prepare(conf)
conf([], project='nova-lite', default_config_files=[])
conf.set_override('state_path', args['state_path'])
conf.set_override('enabled_backends', ['iscsi1'], group='volume')
drivers.register_backend_opts(conf)
conf.set_override('volume_driver', 'iscsi', group='iscsi1')
drivers.register_backend_opts(conf)
for name, value in args['backend'].items():
    conf.set_override(name, value, group='iscsi1')
driver = drivers.get_driver(conf, 'iscsi1')
if args['call'] == 'ensure_exports':
    # The database says the volume is connected to the connector's host.
    connected = {args['volume']['id']: (args['volume'], [args['connector']])}
    driver.ensure_exports(lambda volume_id=None, detaching=True: connected)
else:
    getattr(driver, args['call'])(args['volume'], args['connector'])
'''

# ``tgtadm`` for the child: SIGKILLs its caller at call number $DIE_AT,
# runs the real one otherwise.
SHIM = '''#!/bin/sh
n=$(( $(cat "$TGTADM_COUNT" 2>/dev/null || echo 0) + 1 ))
echo $n > "$TGTADM_COUNT"
if [ "$n" = "$DIE_AT" ]; then kill -KILL $PPID; exit 1; fi
exec %s "$@"
'''


class ProcessDeathTest(TgtdTestCase):
    """A real process running the driver, SIGKILLed before each of its
    tgtadm calls in turn: what it leaves never exports the volume to a
    host without CHAP, nor to any other host, and is settled."""

    def setUp(self):
        super().setUp()
        shimdir = self.useFixture(fixtures.TempDir()).path
        self.counter = os.path.join(shimdir, 'count')
        with open(os.path.join(shimdir, 'tgtadm'), 'w') as f:
            f.write(SHIM % shutil.which('tgtadm'))
        os.chmod(os.path.join(shimdir, 'tgtadm'), 0o755)
        self.env = dict(os.environ, PATH=shimdir + ':' + os.environ['PATH'],
                        TGTADM_COUNT=self.counter)

    def run_child(self, call, volume, connector, die_at):
        """Run ``call`` in a process killed at tgtadm call ``die_at``;
        returns whether it was killed."""
        if os.path.exists(self.counter):
            os.unlink(self.counter)
        backend = {name: value for name, value in (
            (key.split('.')[1], value) for key, value in
            self.tgtd.conf_overrides('iscsi1').items())}
        child = subprocess.run(
            [sys.executable, '-c', CHILD, json.dumps({
                'state_path': self.conf.state_path, 'backend': backend,
                'call': call, 'volume': volume,
                'connector': connector})],
            env=dict(self.env, DIE_AT=str(die_at)), capture_output=True,
            text=True, timeout=120)
        if child.returncode == -signal.SIGKILL:
            return True
        self.assertEqual(0, child.returncode, child.stderr)
        return False

    def exported_to(self, volume):
        target = self.tgtd.targets().get(
            self.tgtd.prefix + 'volume-' + volume['id'])
        if target is None:
            return []
        names = [e for e in target.acl]
        if names:
            # Never without CHAP, never with an account no connection
            # record names.
            self.assertTrue(target.accounts)
            self.assertEqual([], [u for u in target.accounts
                                  if u not in self.users(volume)])
        return names

    def users(self, volume):
        """The CHAP users the volume's connection records, and its spare,
        name."""
        return [self.driver._account(volume, r)[0]
                for r in self.driver._records(volume).values()] + (
            self.driver._spare(volume) or [])[:1]

    def data(self, volume, host='host1'):
        """``connection_info`` data of ``host``'s connection, as its
        record has it."""
        return self.driver._connection_info(
            volume, 'rw', self.driver._account(
                volume, self.driver._records(volume)[host]))['data']

    def test_connect_killed_at_each_step(self):
        # The target ready (made at create): the connect's one tgtadm
        # call binds the initiator.
        self.assertEqual(2, self._connect_killed_at_each_step(
            self.create()))

    def test_a_connect_to_a_target_not_ready_killed_at_each_step(self):
        # A volume whose target is not ready (made by an earlier
        # release, or its create found tgtd down): the connect makes the
        # target, LUN, its account, and binds the initiator.
        volume = self.create()

        def not_ready():
            self.driver.terminate_connection(volume, {})
            self.assertEqual([], [iqn for iqn in self.tgtd.targets()
                                  if 'volume-' in iqn])
        not_ready()
        self.assertEqual(7, self._connect_killed_at_each_step(volume,
                                                              not_ready))

    def _connect_killed_at_each_step(self, volume, again=lambda: None):
        """Connect host1, killed before each tgtadm call in turn, each
        death settled (then ``again()``); returns the steps (tgtadm
        calls + 1)."""
        step = 0
        while True:
            step += 1
            killed = self.run_child('initialize_connection', volume,
                                    dict(H1, mode='rw'), step)
            self.assertIn(self.exported_to(volume), ([], [I1]), step)
            if not killed:
                break
            # The attachment never got its connection: the settling
            # unexports what the dead process bound.
            self.driver.ensure_exports(
                lambda: {}, datetime.datetime.utcnow() +
                datetime.timedelta(seconds=1))
            self.assertEqual([], self.exported_to(volume), step)
            self.assertEqual([], [t.acl for iqn, t in
                                  self.tgtd.targets().items()
                                  if 'volume-' in iqn and t.acl])
            self.assertEqual({}, self.driver.connections(volume))
            again()
        data = self.data(volume)
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))
        return step

    def test_export_pass_killed_at_each_step(self):
        # The export pass of block storage's settling after tgtd lost its
        # targets (no sentinel, no target of the volume), its process killed
        # before each of its tgtadm calls in turn: the volume is never
        # exported to another host or without CHAP, the sentinel is made
        # last (so the next pass runs again in full), and the next pass
        # exports the volume to its host, whose initiator then reads it.
        volume = self.create()
        connector = dict(H1, mode='rw')
        connected = {volume['id']: (volume, [connector])}
        sentinel = self.driver._sentinel()
        step = 0
        while True:
            step += 1
            self.assertLess(step, 30)
            killed = self.run_child('ensure_exports', volume, connector,
                                    step)
            self.assertIn(self.exported_to(volume), ([], [I1]), step)
            if not killed:
                break
            self.assertNotIn(sentinel, self.tgtd.targets(), step)
            # The next pass settles it.
            self.driver.ensure_exports(lambda **_: connected)
            self.assertEqual([I1], self.exported_to(volume), step)
            self.assertIn(sentinel, self.tgtd.targets(), step)
            # tgtd loses its targets again for the next step.
            self.driver.terminate_connection(volume, {})
            self.driver.tgtadm('--op', 'delete', '--mode', 'target',
                               '--tid', self.tgtd.targets()[sentinel].tid)
        self.assertGreater(step, 3)
        self.assertIn(sentinel, self.tgtd.targets())
        data = self.data(volume)
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))

    def test_disconnect_killed_at_each_step(self):
        volume = self.create()
        step = 0
        while True:
            step += 1
            data = self.connect(volume, H1)
            other = self.connect(volume, H2)
            killed = self.run_child('terminate_connection', volume, H1,
                                    step)
            # host2 keeps its export whatever happened.
            self.assertEqual(DATA, tgt.qemu_read(other, I2, 0, len(DATA)))
            if not killed:
                break
            # The attachment is unchanged: the detach is asked again.
            self.driver.terminate_connection(volume, H1)
            self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I1, 0,
                              len(DATA))
            self.assertEqual([I2], self.exported_to(volume))
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I1, 0,
                          len(DATA))
        self.assertGreater(step, 2)
        # The last host, killed at each step.
        step = 0
        while True:
            step += 1
            user = self.connect(volume, H2)['auth_username']
            killed = self.run_child('terminate_connection', volume, H2,
                                    step)
            if not killed:
                break
            self.driver.terminate_connection(volume, H2)
            self.assertEqual([], self.exported_to(volume))
            self.assertNotIn(user, self.tgtd.accounts())
        self.assertEqual([], self.exported_to(volume))
        self.assertEqual([], self.tgtd.targets()[
            self.tgtd.prefix + 'volume-' + volume['id']].accounts)
        self.assertGreater(step, 3)

    def test_disconnect_of_a_shared_name_killed_at_each_step(self):
        # host1 and host2 with one initiator name: host1's disconnect,
        # killed before each of its tgtadm calls, then asked again (or
        # host1 connects again first): host2 reads throughout, and host1's
        # ended connection never logs in again.
        twin = {'host': 'host2', 'initiator': I1}
        volume = self.create()
        other = self.connect(volume, twin)
        step = 0
        while True:
            step += 1
            self.assertLess(step, 30)
            ended = self.connect(volume, H1)
            killed = self.run_child('terminate_connection', volume, H1,
                                    step)
            self.assertEqual(DATA, tgt.qemu_read(other, I1, 0, len(DATA)))
            if not killed:
                break
            if step % 2:
                # Connected again before the disconnect is asked again:
                # a new account once the old one's end began.
                self.connect(volume, H1)
            self.driver.terminate_connection(volume, H1)
            self.assertRaises(tgt.LoginRefused, tgt.qemu_read, ended, I1,
                              0, len(DATA))
            self.assertEqual([I1], self.exported_to(volume))
            self.assertEqual(DATA, tgt.qemu_read(other, I1, 0, len(DATA)))
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, ended, I1, 0,
                          len(DATA))
        self.assertEqual([other['auth_username']],
                         self.tgtd.targets()[other['target_iqn']].accounts)
        self.assertGreater(step, 3)
