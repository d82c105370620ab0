#!/usr/bin/env python3
"""Cost as a project grows: lists, show and attach with N servers and N
volumes in one project.

Starts ``nova-lite-all`` as ``attach_cycle.py`` does (fresh state
directory, free loopback port, defaults), creates one server and one
volume through the API (the ones the attach series uses), then for each N
of ``--scales`` (default 100, 1000, 10000) fills the project up to N
servers and N volumes and times, as one client, ``--samples`` times each
(medians, p95; milliseconds):

``list_servers`` / ``list_servers_detail``
    GET /v2.1/servers?limit=10 and /servers/detail?limit=10;
``list_servers_page``
    the page after a marker halfway through the project's servers;
``show_server``
    GET /v2.1/servers/{id};
``list_volumes`` / ``list_volumes_detail``
    GET /v3/{project}/volumes?limit=10 and /volumes/detail?limit=10;
``show_volume``
    GET /v3/{project}/volumes/{id};
``attach_post`` / ``attach_in_use`` / ``detach``
    POST os-volume_attachments at 2.101 (202), the time until the volume
    is ``in-use`` (polling every 5 ms), and DELETE until it is
    ``available`` again and the server's mapping is gone.

The filler servers and volumes are rows written straight into the
database (SQLAlchemy Core, one transaction per thousand rows), as the API
would have left them: ``ACTIVE`` servers on the benchmark's compute host
and ``available`` volumes. Creating ten thousand of each through the API
would take the best part of an hour and measure the create path instead.

The report has, per figure, the median at each N and ``ratio``: the
median at the largest N over the one at the smallest. The target is flat
cost: every ratio within 1.5.

    python tools/bench/scale.py [--scales 100,1000,10000] [--samples 50]
        [--output scale.json]
"""

import datetime
import os
import sys
import time
import uuid

import sqlalchemy as sa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attach_cycle  # noqa: E402

PROJECT = 'demo'
CHUNK = 1000


def _scales(value):
    try:
        scales = sorted({int(v) for v in value.split(',') if v})
    except ValueError:
        raise attach_cycle.argparse.ArgumentTypeError(
            'scales are whole numbers, e.g. 100,1000,10000')
    if not scales or scales[0] < 2:
        raise attach_cycle.argparse.ArgumentTypeError(
            'at least one scale, each of 2 or more')
    return scales


class ScaleBench(attach_cycle.Bench):

    def __init__(self, args):
        super().__init__(args)
        self.engine = None
        self.servers = 0
        self.volumes = 0

    def _database(self):
        if self.engine is None:
            path = os.path.join(self.workdir, 'state', 'nova_lite.sqlite')
            self.engine = sa.create_engine('sqlite:///%s' % path)
        return self.engine

    def _fill(self, table, count, row):
        """Insert ``count`` rows made by ``row(now)`` into ``table``."""
        meta = sa.MetaData()
        tbl = sa.Table(table, meta, autoload_with=self._database())
        done = 0
        while done < count:
            n = min(CHUNK, count - done)
            # Older than anything the API writes during the series: the
            # filler comes after the real server and volume in the lists.
            stamp = datetime.datetime(2026, 1, 1) + datetime.timedelta(
                seconds=done)
            with self._database().begin() as conn:
                conn.execute(tbl.insert(), [row(stamp, done + i)
                                            for i in range(n)])
            done += n

    def fill_to(self, n):
        def server(stamp, i):
            return {'uuid': str(uuid.uuid4()), 'display_name': 'fill-%d' % i,
                    'project_id': PROJECT, 'user_id': PROJECT,
                    'host': 'bench-compute', 'availability_zone': 'nova',
                    'flavor_id': '1', 'image_ref': attach_cycle.IMAGE,
                    'vm_state': 'active', 'task_state': None,
                    'power_state': 1, 'launched_at': stamp, 'locked': False,
                    'launch_index': 0, 'root_device_name': '/dev/vda',
                    'created_at': stamp}

        def volume(stamp, i):
            return {'id': str(uuid.uuid4()), 'project_id': PROJECT,
                    'user_id': PROJECT, 'display_name': 'fill-%d' % i,
                    'size': 1, 'status': 'available',
                    'attach_status': 'detached', 'multiattach': False,
                    'bootable': False, 'encrypted': False, 'deleted': False,
                    'created_at': stamp}
        self._fill('instances', n - self.servers, server)
        self._fill('volumes', n - self.volumes, volume)
        self.servers = self.volumes = n

    def _time(self, method, path, expect, **kw):
        samples = []
        for i in range(self.args.warmup + self.args.samples):
            elapsed, _body = self.client.timed(method, path, expect, **kw)
            if i >= self.args.warmup:
                samples.append(elapsed)
        return attach_cycle.summary(samples)

    def _attach_cycle(self, server_id, volume_id):
        post, in_use, detach = [], [], []
        base = '/v2.1/servers/%s/os-volume_attachments' % server_id
        poll = self.args.poll_interval
        for i in range(self.args.warmup + self.args.samples):
            start = time.perf_counter()
            self.client.timed('POST', base, 202, compute='2.101',
                              body={'volumeAttachment':
                                    {'volumeId': volume_id}})
            posted = time.perf_counter()
            self.wait_volume(volume_id, 'in-use', poll)
            attached = time.perf_counter()
            self.client.timed('DELETE', '%s/%s' % (base, volume_id), 202,
                              compute='2.101')
            self.wait_detached(server_id, volume_id, poll)
            done = time.perf_counter()
            if i >= self.args.warmup:
                post.append(posted - start)
                in_use.append(attached - start)
                detach.append(done - attached)
        return {'attach_post': attach_cycle.summary(post),
                'attach_in_use': attach_cycle.summary(in_use),
                'detach': attach_cycle.summary(detach)}

    def measure(self, server_id, volume_id):
        vol = attach_cycle.VOLUME_VERSION
        _s, body = self.client.request(
            'GET', '/v2.1/servers?limit=%d' % (self.servers // 2))
        marker = body['servers'][-1]['id']
        figures = {
            'list_servers': self._time('GET', '/v2.1/servers?limit=10', 200),
            'list_servers_detail': self._time(
                'GET', '/v2.1/servers/detail?limit=10', 200),
            'list_servers_page': self._time(
                'GET', '/v2.1/servers?limit=10&marker=%s' % marker, 200),
            'show_server': self._time('GET', '/v2.1/servers/%s' % server_id,
                                      200),
            'list_volumes': self._time('GET', '/v3/volumes?limit=10', 200,
                                       volume=vol),
            'list_volumes_detail': self._time(
                'GET', '/v3/volumes/detail?limit=10', 200, volume=vol),
            'show_volume': self._time('GET', '/v3/volumes/%s' % volume_id,
                                      200, volume=vol),
        }
        figures.update(self._attach_cycle(server_id, volume_id))
        return figures

    def run(self):
        started = time.monotonic()
        self.start()
        try:
            server_id = self.create_server('scale-server')
            volume_id = self.create_volume('scale-volume')
            self.servers = self.volumes = 1
            by_scale = {}
            for n in self.args.scales:
                self.fill_to(n)
                by_scale[n] = self.measure(server_id, volume_id)
            peak = self.peak_rss_mb()
        finally:
            self.stop()
        smallest, largest = self.args.scales[0], self.args.scales[-1]
        results = {}
        for name in by_scale[smallest]:
            medians = {str(n): by_scale[n][name]['median_ms']
                       for n in self.args.scales}
            results[name] = {
                'median_ms': medians,
                'p95_ms': {str(n): by_scale[n][name]['p95_ms']
                           for n in self.args.scales},
                'ratio': round(by_scale[largest][name]['median_ms'] /
                               by_scale[smallest][name]['median_ms'], 2),
            }
        return {
            'results': results,
            'peak_rss_mb': peak,
            'environment': {
                'scales': self.args.scales,
                'samples': self.args.samples,
                'warmup': self.args.warmup,
                'git_commit': attach_cycle.git_commit(),
                'run_seconds': round(time.monotonic() - started, 1),
                'load_average_1m': round(os.getloadavg()[0], 2),
            },
        }


def main(argv=None):
    parser = attach_cycle.build_parser(__doc__.split('\n')[0])
    parser.set_defaults(samples=50, warmup=5)
    parser.add_argument('--scales', type=_scales, default=[100, 1000, 10000],
                        help='comma-separated project sizes (servers and '
                             'volumes each)')
    parser.add_argument('--set', action='append', metavar='GROUP.OPT=VALUE',
                        help='extra server configuration')
    args = parser.parse_args(argv)
    return attach_cycle.run_and_print(ScaleBench(args))


if __name__ == '__main__':
    sys.exit(main())
