#!/usr/bin/env python3
"""Attach load: does a slow compute host or slow storage starve the API?

Starts a real nova_lite deployment (the integration tier's
``tests/integration/deployment.py``): the API under uWSGI with a fixed
number of processes and threads (the shipped
``etc/nova-lite/nova-lite-api-uwsgi.ini``), ``nova-lite-conductor``,
``nova-lite-volume`` and one ``nova-lite-compute`` on RabbitMQ and MariaDB
or PostgreSQL, the ``fake`` volume backend and the fake virt driver,
slowed down by configuration:

* ``[fake_driver] reserve_delay``: seconds each device-name reservation
  takes on the compute host (a busy hypervisor);
* ``[fake_driver] attach_delay``: seconds each attach in the guest takes;
* ``[<backend>] connect_delay``: seconds each storage connection takes.

Then, for each K and each mode, synchronous (microversion 2.100: the API
worker waits for the conductor, which waits for the host) and asynchronous
(2.101: the API casts and answers 202):

1. K volumes are created (not timed);
2. a reader keeps sending ``GET /v2.1/servers/{id}`` at ``--read-rate``
   per second whether or not earlier reads were answered (an open loop:
   a read stuck behind the attaches does not hold back the next one), and
   times each from the moment it was due;
3. K clients send their attach at the same moment (a barrier), spread
   round-robin over ``--servers`` servers, and time the POST;
4. the round ends when every accepted attach is ``in-use`` (polled in the
   database, so that polling does not load the API) or at
   ``--round-timeout``;
5. the volumes are detached and deleted (not timed).

Prints one JSON document: per (mode, K) the attach POST latency p50/p99,
the read latency p50/p99 during the round (and of an idle API before it),
attaches completed per second (from the burst to the last ``in-use``) and
the errors by status. Writes a PNG chart of read p99 (and attach p99)
against K for both modes.

Needs: RabbitMQ on 127.0.0.1:5672 (or ``NOVA_LITE_TEST_RABBIT_URL``),
MariaDB on 127.0.0.1:3306 or PostgreSQL on 127.0.0.1:5432 (root/postgres
without a password, or ``NOVA_LITE_TEST_DB_*``, as the integration tier)
and uWSGI in this environment (``pip install nova_lite[deploy]``); several
processes share one database, so SQLite is not an option. Without them it
says what is missing and exits with status 2. matplotlib for the chart
(``pip install nova_lite[bench]``; without it the chart is skipped).

    .venv/bin/python tools/bench/attach_load.py \\
        --k 10,25,50 --processes 2 --threads 2 --reserve-delay 2

Run time is bounded: each round stops at ``--round-timeout`` and the whole
run skips the rounds left after ``--max-seconds``.
"""

import argparse
import concurrent.futures
import json
import os
import platform
import sys
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import fixtures  # noqa: E402
import requests  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from tests.fixtures import required  # noqa: E402
from tests.integration import deployment as deploy  # noqa: E402

SYNC = ('sync', '2.100')
ASYNC = ('async', '2.101')
TOKEN = 'demo:demo'
PROJECT = 'demo'
HTTP_TIMEOUT = 300
IMAGE_REF = '155d900f-4e14-4e4c-a73d-069cbf4541e6'


def log(message, *args):
    print('attach_load: ' + (message % args if args else message),
          file=sys.stderr, flush=True)


def percentile(values, pct):
    """Nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, int(round(pct / 100.0 * len(ordered) + 0.4999)))
    return ordered[min(rank, len(ordered)) - 1]


def summary_ms(seconds):
    def ms(value):
        return None if value is None else round(value * 1000.0, 1)
    return {'p50': ms(percentile(seconds, 50)),
            'p99': ms(percentile(seconds, 99)),
            'max': ms(max(seconds) if seconds else None),
            'n': len(seconds)}


class Client(object):
    """JSON over HTTP with its own connection (uWSGI closes each one)."""

    def __init__(self, base_url, compute_version=None):
        self.base_url = base_url
        self.session = requests.Session()
        headers = {'Accept': 'application/json', 'X-Auth-Token': TOKEN}
        versions = ['volume 3.27']
        if compute_version:
            versions.append('compute %s' % compute_version)
        headers['OpenStack-API-Version'] = ', '.join(versions)
        self.session.headers.update(headers)

    def request(self, method, path, body=None):
        return self.session.request(method, self.base_url + path, json=body,
                                    timeout=HTTP_TIMEOUT)


class Database(object):
    """Reads the volumes' status straight from the database."""

    def __init__(self, url):
        self.engine = sa.create_engine(url, pool_pre_ping=True)

    def statuses(self, volume_ids):
        query = sa.text('SELECT id, status FROM volumes WHERE id IN :ids')
        query = query.bindparams(sa.bindparam('ids', expanding=True))
        with self.engine.connect() as conn:
            return dict(conn.execute(query, {'ids': list(volume_ids)}).all())

    def wait(self, volume_ids, status, deadline, on_each=None):
        """Poll until every volume has ``status`` or the deadline; returns
        {volume_id: monotonic time it was first seen in ``status``}."""
        seen = {}
        pending = set(volume_ids)
        while pending and time.monotonic() < deadline:
            now = time.monotonic()
            for volume_id, current in self.statuses(pending).items():
                if current == status:
                    seen[volume_id] = now
                    pending.discard(volume_id)
            if pending:
                time.sleep(0.05)
        return seen


class Reader(threading.Thread):
    """GET /v2.1/servers/{id} at a fixed rate (open loop), timing each
    from the moment it was due: a client that waited for each answer
    before asking again would send one request during a stall and report
    it once (coordinated omission), hiding the starvation it measures."""

    def __init__(self, base_url, server_id, rate):
        super().__init__(daemon=True)
        self.base_url = base_url
        self.path = '/v2.1/servers/%s' % server_id
        self.interval = 1.0 / rate
        self.latencies = []
        self.errors = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        # Enough threads for every read of a long stall to be in flight.
        self.pool = concurrent.futures.ThreadPoolExecutor(512)

    def _read(self, due):
        client = Client(self.base_url, compute_version='2.1')
        try:
            status = client.request('GET', self.path).status_code
        except requests.RequestException as e:
            status = type(e).__name__
        latency = time.monotonic() - due
        with self.lock:
            self.latencies.append(latency)
            if status != 200:
                self.errors[str(status)] = self.errors.get(str(status), 0) + 1

    def run(self):
        due = time.monotonic()
        while not self.stopping.is_set():
            self.pool.submit(self._read, due)
            due += self.interval
            self.stopping.wait(max(0.0, due - time.monotonic()))

    def stop(self):
        """Stop sending; wait for the reads in flight to be answered."""
        self.stopping.set()
        self.join(HTTP_TIMEOUT)
        self.pool.shutdown(wait=True)


class Bench(object):
    def __init__(self, args, deployment):
        self.args = args
        self.d = deployment
        self.base_url = deployment.base_url
        self.api = Client(self.base_url, compute_version='2.37')
        self.db = Database(deployment.connection_url)

    # -- setup --------------------------------------------------------------
    def create_servers(self, count):
        ids = []
        for index in range(count):
            resp = self.api.request('POST', '/v2.1/servers', body={
                'server': {'name': 'bench-%d' % index, 'flavorRef': '1',
                           'imageRef': IMAGE_REF, 'networks': 'none'}})
            resp.raise_for_status()
            ids.append(resp.json()['server']['id'])
        deadline = time.monotonic() + 120
        pending = set(ids)
        while pending and time.monotonic() < deadline:
            for server_id in list(pending):
                body = self.api.request('GET', '/v2.1/servers/%s' %
                                        server_id).json()['server']
                if body['status'] == 'ERROR':
                    raise RuntimeError('server %s went to ERROR: %s' % (
                        server_id, body.get('fault')))
                if body['status'] == 'ACTIVE':
                    pending.discard(server_id)
            time.sleep(0.1)
        if pending:
            raise RuntimeError('servers not ACTIVE within 120 s: %s' %
                               sorted(pending))
        return ids

    def create_volumes(self, count):
        ids = []
        for _ in range(count):
            resp = self.api.request('POST', '/v3/%s/volumes' % PROJECT,
                                    body={'volume': {'size': 1}})
            resp.raise_for_status()
            ids.append(resp.json()['volume']['id'])
        ready = self.db.wait(ids, 'available', time.monotonic() + 120)
        if len(ready) != len(ids):
            raise RuntimeError('volumes not available within 120 s')
        return ids

    def cleanup(self, server_ids, volume_ids):
        """Detach what is attached, then delete the volumes."""
        statuses = self.db.statuses(volume_ids)
        for index, volume_id in enumerate(volume_ids):
            if statuses.get(volume_id) != 'in-use':
                continue
            server_id = server_ids[index % len(server_ids)]
            self.api.request('DELETE', '/v2.1/servers/%s/os-volume_attachments'
                             '/%s' % (server_id, volume_id))
        deadline = time.monotonic() + self.args.round_timeout
        while time.monotonic() < deadline:
            busy = [v for v, s in self.db.statuses(volume_ids).items()
                    if s != 'available']
            if not busy:
                break
            time.sleep(0.1)
        for volume_id in volume_ids:
            self.api.request('DELETE', '/v3/%s/volumes/%s' % (PROJECT,
                                                              volume_id))

    def idle_reads(self, server_id, count=20):
        client = Client(self.base_url, compute_version='2.1')
        latencies = []
        for _ in range(count):
            start = time.monotonic()
            client.request('GET', '/v2.1/servers/%s' % server_id)
            latencies.append(time.monotonic() - start)
        return latencies

    # -- one round ----------------------------------------------------------
    def run_round(self, mode, k, server_ids):
        name, version = mode
        volume_ids = self.create_volumes(k)
        idle = self.idle_reads(server_ids[0])
        barrier = threading.Barrier(k + 1)
        clients = [Client(self.base_url, compute_version=version)
                   for _ in range(k)]

        def attach(index):
            server_id = server_ids[index % len(server_ids)]
            path = '/v2.1/servers/%s/os-volume_attachments' % server_id
            body = {'volumeAttachment': {'volumeId': volume_ids[index]}}
            barrier.wait()
            start = time.monotonic()
            try:
                status = clients[index].request('POST', path, body=body)\
                    .status_code
            except requests.RequestException as e:
                status = type(e).__name__
            return status, time.monotonic() - start

        reader = Reader(self.base_url, server_ids[0], self.args.read_rate)
        reader.start()
        with concurrent.futures.ThreadPoolExecutor(k) as pool:
            futures = [pool.submit(attach, i) for i in range(k)]
            barrier.wait()
            started = time.monotonic()
            results = [f.result() for f in futures]
        posted = time.monotonic()
        expected = {200: 'sync', 202: 'async'}
        accepted = [volume_ids[i] for i, (status, _) in enumerate(results)
                    if expected.get(status) == name]
        done = self.db.wait(accepted, 'in-use',
                            started + self.args.round_timeout)
        finished = max(list(done.values()) + [posted])
        reader.stop()
        errors = {}
        for status, _latency in results:
            if expected.get(status) != name:
                errors[str(status)] = errors.get(str(status), 0) + 1
        for status, count in reader.errors.items():
            key = 'read %s' % status
            errors[key] = errors.get(key, 0) + count
        if len(done) < len(accepted):
            errors['not in-use by the round timeout'] = (
                len(accepted) - len(done))
        self.cleanup(server_ids, volume_ids)
        elapsed = finished - started
        return {
            'mode': name,
            'microversion': version,
            'k': k,
            'attach_latency_ms': summary_ms([r[1] for r in results]),
            'read_latency_ms': summary_ms(reader.latencies),
            'idle_read_latency_ms': summary_ms(idle),
            'attaches_completed': len(done),
            'attaches_per_second': round(len(done) / elapsed, 2)
            if elapsed > 0 else None,
            'all_posts_answered_s': round(posted - started, 3),
            'last_in_use_s': round(finished - started, 3),
            'errors': errors,
        }


def write_chart(path, results, args):
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import pyplot
    except ImportError:
        log('matplotlib is not installed: no chart (pip install '
            'nova_lite[bench])')
        return None
    figure, (reads, posts) = pyplot.subplots(1, 2, figsize=(11, 4.5))
    for name, version in (SYNC, ASYNC):
        rows = sorted((r for r in results if r['mode'] == name),
                      key=lambda r: r['k'])
        ks = [r['k'] for r in rows]
        label = '%s (%s)' % (name, version)
        reads.plot(ks, [r['read_latency_ms']['p99'] for r in rows],
                   marker='o', label=label)
        posts.plot(ks, [r['attach_latency_ms']['p99'] for r in rows],
                   marker='o', label=label)
    for axis, title in ((reads, 'GET /servers/{id} p99 during the attaches'),
                        (posts, 'attach POST p99')):
        axis.set_yscale('log')
        axis.set_xlabel('K concurrent attaches')
        axis.set_ylabel('ms (log scale)')
        axis.set_title(title, fontsize=10)
        axis.grid(True, which='both', alpha=0.3)
        axis.legend()
    figure.suptitle('nova_lite attach load: uWSGI %d processes x %d threads, '
                    'reserve_delay %ss, attach_delay %ss, connect_delay %ss'
                    % (args.processes, args.threads, args.reserve_delay,
                       args.attach_delay, args.connect_delay), fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    return path


def set_up(deployment):
    """Start ``deployment``; False (said why) when this machine cannot
    run it (a service or package missing), any other error raised."""
    try:
        deployment.setUp()
    except (unittest.SkipTest, required.Unavailable) as e:
        log('cannot start the system: %s', e)
        return False
    except fixtures.MultipleExceptions as e:
        # The fixture cleaned up after itself; its first error says why.
        cause = required.first_cause(e)
        if isinstance(cause, (unittest.SkipTest, required.Unavailable)):
            log('cannot start the system: %s', cause)
            return False
        raise
    return True


def save_logs(deployment, directory):
    os.makedirs(directory, exist_ok=True)
    for name, detail in deployment.log_details().items():
        with open(os.path.join(directory, name), 'w') as f:
            f.write(detail.as_text())
    log('logs in %s', directory)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--k', default='10,25,50',
                        help='comma-separated numbers of concurrent '
                             'attaches (default: %(default)s)')
    parser.add_argument('--backend', choices=['mysql', 'postgresql'],
                        default='mysql',
                        help='database: MariaDB/MySQL or PostgreSQL '
                             '(default: %(default)s)')
    parser.add_argument('--processes', type=int, default=2,
                        help='uWSGI processes (default: %(default)s)')
    parser.add_argument('--threads', type=int, default=2,
                        help='uWSGI threads per process '
                             '(default: %(default)s)')
    parser.add_argument('--servers', type=int, default=10,
                        help='servers the attaches are spread over '
                             '(default: %(default)s)')
    parser.add_argument('--reserve-delay', type=float, default=2.0,
                        help='[fake_driver] reserve_delay, seconds '
                             '(default: %(default)s)')
    parser.add_argument('--attach-delay', type=float, default=0.0,
                        help='[fake_driver] attach_delay, seconds '
                             '(default: %(default)s)')
    parser.add_argument('--connect-delay', type=float, default=0.0,
                        help='the fake backend\'s connect_delay, seconds '
                             '(default: %(default)s)')
    parser.add_argument('--read-rate', type=float, default=10.0,
                        help='reads per second sent by the reader, whether '
                             'or not the previous ones were answered '
                             '(default: %(default)s)')
    parser.add_argument('--modes', default='sync,async',
                        help='sync, async or both (default: %(default)s)')
    parser.add_argument('--round-timeout', type=float, default=120.0,
                        help='seconds a round may take until every attach '
                             'is in-use (default: %(default)s)')
    parser.add_argument('--max-seconds', type=float, default=420.0,
                        help='rounds not started by then are skipped '
                             '(default: %(default)s)')
    parser.add_argument('--chart', default='attach_load.png',
                        help='PNG to write (default: %(default)s)')
    parser.add_argument('--logs',
                        help='directory to copy the services\' logs and '
                             'nova-lite.conf into at the end')
    args = parser.parse_args(argv)
    args.ks = [int(k) for k in args.k.split(',') if k.strip()]
    modes = {'sync': SYNC, 'async': ASYNC}
    args.mode_list = [modes[m.strip()] for m in args.modes.split(',')]
    return args


# More servers and volumes in one project than the default quotas.
UNLIMITED_QUOTA = {'instances': -1, 'cores': -1, 'ram': -1, 'volumes': -1,
                   'gigabytes': -1}


def fake_conf(reserve_delay=0.0, attach_delay=0.0, connect_delay=0.0):
    """The deployment's ``extra_conf``: the ``fake`` volume backend and
    the fake virt driver slowed down by the given delays (seconds), no
    debug logging, no response validation, no quota."""
    return {
        'DEFAULT': {'debug': 'false'},
        # What production runs: responses are not validated.
        'api': {'response_validation': 'ignore'},
        'volume': {'enabled_backends': 'bench'},
        'bench': {'volume_driver': 'fake',
                  'connect_delay': connect_delay},
        'fake_driver': {'reserve_delay': reserve_delay,
                        'attach_delay': attach_delay},
        'quota': dict(UNLIMITED_QUOTA),
    }


def main(argv=None):
    args = parse_args(argv)
    began = time.monotonic()
    extra_conf = fake_conf(args.reserve_delay, args.attach_delay,
                           args.connect_delay)
    deployment = deploy.Deployment(
        args.backend, compute_hosts=('compute1',),
        api_processes=args.processes, api_threads=args.threads,
        extra_conf=extra_conf)
    log('starting uWSGI (%d x %d), conductor, compute on RabbitMQ and %s',
        args.processes, args.threads, args.backend)
    if not set_up(deployment):
        return 2
    results = []
    skipped = []
    try:
        bench = Bench(args, deployment)
        servers = bench.create_servers(args.servers)
        for k in args.ks:
            for mode in args.mode_list:
                if time.monotonic() - began > args.max_seconds:
                    skipped.append({'mode': mode[0], 'k': k})
                    continue
                log('%s (%s), K=%d ...', mode[0], mode[1], k)
                row = bench.run_round(mode, k, servers)
                log('  attach p99 %s ms, read p99 %s ms, %s attaches/s, '
                    'errors %s', row['attach_latency_ms']['p99'],
                    row['read_latency_ms']['p99'],
                    row['attaches_per_second'], row['errors'])
                results.append(row)
    finally:
        deployment.cleanUp()
        if args.logs:
            save_logs(deployment, args.logs)
    chart = write_chart(args.chart, results, args) if results else None
    print(json.dumps({
        'config': {
            'uwsgi_processes': args.processes,
            'uwsgi_threads': args.threads,
            'database': args.backend,
            'compute_hosts': 1,
            'servers': args.servers,
            'read_rate_per_s': args.read_rate,
            'reserve_delay_s': args.reserve_delay,
            'attach_delay_s': args.attach_delay,
            'connect_delay_s': args.connect_delay,
            'k': args.ks,
            'machine': {'cpus': os.cpu_count(),
                        'python': platform.python_version()},
        },
        'results': results,
        'skipped_by_max_seconds': skipped,
        'chart': chart,
        'run_seconds': round(time.monotonic() - began, 1),
    }, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
