#!/usr/bin/env python3
"""The attach path of ``nova-lite-all``, end to end over HTTP.

Starts ``nova-lite-all`` (the embedded default: SQLite, ``inproc://``, the
``file`` backend, the fake virt driver, noauth2) as a subprocess on a fresh
state directory and a free loopback port, then times, as one client on a
real socket:

``post_attach_2.100``
    POST /servers/{id}/os-volume_attachments at 2.100: the API calls the
    conductor, which reserves the device and the volume and casts to the
    compute host; 200 with the device name.
``post_attach_2.101``
    The same at 2.101 (the API casts; 202), when the server offers 2.101.
``attach_complete_2.100`` / ``attach_complete_2.101``
    From just before the POST to the moment the volume went ``in-use``
    (the volume's ``updated_at``, written in the transaction that
    completes the attachment; the client and the server read the same
    clock). The client learns it by polling GET /v3/volumes/{id} every
    ``--latency-poll-interval`` (20 ms): the figure comes from the server's
    timestamp, so the polling only has to be rare enough not to slow the
    server down (each poll costs the server ~2 ms of CPU, and the GIL is
    shared by the API, conductor and compute threads).
``delete_attachment``
    DELETE /servers/{id}/os-volume_attachments/{volume_id} (202; the
    detach itself is cast to the compute host).
``list_attachments_0`` / ``_10`` / ``_50``
    GET /servers/{id}/os-volume_attachments (latest microversion) of a
    server with 0, 10 and 50 volumes attached.
``cycles_per_second``
    One client attaching at 2.100, waiting for ``in-use``, detaching and
    waiting for ``available`` and for the server's mapping to be gone
    (compute deletes the attachment, then the mapping), over and over for
    ``--cycle-seconds``; waiting is polling GET /v3/volumes/{id} (then GET
    os-volume_attachments/{volume_id}) every ``--poll-interval`` (5 ms),
    as a client that wants to go on at once would.
    ``server_cpu_ms_per_cycle`` is the server process's CPU time (user +
    system) per cycle, polls included: when it is close to the cycle time,
    the cycle is CPU-bound.
``get_volume_back_to_back`` / ``get_volume_after_pause``
    The ``pause`` series: GET /v3/volumes/{id}, 5 x ``--samples`` times
    one right after the other, then as many each after a pause of
    ``--poll-interval`` (the cycle's wait between two polls); wall time
    per request and ``server_cpu_ms_per_request`` (the server process's
    CPU over the series, divided by the requests). The same request costs
    more CPU after the server has been idle, on machines whose idle
    processors lose their caches (virtual machines that halt an idle
    vCPU); ``cpu_ratio_after_pause`` says by how much on the machine at
    hand, and so how much of every cycle step's cost is that machine's.
``peak_rss_mb``
    The server process's peak resident set (VmHWM) at the end.

Latencies are client-side wall times of one request (send, receive; the
client keeps one HTTP/1.1 connection open, as keystoneauth sessions do, or
opens one per request with ``--new-connections``), in milliseconds:
median, p95, p99 over ``--samples`` samples after ``--warmup`` unrecorded
ones. The setup is deterministic: a fresh database,
servers and volumes created in a fixed order with fixed names. A run takes
about 1-2 minutes; every wait has a deadline.

    python tools/bench/attach_cycle.py [--samples 200] [--warmup 20]
        [--cycle-seconds 20] [--only post_attach,list,cycles,pause]
        [--set group.option=value ...] [--output result.json]

``--set`` passes extra configuration to the server (e.g.
``--set api.response_validation=warn`` to measure an option's cost).
``--keep`` leaves the state directory and the server log behind.
"""

import argparse
import configparser
import datetime
import http.client
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
TOKEN = 'demo:demo'
VOLUME_VERSION = '3.27'
SERIES = ('post_attach', 'list', 'cycles', 'pause')


class BenchError(Exception):
    pass


def percentile(values, pct):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, int(round(pct / 100.0 * len(ordered) + 0.4999)))
    return ordered[min(rank, len(ordered)) - 1]


def summary(samples_s):
    ms = [s * 1000.0 for s in samples_s]
    return {'n': len(ms),
            'median_ms': round(statistics.median(ms), 2),
            'p95_ms': round(percentile(ms, 95), 2),
            'p99_ms': round(percentile(ms, 99), 2),
            'mean_ms': round(statistics.fmean(ms), 2)}


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class Client(object):
    """JSON over one persistent HTTP/1.1 connection, as keystoneauth
    sessions (openstacksdk, the CLI) use; a server that closes it gets a
    new one. ``fresh=True``: a new connection for every request."""

    def __init__(self, port, token=TOKEN, fresh=False):
        self.port = port
        self.token = token
        self.fresh = fresh
        self._conn = None

    def _connection(self, timeout):
        if self.fresh or self._conn is None:
            self._conn = http.client.HTTPConnection('127.0.0.1', self.port,
                                                    timeout=timeout)
        return self._conn

    def request(self, method, path, body=None, compute=None, volume=None,
                timeout=30):
        headers = {'X-Auth-Token': self.token, 'Accept': 'application/json'}
        versions = []
        if compute:
            versions.append('compute %s' % compute)
        if volume:
            versions.append('volume %s' % volume)
        if versions:
            headers['OpenStack-API-Version'] = ', '.join(versions)
        data = None
        if body is not None:
            data = json.dumps(body).encode('utf-8')
            headers['Content-Type'] = 'application/json'
        for attempt in (1, 2):
            conn = self._connection(timeout)
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionError):
                # A kept connection the server had closed: once more on a
                # new one, for requests that are safe to repeat.
                conn.close()
                self._conn = None
                if attempt == 2 or method not in ('GET', 'HEAD'):
                    raise
            finally:
                if self.fresh:
                    conn.close()
        parsed = json.loads(raw) if raw else None
        return resp.status, parsed

    def timed(self, method, path, expect, **kw):
        start = time.perf_counter()
        status, body = self.request(method, path, **kw)
        elapsed = time.perf_counter() - start
        if status != expect:
            raise BenchError('%s %s: %s %s' % (method, path, status, body))
        return elapsed, body


def wait_for(predicate, timeout, interval, what):
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise BenchError('timed out waiting for %s' % what)
        time.sleep(interval)


def parse_time(value):
    return datetime.datetime.strptime(value, '%Y-%m-%dT%H:%M:%S.%f').replace(
        tzinfo=datetime.timezone.utc).timestamp()


class Bench(object):
    # The source tree whose nova-lite-all runs (interleave.py sets another).
    repo = REPO

    def __init__(self, args):
        self.args = args
        self.workdir = None
        self.proc = None
        self.port = None
        self.client = None
        self.log_path = None

    # -- the server -----------------------------------------------------------
    def start(self):
        self.workdir = tempfile.mkdtemp(prefix='nova-lite-bench-')
        self.port = free_port()
        conf = configparser.ConfigParser(interpolation=None)
        conf['DEFAULT'] = {'state_path': os.path.join(self.workdir, 'state'),
                           'host': 'bench-compute',
                           'log_file': os.path.join(self.workdir,
                                                    'nova-lite-all.log')}
        conf['wsgi'] = {'bind_host': '127.0.0.1', 'bind_port': str(self.port)}
        # More servers and volumes in one project than the default quotas.
        conf['quota'] = {'instances': '-1', 'cores': '-1', 'ram': '-1',
                         'volumes': '-1', 'gigabytes': '-1'}
        for item in self.args.set or []:
            key, value = item.split('=', 1)
            group, option = key.rsplit('.', 1)
            group = 'DEFAULT' if group.upper() == 'DEFAULT' else group
            if group != 'DEFAULT' and not conf.has_section(group):
                conf.add_section(group)
            conf[group][option] = value
        conf_path = os.path.join(self.workdir, 'nova-lite.conf')
        with open(conf_path, 'w') as f:
            conf.write(f)
        self.log_path = os.path.join(self.workdir, 'nova-lite-all.log')
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join(
            [self.repo, env.get('PYTHONPATH', '')])
        env.pop('OS_NOVA_LITE_CONFIG_FILE', None)
        self.proc = subprocess.Popen(
            [self.args.python, '-m', 'nova_lite.cmd.all',
             '--config-file', conf_path],
            cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
            stdout=open(os.path.join(self.workdir, 'stdout.log'), 'w'),
            stderr=subprocess.STDOUT)
        self.client = Client(self.port, fresh=self.args.new_connections)

        def up():
            if self.proc.poll() is not None:
                raise BenchError('nova-lite-all exited with %s; see %s' % (
                    self.proc.returncode, self.workdir))
            try:
                return self.client.request('GET', '/', timeout=2)[0] < 500
            except OSError:
                return False
        wait_for(up, 60, 0.1, 'nova-lite-all to answer')

    def start_profiler(self):
        """``--py-spy FILE``: sample the server with py-spy (not a
        requirement of nova_lite; install it yourself) while the series
        run: collapsed stacks (``--format raw``), without pausing the
        process (``--nonblocking``), idle threads left out."""
        if not self.args.py_spy:
            return None
        exe = shutil.which('py-spy') or os.path.join(
            os.path.dirname(self.args.python), 'py-spy')
        profiler = subprocess.Popen(
            [exe, 'record', '--pid', str(self.proc.pid), '--rate', '250',
             '--nonblocking', '--format', 'raw', '--threads',
             '-o', self.args.py_spy],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)  # let it attach; not a wait for the system
        return profiler

    def cpu_seconds(self):
        """User + system CPU time of the server process so far."""
        with open('/proc/%d/stat' % self.proc.pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        ticks = os.sysconf('SC_CLK_TCK')
        return (int(fields[11]) + int(fields[12])) / float(ticks)

    def peak_rss_mb(self):
        with open('/proc/%d/status' % self.proc.pid) as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return round(int(line.split()[1]) / 1024.0, 1)
        return None

    def stop(self, remove=True):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.workdir and remove and not self.args.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- helpers ------------------------------------------------------------
    def compute_max(self):
        status, body = self.client.request('GET', '/v2.1/')
        return body['version']['version']

    def create_server(self, name):
        _t, body = self.client.timed(
            'POST', '/v2.1/servers', 202, compute='2.37',
            body={'server': {'name': name, 'flavorRef': '1',
                             'imageRef': IMAGE, 'networks': 'none'}})
        server_id = body['server']['id']

        def active():
            _s, b = self.client.request('GET', '/v2.1/servers/%s' % server_id)
            s = b['server']
            if s['status'] == 'ERROR':
                raise BenchError('server %s went to ERROR' % server_id)
            return s['status'] == 'ACTIVE' and \
                s['OS-EXT-STS:task_state'] is None
        wait_for(active, 30, 0.01, 'server %s' % name)
        return server_id

    def create_volume(self, name):
        _t, body = self.client.timed(
            'POST', '/v3/volumes', 202, volume=VOLUME_VERSION,
            body={'volume': {'size': 1, 'name': name}})
        volume_id = body['volume']['id']
        self.wait_volume(volume_id, 'available', 0.01)
        return volume_id

    def show_volume(self, volume_id):
        status, body = self.client.request(
            'GET', '/v3/volumes/%s' % volume_id, volume=VOLUME_VERSION)
        if status != 200:
            raise BenchError('GET volume %s: %s' % (volume_id, status))
        return body['volume']

    def wait_volume(self, volume_id, status, interval=None):
        def check():
            volume = self.show_volume(volume_id)
            if volume['status'] == status:
                return volume
            if volume['status'].startswith('error'):
                raise BenchError('volume %s: %s' % (volume_id,
                                                    volume['status']))
            return None
        return wait_for(check, 30, interval or self.args.poll_interval,
                        'volume %s to be %s' % (volume_id, status))

    def wait_detached(self, server_id, volume_id, interval=None):
        """The volume is ``available`` and the server's mapping is gone
        (compute deletes the attachment, then the mapping)."""
        interval = interval or self.args.poll_interval
        self.wait_volume(volume_id, 'available', interval)
        path = '%s/%s' % (self.attach_path(server_id, None), volume_id)
        wait_for(lambda: self.client.request('GET', path)[0] == 404, 30,
                 interval, 'the mapping of %s' % volume_id)

    def attach_path(self, server_id, version):
        return '/v2.1/servers/%s/os-volume_attachments' % server_id

    def attach(self, server_id, volume_id, version):
        expect = 202 if version == '2.101' else 200
        return self.client.timed(
            'POST', self.attach_path(server_id, version), expect,
            compute=version, body={'volumeAttachment': {'volumeId':
                                                        volume_id}})[0]

    def detach(self, server_id, volume_id):
        return self.client.timed(
            'DELETE', '%s/%s' % (self.attach_path(server_id, None),
                                 volume_id), 202, compute='2.100')[0]

    # -- series ----------------------------------------------------------
    def attach_series(self, server_id, volume_id, version, results):
        post, complete, delete = [], [], []
        total = self.args.warmup + self.args.samples
        slow = self.args.latency_poll_interval
        for i in range(total):
            wall0 = time.time()
            t_post = self.attach(server_id, volume_id, version)
            volume = self.wait_volume(volume_id, 'in-use', slow)
            t_complete = parse_time(volume['updated_at']) - wall0
            # Let the compute host finish its step (the event's finish
            # after the attachment completes) before the DELETE is timed.
            time.sleep(slow)
            t_delete = self.detach(server_id, volume_id)
            self.wait_detached(server_id, volume_id, slow)
            if i >= self.args.warmup:
                post.append(t_post)
                complete.append(t_complete)
                delete.append(t_delete)
        results['post_attach_%s' % version] = summary(post)
        results['attach_complete_%s' % version] = summary(complete)
        results.setdefault('delete_attachment', summary(delete))

    def list_series(self, results):
        server_for = {}
        for count in (0, 10, 50):
            server_id = self.create_server('bench-list-%d' % count)
            for n in range(count):
                volume_id = self.create_volume('bench-list-%d-%d' % (count,
                                                                     n))
                self.attach(server_id, volume_id, '2.100')
                self.wait_volume(volume_id, 'in-use', 0.01)
            server_for[count] = server_id
        path = '/v2.1/servers/%s/os-volume_attachments'
        for count, server_id in server_for.items():
            samples = []
            for i in range(self.args.warmup + self.args.samples):
                elapsed, body = self.client.timed(
                    'GET', path % server_id, 200, compute='2.100')
                if len(body['volumeAttachments']) != count:
                    raise BenchError('server with %d volumes lists %d' % (
                        count, len(body['volumeAttachments'])))
                if i >= self.args.warmup:
                    samples.append(elapsed)
            results['list_attachments_%d' % count] = summary(samples)

    def cycles(self, server_id, volume_id, results):
        # Warm-up cycles, then as many as fit in the window.
        for _i in range(3):
            self.attach(server_id, volume_id, '2.100')
            self.wait_volume(volume_id, 'in-use')
            self.detach(server_id, volume_id)
            self.wait_detached(server_id, volume_id)
        count = 0
        cpu_start = self.cpu_seconds()
        start = time.perf_counter()
        deadline = start + self.args.cycle_seconds
        while time.perf_counter() < deadline:
            self.attach(server_id, volume_id, '2.100')
            self.wait_volume(volume_id, 'in-use')
            self.detach(server_id, volume_id)
            self.wait_detached(server_id, volume_id)
            count += 1
        elapsed = time.perf_counter() - start
        cpu = self.cpu_seconds() - cpu_start
        results['cycles_per_second'] = {
            'cycles': count, 'seconds': round(elapsed, 2),
            'per_second': round(count / elapsed, 2),
            'server_cpu_ms_per_cycle': round(cpu * 1000.0 / count, 1)}

    def pause_series(self, volume_id, results):
        count = 5 * self.args.samples
        cpu = {}
        for name, pause in (('back_to_back', 0.0),
                            ('after_pause', self.args.poll_interval)):
            for _i in range(self.args.warmup):
                self.show_volume(volume_id)
            samples = []
            cpu_start = self.cpu_seconds()
            for _i in range(count):
                if pause:
                    time.sleep(pause)  # the pause is what is measured
                start = time.perf_counter()
                self.show_volume(volume_id)
                samples.append(time.perf_counter() - start)
            cpu[name] = (self.cpu_seconds() - cpu_start) * 1000.0 / count
            result = summary(samples)
            result['server_cpu_ms_per_request'] = round(cpu[name], 3)
            results['get_volume_%s' % name] = result
        results['cpu_ratio_after_pause'] = round(
            cpu['after_pause'] / cpu['back_to_back'], 2) if (
                cpu['back_to_back']) else None

    def run(self):
        only = set(self.args.only.split(',')) if self.args.only else set(
            SERIES)
        results = {}
        started = time.monotonic()
        self.start()
        try:
            compute_max = self.compute_max()
            server_id = self.create_server('bench-attach')
            volume_id = self.create_volume('bench-attach')
            versions = ['2.100']
            if tuple(int(p) for p in compute_max.split('.')) >= (2, 101):
                versions.append('2.101')
            else:
                results['post_attach_2.101'] = 'not available: the server ' \
                    'offers compute up to %s' % compute_max
            profiler = self.start_profiler()
            if 'post_attach' in only:
                for version in versions:
                    self.attach_series(server_id, volume_id, version,
                                       results)
            if 'list' in only:
                self.list_series(results)
            if 'cycles' in only:
                self.cycles(server_id, volume_id, results)
            if 'pause' in only:
                self.pause_series(volume_id, results)
            results['peak_rss_mb'] = self.peak_rss_mb()
            if profiler is not None:
                profiler.send_signal(2)
                profiler.wait(timeout=60)
        except BaseException:
            self.stop(remove=False)
            raise
        self.stop()
        return {
            'results': results,
            'environment': {
                'python': platform.python_version(),
                'cpus': os.cpu_count(),
                'compute_max_microversion': compute_max,
                'samples': self.args.samples,
                'warmup': self.args.warmup,
                'poll_interval_s': self.args.poll_interval,
                'latency_poll_interval_s': self.args.latency_poll_interval,
                'server_config': getattr(self.args, 'set', None) or [],
                'new_connection_per_request': self.args.new_connections,
                'git_commit': git_commit(),
                'run_seconds': round(time.monotonic() - started, 1),
                'load_average_1m': round(os.getloadavg()[0], 2),
            },
        }


def git_commit():
    try:
        return subprocess.run(
            ['git', '-C', REPO, 'rev-parse', '--short', 'HEAD'],
            capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def build_parser(description, server='nova-lite-all', series=SERIES):
    """The options of this benchmark (``floor.py`` adds its own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--samples', type=int, default=200)
    parser.add_argument('--warmup', type=int, default=20)
    parser.add_argument('--cycle-seconds', type=float, default=20.0)
    parser.add_argument('--poll-interval', type=float, default=0.005,
                        help='seconds between two polls of a volume in '
                             'the cycles series')
    parser.add_argument('--latency-poll-interval', type=float, default=0.02,
                        help='seconds between two polls of a volume in '
                             'the latency series')
    parser.add_argument('--only', type=_series_list(series),
                        help='comma-separated subset of %s' %
                        ', '.join(series))
    parser.add_argument('--python', default=sys.executable,
                        help='interpreter that runs %s' % server)
    parser.add_argument('--new-connections', action='store_true',
                        help='open a new connection for every request '
                             '(default: one persistent connection)')
    parser.add_argument('--py-spy', metavar='FILE',
                        help='profile the server with py-spy into FILE '
                             '(collapsed stacks)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the state directory and server log')
    parser.add_argument('--output', help='also write the JSON here')
    return parser


def _series_list(series):
    def parse(value):
        names = [name for name in value.split(',') if name]
        unknown = sorted(set(names) - set(series))
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                '%s: not a series (the series are %s)' % (
                    ', '.join(unknown) or repr(value), ', '.join(series)))
        return ','.join(names)
    return parse


def run_and_print(bench):
    """Run ``bench``, print its report (and write ``--output``)."""
    try:
        report = bench.run()
    except BenchError as exc:
        print('benchmark failed: %s' % exc, file=sys.stderr)
        if bench.workdir:
            print('state and log: %s' % bench.workdir, file=sys.stderr)
        return 1
    text = json.dumps(report, indent=2, sort_keys=True)
    print(text)
    if bench.args.output:
        with open(bench.args.output, 'w') as f:
            f.write(text + '\n')
    return 0


def main(argv=None):
    parser = build_parser(__doc__.split('\n')[0])
    parser.add_argument('--set', action='append', metavar='GROUP.OPT=VALUE',
                        help='extra server configuration')
    return run_and_print(Bench(parser.parse_args(argv)))


if __name__ == '__main__':
    sys.exit(main())
