"""``iscsi``: each volume a file-backed LUN of a tgtd target.

A volume is a sparse file, as in the ``file`` backend (``volumes_dir``,
``$state_path/volumes`` by default), exported over iSCSI by ``tgtd``, the
Linux SCSI target daemon (Debian's ``tgt``, Cinder's ``tgtadm`` target
helper), driven with ``tgtadm``::

    [volume]
    enabled_backends = iscsi1

    [iscsi1]
    volume_driver = iscsi
    target_ip_address = 192.0.2.10

Exports follow the attachments; the target is ready before them. Each
volume has its target (IQN ``<target_prefix>volume-<id>``, one target
per volume, ``<id>`` the id naming its storage: ``name_id`` once a
migration gave it another volume's), made with the volume
(``create_volume``) or by the export pass: its LUN 1 (the file; LUN 0 is
tgtd's controller), a spare CHAP account (below) and an empty ACL. A
target whose ACL is empty admits no initiator (tgtd refuses the login).
``initialize_connection`` then binds the connector's initiator name
(``connector['initiator']``, tgtd's ACL by initiator name): one
``tgtadm`` call on the attach path of a read-write attachment (and none
for a host connected already; a first read-only host makes the LUN
read-only first, a host without a spare account ready makes and binds
its own first). ``terminate_connection`` unbinds that host's initiator
(unless another connected host uses the same name), deletes the
connection's account and cuts the sessions of that initiator name: after
the last detach the volume's target is exported to no host, ready for
the next connection. A target is never open to every host, even for a
moment: no address ACL (``ALL``) is ever bound, and one found on a
volume's target is removed. A volume's target goes with the volume
(``delete_volume``), or when its file is gone (the export pass's sweep,
below).

What tgtd holds of the target (its id, LUN, accounts, ACL) is kept, as
the last change left it, in the volume's record directory (``target``,
below) with which tgtd it is of (the device, inode and time of tgtd's
control socket, which a restarted tgtd makes anew): a connect reads that
file, not tgtd (tgtadm 1.0.x shows one target's parameters alone, not
its name, LUNs, ACL or accounts: only a show of every target, O(targets),
says those). Every change to the target removes the file before its
first ``tgtadm`` call and writes it after its last: a process that dies
between leaves none, and the next change reads tgtd (a show of every
target), as it does when tgtd was restarted, when the host's initiator
name changed (its sessions are cut: the file keeps none), and for every
disconnect (the sessions of the host to cut). A change made to tgtd by
hand, behind the driver, is seen by the next change that reads tgtd and
by the export pass's sweep.

CHAP: with ``use_chap_auth`` (the default) each host connection has a
CHAP account of its own, a random user and secret kept in the host's
record (below) and bound to the target. It is made ahead: the volume's
spare account (``spare`` in its record directory), made and bound to the
target when the target is made ready, admits no one while its secret has
never left this node. The first ``initialize_connection`` of a host for
a volume claims it (the host's record names it, then the spare's file
goes; a spare a record names is no spare any more) and returns its
secret; the next spare is made by the export pass (every
``export_check_interval``), and a connection that finds none makes its
own (two more ``tgtadm`` calls). The host's later connections of that
volume (another attachment there, the same one asked again) get the same
one, so the sessions of its other attachments can log in again; its
``terminate_connection`` deletes it. An account is never given again: a
host whose connection ended (its detach, or its fence's free) and that
still runs a session (a fenced host's QEMU, logging in again and again to
write) is refused by the target once the volume is exported again, to
another host or to that one, whatever initiator name it uses. tgtd
requires CHAP of every initiator once a target has an account, so the
initiator name is no longer the only fence: two hosts sharing one are
told apart by their accounts (a second host connecting with an initiator
name that another host's connection on this backend uses is logged as an
error; without ``use_chap_auth``, where the name is all there is, it is
refused).

Volumes created by earlier releases have an account of their own, made
at create and kept in their row (Cinder's ``provider_auth = CHAP <user>
<secret>``). Host connections recorded then (records without an account)
keep logging in with it until they end; the volume's account is deleted
when the last of them does, and never bound again: every new connection
has its own. ``create_volume`` makes no credentials any more.

tgtd 1.0.x keeps a target's accounts as a list it reads up to their
count: unbinding (or deleting) any but the last account bound leaves a
hole it crashes on. An account is unbound after those bound after it
are, which are bound again at once.

``connection_info`` is Cinder's for iSCSI: ``{'driver_volume_type':
'iscsi', 'data': {'target_discovered': False, 'target_portal': 'ip:port',
'target_iqn': ..., 'target_lun': 1, 'volume_id': ..., 'auth_method':
'CHAP', 'auth_username': ..., 'auth_password': ..., 'encrypted': ...,
'access_mode': 'rw'|'ro'}}`` (no ``auth_*`` for a volume without
credentials).

Read-only. tgtd's ``readonly`` is a property of the LUN, not of an
initiator, while a multiattach volume may have a read-only and a
read-write attachment at once. The LUN is made read-only while every host
connected has only read-only attachments (a write then fails at the
target, whatever the host does), and read-write as soon as one host has a
read-write one; each attachment's own mode is its ``access_mode``, which
the compute host enforces (libvirt's ``<readonly/>``, as with Cinder's
drivers). A host that had a read-write attachment counts as read-write
until it disconnects.

Host connections: tgtd's ACL is the truth of which initiators a volume is
exported to (``connections`` reads it with ``tgtadm --op show``). To name
the host of an initiator, and keep the access mode, the count of
connections and the connection's CHAP account, a small JSON record per
connected host is kept in ``<volumes_dir>/targets/volume-<id>/``
(readable by its owner alone: it holds the secret); it is written before
the account and the initiator are bound and removed after they are
unbound (the account deleted), so every bound initiator and account has
one (the spare account has its ``spare`` file, written before the
account is made; ``target`` is the file of what tgtd holds, above). An
initiator bound with no record (bound by hand) is shown under its own
name.

Every change to one volume's target is made under a file lock of that
volume (``<volumes_dir>/targets/``), so the processes of one node that
connect and disconnect hosts of one multiattach volume at once see each
other's changes; the kernel drops the lock of a process that dies.

Every ``tgtadm`` call is idempotent: creating what exists, binding what
is bound, unbinding what is not, deleting what is gone is not an error,
and a busy tgtd is asked again (``num_shell_tries``). In every case
below the ``target`` file was removed before the first call and is not
written again: the next change of the target reads tgtd. What a process
that dies between two calls leaves, and who settles it:

* ``create_volume`` (and the export pass making a target ready): the
  file with no target, a target without its LUN, a spare named in its
  file and not yet made or not yet bound. None of it admits anyone (no
  initiator is bound, the spare's secret never left the node). The
  export pass makes ready every volume file's target not ready (no
  target in tgtd, no ``target`` file of this tgtd, or no spare): the
  spare its file names is made and bound; the first connection
  completes the rest as well.
* ``initialize_connection``: a record (with its account: the spare it
  claimed, or a new one) and no account or initiator bound, the spare's
  file left beside a record that names it (no spare any more: the next
  claim sees it and removes the file), or a bound initiator and account
  the database does not know of (the attachment was never connected,
  and the host never got the CHAP secret). The next connection of the
  volume re-ensures the whole target (LUN, the accounts of the recorded
  connections and the spare, ACL, read-only flag); block storage's
  settling ends a connection no connected attachment needs once its
  host's record (rewritten at each connection) is older than
  ``[recovery] stalled_after`` (its account deleted, its initiator
  unbound unless a needed connection uses the name); the target stays,
  ready.
* ``terminate_connection``: it first marks the host's record as ending
  (``closing``): from then on that account is never bound again (the
  next change to the target deletes it; a new connection of the host
  gets a new one). Then the initiator unbound but the account left, the
  account deleted but the sessions not cut (they log in again only
  through the ACL and CHAP as they are), or the record left. The
  attachment is unchanged
  (``volume/attachment_api.py`` deletes it after), so the detach is asked
  again and finishes.
* ``delete_volume``: an unexported target, an account or the file left
  (the file goes last, under the volume's lock: the export pass makes
  no target ready for a file being deleted); the volume stays
  ``deleting`` and block storage's settling deletes it again. A target
  whose file is gone (its delete died after) is removed by the sweep.
* ``extend_volume``: a target whose LUN was removed and not yet added
  again; the next connection (or the export pass) adds it.

tgtd keeps its targets in memory only (this driver writes no
``/etc/tgt`` files): a restarted tgtd has none. The database is the truth
of what must be exported: ``ensure_exports``, called by block storage's
export check (every ``export_check_interval`` seconds, and at start) and
its periodic settling (``[recovery] settle_interval``) in each volume
service of the backend (``nova_lite.volume_service.periodic``), several
of them at once (each volume's changes are made under its lock), sees that
tgtd lost its targets (the backend's sentinel target, named with the
backend and a digest of its ``volumes_dir``: one per backend and
deployment, is gone; a mark in ``targets/`` tells a first start from a
lost sentinel) and exports again every volume with connected attachments
to their
hosts' initiators, with the accounts their records hold (a connection
made meanwhile re-creates its own target; a host whose detach has begun
is left to its disconnect; a connected attachment whose host has no
record, its connection ended by a detach that was then undone, gets a
new account: the host connects again to log in); it makes ready the
targets of the volume files in ``volumes_dir`` whose target is not
(lost with tgtd, left by a death above, a spare claimed, made by an
earlier release; only those the database says are this backend's,
``owned``: backends may share a ``volumes_dir``); and it ends the
leftovers of dead processes (above), of the targets whose volume the
database says is this backend's only (``owned``): two backends, or two
deployments, sharing one tgtd and one ``target_prefix`` leave each
other's targets alone. It reads the database only when tgtd lost the
sentinel, has targets named with the prefix that are more than ready
(exported to a host, recording a connection, or whose file is gone), or
has volume files whose target is not ready. ``forget`` removes a
retired backend's sentinel and the ready targets of its volumes
(``nova-lite-manage volume iscsi-forget-backend``).

Every process that enables this backend (the API serving ``/v3``, the
conductor, compute hosts with ``[volume] client = local``) must run on the
node of tgtd: ``tgtadm`` talks to the local daemon. Compute hosts
elsewhere reach the block storage through ``/v3`` (``[volume] client =
cinder``) and connect to ``target_ip_address:target_port``.
"""

import calendar
import collections
import datetime
import hashlib
import json
import os
import re
import secrets
import string
import tempfile
from urllib import parse

from oslo_concurrency import lockutils
from oslo_concurrency import processutils
from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import netutils
import tenacity

from nova_lite import exception
from nova_lite.volume_service.drivers import file as file_driver

LOG = logging.getLogger(__name__)

GiB = file_driver.GiB
NAME_MAX = file_driver.NAME_MAX
#: The volume's LUN (tgtd's LUN 0 is its controller), as Cinder's TgtAdm.
LUN = 1
#: Target ids are chosen in [1, TID_RANGE] (tools that pick the next free
#: one after the largest, as tgt-admin does, still find room).
TID_RANGE = 1 << 20
# What ``tgtadm`` says when asked to make what exists or to remove what
# does not: not an error for an idempotent call.
EXISTS = 'already exists'
GONE = ("can't find", 'does not exist')
# A busy daemon: asked again.
BUSY = ('busy', 'temporarily unavailable')
# No daemon to talk to.
DOWN = ('failed to send request', 'failed to connect', 'Connection refused',
        'Transport endpoint is not connected', 'No such file or directory')
# Initiator names (RFC 3720 3.2.6.3): what the ACL holds besides addresses.
INITIATOR_RE = re.compile(r'^(iqn|eui|naa)\.[^\s,]{1,219}$')
LOCK_PREFIX = 'nova-lite-iscsi-'
SENTINEL = 'nova-lite-exports-'
#: tgtd's control socket is ``<this>.<control port>`` (tgtadm's
#: ``TGT_IPC_SOCKET`` is ``<this>`` when set). A tgtd that starts makes it
#: anew: its inode and time tell one daemon from the next.
TGTD_SOCKET = '/var/run/tgtd/socket'
#: In a volume's record directory (not ``*.json``: not host records):
#: what tgtd holds of its target, as this driver last left it, and the
#: spare CHAP account the next host connection claims.
TARGET_FILE = 'target'
SPARE_FILE = 'spare'

OPTS = [
    cfg.StrOpt(
        'volumes_dir',
        help="""
Directory of the ``iscsi`` backend's volume files (the LUNs), and of its
target records (``targets/``). Unset means ``$state_path/volumes``. Every
process that enables the backend must see the same directory (they all run
on the node of tgtd).
"""),
    cfg.HostAddressOpt(
        'target_ip_address',
        default='127.0.0.1',
        help="""
The address of the iSCSI portal that compute hosts connect to (the
``target_portal`` of ``connection_info``): where tgtd listens, e.g. with
``tgtd --iscsi portal=<address>:<port>``.
"""),
    cfg.PortOpt(
        'target_port',
        default=3260,
        help='The TCP port of the iSCSI portal.'),
    cfg.StrOpt(
        'target_prefix',
        default='iqn.2010-10.org.openstack:',
        regex=r'^(iqn\.[0-9]{4}-[0-9]{2}\.[a-z0-9.:-]+|eui\.|naa\.)$',
        help="""
The prefix of the volumes' target names: a volume's target is
``<target_prefix>volume-<id>``. Lower case (tgtd refuses upper case
IQNs). Backends, and deployments, sharing one tgtd may share a prefix:
each touches only the targets of its own volumes.
"""),
    cfg.BoolOpt(
        'use_chap_auth',
        default=True,
        help="""
Give each host connection of a volume a CHAP account of its own (a random
user and secret, made ahead as the volume's spare and claimed when the host
connects, deleted when its connection ends, never given again) that the
target requires and ``connection_info`` carries: a host whose connection
ended cannot log in again, even when the volume is exported again to its
initiator name. Without it volumes are exported to the initiator names of
their hosts alone, and a host whose initiator name another host's
connection uses is refused.
"""),
    cfg.IntOpt(
        'num_shell_tries',
        default=3,
        min=1,
        help="""
Times a ``tgtadm`` call is made when tgtd says it is busy.
"""),
    cfg.IntOpt(
        'tgt_control_port',
        default=0,
        min=0,
        help="""
tgtd's management channel (``tgtd --control-port N``, ``tgtadm
--control-port N``). 0 means tgtd's default one. Several tgtd daemons can
run on one node, each with its own channel and portal.
"""),
    cfg.IntOpt(
        'export_check_interval',
        default=2,
        min=0,
        help="""
Seconds between two looks (one ``tgtadm --op show``) at whether tgtd
still has this backend's sentinel target, by every process that runs
block storage's settling; when it is gone (tgtd was restarted, the node
rebooted) the connected volumes are exported again at once, whatever
``[recovery] settle_interval`` is. Each look also makes ready the targets
of the volumes whose target is not (a spare CHAP account claimed by a
connection since: the next host's connect then pays one ``tgtadm`` call).
The first look is made when the process starts. 0: only block storage's
settling looks.
"""),
    cfg.StrOpt(
        'root_helper',
        help="""
The command ``tgtadm`` is run through when the process is not root (e.g.
``sudo``); unset means ``tgtadm`` is run as it is.
"""),
]


class TgtadmError(exception.VolumeBackendAPIException):
    """A ``tgtadm`` call failed."""


#: A target as ``tgtadm --op show --mode target`` shows it: ``luns``
#: ``{lun: {'path': ..., 'readonly': bool}}``, ``accounts`` its incoming
#: users, ``acl`` its ACL entries (initiator names and addresses),
#: ``sessions`` ``[(sid, cid, initiator)]``.
Target = collections.namedtuple('Target',
                                'tid iqn luns accounts acl sessions')


def sentinel_name(prefix, backend, volumes_dir):
    """The name of backend ``backend``'s sentinel target: its
    ``target_prefix``, the backend's name and the deployment's (a digest
    of the real path of ``volumes_dir``, which every process of one
    deployment shares and two deployments on one node cannot), so two
    backends, and two deployments, on one tgtd each have their own."""
    deployment = hashlib.sha256(
        os.path.realpath(volumes_dir).encode('utf-8')).hexdigest()[:12]
    return '%s:%s' % (legacy_sentinel_name(prefix, backend), deployment)


def legacy_sentinel_name(prefix, backend):
    """The sentinel's name before it carried the deployment's."""
    slug = re.sub(r'[^a-z0-9.-]', '-', backend.lower())
    return '%s%s%s' % (prefix, SENTINEL, slug)


def is_initiator_name(entry):
    """Whether an ACL entry is an initiator name (not an address)."""
    return bool(INITIATOR_RE.match(entry))


def parse_targets(text):
    """``{iqn: Target}`` of ``tgtadm --lld iscsi --op show --mode target``
    output."""
    targets = {}
    current = section = lun = nexus = initiator = None
    for line in text.splitlines():
        header = re.match(r'^Target (\d+): (\S+)\s*$', line)
        if header:
            current = Target(int(header.group(1)), header.group(2), {}, [],
                             [], [])
            targets[current.iqn] = current
            section = lun = nexus = None
            continue
        stripped = line.strip()
        if current is None or not stripped:
            continue
        if len(line) - len(line.lstrip()) <= 4:
            section = stripped.rstrip(':')
            continue
        if section == 'I_T nexus information':
            match = re.match(r'^I_T nexus: (\d+)', stripped)
            if match:
                nexus, initiator = int(match.group(1)), None
            match = re.match(r'^Initiator: (\S+)', stripped)
            if match:
                initiator = match.group(1)
            match = re.match(r'^Connection: (\d+)', stripped)
            if match and nexus is not None:
                current.sessions.append(
                    (nexus, int(match.group(1)), initiator))
        elif section == 'LUN information':
            match = re.match(r'^LUN: (\d+)$', stripped)
            if match:
                lun = int(match.group(1))
                current.luns[lun] = {'path': None, 'readonly': False}
            elif lun is not None:
                key, _sep, value = stripped.partition(': ')
                if key == 'Backing store path':
                    current.luns[lun]['path'] = value
                elif key == 'Readonly':
                    current.luns[lun]['readonly'] = value == 'Yes'
        elif section == 'Account information':
            if not stripped.endswith('(outgoing)'):
                current.accounts.append(stripped)
        elif section == 'ACL information':
            current.acl.append(stripped)
    return targets


def _is(error, phrases):
    text = '%s %s' % (getattr(error, 'stderr', '') or '',
                      getattr(error, 'stdout', '') or '')
    return any(phrase in text for phrase in phrases)


class Tgtadm(object):
    """``tgtadm --lld iscsi`` through ``processutils.execute``."""

    def __init__(self, control_port=0, tries=3, root_helper=None):
        self.control_port = control_port
        self.tries = tries
        self.root_helper = root_helper

    def __call__(self, *args, ok=()):
        """Run ``tgtadm --lld iscsi *args``; returns its output, or None
        when it failed saying one of ``ok``'s phrases (the state asked
        for is already there)."""
        cmd = ['tgtadm']
        if self.control_port:
            cmd += ['--control-port', str(self.control_port)]
        cmd += ['--lld', 'iscsi'] + [str(arg) for arg in args]
        kwargs = {}
        if self.root_helper:
            kwargs = {'run_as_root': True, 'root_helper': self.root_helper}
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(
                lambda e: isinstance(e, processutils.ProcessExecutionError)
                and _is(e, BUSY)),
            stop=tenacity.stop_after_attempt(self.tries),
            wait=tenacity.wait_exponential(multiplier=0.05, max=1),
            reraise=True)
        try:
            out, _err = retrying(processutils.execute, *cmd, **kwargs)
        except processutils.ProcessExecutionError as e:
            if ok and _is(e, ok):
                return None
            if _is(e, DOWN):
                raise TgtadmError(data='tgtd is not running (tgtadm could '
                                       'not reach it: %s)' % (
                                           (e.stderr or '').strip()))
            raise TgtadmError(data='%s failed: %s' % (
                ' '.join(args[:4]), (e.stderr or e.stdout or '').strip()))
        except OSError as e:
            raise TgtadmError(data='cannot run tgtadm: %s' % e)
        return out

    def targets(self):
        return parse_targets(self('--op', 'show', '--mode', 'target'))

    def instance(self):
        """Which tgtd answers: ``[device, inode, mtime in ns]`` of its
        control socket (a restarted tgtd makes a new one), or None when
        it cannot be told (no socket, not readable)."""
        path = '%s.%d' % (os.environ.get('TGT_IPC_SOCKET') or TGTD_SOCKET,
                          self.control_port)
        try:
            st = os.stat(path)
        except OSError:
            return None
        return [st.st_dev, st.st_ino, st.st_mtime_ns]


class ISCSIDriver(file_driver.FileDriver):
    OPTS = OPTS
    STORAGE_PROTOCOL = 'iSCSI'

    @property
    def tgtadm(self):
        conf = self.backend_conf
        return Tgtadm(conf.tgt_control_port, conf.num_shell_tries,
                      conf.root_helper)

    # -- names ----------------------------------------------------------
    def iqn(self, volume):
        return '%svolume-%s' % (self.backend_conf.target_prefix,
                                self.storage_id(volume))

    def _sentinel(self):
        return sentinel_name(self.backend_conf.target_prefix,
                             self.backend_name, self._dir())

    def _sentinel_mark(self):
        """A file that says this backend made its sentinel on this node
        once: a sentinel missing with the mark there is a tgtd that lost
        its targets, without it the backend's first export pass."""
        slug = re.sub(r'[^a-z0-9.-]', '-', self.backend_name.lower())
        return os.path.join(self._targets_dir(), 'sentinel-%s' % slug)

    def _mark_sentinel(self):
        path = self._sentinel_mark()
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(self._sentinel() + '\n')
        except OSError as e:
            LOG.warning('Cannot write %s: %s (a missing sentinel will be '
                        'taken for a first start)', path, e.strerror)

    def _targets_dir(self):
        return os.path.join(self._dir(), 'targets')

    def _records_dir(self, volume):
        return os.path.join(self._targets_dir(),
                            'volume-%s' % self.storage_id(volume))

    @classmethod
    def _lock_name(cls, volume):
        # Also the name of its in-process semaphore: unlike any other.
        return '%svolume-%s' % (LOCK_PREFIX, cls.storage_id(volume))

    def _lock(self, volume):
        return lockutils.lock(self._lock_name(volume), external=True,
                              lock_path=self._targets_dir())

    @staticmethod
    def _auth(volume):
        """``(user, secret)`` of the volume's own CHAP credentials (its
        ``provider_auth``, made at its create by earlier releases), or
        None."""
        parts = (volume.get('provider_auth') or '').split()
        if len(parts) == 3 and parts[0].upper() == 'CHAP':
            return parts[1], parts[2]
        return None

    @staticmethod
    def _new_account():
        """``[user, secret]`` of a fresh CHAP account: random, the user
        unique to one host connection."""
        alphabet = string.ascii_letters + string.digits
        user = ''.join(secrets.choice(alphabet) for _i in range(24))
        secret = ''.join(secrets.choice(alphabet) for _i in range(16))
        return [user, secret]

    def _account(self, volume, record):
        """``(user, secret)`` a host's connection logs in with (its
        record's own account; the volume's ``provider_auth`` for a
        connection recorded before connections had their own), or
        None."""
        if 'chap' not in record:
            return self._auth(volume)
        return tuple(record['chap']) if record['chap'] else None

    def _open(self, volume):
        """``{key: record}`` of the connections not being ended."""
        return {key: record for key, record in self._records(volume).items()
                if not record.get('closing')}

    def _drop_accounts(self, users, target=None):
        """Delete tgtd's accounts ``users``, each unbound from ``target``
        (the volume's, as just read, when it has one) first. A deleted
        account's secret no longer logs in anywhere."""
        for user in sorted(set(users)):
            if target is not None and user in target.accounts:
                self._unbind_account(target, user)
            self.tgtadm('--op', 'delete', '--mode', 'account', '--user',
                        user, ok=GONE)

    def _unbind_account(self, target, user):
        """Unbind ``user`` from ``target``, leaving tgtd's list of the
        target's accounts without a hole: tgtd 1.0.x lists (and looks up
        at login) the first ``n`` slots of that list, so unbinding (or
        deleting) any but the last bound account makes it crash at its
        next look at the target. The accounts bound after ``user`` are
        unbound from the last, then bound again in their order (their
        hosts' logins wait for the volume's lock meanwhile, or are
        refused once and retried)."""
        index = target.accounts.index(user)
        after = target.accounts[index + 1:]
        for other in reversed(after):
            self.tgtadm('--op', 'unbind', '--mode', 'account', '--tid',
                        target.tid, '--user', other, ok=GONE)
        self.tgtadm('--op', 'unbind', '--mode', 'account', '--tid',
                    target.tid, '--user', user, ok=GONE)
        for other in after:
            self.tgtadm('--op', 'bind', '--mode', 'account', '--tid',
                        target.tid, '--user', other, ok=(EXISTS,))
        target.accounts.remove(user)

    def _cut_sessions(self, target, initiators):
        """End the sessions of ``initiators`` on ``target``: whatever
        logs in again must pass the ACL and CHAP as they are now."""
        if target is None:
            return
        for sid, cid, name in list(target.sessions):
            if name in initiators:
                self.tgtadm('--op', 'delete', '--mode', 'conn', '--tid',
                            target.tid, '--sid', sid, '--cid', cid, ok=GONE)
                target.sessions.remove((sid, cid, name))

    def _check_initiator_unshared(self, volume, key, initiator):
        """Log an error (or, without CHAP, refuse) when another host
        holds a connection of this backend with ``initiator``: tgtd's ACL
        cannot tell the two hosts apart; only each connection's own CHAP
        account keeps one host out of the other's volumes."""
        others = set()
        try:
            names = os.listdir(self._targets_dir())
        except FileNotFoundError:
            names = []
        for name in names:
            if not name.startswith('volume-'):
                continue
            records = file_driver.read_records(
                os.path.join(self._targets_dir(), name), 'key')
            others.update(
                other for other, record in records.items()
                if other not in (key, initiator) and
                record.get('initiator') == initiator and
                not record.get('closing'))
        if not others:
            return
        if not self.backend_conf.use_chap_auth:
            raise exception.VolumeBackendAPIException(
                data='host %s connects volume %s with the initiator name '
                     '%s, which host(s) %s also use on backend %s: '
                     'refused (without use_chap_auth the initiator name '
                     'is all that tells the hosts apart); give each host '
                     'its own initiator name' % (
                         key, volume['id'], initiator,
                         ', '.join(sorted(others)), self.backend_name))
        LOG.error('Host %s connects volume %s with the initiator name %s, '
                  'which host(s) %s also use on backend %s: the target '
                  'ACL cannot tell them apart, only the CHAP account of '
                  'each connection does. Give each host its own initiator '
                  'name (/etc/iscsi/initiatorname.iscsi, or [libvirt] '
                  'iscsi_initiator_name)', key, volume['id'], initiator,
                  ', '.join(sorted(others)), self.backend_name)

    @staticmethod
    def _initiator(connector):
        initiator = (connector or {}).get('initiator')
        if not initiator or not is_initiator_name(initiator):
            raise exception.VolumeBackendAPIException(
                data='the iscsi backend needs the initiator name of the '
                     'host in the connector (connector["initiator"], an '
                     'iqn., eui. or naa. name), not %r' % (initiator,))
        return initiator

    # -- volumes --------------------------------------------------------
    def create_volume(self, volume):
        updates = super().create_volume(volume)
        self.prepare(dict(volume, **updates))
        return updates

    def delete_volume(self, volume):
        with self._lock(volume):
            target, _targets, _seen = self._take_target(volume)
            self._remove_target(volume, target)
            # Under the lock: the export pass prepares no target for a
            # file being deleted.
            file_driver.remove_file(self._path(volume), 'delete')
        try:
            os.rmdir(self._records_dir(volume))
        except OSError:
            pass
        lockutils.remove_external_lock_file(self._lock_name(volume),
                                            lock_path=self._targets_dir())

    def extend_volume(self, volume, new_size):
        super().extend_volume(volume, new_size)
        # tgtd reads a LUN's size when the LUN is added: a LUN of this
        # volume (a leftover export: volumes are extended while
        # available) is added again to show the new size.
        with self._lock(volume):
            target, _targets, seen = self._take_target(volume)
            if target is not None and LUN in target.luns:
                self.tgtadm('--op', 'delete', '--mode', 'logicalunit',
                            '--tid', target.tid, '--lun', LUN, ok=GONE)
                target = self._ensure_target(volume,
                                             target._replace(luns={}))
            self._keep_target(volume, target, seen)

    # -- connections ----------------------------------------------------
    def initialize_connection(self, volume, connector):
        initiator = self._initiator(connector)
        path = self._path(volume)
        if not os.path.exists(path):
            raise exception.VolumeBackendAPIException(
                data='the file %s of volume %s does not exist' % (
                    path, volume['id']))
        mode = self.access_mode(connector)
        key = self.connection_host(connector) or initiator
        with self._lock(volume):
            self._check_initiator_unshared(volume, key, initiator)
            previous = self._records(volume).get(key) or {}
            # The host's initiator name changed: its sessions are cut,
            # which only a show of tgtd's targets lists.
            renamed = previous.get('initiator') not in (None, initiator)
            target, targets, seen = self._take_target(volume,
                                                      sessions=renamed)
            if previous.get('closing') and previous.get('chap'):
                # The end of the host's former connection died before
                # its account was deleted: deleted now, before the record
                # naming it is replaced.
                self._drop_accounts([previous['chap'][0]], target)
            previous, record = self._record_host(volume, key, initiator,
                                                 mode, connector, target)
            target = self._ensure_target(volume, target, targets)
            if previous and previous.get('initiator') not in (None,
                                                              initiator):
                # The host's initiator name changed: the old one goes,
                # unless another host uses it.
                self._unbind(volume, target, previous['initiator'], key)
                self._cut_sessions(target, [previous['initiator']])
            if initiator not in target.acl:
                self.tgtadm('--op', 'bind', '--mode', 'target', '--tid',
                            target.tid, '--initiator-name', initiator,
                            ok=(EXISTS,))
                target.acl.append(initiator)
            self._keep_target(volume, target, seen)
        return self._connection_info(volume, mode,
                                     self._account(volume, record))

    def _connection_info(self, volume, mode, auth):
        data = {
            'target_discovered': False,
            'target_portal': '%s:%s' % (
                netutils.escape_ipv6(self.backend_conf.target_ip_address),
                self.backend_conf.target_port),
            'target_iqn': self.iqn(volume),
            'target_lun': LUN,
            'volume_id': volume['id'],
            'encrypted': bool(volume.get('encrypted')),
            'access_mode': mode,
        }
        if auth:
            data.update(auth_method='CHAP', auth_username=auth[0],
                        auth_password=auth[1])
        return {'driver_volume_type': 'iscsi', 'data': data}

    def terminate_connection(self, volume, connector):
        connector = connector or {}
        key = self.connection_host(connector) or connector.get('initiator')
        with self._lock(volume):
            # A show of every target: the sessions to cut are in it.
            target, _targets, seen = self._take_target(volume,
                                                       sessions=True)
            if not key:
                # Not known which host: every host.
                self._remove_target(volume, target)
                return
            records = self._records(volume)
            record = records.get(key) or {}
            if record and not record.get('closing'):
                # From here on its account is never bound again.
                self._write_record(volume, key, dict(record, closing=True))
            initiators = {i for i in (connector.get('initiator'),
                                      record.get('initiator')) if i}
            for initiator in initiators:
                target = self._unbind(volume, target, initiator, key)
            self._drop_accounts(self._unused_accounts(volume, key, record),
                                target)
            # Every session of the initiator name ends, also when another
            # host shares the name (which session is whose cannot be
            # told): theirs log in again with their own accounts, this
            # host's cannot.
            self._cut_sessions(target, initiators)
            self._forget(volume, key)
            if target is None:
                # Not exported at all: what a disconnect that died left,
                # its account, goes (the target is made again by the
                # next connection or the export pass).
                self._remove_target(volume, target)
            else:
                # Exported to no host, or to the others: the target stays
                # ready for the next connection.
                self._set_readonly(volume, target)
                self._keep_target(volume, target, seen)

    def _unused_accounts(self, volume, key, record):
        """The users of ``key``'s connection (``record``) that no other
        open connection logs in with: its own account; the volume's
        (``provider_auth``) once no connection recorded before
        connections had their own remains."""
        if not record:
            return []
        account = self._account(volume, record)
        if not account:
            return []
        used = {(self._account(volume, r) or ('',))[0]
                for k, r in self._open(volume).items() if k != key}
        return [] if account[0] in used else [account[0]]

    def connections(self, volume):
        target = self.tgtadm.targets().get(self.iqn(volume))
        if target is None:
            return {}
        records = self._records(volume)
        result = {}
        for name in target.acl:
            if not is_initiator_name(name):
                continue
            hosts = [key for key, record in records.items()
                     if record.get('initiator') == name]
            if not hosts:
                result[name] = {'mode': None, 'initiator': name,
                                'connector': {'initiator': name},
                                'initialized': 0}
            for key in hosts:
                record = records[key]
                result[key] = {'mode': record.get('mode'), 'initiator': name,
                               'connector': record.get('connector') or {},
                               'initialized': record.get('initialized', 0)}
        return result

    def get_capabilities(self):
        caps = super().get_capabilities()
        caps['multiattach'] = True
        return caps

    # -- the database's exports -------------------------------------------
    def export_check_interval(self):
        return self.backend_conf.export_check_interval

    def ensure_exports(self, connected, stalled_before=None, owned=None):
        """Make tgtd export what the database says (see the module
        docstring): when the sentinel target of this backend is gone
        (tgtd restarted), export every connected volume again; with
        ``stalled_before``, unexport the initiators of this backend's
        targets that no connected attachment needs and whose host record
        is older (what a process that died in a connection left): only
        of the targets whose storage ``owned`` says is this backend's
        (every target named with ``target_prefix`` without it); and
        makes ready the targets of the volumes whose target is not. Reads
        the database only when tgtd lost the sentinel or has targets
        named with the prefix that are more than ready for a first
        connection. Returns ``[(volume id, 'exported' or
        'unexported')]``."""
        targets = self.tgtadm.targets()
        lost = self._sentinel() not in targets
        if not lost and (stalled_before is None or
                         not self._in_use(self._mine(targets))):
            self._prepare_all(targets, owned)
            return []
        done = []
        wanted = connected()
        if lost:
            if os.path.exists(self._sentinel_mark()):
                LOG.warning('tgtd lost the sentinel target %s (tgtd was '
                            'restarted, or the node): exporting the '
                            'connected volumes of backend %s again',
                            self._sentinel(), self.backend_name)
            else:
                LOG.info('Backend %s makes its sentinel target %s (its '
                         'first export pass on this node) and ensures the '
                         'exports of its connected volumes',
                         self.backend_name, self._sentinel())
            done.extend((volume_id, 'exported') for volume_id
                        in self._export_again(wanted, connected))
            # The sentinel last: a pass that dies before is made again
            # in full.
            self._prepare_all(self.tgtadm.targets(), owned)
            self._create_target(self._sentinel(), self.tgtadm.targets())
            self._mark_sentinel()
        if stalled_before is not None:
            done.extend(self._unexport_leftovers(wanted, stalled_before,
                                                 owned))
        if not lost:
            self._prepare_all(targets, owned)
        return sorted(set(done))

    def _prepare_all(self, targets, owned=None):
        """Make ready the targets of the volumes whose target is not
        (made before this release, lost with tgtd, a spare account
        claimed by a connection, a create whose tgtd was down): of the
        volume files in ``volumes_dir`` whose storage ``owned`` says is
        this backend's (every one without it; backends may share the
        directory)."""
        volumes = self._unprepared(targets)
        if volumes and owned is not None:
            ours = set(owned([v['id'] for v in volumes]))
            volumes = [v for v in volumes if v['id'] in ours]
        for volume in volumes:
            self.prepare(volume)

    def forget(self, owned):
        """Remove the sentinel target of this backend (retired: no longer
        enabled), with the name earlier releases gave it, and its mark,
        and the targets of the volumes ``owned`` says are this backend's
        (ready for a first connection, exported to no host). Refused
        while one of those is exported to a host. Returns the names of
        the targets removed."""
        targets = self.tgtadm.targets()
        mine = self._mine(targets)
        ours = sorted(owned(list(mine)))
        exported = [storage_id for storage_id in ours
                    if [e for e in mine[storage_id].acl
                        if is_initiator_name(e)]]
        if exported:
            raise exception.VolumeBackendAPIException(
                data='tgtd still exports volume storage %s of backend %s: '
                     'detach (or migrate) its volumes first' % (
                         ', '.join(exported), self.backend_name))
        removed = []
        for storage_id in ours:
            # Ready for a first connection that will not come.
            volume = {'id': storage_id}
            with self._lock(volume):
                target, _targets, _seen = self._take_target(volume)
                self._remove_target(volume, target)
            removed.append(self.iqn(volume))
        for iqn in (self._sentinel(), legacy_sentinel_name(
                self.backend_conf.target_prefix, self.backend_name)):
            target = targets.get(iqn)
            if target is None:
                continue
            self.tgtadm('--op', 'delete', '--force', '--mode', 'target',
                        '--tid', target.tid, ok=GONE)
            removed.append(iqn)
        try:
            os.remove(self._sentinel_mark())
        except FileNotFoundError:
            pass
        return removed

    def _mine(self, targets):
        """``{storage id: Target}`` of this backend's volume targets (the
        id in a target's name is the volume's ``name_id`` once a
        migration gave it one)."""
        prefix = self.iqn({'id': ''})
        return {iqn[len(prefix):]: target for iqn, target in targets.items()
                if iqn.startswith(prefix) and len(iqn) > len(prefix)}

    def _in_use(self, mine):
        """Whether a target of ``mine`` (``{storage id: Target}``) is
        more than one ready for a first connection: exported to a host,
        recording a connection, or left by a deleted volume."""
        for storage_id, target in mine.items():
            volume = {'id': storage_id}
            if target.acl or not self._ready(volume, self._records(volume)):
                return True
        return False

    def _initiators(self, connectors):
        """``{initiator: (host key, connector)}`` of ``connectors``."""
        initiators = {}
        for connector in connectors:
            initiator = (connector or {}).get('initiator')
            if initiator and is_initiator_name(initiator):
                key = self.connection_host(connector) or initiator
                initiators[initiator] = (key, connector)
        return initiators

    def _export_again(self, wanted, connected):
        """Export each volume of ``wanted`` to the initiators of its
        attachments that are connected and not detaching, read again
        under the volume's lock; returns the ids of those something was
        missing for.

        The read under the lock is what keeps a detach from being undone:
        a detach marks its attachment as detaching (``detach_time``) in
        the database before it takes the lock to disconnect the host, so
        either this read sees the mark and leaves the host, or the host
        is bound before the detach's ``terminate_connection`` unbinds
        it."""
        exported = []
        for volume_id, (volume, connectors) in wanted.items():
            if (not self._initiators(connectors) or
                    not os.path.exists(self._path(volume))):
                continue
            with self._lock(volume):
                current = connected(volume_id=volume_id, detaching=False)
                if volume_id not in current:
                    continue
                volume, connectors = current[volume_id]
                initiators = self._initiators(connectors)
                if not initiators:
                    continue
                target, targets, seen = self._take_target(volume)
                bound = set(target.acl) if target is not None else set()
                records = self._records(volume)
                for initiator, (key, connector) in initiators.items():
                    if key not in records:
                        self._record_host(volume, key, initiator,
                                          self.access_mode(connector),
                                          connector, target)
                target = self._ensure_target(volume, target, targets)
                added = [i for i in initiators if i not in bound]
                for initiator in added:
                    self.tgtadm('--op', 'bind', '--mode', 'target', '--tid',
                                target.tid, '--initiator-name', initiator,
                                ok=(EXISTS,))
                    target.acl.append(initiator)
                self._keep_target(volume, target, seen)
            if added:
                exported.append(volume_id)
        return exported

    def _unexport_leftovers(self, wanted, stalled_before, owned=None):
        """End the connections no connected attachment of ``wanted``
        needs and whose record (rewritten at each connection) is older
        than ``stalled_before`` (naive UTC): their accounts deleted,
        their initiators unbound (unless an open connection uses them),
        their sessions cut, their records removed; an initiator bound
        with no record (or a missing one) is unbound as well, and a
        target left with none goes. A target is matched to its volume by
        the storage id its name holds (``name_id`` for a migrated
        volume). Returns ``[(volume id, 'unexported')]`` (the id in the
        target's name for a target no connected attachment names). A
        target no connected attachment names is left alone unless
        ``owned`` (when given) says its storage is this backend's: the
        targets of another backend, or of another deployment, named with
        the same prefix are theirs."""
        cutoff = (calendar.timegm(stalled_before.timetuple())
                  if stalled_before != datetime.datetime.max
                  else float('inf'))
        done = []
        by_storage = {self.storage_id(volume): (volume, connectors)
                      for volume, connectors in wanted.values()}
        mine = self._mine(self.tgtadm.targets())
        others = [i for i in mine if i not in by_storage]
        if owned is not None and others:
            theirs = set(others) - set(owned(others))
            mine = {i: t for i, t in mine.items() if i not in theirs}
        for storage_id, target in mine.items():
            volume, connectors = by_storage.get(storage_id) or (
                {'id': storage_id}, [])
            volume_id = volume['id']
            needed = {(c or {}).get('initiator') for c in connectors}
            keys = set(self._initiators(connectors)) | {
                key for key, _c in self._initiators(connectors).values()}
            records = self._records(volume)
            if not [i for i in target.acl if i not in needed] and not [
                    k for k in records if k not in keys] and (
                    connectors or self._ready(volume, records)):
                # Needed, or ready for a first connection.
                continue
            with self._lock(volume):
                target, _targets, seen = self._take_target(volume,
                                                           sessions=True)
                if target is None:
                    continue
                times = self._key_times(volume)
                ended = [k for k, t in times.items()
                         if k not in keys and t < cutoff]
                ages = self._record_times(volume)
                stale = [i for i in target.acl
                         if i not in needed and ages.get(i, 0) < cutoff]
                if not stale and not ended and (
                        connectors or target.acl or any(
                            t >= cutoff for t in ages.values()) or
                        self._ready(volume, self._records(volume))):
                    # Needed, a connection is under way, or ready for
                    # a first connection.
                    self._keep_target(volume, target, seen)
                    continue
                records = self._records(volume)
                for key in ended:
                    LOG.warning('Volume %s had a connection of %s, which no '
                                'connected attachment needs: ended',
                                volume_id, key)
                    record = records[key]
                    self._write_record(volume, key,
                                       dict(record, closing=True))
                    self._drop_accounts(
                        self._unused_accounts(volume, key, record), target)
                    initiator = record.get('initiator')
                    if initiator and initiator not in needed:
                        target = self._unbind(volume, target, initiator,
                                              key)
                    self._cut_sessions(target, [initiator])
                    self._forget(volume, key)
                for entry in stale:
                    LOG.warning('Volume %s was exported to %s, which no '
                                'connected attachment needs: unexported',
                                volume_id, entry)
                    if not is_initiator_name(entry):
                        self.tgtadm('--op', 'unbind', '--mode', 'target',
                                    '--tid', target.tid,
                                    '--initiator-address', entry, ok=GONE)
                        target.acl.remove(entry)
                        continue
                    target = self._unbind(volume, target, entry)
                    self._cut_sessions(target, [entry])
                if not [e for e in target.acl if is_initiator_name(e)] and (
                        not os.path.isfile(self._path(volume))):
                    # The volume's storage is gone (deleted).
                    self._remove_target(volume, target)
                else:
                    # Exported to the hosts that need it, or to none and
                    # ready for a first connection.
                    self._set_readonly(volume, target)
                    self._keep_target(volume, target, seen)
                done.append((volume_id, 'unexported'))
        return done

    def _ready(self, volume, records):
        """Whether a target no connection records is the one ready for a
        first connection: its volume's storage is here."""
        return not records and os.path.isfile(self._path(volume))

    # -- the target -----------------------------------------------------
    def _tid_for(self, iqn):
        digest = hashlib.sha256(iqn.encode('utf-8')).hexdigest()
        return 1 + int(digest[:8], 16) % TID_RANGE

    def _create_target(self, iqn, targets):
        """Make target ``iqn`` (``targets``: tgtd's, as last read) with a
        free target id; returns its Target (as made, or as another process
        made it meanwhile)."""
        if iqn in targets:
            return targets[iqn]
        tid = self._tid_for(iqn)
        for _attempt in range(64):
            used = {t.tid for t in targets.values()}
            while tid in used:
                tid = tid % TID_RANGE + 1
            if self.tgtadm('--op', 'new', '--mode', 'target', '--tid', tid,
                           '--targetname', iqn, ok=(EXISTS,)) is not None:
                return Target(tid, iqn, {}, [], [], [])
            # The id, or the name, is taken: by this target?
            targets = self.tgtadm.targets()
            if iqn in targets:
                return targets[iqn]
        raise TgtadmError(data='no free target id for %s' % iqn)

    def _ensure_target(self, volume, target, targets=None):
        """The volume's target as it must be, whatever part of it exists
        (``target``: tgtd's, or None; ``targets``: all of tgtd's as just
        read, if they were): the target, LUN 1 on the volume's file, the
        CHAP account bound, no address ACL, the read-only flag. Returns
        the Target."""
        iqn = self.iqn(volume)
        if target is None:
            target = self._create_target(
                iqn, targets if targets is not None else
                self.tgtadm.targets())
        path = self._path(volume)
        lun = target.luns.get(LUN)
        if lun is not None and lun['path'] != path:
            self.tgtadm('--op', 'delete', '--mode', 'logicalunit', '--tid',
                        target.tid, '--lun', LUN, ok=GONE)
            lun = None
        if lun is None:
            self.tgtadm('--op', 'new', '--mode', 'logicalunit', '--tid',
                        target.tid, '--lun', LUN, '--backing-store', path,
                        ok=(EXISTS,))
            target.luns[LUN] = {'path': path, 'readonly': False}
        wanted, ending = {}, set()
        spare = self._spare(volume)
        if spare:
            wanted[spare[0]] = spare[1]
        for record in self._records(volume).values():
            account = self._account(volume, record)
            if account and record.get('closing'):
                ending.add(account[0])
            elif account:
                wanted[account[0]] = account[1]
        # The accounts of connections that ended (or are ending) go.
        self._drop_accounts(
            (ending | set(target.accounts)) - set(wanted), target)
        for user, secret in sorted(wanted.items()):
            if user in target.accounts:
                continue
            self.tgtadm('--op', 'new', '--mode', 'account', '--user', user,
                        '--password', secret, ok=(EXISTS,))
            self.tgtadm('--op', 'bind', '--mode', 'account', '--tid',
                        target.tid, '--user', user, ok=(EXISTS,))
            target.accounts.append(user)
        for entry in list(target.acl):
            if not is_initiator_name(entry):
                LOG.warning('Target %s had the address ACL %s: removed (the '
                            'iscsi backend exports to initiator names only)',
                            iqn, entry)
                self.tgtadm('--op', 'unbind', '--mode', 'target', '--tid',
                            target.tid, '--initiator-address', entry,
                            ok=GONE)
                target.acl.remove(entry)
        self._set_readonly(volume, target)
        return target

    def _set_readonly(self, volume, target):
        """LUN 1 read-only while every connected host is read-only."""
        lun = target.luns.get(LUN)
        if lun is None:
            return
        records = self._records(volume).values()
        readonly = bool(records) and not any(r.get('writable', True)
                                             for r in records)
        if lun['readonly'] != readonly:
            self.tgtadm('--op', 'update', '--mode', 'logicalunit', '--tid',
                        target.tid, '--lun', LUN, '--params',
                        'readonly=%d' % readonly)
            lun['readonly'] = readonly

    def _unbind(self, volume, target, initiator, key=None):
        """Unbind ``initiator`` unless the open connection of a host other
        than ``key`` uses it; returns the Target. The callers cut the
        sessions (``_cut_sessions``)."""
        if target is None:
            return None
        users = [k for k, record in self._open(volume).items()
                 if k != key and record.get('initiator') == initiator]
        if users:
            return target
        if initiator in target.acl:
            self.tgtadm('--op', 'unbind', '--mode', 'target', '--tid',
                        target.tid, '--initiator-name', initiator, ok=GONE)
            target.acl.remove(initiator)
        return target

    def _remove_target(self, volume, target):
        """The volume exported to no host: its initiators unbound first
        (should the delete fail, no host can log in), then the target,
        its account and the records."""
        if target is not None:
            for entry in list(target.acl):
                option = ('--initiator-name' if is_initiator_name(entry)
                          else '--initiator-address')
                self.tgtadm('--op', 'unbind', '--mode', 'target', '--tid',
                            target.tid, option, entry, ok=GONE)
            self.tgtadm('--op', 'delete', '--force', '--mode', 'target',
                        '--tid', target.tid, ok=GONE)
        users = set(target.accounts) if target is not None else set()
        users.update((self._spare(volume) or ('',))[:1])
        for record in self._records(volume).values():
            users.update((self._account(volume, record) or ('',))[:1])
        auth = self._auth(volume)
        if auth:
            users.add(auth[0])
        self._drop_accounts(users - {''})
        self._forget(volume, None)

    # -- what the driver knows of the target ---------------------------
    def _target_file(self, volume):
        return os.path.join(self._records_dir(volume), TARGET_FILE)

    def _take_target(self, volume, sessions=False, read=True):
        """Under the volume's lock, before changing its target: ``(the
        Target or None, all of tgtd's targets as read or None, the tgtd
        it is known of)``. The target file (what the last change left,
        and which tgtd) is removed as it is read: until the change is
        done and ``_keep_target`` writes it again, no process takes the
        file for tgtd's state (one that dies meanwhile leaves none, and
        the next change reads tgtd). Without the file, when another
        tgtd answers now (restarted), or with ``sessions`` (the file
        keeps no sessions), tgtd is read: all its targets (tgtadm 1.0.x
        shows one target's parameters alone, not its name, LUNs, ACL or
        accounts); not ``read``: (None, None, the tgtd) instead."""
        seen = self.tgtadm.instance()
        known = self._read_target_file(volume)
        file_driver.remove_file(self._target_file(volume))
        if known is not None and seen is not None and not sessions and (
                known.get('tgtd') == seen and
                known.get('iqn') == self.iqn(volume)):
            try:
                luns = {int(lun): dict(value)
                        for lun, value in known['luns'].items()}
                return Target(known['tid'], known['iqn'], luns,
                              list(known['accounts']), list(known['acl']),
                              []), None, seen
            except (KeyError, TypeError, ValueError, AttributeError):
                pass    # not as this driver writes it: tgtd is read
        if not read:
            return None, None, seen
        targets = self.tgtadm.targets()
        return targets.get(self.iqn(volume)), targets, seen

    def _read_target_file(self, volume):
        try:
            with open(self._target_file(volume)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def _keep_target(self, volume, target, seen):
        """Write what tgtd ``seen`` holds of the volume's target now
        (``target``, as this process left it), once its change is
        done."""
        if target is None or seen is None:
            return
        known = {'tgtd': seen, 'tid': target.tid, 'iqn': target.iqn,
                 'luns': {str(lun): value
                          for lun, value in target.luns.items()},
                 'accounts': list(target.accounts),
                 'acl': list(target.acl)}
        self._write_file(self._target_file(volume), known)

    def _spare(self, volume):
        """``[user, secret]`` of the volume's spare CHAP account, or None.
        A spare a host record names already was claimed (the claim
        died before the spare's file went): not a spare any more."""
        try:
            with open(os.path.join(self._records_dir(volume),
                                   SPARE_FILE)) as f:
                spare = json.load(f)['chap']
        except (OSError, ValueError, KeyError, TypeError):
            return None
        for record in self._records(volume).values():
            if (record.get('chap') or [None])[0] == spare[0]:
                file_driver.remove_file(
                    os.path.join(self._records_dir(volume), SPARE_FILE))
                return None
        return spare

    def _prepare(self, volume, target, targets):
        """The volume's target ready for a first connection (under its
        lock; ``target``/``targets`` as ``_take_target`` read them): the
        target (its ACL admits no one), LUN 1, and with
        ``use_chap_auth`` a spare CHAP account bound (its secret never
        left this node: it admits no one either). Returns the Target."""
        if self.backend_conf.use_chap_auth and self._spare(volume) is None:
            # Named on disk before tgtd has it: whatever a death leaves,
            # the next change to the target binds it or deletes it.
            self._write_file(
                os.path.join(self._records_dir(volume), SPARE_FILE),
                {'chap': self._new_account()})
        if target is None:
            target = self._create_target(
                self.iqn(volume), targets if targets is not None else {})
        return self._ensure_target(volume, target, targets)

    def prepare(self, volume):
        """Make the volume's target ready for its first connection (see
        ``_prepare``); what tgtd cannot do now (down) is left to the
        first connection or the export pass, and logged."""
        try:
            with self._lock(volume):
                if not os.path.exists(self._path(volume)):
                    return
                # Made at the id its name hashes to: tgtd is read only
                # when that is taken (by it, or by another target).
                target, targets, seen = self._take_target(volume,
                                                          read=False)
                target = self._prepare(volume, target, targets)
                self._keep_target(volume, target, seen)
        except exception.VolumeBackendAPIException as e:
            LOG.warning('The target of volume %s is not ready for its '
                        'first connection (%s): made at the first '
                        'connection, or by the export pass',
                        volume['id'], e)

    def _unprepared(self, targets):
        """Volumes (``{'id': storage id}``) of the files in
        ``volumes_dir`` whose target is not ready: not in ``targets``
        (tgtd's, as just read), not known of this tgtd (no target file,
        or one of a tgtd since restarted), or with ``use_chap_auth``
        without a spare account."""
        try:
            names = os.listdir(self._dir())
        except FileNotFoundError:
            return []
        seen = self.tgtadm.instance()
        result = []
        for name in sorted(names):
            if not name.startswith('volume-'):
                continue
            volume = {'id': name[len('volume-'):]}
            known = (self._read_target_file(volume) or {}).get('tgtd')
            spare = os.path.exists(os.path.join(self._records_dir(volume),
                                                SPARE_FILE))
            if (self.iqn(volume) in targets and
                    (seen is None or known == seen) and
                    (spare or not self.backend_conf.use_chap_auth)):
                continue
            if os.path.isfile(os.path.join(self._dir(), name)):
                result.append(volume)
        return result

    # -- the records ----------------------------------------------------
    def _record_file(self, volume, key):
        name = parse.quote(key, safe='') + '.json'
        if len(name) > NAME_MAX:
            name = 'sha256-%s.json' % hashlib.sha256(
                key.encode('utf-8')).hexdigest()
        return os.path.join(self._records_dir(volume), name)

    def _records(self, volume):
        """``{host (or initiator): record}`` of the volume."""
        return file_driver.read_records(self._records_dir(volume), 'key')

    def _key_times(self, volume):
        """``{key: modification time of its record}``."""
        result = {}
        for key in self._records(volume):
            try:
                result[key] = os.stat(
                    self._record_file(volume, key)).st_mtime
            except OSError:
                continue
        return result

    def _record_times(self, volume):
        """``{initiator: latest modification time of its records}``."""
        result = {}
        for key, record in self._records(volume).items():
            try:
                mtime = os.stat(self._record_file(volume, key)).st_mtime
            except OSError:
                continue
            initiator = record.get('initiator')
            result[initiator] = max(result.get(initiator, 0), mtime)
        return result

    def _record_host(self, volume, key, initiator, mode, connector,
                     target=None):
        """Write ``key``'s record (under the volume's lock); returns ``(the
        one it replaces ({} if none), the new one)``. A new connection (no
        open record of the host) gets an account of its own (with
        ``use_chap_auth``): the volume's spare, when ``target`` (its
        target as known) has it bound already, which from then on is
        this connection's (its file goes after the record is written),
        else a new one; a host connected already keeps its account
        (its other attachments' sessions log in with it), and one
        recorded before connections had accounts (no ``chap``) the
        volume's."""
        previous = self._records(volume).get(key) or {}
        if previous.get('closing'):
            previous = {}
        claimed = False
        record = {
            'key': key, 'initiator': initiator, 'mode': mode,
            'connector': dict(connector or {}),
            'initialized': previous.get('initialized', 0) + 1,
            'writable': mode == 'rw' or bool(previous.get('writable')),
        }
        if previous and 'chap' not in previous:
            pass    # recorded before connections had their own account
        elif previous:
            record['chap'] = previous['chap']
        elif not self.backend_conf.use_chap_auth:
            record['chap'] = None
        else:
            spare = self._spare(volume)
            claimed = bool(spare and target is not None and
                           spare[0] in target.accounts)
            record['chap'] = spare if claimed else self._new_account()
        self._write_record(volume, key, record)
        if claimed:
            file_driver.remove_file(
                os.path.join(self._records_dir(volume), SPARE_FILE))
        return previous, record

    def _write_record(self, volume, key, record):
        self._write_file(self._record_file(volume, key), record,
                         'record the connection of %s to volume %s' % (
                             key, volume['id']))

    @staticmethod
    def _write_file(path, content, what=None):
        """Write JSON ``content`` to ``path`` (replacing it whole)."""
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path),
                                       prefix='.record-', suffix='.tmp')
            with os.fdopen(fd, 'w') as f:
                json.dump(content, f, sort_keys=True)
            os.replace(tmp, path)
        except OSError as e:
            raise exception.VolumeBackendAPIException(
                data='cannot %s: %s' % (what or 'write %s' % path,
                                        e.strerror))

    def _forget(self, volume, key):
        """Remove ``key``'s record, or (None) every record."""
        file_driver.remove_records(
            self._records_dir(volume),
            None if key is None else self._record_file(volume, key))
