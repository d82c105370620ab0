"""The ``iscsi`` backend with tgtadm replaced at the process boundary.

``FakeTgtd`` answers ``processutils.execute('tgtadm', ...)`` as tgtd 1.0.85
does (its show output and error messages, taken from the real daemon),
keeping targets, LUNs, accounts and ACLs in memory. It can fail the n-th
call (the process died there: what the calls before it did stays), say it
is busy, or be down. The real daemon's behaviour is tested in
``tests/functional/volume/test_iscsi_tgtd.py``.
"""

import datetime
import os

import fixtures
from oslo_concurrency import processutils
import testtools

from nova_lite import exception
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import iscsi
from tests.fixtures import conf as conf_fixture

VOLUME = {'id': '8f5a8a1e-5d2a-4b9d-9d56-1b5b9c1f0a11', 'size': 1,
          'host': 'iscsi1', 'provider_location': None, 'multiattach': True}
PREFIX = 'iqn.2010-10.org.openstack:'
IQN = PREFIX + 'volume-' + VOLUME['id']
I1 = 'iqn.1993-08.org.debian:01:h1'
I2 = 'iqn.1993-08.org.debian:01:h2'
H1 = {'host': 'h1', 'initiator': I1}
H2 = {'host': 'h2', 'initiator': I2}

# ``tgtadm --lld iscsi --op show --mode target`` of tgtd 1.0.85: a target
# with a session, LUN 1 read-only, an incoming and an outgoing account, an
# address and two initiator names in its ACL; and a bare one.
REAL_SHOW = """\
Target 100: iqn.2010-10.org.openstack:exp-v1
    System information:
        Driver: iscsi
        State: ready
    I_T nexus information:
        I_T nexus: 10
            Initiator: iqn.test:init-a alias: none
            Connection: 0
                IP Address: 127.0.0.1
    LUN information:
        LUN: 0
            Type: controller
            SCSI ID: IET     00640000
            SCSI SN: beaf1000
            Size: 0 MB, Block size: 1
            Online: Yes
            Removable media: No
            Prevent removal: No
            Readonly: No
            SWP: No
            Thin-provisioning: No
            Backing store type: null
            Backing store path: None
            Backing store flags: 
        LUN: 1
            Type: disk
            SCSI ID: IET     00640001
            SCSI SN: beaf1001
            Size: 67 MB, Block size: 512
            Online: Yes
            Removable media: No
            Prevent removal: No
            Readonly: Yes
            SWP: No
            Thin-provisioning: No
            Backing store type: rdwr
            Backing store path: /tmp/iscsi-exp/v1.img
            Backing store flags: 
    Account information:
        expuser1
        expuser1 (outgoing)
    ACL information:
        10.0.0.1
        iqn.test:init-a
        iqn.test:init-b
Target 971505: iqn.2010-10.org.nova-lite.smoke:volume-dcd7
    System information:
        Driver: iscsi
        State: ready
    I_T nexus information:
    LUN information:
        LUN: 0
            Type: controller
            Backing store path: None
    Account information:
    ACL information:
"""  # noqa: W291


class FakeTgtd(object):
    """tgtd's state and tgtadm's answers; ``socket``: the path of its
    control socket (default control port), made anew by ``restart``."""

    def __init__(self, socket):
        self.targets = {}     # tid -> dict
        self.accounts = {}    # user -> password
        self.calls = []
        self.fail_at = None   # the call number (1-based) that fails
        self.busy = 0         # the next n calls say busy
        self.down = False
        self.socket = socket
        self._make_socket()

    def _make_socket(self):
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        with open(self.socket, 'w'):
            pass

    def restart(self):
        """tgtd restarted: no targets, no accounts, a new socket."""
        self.targets.clear()
        self.accounts.clear()
        self._make_socket()

    # -- what tests look at ---------------------------------------------
    def target(self, iqn=IQN):
        for target in self.targets.values():
            if target['iqn'] == iqn:
                return target
        return None

    def initiators(self, iqn=IQN):
        target = self.target(iqn)
        return [] if target is None else [
            e for e in target['acl'] if iscsi.is_initiator_name(e)]

    def ops(self, since=0):
        """The (op, mode) of each call (from call ``since``), in order."""
        return [(c[c.index('--op') + 1], c[c.index('--mode') + 1])
                for c in self.calls[since:]]

    def changes(self, since=0):
        """The calls (from call ``since``) that change tgtd's state."""
        return [op for op in self.ops(since) if op[0] != 'show']

    # -- tgtadm ---------------------------------------------------------
    def execute(self, *cmd, **kwargs):
        assert cmd[0] == 'tgtadm', cmd
        self.calls.append(cmd)
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise Died('the process died at tgtadm call %d' % self.fail_at)
        if self.down:
            raise processutils.ProcessExecutionError(
                stderr='tgtadm: failed to send request hdr to tgt daemon, '
                       'Transport endpoint is not connected\n',
                exit_code=107, cmd=' '.join(cmd))
        if self.busy:
            self.busy -= 1
            raise processutils.ProcessExecutionError(
                stderr='tgtadm: this driver is busy\n', exit_code=22,
                cmd=' '.join(cmd))
        args = {}
        flags = set()
        i = 1
        while i < len(cmd):
            if cmd[i] in ('--force', '--outgoing'):
                flags.add(cmd[i])
                i += 1
            else:
                args[cmd[i]] = cmd[i + 1]
                i += 2
        assert args['--lld'] == 'iscsi'
        answer = getattr(self, '_%s_%s' % (args['--mode'], args['--op']))(
            args, flags)
        if isinstance(answer, Output):
            return str(answer), ''
        if answer:
            raise processutils.ProcessExecutionError(
                stderr='tgtadm: %s\n' % answer, exit_code=22,
                cmd=' '.join(cmd))
        return '', ''

    def _tid(self, args):
        return int(args['--tid'])

    def _target_new(self, args, flags):
        tid = self._tid(args)
        if tid in self.targets or self.target(args['--targetname']):
            return 'this target already exists'
        self.targets[tid] = {'iqn': args['--targetname'], 'luns': {},
                             'accounts': [], 'acl': [], 'sessions': []}

    def _target_delete(self, args, flags):
        if self.targets.pop(self._tid(args), None) is None:
            return "can't find the target"

    def _target_show(self, args, flags):
        out = []
        for tid, t in sorted(self.targets.items()):
            out.append('Target %d: %s' % (tid, t['iqn']))
            out.append('    System information:')
            out.append('        Driver: iscsi')
            out.append('    I_T nexus information:')
            for sid, cid, initiator in t['sessions']:
                out.append('        I_T nexus: %d' % sid)
                out.append('            Initiator: %s alias: none'
                           % initiator)
                out.append('            Connection: %d' % cid)
                out.append('                IP Address: 127.0.0.1')
            out.append('    LUN information:')
            for lun, (path, readonly) in sorted(t['luns'].items()):
                out.append('        LUN: %d' % lun)
                out.append('            Type: disk')
                out.append('            Readonly: %s' % (
                    'Yes' if readonly else 'No'))
                out.append('            Backing store path: %s' % path)
            out.append('    Account information:')
            out.extend('        %s' % a for a in t['accounts'])
            out.append('    ACL information:')
            out.extend('        %s' % a for a in t['acl'])
        return Output('\n'.join(out) + '\n' if out else '')

    def _target_bind(self, args, flags):
        t = self.targets.get(self._tid(args))
        if t is None:
            return "can't find the target"
        entry = args.get('--initiator-name') or args['--initiator-address']
        if entry in t['acl']:
            return 'this access control rule already exists'
        t['acl'].append(entry)

    def _target_unbind(self, args, flags):
        t = self.targets.get(self._tid(args))
        if t is None:
            return "can't find the target"
        entry = args.get('--initiator-name') or args['--initiator-address']
        if entry not in t['acl']:
            return 'this access control rule does not exist'
        t['acl'].remove(entry)

    def _logicalunit_new(self, args, flags):
        t = self.targets.get(self._tid(args))
        if t is None:
            return "can't find the target"
        lun = int(args['--lun'])
        if lun in t['luns']:
            return 'this logical unit number already exists'
        t['luns'][lun] = (args['--backing-store'], False)

    def _logicalunit_delete(self, args, flags):
        t = self.targets.get(self._tid(args))
        if t is None:
            return "can't find the target"
        if t['luns'].pop(int(args['--lun']), None) is None:
            return "can't find the logical unit"

    def _logicalunit_update(self, args, flags):
        t = self.targets.get(self._tid(args))
        lun = int(args['--lun'])
        if t is None or lun not in t['luns']:
            return "can't find the logical unit"
        key, value = args['--params'].split('=')
        assert key == 'readonly'
        t['luns'][lun] = (t['luns'][lun][0], value == '1')

    def _account_new(self, args, flags):
        if args['--user'] in self.accounts:
            return 'this account already exists'
        self.accounts[args['--user']] = args['--password']

    def _account_delete(self, args, flags):
        for t in self.targets.values():
            # tgtd 1.0.85 deletes it, then crashes at its next look at
            # the target.
            assert args['--user'] not in t['accounts'], (
                'tgtd crashes: account %s deleted while bound to %s' % (
                    args['--user'], t['iqn']))
        if self.accounts.pop(args['--user'], None) is None:
            return "can't find the account"

    def _account_unbind(self, args, flags):
        t = self.targets.get(self._tid(args))
        if t is None:
            return "can't find the target"
        if args['--user'] not in t['accounts']:
            return "can't find the account"
        # tgtd 1.0.85 leaves a hole in the target's list of accounts and
        # crashes at its next look at the target.
        assert args['--user'] == t['accounts'][-1], (
            'tgtd crashes: account %s unbound before %s' % (
                args['--user'], t['accounts'][-1]))
        t['accounts'].remove(args['--user'])

    def _account_bind(self, args, flags):
        t = self.targets.get(self._tid(args))
        if t is None:
            return "can't find the target"
        if args['--user'] not in self.accounts:
            return "can't find the account"
        if args['--user'] in t['accounts']:
            return 'this account already exists'
        t['accounts'].append(args['--user'])

    def _conn_delete(self, args, flags):
        t = self.targets.get(self._tid(args))
        sid, cid = int(args['--sid']), int(args['--cid'])
        if t is None or not any(s[:2] == (sid, cid) for s in t['sessions']):
            return "can't find the connection"
        t['sessions'] = [s for s in t['sessions'] if s[:2] != (sid, cid)]


class Died(Exception):
    """The process died here."""


class Output(str):
    """What a show prints (an error is a plain string)."""


class ParseTest(testtools.TestCase):
    def test_real_show_output(self):
        targets = iscsi.parse_targets(REAL_SHOW)
        self.assertEqual(['iqn.2010-10.org.nova-lite.smoke:volume-dcd7',
                          'iqn.2010-10.org.openstack:exp-v1'],
                         sorted(targets))
        t = targets['iqn.2010-10.org.openstack:exp-v1']
        self.assertEqual(100, t.tid)
        self.assertEqual({0: {'path': 'None', 'readonly': False},
                          1: {'path': '/tmp/iscsi-exp/v1.img',
                              'readonly': True}}, t.luns)
        self.assertEqual(['expuser1'], t.accounts)
        self.assertEqual(['10.0.0.1', 'iqn.test:init-a', 'iqn.test:init-b'],
                         t.acl)
        self.assertEqual([(10, 0, 'iqn.test:init-a')], t.sessions)
        bare = targets['iqn.2010-10.org.nova-lite.smoke:volume-dcd7']
        self.assertEqual((971505, [], [], []),
                         (bare.tid, bare.accounts, bare.acl, bare.sessions))

    def test_initiator_names(self):
        for name in (I1, 'eui.02004567A425678D', 'naa.52004567BA64678D',
                     'iqn.test'):
            self.assertTrue(iscsi.is_initiator_name(name), name)
        for entry in ('ALL', '10.0.0.1', '192.168.0.0/24', '', 'iqn.a b',
                      'iqn.' + 'x' * 220, 'host1'):
            self.assertFalse(iscsi.is_initiator_name(entry), entry)


class ISCSIDriverTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.conf.set_override('enabled_backends', ['iscsi1'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'iscsi', group='iscsi1')
        drivers.register_backend_opts(self.conf)
        run = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable(
            'TGT_IPC_SOCKET', os.path.join(run, 'socket')))
        self.tgtd = FakeTgtd(os.path.join(run, 'socket.0'))
        self.useFixture(fixtures.MockPatchObject(
            processutils, 'execute', side_effect=self.tgtd.execute))
        self.driver = drivers.get_driver(self.conf, 'iscsi1')
        self.volume = dict(VOLUME, **self.driver.create_volume(VOLUME))

    def connect(self, connector=H1, mode='rw', volume=None):
        return self.driver.initialize_connection(
            volume or self.volume, dict(connector, mode=mode))

    def account(self, host='h1', volume=None):
        """``(user, secret)`` of ``host``'s connection of the volume."""
        record = self.driver._records(volume or self.volume)[host]
        return tuple(record['chap'])

    def open_accounts(self, volume=None):
        """The users of the volume's open connections."""
        return sorted(
            self.driver._account(volume or self.volume, r)[0]
            for r in self.driver._records(volume or self.volume).values()
            if not r.get('closing'))

    # -- create, connection_info ------------------------------------------
    def test_create_makes_a_sparse_file_and_no_credentials(self):
        path = self.volume['provider_location']
        self.assertEqual(1024 ** 3, os.stat(path).st_size)
        # The credentials are each connection's (below), not the
        # volume's.
        self.assertNotIn('provider_auth', self.volume)
        # The target is made ready for a first connection, without a
        # show of every target: its LUN, a spare account bound (its
        # secret stays here), an ACL that admits no one.
        self.assertEqual([('new', 'target'), ('new', 'logicalunit'),
                          ('new', 'account'), ('bind', 'account')],
                         self.tgtd.ops())
        target = self.tgtd.target()
        spare = self.driver._spare(self.volume)
        self.assertEqual(({1: (path, False)}, [spare[0]], []),
                         (target['luns'], target['accounts'],
                          target['acl']))
        self.assertEqual({spare[0]: spare[1]}, self.tgtd.accounts)
        self.assertEqual({}, self.driver.connections(self.volume))

    def test_create_with_tgtd_down_leaves_the_target_to_later(self):
        log = self.useFixture(fixtures.FakeLogger())
        self.tgtd.down = True
        volume = dict(VOLUME, id='made-while-down')
        volume.update(self.driver.create_volume(volume))
        self.assertTrue(os.path.exists(volume['provider_location']))
        self.assertIn('not ready for its first connection', log.output)
        # The export pass makes it ready once tgtd answers.
        self.tgtd.down = False
        self.driver.ensure_exports(lambda **_: {})
        target = self.tgtd.target(PREFIX + 'volume-made-while-down')
        self.assertEqual(([], [self.driver._spare(volume)[0]]),
                         (target['acl'], target['accounts']))

    def test_connection_info_is_cinders(self):
        info = self.connect(mode='ro')
        user, secret = self.account()
        self.assertEqual((24, 16), (len(user), len(secret)))
        self.assertTrue(user.isalnum() and secret.isalnum())
        self.assertEqual({
            'driver_volume_type': 'iscsi',
            'data': {
                'target_discovered': False,
                'target_portal': '127.0.0.1:3260',
                'target_iqn': IQN,
                'target_lun': 1,
                'volume_id': VOLUME['id'],
                'auth_method': 'CHAP',
                'auth_username': user,
                'auth_password': secret,
                'access_mode': 'ro',
                'encrypted': False,
            }}, info)

    def test_portal_options_and_ipv6(self):
        self.conf.set_override('target_ip_address', 'fd00::10',
                               group='iscsi1')
        self.conf.set_override('target_port', 3261, group='iscsi1')
        self.conf.set_override('target_prefix', 'iqn.2024-01.org.example:',
                               group='iscsi1')
        data = self.connect()['data']
        self.assertEqual('[fd00::10]:3261', data['target_portal'])
        self.assertEqual('iqn.2024-01.org.example:volume-' + VOLUME['id'],
                         data['target_iqn'])
        self.assertIsNotNone(self.tgtd.target(data['target_iqn']))

    def test_upper_case_prefix_is_refused(self):
        self.assertRaises(ValueError, self.conf.set_override,
                          'target_prefix', 'iqn.2024-01.Org.Example:',
                          group='iscsi1')

    def test_without_chap(self):
        self.conf.set_override('use_chap_auth', False, group='iscsi1')
        accounts = dict(self.tgtd.accounts)
        volume = dict(VOLUME, id='nochap')
        volume.update(self.driver.create_volume(volume))
        self.assertNotIn('provider_auth', volume)
        self.assertIsNone(self.driver._spare(volume))
        data = self.connect(volume=volume)['data']
        self.assertNotIn('auth_method', data)
        target = self.tgtd.target(PREFIX + 'volume-nochap')
        self.assertEqual(([], [I1]), (target['accounts'], target['acl']))
        self.assertEqual(accounts, self.tgtd.accounts)

    def test_capabilities(self):
        caps = self.driver.get_capabilities()
        self.assertEqual(('iSCSI', True, 'ISCSIDriver'),
                         (caps['storage_protocol'], caps['multiattach'],
                          caps['driver']))

    # -- the export follows the connections --------------------------------
    def test_connect_exports_to_the_initiator_with_chap(self):
        self.connect()
        target = self.tgtd.target()
        user, secret = self.account()
        self.assertEqual({1: (self.volume['provider_location'], False)},
                         target['luns'])
        self.assertEqual([user], target['accounts'])
        self.assertEqual({user: secret}, self.tgtd.accounts)
        self.assertEqual([I1], target['acl'])
        # The account is bound before any initiator is.
        ops = self.tgtd.ops()
        self.assertLess(ops.index(('bind', 'account')),
                        ops.index(('bind', 'target')))

    # -- the attach path: one call to tgtd, no show of every target ------
    def tid(self, iqn=IQN):
        return [t for t, v in self.tgtd.targets.items()
                if v['iqn'] == iqn][0]

    def test_a_connect_pays_one_call_and_no_show(self):
        spare = self.driver._spare(self.volume)
        start = len(self.tgtd.calls)
        data = self.connect()['data']
        # The spare account is the connection's now; the initiator is
        # all the connect binds.
        self.assertEqual(spare, [data['auth_username'],
                                 data['auth_password']])
        self.assertEqual([('bind', 'target')], self.tgtd.ops(start))
        self.assertIsNone(self.driver._spare(self.volume))
        self.assert_exported_to([I1])
        # The export pass makes the next spare, bound after the first.
        self.driver.ensure_exports(lambda **_: {})
        spare2 = self.driver._spare(self.volume)
        self.assertNotEqual(spare[0], spare2[0])
        self.assertEqual([spare[0], spare2[0]],
                         self.tgtd.target()['accounts'])
        # The next host claims it, in one call too.
        start = len(self.tgtd.calls)
        other = self.connect(H2)['data']
        self.assertEqual(spare2[0], other['auth_username'])
        self.assertEqual([('bind', 'target')], self.tgtd.ops(start))
        # The same host again (another attachment there): no call.
        start = len(self.tgtd.calls)
        self.assertEqual(other, self.connect(H2)['data'])
        self.assertEqual([], self.tgtd.ops(start))
        self.assert_exported_to([I1, I2])

    def test_without_a_spare_a_connect_makes_its_account(self):
        self.connect()
        start = len(self.tgtd.calls)
        data = self.connect(H2)['data']
        self.assertEqual([('new', 'account'), ('bind', 'account'),
                          ('bind', 'target')], self.tgtd.ops(start))
        self.assertIn(data['auth_username'], self.tgtd.target()['accounts'])
        self.assert_exported_to([I1, I2])

    def test_a_read_only_first_connect_sets_the_lun_first(self):
        start = len(self.tgtd.calls)
        self.connect(mode='ro')
        self.assertEqual([('update', 'logicalunit'), ('bind', 'target')],
                         self.tgtd.ops(start))
        self.assertTrue(self.lun_readonly())

    def test_a_restarted_tgtd_is_read_before_a_connect(self):
        tid = self.tid()
        self.tgtd.restart()
        # Another target took the volume's former id meanwhile.
        self.tgtd.targets[tid] = {'iqn': 'iqn.other:a', 'luns': {},
                                  'accounts': [], 'acl': [],
                                  'sessions': []}
        start = len(self.tgtd.calls)
        self.connect()
        self.assertEqual(('show', 'target'), self.tgtd.ops(start)[0])
        self.assertEqual([], self.tgtd.targets[tid]['acl'])
        self.assertNotEqual(tid, self.tid())
        self.assert_exported_to([I1])
        # Known again: the next connect reads nothing.
        start = len(self.tgtd.calls)
        self.connect(H2)
        self.assertNotIn(('show', 'target'), self.tgtd.ops(start))
        self.assert_exported_to([I1, I2])

    def test_a_change_that_died_leaves_tgtd_to_be_read(self):
        # What the driver knows of the target is removed before a change
        # and written after it: a process that died between has left
        # none, and the next connect reads tgtd.
        self.tgtd.fail_at = len(self.tgtd.calls) + 1
        self.assertRaises(Died, self.connect)
        self.tgtd.fail_at = None
        self.assertFalse(os.path.exists(os.path.join(
            self.driver._records_dir(self.volume), iscsi.TARGET_FILE)))
        start = len(self.tgtd.calls)
        self.connect()
        self.assertEqual([('show', 'target'), ('bind', 'target')],
                         self.tgtd.ops(start))
        self.assert_exported_to([I1])

    def test_a_spare_claimed_by_a_record_is_no_spare(self):
        # A claim that died after the host's record was written, before
        # the spare's file went: the account is that connection's.
        spare = self.driver._spare(self.volume)
        data = self.connect()['data']
        self.driver._write_file(os.path.join(
            self.driver._records_dir(self.volume), iscsi.SPARE_FILE),
            {'chap': spare})
        self.assertIsNone(self.driver._spare(self.volume))
        other = self.connect(H2)['data']
        self.assertNotIn(other['auth_username'], (spare[0],
                                                  data['auth_username']))
        # h1's connection ends: its account (the former spare) is
        # deleted, never bound again.
        self.driver.terminate_connection(self.volume, H1)
        self.assertNotIn(spare[0], self.tgtd.accounts)
        self.driver.ensure_exports(lambda **_: {})
        self.assertNotIn(spare[0], self.tgtd.target()['accounts'])
        self.assert_exported_to([I2])

    def assert_ready(self, volume, iqn):
        """``volume``'s target ready for a first connection: LUN 1 on its
        file, its spare account bound, its ACL empty."""
        target = self.tgtd.target(iqn)
        spare = self.driver._spare(volume)
        self.assertEqual(([], [spare[0]], volume['provider_location']),
                         (target['acl'], target['accounts'],
                          target['luns'][1][0]))
        self.assertEqual(spare[1], self.tgtd.accounts[spare[0]])

    def test_create_dies_at_each_step(self):
        volume = dict(VOLUME, id='fresh',
                      provider_location=os.path.join(
                          self.driver._dir(), 'volume-fresh'))
        iqn = PREFIX + 'volume-fresh'

        def after(step):
            # The export pass makes it ready.
            self.driver.ensure_exports(lambda **_: {})
            self.assert_ready(volume, iqn)
            start = len(self.tgtd.calls)
            self.driver.initialize_connection(volume, dict(H1, mode='rw'))
            self.assertEqual([('bind', 'target')], self.tgtd.ops(start))
            self.driver.delete_volume(volume)
            self.assertIsNone(self.tgtd.target(iqn))
            self.assertEqual([self.driver._spare(self.volume)[0]],
                             list(self.tgtd.accounts))
        steps = self.die_at_each_step(
            lambda: self.driver.create_volume(volume), after)
        self.assertEqual(5, steps)
        self.assert_ready(volume, iqn)

    def test_the_next_spare_dies_at_each_step(self):
        # The export pass making the next spare after a connection
        # claimed the first, its process dying before each call: no
        # account tgtd has that a file does not name, no initiator but
        # the connected host's; the next pass makes it.
        self.connect()
        self.driver.ensure_exports(lambda **_: {})       # the sentinel
        first = self.account()[0]
        self.driver.terminate_connection(self.volume, H1)
        self.connect()

        def after(step):
            self.assert_exported_to([I1])
            self.driver.ensure_exports(lambda **_: {})
            spare = self.driver._spare(self.volume)
            self.assertEqual([self.account()[0], spare[0]],
                             self.tgtd.target()['accounts'], step)
            self.assert_exported_to([I1])
            self.assertNotIn(first, self.tgtd.accounts)
            # The next host claims it in one call; it goes again.
            start = len(self.tgtd.calls)
            self.connect(H2)
            self.assertEqual([('bind', 'target')], self.tgtd.ops(start))
            self.driver.terminate_connection(self.volume, H2)
        steps = self.die_at_each_step(
            lambda: self.driver.ensure_exports(lambda **_: {}), after)
        # A show of every target, the account, its binding; then through.
        self.assertEqual(4, steps)

    def test_connect_needs_an_initiator_name(self):
        del self.tgtd.calls[:]
        for connector in ({'host': 'h1'}, {'host': 'h1', 'initiator': 'ALL'},
                          {'host': 'h1', 'initiator': '10.0.0.1'}):
            self.assertRaises(exception.VolumeBackendAPIException,
                              self.connect, connector)
        self.assertEqual([], self.tgtd.calls)

    def test_connect_a_missing_file(self):
        os.unlink(self.volume['provider_location'])
        self.assertRaises(exception.VolumeBackendAPIException, self.connect)
        self.assertEqual([], self.tgtd.initiators())

    def test_connections_come_from_tgtd(self):
        self.assertEqual({}, self.driver.connections(self.volume))
        self.connect()
        self.connect()
        self.connect(H2, mode='ro')
        conns = self.driver.connections(self.volume)
        self.assertEqual(['h1', 'h2'], sorted(conns))
        self.assertEqual(('rw', 2, I1, dict(H1, mode='rw')),
                         (conns['h1']['mode'], conns['h1']['initialized'],
                          conns['h1']['initiator'], conns['h1']['connector']))
        self.assertEqual('ro', conns['h2']['mode'])
        # The ACL decides: an initiator unbound behind the driver's back is
        # no connection, one bound by hand is shown by its name.
        tid = self.tgtd.target()['acl']
        tid.remove(I2)
        tid.append('iqn.by-hand:x')
        self.assertEqual(['h1', 'iqn.by-hand:x'],
                         sorted(self.driver.connections(self.volume)))

    def test_disconnect_one_host_of_two(self):
        self.connect()
        self.connect(H2)
        self.tgtd.target()['sessions'] = [(1, 0, I1), (2, 0, I2)]
        self.driver.terminate_connection(self.volume, H1)
        target = self.tgtd.target()
        self.assertEqual([I2], target['acl'])
        # The disconnected host's session is cut, the other one stays.
        self.assertEqual([(2, 0, I2)], target['sessions'])
        self.assertEqual(['h2'], list(self.driver.connections(self.volume)))
        self.driver.terminate_connection(self.volume, H1)   # again: fine
        self.assertEqual([I2], self.tgtd.target()['acl'])

    # -- each host connection its own CHAP account ------------------------
    def test_each_connection_has_an_account_of_its_own(self):
        first = self.connect()['data']
        # A second attachment on h1: the same connection, the same account
        # (the sessions of the first log in again with it).
        again = self.connect(mode='ro')['data']
        other = self.connect(H2)['data']
        h1 = (first['auth_username'], first['auth_password'])
        h2 = (other['auth_username'], other['auth_password'])
        self.assertEqual(h1, (again['auth_username'],
                              again['auth_password']))
        self.assertEqual(h1, self.account('h1'))
        self.assertNotEqual(h1[0], h2[0])
        self.assertNotEqual(h1[1], h2[1])
        self.assertEqual(dict([h1, h2]), self.tgtd.accounts)
        self.assertEqual(sorted([h1[0], h2[0]]),
                         sorted(self.tgtd.target()['accounts']))
        # h1 disconnects: its account is gone from tgtd, h2's stays.
        self.driver.terminate_connection(self.volume, H1)
        self.assertEqual(dict([h2]), self.tgtd.accounts)
        self.assertEqual([h2[0]], self.tgtd.target()['accounts'])
        # h1 connects again: an account never seen before.
        new = self.connect()['data']
        self.assertNotIn(new['auth_username'], (h1[0], h2[0]))
        self.assertNotIn(new['auth_password'], (h1[1], h2[1]))
        self.assertNotIn(h1[0], self.tgtd.accounts)
        # The records hold the secrets: the owner's alone may read them.
        path = self.driver._record_file(self.volume, 'h1')
        self.assertEqual(0o600, os.stat(path).st_mode & 0o777)

    def test_a_shared_initiator_name_is_flagged_and_fenced_by_chap(self):
        log = self.useFixture(fixtures.FakeLogger())
        twin = {'host': 'h2', 'initiator': I1}
        self.connect()
        stale = self.account('h1')
        self.tgtd.target()['sessions'] = [(1, 0, I1)]
        # h1 is fenced and its connection ended without it; its guest
        # runs on, its QEMU holding h1's account.
        self.driver.terminate_connection(self.volume, H1)
        self.assertEqual([], self.tgtd.initiators())
        # h2, with the same initiator name, connects: no other host holds
        # that name now.
        data = self.connect(twin)['data']
        self.assertNotIn('also use', log.output)
        # The ACL admits the name again, but h1's account is gone: tgtd
        # has no account with its user or its secret.
        self.assertEqual([I1], self.tgtd.initiators())
        self.assertEqual({data['auth_username']: data['auth_password']},
                         self.tgtd.accounts)
        self.assertNotIn(stale[0], self.tgtd.accounts)
        self.assertNotIn(stale[1], self.tgtd.accounts.values())
        # The volume (multiattach) returns to h1 while h2 holds it, and h1
        # connects another volume: flagged each time, each connection
        # with its own account.
        back = self.connect()['data']
        self.assertIn('Host h1 connects volume %s with the initiator name '
                      '%s, which host(s) h2 also use on backend iscsi1'
                      % (VOLUME['id'], I1), log.output)
        self.assertNotIn(back['auth_username'],
                         (stale[0], data['auth_username']))
        volume2 = dict(VOLUME, id='volume-2')
        volume2.update(self.driver.create_volume(volume2))
        self.connect(volume=volume2)
        self.assertIn('Host h1 connects volume volume-2', log.output)
        # h1 disconnects again: every session of the name is cut (whose
        # is whose cannot be told; h2's log in again with h2's account),
        # the name stays bound for h2, h1's account goes.
        self.tgtd.target()['sessions'] = [(1, 0, I1), (2, 0, I1)]
        self.driver.terminate_connection(self.volume, H1)
        target = self.tgtd.target()
        self.assertEqual(([I1], [], [data['auth_username']]),
                         (target['acl'], target['sessions'],
                          target['accounts']))
        self.assertNotIn(back['auth_username'], self.tgtd.accounts)
        self.assertEqual(['h2'], list(self.driver.connections(self.volume)))

    def test_a_shared_initiator_name_without_chap_is_refused(self):
        self.conf.set_override('use_chap_auth', False, group='iscsi1')
        self.connect()
        twin = {'host': 'h2', 'initiator': I1}
        error = self.assertRaises(exception.VolumeBackendAPIException,
                                  self.connect, twin)
        self.assertIn('host h2 connects volume %s with the initiator name '
                      '%s, which host(s) h1 also use on backend iscsi1: '
                      'refused' % (VOLUME['id'], I1), str(error))
        self.assertEqual(['h1'], list(self.driver.connections(self.volume)))
        # Once h1 is gone, h2 may.
        self.driver.terminate_connection(self.volume, H1)
        self.connect(twin)
        self.assertEqual(['h2'], list(self.driver.connections(self.volume)))

    def test_a_connection_made_with_the_volumes_own_account(self):
        # A volume created by an earlier release has an account of its own
        # (provider_auth), which its hosts connected then got, and their
        # records have no account.
        old = ('olduser0000000000000', 'oldsecret0000000')
        self.volume['provider_auth'] = 'CHAP %s %s' % old
        self.connect()
        record = self.driver._records(self.volume)['h1']
        self.tgtd.accounts.clear()
        self.tgtd.target()['accounts'][:] = [old[0]]
        self.tgtd.accounts[old[0]] = old[1]
        del record['chap']
        self.driver._write_record(self.volume, 'h1', record)
        # h1 connects again (another attachment there): the volume's.
        data = self.connect()['data']
        self.assertEqual(old, (data['auth_username'], data['auth_password']))
        # h2 connects: an account of its own.
        other = self.connect(H2)['data']
        self.assertNotEqual(old[0], other['auth_username'])
        self.assertEqual(sorted([old[0], other['auth_username']]),
                         sorted(self.tgtd.target()['accounts']))
        # h1 disconnects: the volume's account is deleted, never bound
        # again.
        self.driver.terminate_connection(self.volume, H1)
        self.assertEqual([other['auth_username']],
                         list(self.tgtd.accounts))
        new = self.connect()['data']
        self.assertNotEqual(old[0], new['auth_username'])
        self.assertNotIn(old[0], self.tgtd.accounts)
        self.assertNotIn(old[0], self.tgtd.target()['accounts'])

    def test_an_ended_connections_account_never_returns(self):
        # A disconnect of h1 (its name shared with h2) that dies at each
        # step, then h2 and h1 connect again before the disconnect is
        # asked again; then it is.
        twin = {'host': 'h2', 'initiator': I1}
        self.connect(twin)
        self.connect()
        before = []

        def action():
            before.append(self.account('h1')[0])
            self.driver.terminate_connection(self.volume, H1)

        def after(step):
            old = before[-1]
            records = self.driver._records(self.volume)
            ending = 'h1' not in records or records['h1'].get('closing')
            # h2 connects again (another attachment there): the ending
            # connection's account is not bound again, but deleted.
            self.connect(twin)
            if ending:
                self.assertNotIn(old, self.tgtd.accounts, step)
            self.connect()
            if ending:
                self.assertNotEqual(old, self.account('h1')[0], step)
                self.assertNotIn(old, self.tgtd.accounts, step)
            self.assert_exported_to([I1])
            self.driver.terminate_connection(self.volume, H1)
            self.assertNotIn(old, self.tgtd.accounts, step)
            self.assertEqual([self.account('h2')[0]],
                             list(self.tgtd.accounts), step)
            self.assert_exported_to([I1])
            self.connect()
        steps = self.die_at_each_step(action, after)
        self.assertGreaterEqual(steps, 3)

    def test_the_last_disconnect_leaves_the_target_to_no_one(self):
        self.connect()
        start = len(self.tgtd.calls)
        self.driver.terminate_connection(self.volume, H1)
        # The initiator unbound, the connection's account (the spare it
        # claimed) deleted; the target and its LUN stay for the next
        # connection, admitting no one.
        self.assertEqual([('show', 'target'), ('unbind', 'target'),
                          ('unbind', 'account'), ('delete', 'account')],
                         self.tgtd.ops(start))
        target = self.tgtd.target()
        self.assertEqual(([], [], self.volume['provider_location']),
                         (target['acl'], target['accounts'],
                          target['luns'][1][0]))
        self.assertEqual({}, self.tgtd.accounts)
        self.assertEqual({}, self.driver.connections(self.volume))
        self.assertEqual([iscsi.TARGET_FILE], os.listdir(
            self.driver._records_dir(self.volume)))
        self.driver.terminate_connection(self.volume, H1)   # again: fine
        # Connecting again: an account of its own, the initiator bound.
        data = self.connect()['data']
        self.assertEqual([I1], self.tgtd.target()['acl'])
        self.assertEqual([data['auth_username']],
                         self.tgtd.target()['accounts'])

    def test_an_empty_connector_disconnects_every_host(self):
        self.connect()
        self.connect(H2)
        self.driver.terminate_connection(self.volume, {})
        self.assertIsNone(self.tgtd.target())
        self.assertEqual({}, self.driver.connections(self.volume))

    def test_disconnect_by_host_alone(self):
        # The connector stored with the attachment may lack the initiator:
        # the record names it.
        self.connect()
        self.connect(H2)
        self.driver.terminate_connection(self.volume, {'host': 'h1'})
        self.assertEqual([I2], self.tgtd.target()['acl'])

    def test_two_hosts_with_one_initiator_name(self):
        self.connect()
        self.connect({'host': 'h3', 'initiator': I1})
        self.driver.terminate_connection(self.volume, H1)
        # h3 still uses it.
        self.assertEqual([I1], self.tgtd.target()['acl'])
        self.assertEqual(['h3'], list(self.driver.connections(self.volume)))
        self.driver.terminate_connection(self.volume,
                                         {'host': 'h3', 'initiator': I1})
        self.assertEqual([], self.tgtd.initiators())

    def test_a_host_whose_initiator_name_changed(self):
        self.connect()
        self.connect({'host': 'h1', 'initiator': I2})
        self.assertEqual([I2], self.tgtd.target()['acl'])

    def test_an_address_acl_is_removed(self):
        # Bound by hand, behind the driver: the export pass's sweep
        # removes it, and so does a connect that reads tgtd.
        self.connect()
        self.tgtd.target()['acl'].append('ALL')
        self.driver.ensure_exports(lambda **_: {})
        self.driver.ensure_exports(
            lambda **_: {VOLUME['id']: (self.volume, [H1])},
            self.stalled(1))
        self.assertEqual([I1], self.tgtd.target()['acl'])
        self.tgtd.target()['acl'].append('ALL')
        os.unlink(os.path.join(self.driver._records_dir(self.volume),
                               iscsi.TARGET_FILE))
        self.connect(H2)
        self.assertEqual([I1, I2], self.tgtd.target()['acl'])

    def test_connector_without_host_is_keyed_by_initiator(self):
        self.driver.initialize_connection(self.volume, {'initiator': I1})
        self.assertEqual([I1], list(self.driver.connections(self.volume)))
        self.driver.terminate_connection(self.volume, {'initiator': I1})
        self.assertEqual([], self.tgtd.initiators())

    # -- read-only -----------------------------------------------------------
    def lun_readonly(self):
        return self.tgtd.target()['luns'][1][1]

    def test_lun_is_read_only_while_every_host_is(self):
        self.connect(mode='ro')
        self.assertTrue(self.lun_readonly())
        self.connect(H2, mode='ro')
        self.assertTrue(self.lun_readonly())
        # A read-write host makes the LUN read-write (before it is bound).
        self.connect({'host': 'h3', 'initiator': 'iqn.x:h3'}, mode='rw')
        self.assertFalse(self.lun_readonly())
        self.driver.terminate_connection(self.volume, {'host': 'h3'})
        self.assertTrue(self.lun_readonly())

    def test_a_host_with_a_rw_attachment_stays_rw(self):
        # Two servers on h1, one rw and one ro: h1 writes until it
        # disconnects, whatever its latest attachment's mode.
        self.connect(mode='rw')
        self.connect(mode='ro')
        self.assertFalse(self.lun_readonly())
        self.assertEqual('ro', self.driver.connections(self.volume)['h1'][
            'mode'])
        self.connect(H2, mode='ro')
        self.assertFalse(self.lun_readonly())
        self.driver.terminate_connection(self.volume, H1)
        self.assertTrue(self.lun_readonly())

    # -- extend, delete ------------------------------------------------------
    def test_extend_adds_the_lun_again(self):
        # tgtd reads the size when the LUN is added.
        del self.tgtd.calls[:]
        self.driver.extend_volume(self.volume, 2)
        self.assertEqual(2, self.driver.volume_size(self.volume))
        self.assertEqual([('delete', 'logicalunit'), ('new', 'logicalunit')],
                         self.tgtd.ops())
        self.connect(mode='ro')
        del self.tgtd.calls[:]
        self.driver.extend_volume(dict(self.volume, size=2), 3)
        self.assertEqual(3 * 1024 ** 3, os.stat(
            self.volume['provider_location']).st_size)
        self.assertEqual([('delete', 'logicalunit'),
                          ('new', 'logicalunit'), ('update', 'logicalunit')],
                         self.tgtd.ops())
        self.assertEqual((self.volume['provider_location'], True),
                         self.tgtd.target()['luns'][1])
        self.assertEqual([I1], self.tgtd.target()['acl'])

    def test_delete_unexports_and_is_idempotent(self):
        self.connect()
        self.connect(H2)
        self.driver.delete_volume(self.volume)
        self.assertIsNone(self.tgtd.target())
        self.assertEqual({}, self.tgtd.accounts)
        self.assertFalse(os.path.exists(self.volume['provider_location']))
        self.assertFalse(os.path.exists(self.driver._records_dir(
            self.volume)))
        self.assertEqual([], os.listdir(self.driver._targets_dir()))
        self.driver.delete_volume(self.volume)

    def test_delete_of_a_never_exported_volume(self):
        del self.tgtd.calls[:]
        self.driver.delete_volume(self.volume)
        self.assertFalse(os.path.exists(self.volume['provider_location']))
        # Its ready target and spare account go, tgtd not read.
        self.assertEqual([('delete', 'target'), ('delete', 'account')],
                         self.tgtd.ops())
        self.assertEqual(({}, {}), (self.tgtd.targets, self.tgtd.accounts))

    # -- tgtd's answers ------------------------------------------------------
    def test_a_busy_tgtd_is_asked_again(self):
        self.useFixture(fixtures.MockPatch('time.sleep'))
        self.tgtd.busy = 2
        self.connect()
        self.assertEqual([I1], self.tgtd.target()['acl'])
        self.tgtd.busy = 3
        self.assertRaises(iscsi.TgtadmError, self.connect, H2)

    def test_tgtd_down_is_said(self):
        self.tgtd.down = True
        error = self.assertRaises(exception.VolumeBackendAPIException,
                                  self.connect)
        self.assertIn('tgtd is not running', str(error))
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.delete_volume, self.volume)
        # The file stays for the delete to be asked again.
        self.assertTrue(os.path.exists(self.volume['provider_location']))

    def test_target_ids_taken_by_others(self):
        iqn = PREFIX + 'volume-v2'
        tid = self.driver._tid_for(iqn)
        self.tgtd.targets[tid] = {'iqn': 'iqn.other:a', 'luns': {},
                                  'accounts': [], 'acl': [], 'sessions': []}
        start = len(self.tgtd.calls)
        volume = dict(VOLUME, id='v2')
        volume.update(self.driver.create_volume(volume))
        # tgtd is read once the id its name hashes to is found taken.
        self.assertEqual([('new', 'target'), ('show', 'target'),
                          ('new', 'target')], self.tgtd.ops(start)[:3])
        self.assertEqual(tid % iscsi.TID_RANGE + 1, self.tid(iqn))
        self.connect(volume=volume)
        self.assertEqual([I1], self.tgtd.initiators(iqn))
        self.assertEqual([], self.tgtd.targets[tid]['acl'])

    def test_root_helper_and_control_port(self):
        self.conf.set_override('root_helper', 'sudo', group='iscsi1')
        self.conf.set_override('tgt_control_port', 7, group='iscsi1')
        self.connect()
        call = processutils.execute.call_args
        self.assertEqual(('tgtadm', '--control-port', '7', '--lld', 'iscsi'),
                         call.args[:5])
        self.assertEqual({'run_as_root': True, 'root_helper': 'sudo'},
                         call.kwargs)

    # -- a process that dies between two tgtadm calls ------------------------
    def die_at_each_step(self, action, after):
        """Run ``action`` with the process dying at its first tgtadm call,
        then ``after(step)``; again dying at the second... until
        ``action`` runs through. Returns the number of steps."""
        for step in range(1, 50):
            self.step_start = len(self.tgtd.calls)
            self.tgtd.fail_at = self.step_start + step
            try:
                action()
            except Died:
                self.tgtd.fail_at = None
                after(step)
                continue
            self.tgtd.fail_at = None
            return step
        self.fail('never ran through')

    def assert_exported_to(self, initiators):
        """No address ACL ever; the initiators bound; when any is, the
        accounts of the connections are bound too (no login without
        CHAP); tgtd has no account a record does not name (one whose
        connection is ending, ``closing``, until its end is asked
        again)."""
        target = self.tgtd.target()
        acl = target['acl'] if target else []
        self.assertEqual(sorted(initiators), sorted(acl))
        if acl:
            self.assertTrue(target['accounts'])
        named = {self.driver._account(self.volume, r)[0] for r in
                 self.driver._records(self.volume).values()}
        named.update((self.driver._spare(self.volume) or [None])[:1])
        self.assertEqual([], [u for u in self.tgtd.accounts
                              if u not in named])

    def test_connect_dies_at_each_step(self):
        self.connect(H2)

        def after(step):
            # Never bound before the rest is there.
            bound = self.tgtd.initiators()
            self.assertIn(sorted(bound), ([I2], [I1, I2]), step)
            self.assert_exported_to(bound)
            # Asked again (the attachment is connected again), it ends
            # exported; disconnected, to h2 alone.
            self.connect()
            self.assert_exported_to([I1, I2])
            self.driver.terminate_connection(self.volume, H1)
            self.assert_exported_to([I2])
        steps = self.die_at_each_step(self.connect, after)
        self.assertGreaterEqual(steps, 2)

    def test_first_connect_dies_at_each_step(self):
        def action():
            self.connect()
            self.driver.terminate_connection(self.volume, H1)

        def after(step):
            self.assertIn(self.tgtd.initiators(), ([], [I1]), step)
            self.assert_exported_to(self.tgtd.initiators())
            # The attachment is deleted: terminate settles it.
            self.driver.terminate_connection(self.volume, H1)
            self.assertEqual([], self.tgtd.initiators(), step)
            self.assertEqual({}, self.tgtd.accounts)
        steps = self.die_at_each_step(action, after)
        self.assertGreaterEqual(steps, 5)

    def test_last_disconnect_dies_at_each_step(self):
        self.connect()
        unbound = []

        def action():
            self.driver.terminate_connection(self.volume, H1)
            self.connect()

        def after(step):
            # Once unbound, never exported again.
            # (the ops before the one that died)
            if ('unbind', 'target') in self.tgtd.ops()[self.step_start:-1]:
                unbound.append(step)
                self.assert_exported_to([])
            self.driver.terminate_connection(self.volume, H1)   # again
            self.assertEqual([], self.tgtd.initiators(), step)
            self.assertEqual({}, self.tgtd.accounts)
            self.connect()
        self.die_at_each_step(action, after)
        self.assertTrue(unbound)

    def test_delete_dies_at_each_step(self):
        self.connect()
        self.connect(H2)

        def action():
            self.driver.delete_volume(self.volume)

        def after(step):
            self.driver.delete_volume(self.volume)   # settling, again
            self.assertIsNone(self.tgtd.target())
            self.assertEqual({}, self.tgtd.accounts)
            self.assertFalse(os.path.exists(
                self.volume['provider_location']))
            self.volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
            self.connect()
            self.connect(H2)
        steps = self.die_at_each_step(action, after)
        self.assertGreaterEqual(steps, 5)

    def test_extend_dies_at_each_step(self):
        self.connect()

        def after(step):
            self.connect()
            self.assertEqual((self.volume['provider_location'], False),
                             self.tgtd.target()['luns'][1])
            self.assert_exported_to([I1])
        self.die_at_each_step(
            lambda: self.driver.extend_volume(self.volume, 2), after)

    # -- ensure_exports: tgtd restarted, leftovers of dead processes ----------
    def test_ensure_exports_after_a_restart(self):
        self.connect()
        self.connect(H2, mode='ro')
        reads = []

        def connected(volume_id=None, detaching=True):
            reads.append(volume_id)
            return {VOLUME['id']: (self.volume, [dict(H1, mode='rw'),
                                                 dict(H2, mode='ro')])}
        # First run: no sentinel yet, everything is ensured (nothing was
        # missing: nothing exported again), each volume read again under
        # its lock.
        self.assertEqual([], self.driver.ensure_exports(connected))
        self.assertEqual([None, VOLUME['id']], reads)
        self.assertIsNotNone(self.tgtd.target(iscsi.sentinel_name(
            PREFIX, 'iscsi1', self.driver._dir())))
        # tgtd still has its targets: not even the database is read.
        self.assertEqual([], self.driver.ensure_exports(connected))
        self.assertEqual(2, len(reads))
        # tgtd restarted: nothing left.
        self.tgtd.restart()
        self.assertEqual([(VOLUME['id'], 'exported')],
                         self.driver.ensure_exports(connected))
        self.assert_exported_to([I1, I2])
        self.assertFalse(self.lun_readonly())
        self.assertEqual(['h1', 'h2'],
                         sorted(self.driver.connections(self.volume)))

    def test_the_export_pass_makes_ready_what_tgtd_lost(self):
        self.driver.ensure_exports(lambda **_: {})       # the sentinel
        self.tgtd.restart()
        self.assertEqual([], self.driver.ensure_exports(lambda **_: {}))
        self.assert_ready(self.volume, IQN)
        start = len(self.tgtd.calls)
        self.connect()
        self.assertEqual([('bind', 'target')], self.tgtd.ops(start))
        # A pass with nothing to make ready reads tgtd once, changes
        # nothing.
        self.driver.ensure_exports(lambda **_: {})
        start = len(self.tgtd.calls)
        self.driver.ensure_exports(lambda **_: {})
        self.assertEqual([('show', 'target')], self.tgtd.ops(start))

    def test_ensure_exports_leaves_a_host_detached_meanwhile(self):
        # The database is read again under the volume's lock, without the
        # attachments being detached: h1's detach began after the first
        # read (its disconnect, waiting for the lock, unbinds nothing:
        # h1 must not be bound behind it).
        reads = []

        def connected(volume_id=None, detaching=True):
            reads.append((volume_id, detaching))
            if volume_id is None:
                return {VOLUME['id']: (self.volume, [H1, H2])}
            return {VOLUME['id']: (self.volume, [H2])}
        self.assertEqual([(VOLUME['id'], 'exported')],
                         self.driver.ensure_exports(connected))
        self.assertEqual([(None, True), (VOLUME['id'], False)], reads)
        self.assert_exported_to([I2])
        self.assertEqual(['h2'], list(self.driver.connections(self.volume)))
        # Every host gone meanwhile: nothing is exported (the target is
        # made again, admitting no one).
        self.tgtd.restart()

        def connected(volume_id=None, detaching=True):
            return {} if volume_id else {VOLUME['id']: (self.volume, [H1])}
        self.assertEqual([], self.driver.ensure_exports(connected))
        self.assertEqual([], self.tgtd.initiators())

    def test_ensure_exports_skips_what_it_cannot_export(self):
        other = dict(VOLUME, id='gone-file',
                     provider_location='/nonexistent/file')
        self.assertEqual([], self.driver.ensure_exports(lambda: {
            'gone-file': (other, [H1]),
            VOLUME['id']: (self.volume, [{'host': 'h9'}])}))
        self.assertEqual([IQN], [t['iqn'] for t in self.tgtd.targets.values()
                                 if 'volume-' in t['iqn']])
        self.assertEqual([], self.tgtd.initiators())

    def stalled(self, seconds=0):
        """A ``stalled_before``: now, plus ``seconds``."""
        return datetime.datetime.utcnow() + datetime.timedelta(
            seconds=seconds)

    def test_leftovers_are_unexported_once_stalled(self):
        # A connection whose process died before the database had it: h1
        # bound, no connected attachment names it.
        self.connect()
        self.connect(H2)
        reads = []

        def connected(volume_id=None, detaching=True):
            reads.append(volume_id)
            return {VOLUME['id']: (self.volume, [H2])}
        self.driver.ensure_exports(connected)            # the sentinel
        # Not stalled yet (a connection may be under way): left.
        self.assertEqual([], self.driver.ensure_exports(
            connected, self.stalled(-60)))
        self.assert_exported_to([I1, I2])
        self.assertEqual([(VOLUME['id'], 'unexported')],
                         self.driver.ensure_exports(connected,
                                                    self.stalled(1)))
        self.assert_exported_to([I2])
        self.assertEqual(['h2'], list(self.driver.connections(self.volume)))
        # Nothing more to do.
        self.assertEqual([], self.driver.ensure_exports(connected,
                                                        self.stalled(1)))

    def test_a_leftover_connection_sharing_a_name_is_ended(self):
        # h1's connection was made but the database never had it (its
        # process died); h2, connected, uses the same initiator name.
        twin = {'host': 'h2', 'initiator': I1}
        self.connect(twin)
        self.connect()
        leftover = self.account('h1')[0]

        def connected(volume_id=None, detaching=True):
            return {VOLUME['id']: (self.volume, [twin])}
        self.driver.ensure_exports(connected)            # the sentinel
        self.assertEqual([], self.driver.ensure_exports(
            connected, self.stalled(-60)))
        self.assertIn(leftover, self.tgtd.accounts)
        self.assertEqual([(VOLUME['id'], 'unexported')],
                         self.driver.ensure_exports(connected,
                                                    self.stalled(1)))
        # The name stays bound for h2; h1's account is gone (the other
        # is the spare the export pass made).
        self.assert_exported_to([I1])
        self.assertEqual(sorted([self.account('h2')[0],
                                 self.driver._spare(self.volume)[0]]),
                         sorted(self.tgtd.accounts))
        self.assertEqual(['h2'], list(self.driver.connections(self.volume)))
        self.assertEqual([], self.driver.ensure_exports(connected,
                                                        self.stalled(1)))

    def test_a_migrated_volume_stays_exported(self):
        # A volume migrated onto this backend keeps its id; its storage
        # (file, target) is named by its name_id, the id of the volume
        # it was migrated into.
        volume = dict(self.volume, id='migrated-volume-id',
                      name_id=VOLUME['id'])
        self.connect(volume=volume)

        def connected(volume_id=None, detaching=True):
            return {volume['id']: (volume, [H1])}
        self.driver.ensure_exports(connected)            # the sentinel
        self.assertEqual([], self.driver.ensure_exports(connected,
                                                        self.stalled(1)))
        self.assert_exported_to([I1])
        # Unneeded once its attachment is gone (named by the target: by
        # its storage).
        self.assertEqual([(VOLUME['id'], 'unexported')],
                         self.driver.ensure_exports(lambda: {},
                                                    self.stalled(1)))
        self.assertEqual([], self.tgtd.initiators())

    def test_a_target_no_attachment_needs_is_unexported(self):
        self.connect()
        leftover = self.account()[0]
        self.tgtd.target()['acl'].append('ALL')
        self.driver.ensure_exports(lambda: {})
        self.assertEqual([(VOLUME['id'], 'unexported')],
                         self.driver.ensure_exports(lambda: {},
                                                    self.stalled(1)))
        # Ready for a first connection again: no ACL, the connection's
        # account gone (the volume row was not read), a spare.
        self.assert_ready(self.volume, IQN)
        self.assertNotIn(leftover, self.tgtd.accounts)
        # Nothing more to do, and the database is not read for it.
        self.assertEqual([], self.driver.ensure_exports(
            lambda: self.fail('read'), self.stalled(1)))

    def test_the_target_of_a_deleted_volume_goes(self):
        # Its delete died after the file went (or the target was made by
        # hand): the sweep removes it and its accounts.
        self.connect()
        os.unlink(self.volume['provider_location'])
        self.driver.ensure_exports(lambda: {})
        self.assertEqual([(VOLUME['id'], 'unexported')],
                         self.driver.ensure_exports(lambda: {},
                                                    self.stalled(1)))
        self.assertIsNone(self.tgtd.target())
        self.assertEqual({}, self.tgtd.accounts)

    def test_no_targets_no_database_read(self):
        self.driver.ensure_exports(lambda: {})
        self.assertEqual([], self.driver.ensure_exports(
            lambda: self.fail('read'), self.stalled(1)))

    def test_a_connection_under_way_is_left(self):
        # Its record is written before its initiator is bound: fresh.
        self.connect()
        self.driver.ensure_exports(lambda: {})
        self.assertEqual([], self.driver.ensure_exports(
            lambda: {}, self.stalled(-30)))
        self.assert_exported_to([I1])

    # -- backends (and deployments) sharing one tgtd --------------------------
    def second_backend(self, name='iscsi2', volumes_dir=None):
        """Another iscsi backend of this tgtd (``name`` in this
        deployment, or with ``volumes_dir`` another deployment's)."""
        conf = self.useFixture(conf_fixture.ConfFixture()).conf
        conf.set_override('enabled_backends', [name], group='volume')
        drivers.register_backend_opts(conf)
        conf.set_override('volume_driver', 'iscsi', group=name)
        drivers.register_backend_opts(conf)
        if volumes_dir:
            conf.set_override('volumes_dir', volumes_dir, group=name)
        return drivers.get_driver(conf, name)

    def assert_exported_alone_to(self, initiators):
        """This volume's target: ``initiators`` bound, with the accounts
        of its connections (other backends' accounts aside)."""
        target = self.tgtd.target()
        self.assertEqual(sorted(initiators), sorted(target['acl']))
        self.assertEqual(
            sorted([self.driver._account(self.volume, r)[0] for r in
                    self.driver._records(self.volume).values()] +
                   (self.driver._spare(self.volume) or [])[:1]),
            sorted(target['accounts']))
        for user in target['accounts']:
            self.assertIn(user, self.tgtd.accounts)

    def test_two_backends_leave_each_others_targets(self):
        # Both with the default prefix and volumes_dir: their targets look
        # alike; the database tells whose a target is.
        other = self.second_backend()
        theirs = dict(VOLUME, id='0c1b3e4a-9f2d-4e6c-8a1b-2d3c4e5f6a7b',
                      host='iscsi2')
        theirs.update(other.create_volume(theirs))
        other.initialize_connection(theirs, dict(H2, mode='rw'))
        self.connect()

        def connected_here(volume_id=None, detaching=True):
            return {VOLUME['id']: (self.volume, [H1])}

        def connected_there(volume_id=None, detaching=True):
            return {theirs['id']: (theirs, [H2])}
        asked = []

        def owned_there(storage_ids):
            asked.append(sorted(storage_ids))
            return {i for i in storage_ids if i == theirs['id']}
        self.assertNotEqual(self.driver._sentinel(), other._sentinel())
        self.driver.ensure_exports(connected_here)       # the sentinels
        other.ensure_exports(connected_there)
        # Well past stalled_after: iscsi2's sweep leaves iscsi1's target.
        self.assertEqual([], other.ensure_exports(
            connected_there, self.stalled(3600), owned=owned_there))
        self.assertEqual([[VOLUME['id']]], asked)
        self.assert_exported_alone_to([I1])
        self.assertEqual([I2], self.tgtd.initiators(
            PREFIX + 'volume-' + theirs['id']))
        # tgtd restarted: each backend exports its own again.
        self.tgtd.restart()
        self.assertEqual([(theirs['id'], 'exported')], other.ensure_exports(
            connected_there, self.stalled(3600), owned=owned_there))
        self.assertIsNone(self.tgtd.target())
        self.assertEqual([(VOLUME['id'], 'exported')],
                         self.driver.ensure_exports(connected_here))
        self.assert_exported_alone_to([I1])
        # A target of iscsi1 whose attachment is gone is iscsi1's to end.
        self.assertEqual([(VOLUME['id'], 'unexported')],
                         self.driver.ensure_exports(
                             lambda **_: {}, self.stalled(3600),
                             owned=lambda ids: set(ids) & {VOLUME['id']}))
        self.assert_ready(self.volume, IQN)
        self.assertEqual([I2], self.tgtd.initiators(
            PREFIX + 'volume-' + theirs['id']))

    def test_two_deployments_on_one_tgtd(self):
        # Another deployment (its own state, hence volumes_dir) with a
        # backend named alike and the same prefix.
        other = self.second_backend(
            'iscsi1', self.useFixture(fixtures.TempDir()).path)
        self.assertNotEqual(self.driver._sentinel(), other._sentinel())
        self.connect()
        self.driver.ensure_exports(lambda **_: {VOLUME['id']: (
            self.volume, [H1])})
        # The other deployment's first pass and sweep: its database has
        # no such volume.
        self.assertEqual([], other.ensure_exports(
            lambda **_: {}, self.stalled(3600), owned=lambda ids: set()))
        self.assert_exported_to([I1])
        self.assertIsNotNone(self.tgtd.target(other._sentinel()))
        self.assertIsNotNone(self.tgtd.target(self.driver._sentinel()))
        # Its sentinel made does not hide a restart from this one.
        self.tgtd.restart()
        other.ensure_exports(lambda **_: {})
        self.assertEqual([(VOLUME['id'], 'exported')],
                         self.driver.ensure_exports(lambda **_: {
                             VOLUME['id']: (self.volume, [H1])}))
        self.assert_exported_to([I1])

    def test_first_start_is_not_taken_for_a_restart(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='nova_lite.volume_service.drivers.iscsi', level='INFO'))
        self.driver.ensure_exports(lambda **_: {})
        self.assertIn('makes its sentinel target', log.output)
        self.assertNotIn('restarted', log.output)
        self.tgtd.restart()
        self.driver.ensure_exports(lambda **_: {})
        self.assertIn('tgtd lost the sentinel target %s (tgtd was '
                      'restarted' % self.driver._sentinel(), log.output)

    def test_forget_a_retired_backend(self):
        self.driver.ensure_exports(lambda **_: {})
        legacy = iscsi.legacy_sentinel_name(PREFIX, 'iscsi1')
        self.tgtd.targets[77] = {'iqn': legacy, 'luns': {}, 'acl': [],
                                 'accounts': [], 'sessions': []}
        self.connect()
        # Refused while tgtd exports a volume of the backend.
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.forget,
                          lambda ids: set(ids) & {VOLUME['id']})
        self.assertIsNotNone(self.tgtd.target(self.driver._sentinel()))
        self.driver.terminate_connection(self.volume, H1)
        # Exported to no host: its target goes with the sentinels.
        self.assertEqual(
            sorted([self.driver._sentinel(), legacy, IQN]),
            sorted(self.driver.forget(lambda ids: set(ids) & {
                VOLUME['id']})))
        self.assertEqual(({}, {}), (self.tgtd.targets, self.tgtd.accounts))
        self.assertFalse(os.path.exists(self.driver._sentinel_mark()))
        # Nothing left: nothing to do.
        self.assertEqual([], self.driver.forget(lambda ids: set()))
