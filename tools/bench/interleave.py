#!/usr/bin/env python3
"""Two servers, one client, their attach-and-detach cycles interleaved.

On a shared or virtual machine the speed changes by up to half within
minutes, so two runs of ``attach_cycle.py`` taken one after the other
compare the minutes as much as the code. This script starts both servers
at once (each on its own state directory and port, idle while the other
works), then runs ``--blocks`` blocks of ``--cycles`` cycles on each in
turn (A B, B A, A B...), so that both see the same minutes, and reports per
server the medians over the blocks and, per block, the ratio A / B.

A server is either ``floor`` (``tools/bench/floor.py``'s server, this
tree's) or the path of a nova_lite source tree, whose ``nova-lite-all`` is
started with that tree first on ``PYTHONPATH`` (e.g. a ``git archive`` of
an older commit). The cycle is ``attach_cycle.py``'s: POST at 2.100, poll
until ``in-use``, DELETE, poll until ``available`` and the mapping is
gone, every 5 ms. After each block, three more cycles time their POST and
DELETE and one ``GET /v3/volumes/{id}``.

    python tools/bench/interleave.py [--blocks 40] [--cycles 15] A B
    python tools/bench/interleave.py /tmp/old-tree .    # old vs this
    python tools/bench/interleave.py . floor            # this vs floor
"""

import argparse
import json
import os
import statistics
import sys
import time

import attach_cycle
import floor


def _bench(which, args):
    options = argparse.Namespace(
        samples=0, warmup=0, cycle_seconds=0, only='cycles', set=None,
        output=None, keep=False, py_spy=None, new_connections=False,
        poll_interval=args.poll_interval, latency_poll_interval=0.02,
        python=args.python)
    if which == 'floor':
        return floor.FloorBench(options)
    bench = attach_cycle.Bench(options)
    bench.repo = os.path.abspath(which)
    if not os.path.isdir(os.path.join(bench.repo, 'nova_lite')):
        raise SystemExit('%s: not a nova_lite source tree' % which)
    return bench


class Server(object):
    def __init__(self, name, bench):
        self.name = name
        self.bench = bench
        self.wall = []
        self.cpu = []
        self.post = []
        self.delete = []
        self.get = []
        self.rss = None

    def start(self):
        self.bench.start()
        self.server_id = self.bench.create_server('interleave')
        self.volume_id = self.bench.create_volume('interleave')

    def cycle(self):
        b, server_id, volume_id = self.bench, self.server_id, self.volume_id
        post = b.attach(server_id, volume_id, '2.100')
        b.wait_volume(volume_id, 'in-use')
        delete = b.detach(server_id, volume_id)
        b.wait_detached(server_id, volume_id)
        return post, delete

    def block(self, cycles):
        cpu0 = self.bench.cpu_seconds()
        start = time.perf_counter()
        for _ in range(cycles):
            self.cycle()
        self.wall.append((time.perf_counter() - start) / cycles * 1000.0)
        self.cpu.append((self.bench.cpu_seconds() - cpu0) / cycles * 1000.0)
        for _ in range(3):
            post, delete = self.cycle()
            self.post.append(post * 1000.0)
            self.delete.append(delete * 1000.0)
            start = time.perf_counter()
            self.bench.show_volume(self.volume_id)
            self.get.append((time.perf_counter() - start) * 1000.0)

    def report(self):
        wall = statistics.median(self.wall)
        return {
            'cycles_per_second': round(1000.0 / wall, 1),
            'cycle_ms': round(wall, 2),
            'cycles_per_second_range': [round(1000.0 / max(self.wall), 1),
                                        round(1000.0 / min(self.wall), 1)],
            'server_cpu_ms_per_cycle': round(statistics.median(self.cpu), 2),
            'post_attach_2.100_ms': round(statistics.median(self.post), 2),
            'delete_attachment_ms': round(statistics.median(self.delete), 2),
            'get_volume_ms': round(statistics.median(self.get), 2),
            'peak_rss_mb': self.rss,
        }


def _ratios(a, b):
    ratios = sorted(x / y for x, y in zip(a, b))
    return {'median': round(statistics.median(ratios), 3),
            'min': round(ratios[0], 3), 'max': round(ratios[-1], 3)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('a', help="a nova_lite source tree, or 'floor'")
    parser.add_argument('b', help="a nova_lite source tree, or 'floor'")
    parser.add_argument('--blocks', type=int, default=40)
    parser.add_argument('--cycles', type=int, default=15,
                        help='cycles per block')
    parser.add_argument('--warmup', type=int, default=20,
                        help='cycles per server before the first block')
    parser.add_argument('--poll-interval', type=float, default=0.005)
    parser.add_argument('--python', default=sys.executable)
    parser.add_argument('--output', help='also write the JSON here')
    args = parser.parse_args(argv)
    servers = [Server('A', _bench(args.a, args)),
               Server('B', _bench(args.b, args))]
    try:
        for server in servers:
            server.start()
            for _ in range(args.warmup):
                server.cycle()
        for block in range(args.blocks):
            for server in (servers if block % 2 == 0 else servers[::-1]):
                server.block(args.cycles)
        for server in servers:
            server.rss = server.bench.peak_rss_mb()
    except attach_cycle.BenchError as exc:
        print('benchmark failed: %s' % exc, file=sys.stderr)
        return 1
    finally:
        for server in servers:
            server.bench.stop()
    a, b = servers
    report = {
        'A': dict(a.report(), what=args.a),
        'B': dict(b.report(), what=args.b),
        'ratio_a_over_b_per_block': {
            'cycle_ms': _ratios(a.wall, b.wall),
            'server_cpu_ms_per_cycle': _ratios(a.cpu, b.cpu),
        },
        'environment': {
            'blocks': args.blocks, 'cycles_per_block': args.cycles,
            'poll_interval_s': args.poll_interval,
            'git_commit': attach_cycle.git_commit(),
            'cpus': os.cpu_count(),
            'load_average_1m': round(os.getloadavg()[0], 2),
        },
    }
    text = json.dumps(report, indent=2, sort_keys=True)
    print(text)
    if args.output:
        with open(args.output, 'w') as f:
            f.write(text + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
