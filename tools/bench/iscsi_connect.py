#!/usr/bin/env python3
"""Latency of the ``iscsi`` backend's connection calls on a real tgtd.

One volume (a sparse file, made with ``create_volume``) is connected and
disconnected ``--n`` times:

* ``initialize_first``: the first host connects;
* ``initialize_second``: a second host while the first is connected;
* ``terminate_second``: that host goes;
* ``terminate_last``: the last host goes;
* ``export_pass``: block storage's export pass (``ensure_exports``, no
  volume connected), as it runs every ``export_check_interval`` between
  two attaches (it makes the target ready again: a spare CHAP account).

Each call is timed around the driver method (tgtadm processes, the file
lock, the records), and its ``tgtadm`` processes counted: ``calls`` (all
of them per call, median), ``changes`` (those that change tgtd: not a
``--op show``) and ``shows`` (``--op show`` of every target). Prints one
JSON document: p50, p99 and max in milliseconds per series. Needs root
and tgtd (``tgtd --iscsi portal=127.0.0.1:3260``, or ``--control-port``
for another one); its targets use a prefix of their own and are removed.
``--targets K`` creates K other volumes first (``create_volume``: each
with its target in tgtd where the driver makes targets at create; a
show of every target grows with them).

    python tools/bench/iscsi_connect.py [--n 50] [--control-port N]
        [--targets K]
"""

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid

from oslo_concurrency import processutils
from oslo_config import cfg

try:
    from nova_lite import config
except ImportError:  # run from a work tree without nova_lite installed
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    from nova_lite import config
from nova_lite.volume_service import drivers


def percentile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--n', type=int, default=50)
    parser.add_argument('--control-port', type=int, default=0)
    parser.add_argument('--targets', type=int, default=0)
    args = parser.parse_args()

    conf = cfg.ConfigOpts()
    config.prepare(conf)
    conf([], project='nova-lite', default_config_files=[])
    state = tempfile.mkdtemp(prefix='iscsi-bench-')
    conf.set_override('state_path', state)
    conf.set_override('enabled_backends', ['bench'], group='volume')
    drivers.register_backend_opts(conf)
    conf.set_override('volume_driver', 'iscsi', group='bench')
    drivers.register_backend_opts(conf)
    conf.set_override('target_prefix', 'iqn.2010-10.org.nova-lite.bench:%s-'
                      % uuid.uuid4().hex[:8], group='bench')
    conf.set_override('tgt_control_port', args.control_port, group='bench')
    driver = drivers.get_driver(conf, 'bench')

    volume = {'id': str(uuid.uuid4()), 'size': 1, 'multiattach': True,
              'provider_location': None}
    h1 = {'host': 'bench1', 'initiator': 'iqn.2024-01.bench:h1',
          'mode': 'rw'}
    h2 = {'host': 'bench2', 'initiator': 'iqn.2024-01.bench:h2',
          'mode': 'rw'}
    names = ('initialize_first', 'initialize_second', 'terminate_second',
             'terminate_last', 'export_pass')
    series = {name: [] for name in names}
    counts = {name: [] for name in names}
    ops = []
    execute = processutils.execute

    def counting(*cmd, **kwargs):
        if cmd and cmd[0] == 'tgtadm':
            ops.append(cmd[list(cmd).index('--op') + 1:][:3])
        return execute(*cmd, **kwargs)
    processutils.execute = counting

    def timed(name, call, *call_args):
        del ops[:]
        start = time.perf_counter()
        call(*call_args)
        series[name].append((time.perf_counter() - start) * 1000.0)
        shows = [op for op in ops if op[0] == 'show']
        counts[name].append((len(ops), len(ops) - len(shows), len(
            [op for op in shows if '--tid' not in op])))
    others = []
    try:
        for i in range(args.targets):
            other = {'id': 'other-%d-%s' % (i, uuid.uuid4().hex[:8]),
                     'size': 1, 'provider_location': None}
            other.update(driver.create_volume(other))
            others.append(other)
        volume.update(driver.create_volume(volume))
        for _i in range(args.n):
            timed('initialize_first', driver.initialize_connection, volume,
                  h1)
            timed('initialize_second', driver.initialize_connection, volume,
                  h2)
            timed('terminate_second', driver.terminate_connection, volume,
                  h2)
            timed('terminate_last', driver.terminate_connection, volume, h1)
            timed('export_pass', driver.ensure_exports, lambda **_: {})
    finally:
        processutils.execute = execute
        for each in [volume] + others:
            driver.delete_volume(each)
        driver.forget(lambda ids: set())
        shutil.rmtree(state, ignore_errors=True)
    print(json.dumps({
        'runs': args.n,
        'other_targets': args.targets,
        'python': platform.python_version(),
        'cpus': os.cpu_count(),
        'load': os.getloadavg()[0],
        'ms': {name: {'p50': round(percentile(s, 0.5), 2),
                      'p99': round(percentile(s, 0.99), 2),
                      'max': round(max(s), 2)}
               for name, s in series.items()},
        'tgtadm': {name: dict(zip(('calls', 'changes', 'shows'), (
            percentile([c[k] for c in counts[name]], 0.5)
            for k in range(3)))) for name in names},
    }, indent=2))


if __name__ == '__main__':
    main()
