#!/usr/bin/env python3
"""Many attaches at once: does anything serialise that need not?

Three scenarios, each a burst of attaches sent at the same moment (a
barrier) through the REST API:

``one-host``
    K attaches to K different servers, all on one compute host;
``two-hosts``
    K attaches to K different servers, half on each of two compute hosts
    (K >= 2);
``one-server``
    ``--per-server`` volumes onto one server.

A compute host takes one lock per server (its instance lock), not one for
the host: the K attaches of ``one-host`` should overlap as much as the
host's RPC workers (``[compute] workers``, 8 by default) allow, while the
attaches of ``one-server`` run one after the other by design. Each row
says how its burst compares with one attach at a time: ``vs_serial`` is
the burst's wall time (from the burst to the last attach done) divided by
K times the wall time of a single attach (``one-host`` with K=1, always
run, the first row of each microversion): about 1 when the attaches were
serialised, about 1/K when they ran side by side.

Two paths:

``--path fake`` (the default)
    the production layout of the integration tier
    (``tests/integration/deployment.py``: the API under uWSGI,
    ``nova-lite-conductor``, ``nova-lite-volume``, two
    ``nova-lite-compute`` hosts with the fake virt driver, the ``fake``
    volume backend, RabbitMQ, MariaDB or PostgreSQL). An attach is done
    when its volume is ``in-use`` (polled in the database every
    ``--poll-interval``, not through the API). ``--attach-delay``
    (``[fake_driver] attach_delay``, 0.5 s by default) stands for the
    hypervisor's hot-plug: without it the fake attach is mostly CPU and,
    on a small machine, K attaches take K times one whatever the locks.
``--path real``
    the real-data tier's production layout
    (``tests/integration/realdata/base.py``: the same services, the two
    compute hosts with the libvirt driver under TCG, ``iscsi`` volumes on
    the node's tgtd with CHAP). An attach is done when the guest's agent
    lists the disk by its serial (each guest polled on a thread of its
    own every ``--poll-interval``); ``in-use`` is reported beside it. One
    guest per server: ``one-host`` needs max(K) guests on the first host
    and ``two-hosts`` max(K)/2 more on the second, booted before the
    rounds. Each guest is an ``m1.tiny`` (512 MiB) whose vCPU QEMU
    emulates (TCG) on the machine's cores: K=50 needs 75 guests, 37.5 GiB
    and 75 emulated vCPUs, not something a two-core machine runs while it
    also runs the control plane under test. The default K there is 1,4,8
    (12 guests); a run needing more than ``--max-guests`` (16) is
    refused.

Before the rows of each microversion one attach per host runs, not
timed (the first requests open connections and load code). Each
(scenario, K) runs ``--rounds`` bursts; between them every volume is
detached (and, on the real path, gone from the guest). The volumes are
made once and reused. Per row: ``attaches_per_second`` (the attaches
completed over the bursts' wall times, each from the burst to its last
attach done), ``wall_s`` (the median burst's), the request to done
(``to_in_use_ms``; ``to_guest_ms`` on the real path) and the POST's
answer (``post_ms``) as p50/p99/max over every attach of the rounds
(nearest rank), ``vs_serial``, and ``errors`` by status (a POST answered
otherwise than 202, 200 for 2.100; an attach not done by
``--round-timeout``).

Prints one JSON document on stdout and a table on stderr. Needs what the
integration tier needs (RabbitMQ, MariaDB or PostgreSQL, uWSGI) and, for
``--path real``, what the real-data tier needs (root, libvirtd, tgtd,
the test guest; see doc/source/contributor/integration-tests.rst).
Without it, it says what is missing and exits with status 2::

    .venv/bin/python tools/bench/attach_concurrency.py
    .venv/bin/python tools/bench/attach_concurrency.py --k 1,5 \\
        --per-server 3 --modes 2.101,2.100
    .venv/bin/python tools/bench/attach_concurrency.py --path real \\
        --k 1,4,8 --per-server 10
"""

import argparse
import concurrent.futures
import configparser
import json
import os
import platform
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import attach_load  # noqa: E402  (its client, percentiles and set-up)
import requests  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from nova_lite.conf import compute as compute_conf  # noqa: E402
from nova_lite.conf import conductor as conductor_conf  # noqa: E402
from tests.integration import deployment as deploy  # noqa: E402

FAKE = 'fake'
REAL = 'real'
ONE_HOST = 'one-host'
TWO_HOSTS = 'two-hosts'
ONE_SERVER = 'one-server'
SCENARIOS = (ONE_HOST, TWO_HOSTS, ONE_SERVER)
DEFAULT_K = {FAKE: '1,10,50', REAL: '1,4,8'}
# The microversion from which the API answers an attach at once (202).
ASYNC_FROM = (2, 101)


def log(message, *args):
    print('attach_concurrency: ' + (message % args if args else message),
          file=sys.stderr, flush=True)


# -- figures (pure) ---------------------------------------------------------

def parse_counts(text):
    """``'1,10,50'`` -> ``[1, 10, 50]`` (sorted, no repeats, each >= 1)."""
    try:
        counts = sorted({int(item) for item in text.split(',')
                         if item.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError('%r: comma-separated integers' %
                                         text)
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError('%r: one or more integers >= 1' %
                                         text)
    return counts


def parse_versions(text):
    """``'2.101,2.100'`` -> ``['2.101', '2.100']``: compute microversions
    of the attach, 2.100 or later."""
    versions = []
    for item in dict.fromkeys(i.strip() for i in text.split(',')):
        if not item:
            continue
        try:
            major, minor = (int(part) for part in item.split('.'))
        except ValueError:
            raise argparse.ArgumentTypeError('%r: a microversion' % item)
        if (major, minor) < (2, 100):
            raise argparse.ArgumentTypeError('%r: 2.100 or later' % item)
        versions.append(item)
    if not versions:
        raise argparse.ArgumentTypeError('modes: at least one')
    return versions


def expected_status(version):
    """The status of an attach the API took: 202 from 2.101 on (it
    answers at once), 200 at 2.100 (it answers when the attach is
    done)."""
    major, minor = (int(part) for part in version.split('.'))
    return 202 if (major, minor) >= ASYNC_FROM else 200


def split_hosts(k, hosts):
    """How many of K servers each host gets: as even as it goes, the first
    hosts one more."""
    base, extra = divmod(k, len(hosts))
    return {host: base + (1 if index < extra else 0)
            for index, host in enumerate(hosts)}


def vs_serial(k, wall, single):
    """A burst's wall time over K times one attach alone: about 1 when
    the K attaches ran one after the other, about 1/K when side by side
    (None without a single attach to compare with)."""
    if not single or wall is None:
        return None
    return round(wall / (k * single), 3)


def median(values):
    values = [v for v in values if v is not None]
    return attach_load.percentile(values, 50) if values else None


def summarize(scenario, version, k, hosts, rounds, single):
    """The row of one (scenario, K): ``rounds`` are what ``burst``
    returned; ``single`` the wall time of one attach alone (seconds)."""
    def pooled(key):
        return [v for r in rounds for v in r[key]]
    errors = {}
    for r in rounds:
        for status, count in r['errors'].items():
            errors[status] = errors.get(status, 0) + count
    wall = median([r['wall_s'] for r in rounds])
    walls = sum(r['wall_s'] or 0.0 for r in rounds)
    completed = sum(r['completed'] for r in rounds)
    row = {
        'scenario': scenario,
        'microversion': version,
        'k': k,
        'hosts': hosts,
        'rounds': len(rounds),
        'attaches': k * len(rounds),
        'completed': completed,
        'attaches_per_second': completed / walls if walls else None,
        'wall_s': wall,
        'k_times_single_s': None if single is None else k * single,
        'vs_serial': vs_serial(k, wall, single),
        'post_ms': attach_load.summary_ms(pooled('post')),
        'to_in_use_ms': attach_load.summary_ms(pooled('to_in_use')),
        'errors': errors,
    }
    if any(r['to_guest'] for r in rounds):
        row['to_guest_ms'] = attach_load.summary_ms(pooled('to_guest'))
    for key in ('attaches_per_second', 'wall_s', 'k_times_single_s'):
        if row[key] is not None:
            row[key] = round(row[key], 3)
    return row


def table(rows, real):
    """The readable summary: one line per row."""
    def pair(summary):
        if not summary or summary.get('p50') is None:
            return '-'
        return '%.0f/%.0f' % (summary['p50'], summary['p99'])

    def num(value, fmt):
        return '-' if value is None else fmt % value
    done = 'to guest' if real else 'to in-use'
    line = '%-10s %-6s %4s %5s %7s %8s %8s %13s %13s %9s  %s'
    head = line % ('scenario', 'mv', 'K', 'hosts', 'done', 'per s',
                   'wall s', done + ' ms', 'POST ms', 'vs serial',
                   'errors')
    lines = ['%s: p50/p99; vs serial = wall / (K x one attach alone): '
             '1 serialised, 1/K side by side' % done, head,
             '-' * len(head)]
    for row in rows:
        lines.append(line % (
            row['scenario'], row['microversion'], row['k'], row['hosts'],
            '%d/%d' % (row['completed'], row['attaches']),
            num(row['attaches_per_second'], '%.2f'),
            num(row['wall_s'], '%.2f'),
            pair(row.get('to_guest_ms') if real else row['to_in_use_ms']),
            pair(row['post_ms']), num(row['vs_serial'], '%.2f'),
            ', '.join('%s: %d' % item for item in sorted(
                row['errors'].items())) or '-'))
    return '\n'.join(lines)


# -- the guests (real path) -------------------------------------------------

class GuestWatcher(threading.Thread):
    """Polls one guest's agent until it lists the disk of each of
    ``volume_ids`` (or ``deadline``); ``seen``: {volume id: monotonic time
    it was first listed, halfway through the agent's call}."""

    def __init__(self, guest, volume_ids, interval, deadline):
        super().__init__(daemon=True)
        self.guest = guest
        self.volume_ids = list(volume_ids)
        self.interval = interval
        self.deadline = deadline
        self.seen = {}
        self.error = None

    def run(self):
        import guest_hotplug
        from tests.guest import agent
        pending = {agent.guest_serial(v): v for v in self.volume_ids}
        try:
            while pending and time.monotonic() < self.deadline:
                disks, now = guest_hotplug.stamped(self.guest.disks)
                for serial in [s for s in pending if s in disks]:
                    self.seen[pending.pop(serial)] = now
                if pending:
                    time.sleep(self.interval)
        except Exception as e:  # reported with the round's errors
            self.error = e


# -- the bench ----------------------------------------------------------------

class Bench(object):
    def __init__(self, args, deployment, real):
        self.args = args
        self.d = deployment
        self.real = real
        self.base = attach_load.Bench(args, deployment)
        self.db = self.base.db
        self.api = self.base.api
        self.guests = {}
        self.servers = {}

    # -- set-up ---------------------------------------------------------------
    def _set_compute_status(self, host, status):
        service = self.d.services()[('nova-lite-compute', host)]
        resp = self.d.admin_api.as_(compute_version='2.53').put(
            '/v2.1/os-services/%s' % service['id'], body={'status': status})
        if resp.status != 200:
            raise RuntimeError('%s %s: %r' % (status, host, resp))

    def _hosts_of(self, server_ids):
        query = sa.text('SELECT uuid, host FROM instances '
                        'WHERE uuid IN :ids').bindparams(
            sa.bindparam('ids', expanding=True))
        with self.db.engine.connect() as conn:
            return dict(conn.execute(query, {'ids': list(server_ids)}).all())

    def place_servers(self, per_host):
        """Boot ``per_host[host]`` servers on each compute host (the
        others disabled meanwhile: the scheduler takes any enabled host);
        ``self.servers``: {host: [server ids]}."""
        hosts = list(self.d.compute_hosts)
        for host, count in per_host.items():
            if not count:
                continue
            others = [h for h in hosts if h != host]
            for other in others:
                self._set_compute_status(other, 'disabled')
            try:
                ids = self.base.create_servers(count)
            finally:
                for other in others:
                    self._set_compute_status(other, 'enabled')
            placed = self._hosts_of(ids)
            wrong = {s: h for s, h in placed.items() if h != host}
            if wrong:
                raise RuntimeError('servers not on %s: %s' % (host, wrong))
            self.servers.setdefault(host, []).extend(ids)

    def connect_guests(self):
        """The agent of every server's guest (real path)."""
        import realdata_attach
        for ids in self.servers.values():
            for server_id in ids:
                self.guests[server_id] = realdata_attach.guest_agent(
                    self.d, server_id)

    def close(self):
        for guest in self.guests.values():
            guest.close()
        if self.real:
            # The domains belong to the machine's libvirtd: the deployment's
            # cleanup stops the services, not the guests.
            import realdata_attach
            ids = [s for ids in self.servers.values() for s in ids]
            for server_id in ids:
                self.api.request('DELETE', '/v2.1/servers/%s' % server_id)
            for server_id in ids:
                try:
                    realdata_attach._wait(
                        deploy.HTTPClient(self.d.base_url,
                                          token=attach_load.TOKEN),
                        '/v2.1/servers/%s' % server_id,
                        lambda r: r.status == 404, 'server deleted')
                except RuntimeError as e:
                    log('%s', e)

    # -- one burst ------------------------------------------------------------
    def _wait_in_use(self, volume_ids, deadline):
        """{volume id: monotonic time first seen ``in-use``}, polled every
        ``--poll-interval``, halfway through each query."""
        seen = {}
        pending = set(volume_ids)
        while pending and time.monotonic() < deadline:
            before = time.monotonic()
            statuses = self.db.statuses(pending)
            now = (before + time.monotonic()) / 2
            for volume_id, status in statuses.items():
                if status == 'in-use':
                    seen[volume_id] = now
                    pending.discard(volume_id)
            if pending:
                time.sleep(self.args.poll_interval)
        return seen

    def burst(self, version, pairs):
        """Send the attaches of ``pairs`` ([(server id, volume id)]) at
        once; wait until each is done or the round timeout; detach them
        all again."""
        k = len(pairs)
        clients = [attach_load.Client(self.d.base_url,
                                      compute_version=version)
                   for _ in pairs]
        barrier = threading.Barrier(k + 1)

        def attach(index):
            server_id, volume_id = pairs[index]
            path = '/v2.1/servers/%s/os-volume_attachments' % server_id
            body = {'volumeAttachment': {'volumeId': volume_id}}
            barrier.wait()
            start = time.monotonic()
            try:
                status = clients[index].request('POST', path, body=body)\
                    .status_code
            except requests.RequestException as e:
                status = type(e).__name__
            return start, status, time.monotonic() - start

        watchers = []
        with concurrent.futures.ThreadPoolExecutor(k) as pool:
            futures = [pool.submit(attach, i) for i in range(k)]
            if self.real:
                # Started before the burst: a disk may show at once.
                deadline = time.monotonic() + self.args.round_timeout
                by_server = {}
                for server_id, volume_id in pairs:
                    by_server.setdefault(server_id, []).append(volume_id)
                for server_id, volume_ids in by_server.items():
                    watchers.append(GuestWatcher(
                        self.guests[server_id], volume_ids,
                        self.args.poll_interval, deadline))
                for watcher in watchers:
                    watcher.start()
            barrier.wait()
            started = time.monotonic()
            results = [f.result() for f in futures]
        expected = expected_status(version)
        errors = {}
        accepted = []
        for (server_id, volume_id), (_s, status, _l) in zip(pairs, results):
            if status == expected:
                accepted.append(volume_id)
            else:
                errors[str(status)] = errors.get(str(status), 0) + 1
        in_use = self._wait_in_use(accepted,
                                   started + self.args.round_timeout)
        guest_seen = {}
        for watcher in watchers:
            watcher.join(self.args.round_timeout)
            guest_seen.update(watcher.seen)
            if watcher.error is not None:
                key = 'guest agent %s' % type(watcher.error).__name__
                errors[key] = errors.get(key, 0) + 1
        done = guest_seen if self.real else in_use
        done = {v: t for v, t in done.items() if v in accepted}
        missing = len(accepted) - len(done)
        if missing:
            errors['not done by the round timeout'] = missing
        starts = {volume_id: start for (_s, volume_id), (start, _st, _l)
                  in zip(pairs, results)}
        wall = max(done.values()) - started if done else None
        out = {
            'completed': len(done),
            'wall_s': wall,
            'post': [latency for _s, _st, latency in results],
            'to_in_use': [t - starts[v] for v, t in in_use.items()],
            'to_guest': [t - starts[v] for v, t in guest_seen.items()
                         if v in accepted],
            'errors': errors,
        }
        self.detach(pairs)
        return out

    def detach(self, pairs):
        """Detach whatever of ``pairs`` is attached; wait until every
        volume is ``available`` (and gone from its guest)."""
        statuses = self.db.statuses([v for _s, v in pairs])
        for server_id, volume_id in pairs:
            if statuses.get(volume_id) in ('in-use', 'attaching'):
                self.api.request('DELETE', '/v2.1/servers/%s/'
                                 'os-volume_attachments/%s' % (
                                     server_id, volume_id))
        deadline = time.monotonic() + self.args.round_timeout
        busy = [v for _s, v in pairs]
        while busy and time.monotonic() < deadline:
            busy = [v for v, s in self.db.statuses(busy).items()
                    if s != 'available']
            if busy:
                time.sleep(0.1)
        if busy:
            raise RuntimeError('volumes not available again within %ss: %s'
                               % (self.args.round_timeout, busy))
        for server_id, volume_id in pairs:
            if self.real:
                self.guests[server_id].wait_for_no_disk(
                    volume_id, timeout=self.args.round_timeout)

    # -- the scenarios --------------------------------------------------------
    def pairs(self, scenario, k, volumes):
        hosts = list(self.d.compute_hosts)
        if scenario == ONE_SERVER:
            server = self.servers[hosts[0]][0]
            return [(server, v) for v in volumes[:k]], 1
        if scenario == ONE_HOST:
            servers = self.servers[hosts[0]][:k]
        else:
            servers = []
            for host, count in split_hosts(k, hosts[:2]).items():
                servers += self.servers[host][:count]
        return list(zip(servers, volumes)), 1 if scenario == ONE_HOST else 2

    def cells(self):
        """(scenario, K) in the order they run, the single attach first."""
        cells = [(ONE_HOST, 1)]
        for k in self.args.ks:
            if k > 1:
                cells.append((ONE_HOST, k))
                cells.append((TWO_HOSTS, k))
        if self.args.per_server:
            cells.append((ONE_SERVER, self.args.per_server))
        return cells

    def run(self, began):
        volumes = self.base.create_volumes(max(self.args.ks +
                                               [self.args.per_server]))
        rows, skipped = [], []
        try:
            for version in self.args.versions:
                # Not timed: each host's and the API workers' first attach
                # (connections opened, code paths loaded).
                self.burst(version, [(ids[0], volumes[i]) for i, ids in
                                     enumerate(self.servers.values())])
                single = None
                for scenario, k in self.cells():
                    if time.monotonic() - began > self.args.max_seconds:
                        skipped.append({'scenario': scenario, 'k': k,
                                        'microversion': version})
                        continue
                    pairs, hosts = self.pairs(scenario, k, volumes)
                    log('%s, %s, K=%d: %d rounds ...', version, scenario, k,
                        self.args.rounds)
                    rounds = [self.burst(version, pairs)
                              for _ in range(self.args.rounds)]
                    row = summarize(scenario, version, k, hosts, rounds,
                                    single)
                    if (scenario, k) == (ONE_HOST, 1):
                        single = row['wall_s']
                        row['k_times_single_s'] = single
                        row['vs_serial'] = vs_serial(1, single, single)
                    log('  %s attaches/s, wall %s s, vs serial %s, '
                        'errors %s', row['attaches_per_second'],
                        row['wall_s'], row['vs_serial'], row['errors'])
                    rows.append(row)
        finally:
            for volume_id in volumes:
                self.api.request('DELETE', '/v3/%s/volumes/%s' % (
                    attach_load.PROJECT, volume_id))
        return rows, skipped


# -- main ---------------------------------------------------------------------

def make_deployment(args):
    """The deployment of ``args.path``, or None (said why) when this
    machine cannot have it."""
    hosts = ('compute1', 'compute2')
    if args.path == FAKE:
        return deploy.Deployment(
            args.backend, compute_hosts=hosts,
            api_processes=args.processes, api_threads=args.threads,
            extra_conf=attach_load.fake_conf(
                args.reserve_delay, args.attach_delay, args.connect_delay))
    try:
        from tests.integration.realdata import base as realdata
        import realdata_attach  # noqa: F401  (libvirt's config, the agent)
    except ImportError as e:
        log('cannot run the real path: %s', e)
        return None
    return realdata.RealDataDeployment(
        args.backend, api_processes=args.processes,
        api_threads=args.threads,
        extra_conf={'DEFAULT': {'debug': 'false'},
                    'api': {'response_validation': 'ignore'},
                    'quota': dict(attach_load.UNLIMITED_QUOTA)})


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--path', choices=[FAKE, REAL], default=FAKE,
                        help='fake: the fake virt driver and fake backend; '
                             'real: libvirt (TCG) guests and iSCSI on tgtd '
                             '(default: %(default)s)')
    parser.add_argument('--k', type=parse_counts,
                        help='comma-separated numbers of concurrent '
                             'attaches to different servers (default: '
                             '%s on fake, %s on real); K=1 on one host '
                             'always runs' % (DEFAULT_K[FAKE],
                                              DEFAULT_K[REAL]))
    parser.add_argument('--per-server', type=int, default=10,
                        help='volumes attached at once onto one server '
                             '(0: not run; default: %(default)s)')
    parser.add_argument('--modes', type=parse_versions, default='2.101',
                        help='compute microversions of the attach, e.g. '
                             '2.101,2.100 (default: %(default)s)')
    parser.add_argument('--rounds', type=int, default=3,
                        help='bursts per scenario and K (default: '
                             '%(default)s)')
    parser.add_argument('--backend', choices=['mysql', 'postgresql'],
                        default='mysql',
                        help='database (the real path: mysql; default: '
                             '%(default)s)')
    parser.add_argument('--processes', type=int, default=2,
                        help='uWSGI processes (default: %(default)s)')
    parser.add_argument('--threads', type=int, default=2,
                        help='uWSGI threads per process '
                             '(default: %(default)s)')
    parser.add_argument('--attach-delay', type=float, default=0.5,
                        help='fake path: [fake_driver] attach_delay, '
                             'seconds (default: %(default)s)')
    parser.add_argument('--reserve-delay', type=float, default=0.0,
                        help='fake path: [fake_driver] reserve_delay, '
                             'seconds (default: %(default)s)')
    parser.add_argument('--connect-delay', type=float, default=0.0,
                        help='fake path: the fake backend\'s connect_delay, '
                             'seconds (default: %(default)s)')
    parser.add_argument('--max-guests', type=int, default=16,
                        help='real path: refuse a run that needs more '
                             'guests (default: %(default)s)')
    parser.add_argument('--poll-interval', type=float, default=0.01,
                        help='seconds between polls of the database and '
                             'of each guest (default: %(default)s)')
    parser.add_argument('--round-timeout', type=float, default=120.0,
                        help='seconds a burst may take until every attach '
                             'is done (default: %(default)s)')
    parser.add_argument('--max-seconds', type=float, default=900.0,
                        help='rows not started by then are skipped '
                             '(default: %(default)s)')
    parser.add_argument('--logs',
                        help='directory to copy the services\' logs and '
                             'nova-lite.conf into at the end')
    args = parser.parse_args(argv)
    args.versions = args.modes
    args.ks = args.k or parse_counts(DEFAULT_K[args.path])
    if args.rounds < 1:
        parser.error('--rounds: at least 1')
    if args.per_server < 0:
        parser.error('--per-server: 0 or more')
    if args.path == REAL:
        if args.backend != 'mysql':
            parser.error('--path real: the real-data tier runs on mysql')
        needed = guests_needed(args.ks)
        if needed > args.max_guests:
            parser.error('--path real with K up to %d needs %d TCG guests '
                         '(more than --max-guests %d): a two-core machine '
                         'cannot boot and run that many' % (
                             max(args.ks), needed, args.max_guests))
    return args


def workers_of(deployment, section, opts):
    """``[section] workers`` of the deployment's nova-lite.conf, or the
    option's default."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(deployment.conf_file)
    if parser.has_option(section, 'workers'):
        return parser.getint(section, 'workers')
    return next(o.default for o in opts if o.name == 'workers')


def guests_needed(ks):
    """Servers to boot: max(K) on the first host, max(K)/2 on the
    second (``two-hosts``); ``one-server`` uses the first host's first."""
    top = max(ks + [1])
    return top + (split_hosts(top, ('a', 'b'))['b'] if top > 1 else 0)


def main(argv=None):
    args = parse_args(argv)
    began = time.monotonic()
    load_before = os.getloadavg()
    deployment = make_deployment(args)
    if deployment is None:
        return 2
    log('%s path: starting uWSGI (%d x %d), conductor, volume, two compute '
        'hosts on RabbitMQ and %s', args.path, args.processes,
        args.threads, args.backend)
    if not attach_load.set_up(deployment):
        return 2
    real = args.path == REAL
    bench = None
    rows, skipped = [], []
    workers = {'compute': workers_of(deployment, 'compute',
                                     compute_conf.COMPUTE_OPTS),
               'conductor': workers_of(deployment, 'conductor',
                                       conductor_conf.ALL_OPTS)}
    try:
        bench = Bench(args, deployment, real)
        hosts = deployment.compute_hosts
        top = max(args.ks)
        booted = time.monotonic()
        bench.place_servers({hosts[0]: top,
                             hosts[1]: split_hosts(top, hosts)[hosts[1]]})
        if real:
            bench.connect_guests()
        boot_s = round(time.monotonic() - booted, 1)
        log('%d servers (%s) in %.1f s', sum(len(v) for v in
                                             bench.servers.values()),
            ', '.join('%s: %d' % (h, len(v)) for h, v in
                      bench.servers.items()), boot_s)
        rows, skipped = bench.run(began)
    finally:
        if bench is not None:
            bench.close()
        deployment.cleanUp()
        if args.logs:
            attach_load.save_logs(deployment, args.logs)
    print(table(rows, real), file=sys.stderr, flush=True)
    print(json.dumps({
        'config': {
            'path': args.path,
            'microversions': args.versions,
            'k': args.ks,
            'per_server': args.per_server,
            'rounds': args.rounds,
            'database': args.backend,
            'uwsgi_processes': args.processes,
            'uwsgi_threads': args.threads,
            'compute_hosts': 2,
            'compute_workers': workers['compute'],
            'conductor_workers': workers['conductor'],
            'attach_delay_s': None if real else args.attach_delay,
            'reserve_delay_s': None if real else args.reserve_delay,
            'connect_delay_s': None if real else args.connect_delay,
            'poll_interval_s': args.poll_interval,
            'machine': {'cpus': os.cpu_count(),
                        'python': platform.python_version()},
        },
        'servers_boot_s': boot_s,
        'load_before': [round(x, 2) for x in load_before],
        'load_after': [round(x, 2) for x in os.getloadavg()],
        'results': rows,
        'skipped_by_max_seconds': skipped,
        'run_seconds': round(time.monotonic() - began, 1),
    }, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
