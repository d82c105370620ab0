#!/usr/bin/env python3
"""Latency of the ``iscsi`` backend's connection calls on a real tgtd.

One volume (a sparse file) is connected and disconnected ``--n`` times:

* ``initialize_first``: the first host; the target, its LUN and its CHAP
  account are made, the initiator bound;
* ``initialize_second``: a second host while the target exists (bind);
* ``terminate_second``: that host goes, the target stays (unbind);
* ``terminate_last``: the last host goes: unbind, target and account
  deleted.

Each call is timed around the driver method (tgtadm processes, the file
lock, the records). Prints one JSON document: p50, p99 and max in
milliseconds per series. Needs root and tgtd (``tgtd --iscsi
portal=127.0.0.1:3260``, or ``--control-port`` for another one); its
targets use a prefix of their own and are removed.

    python tools/bench/iscsi_connect.py [--n 50] [--control-port N]
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

from oslo_config import cfg

try:
    from nova_lite import config
except ImportError:  # run from a work tree without nova_lite installed
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    from nova_lite import config
from nova_lite.volume import drivers


def percentile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--n', type=int, default=50)
    parser.add_argument('--control-port', type=int, default=0)
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
    volume.update(driver.create_volume(volume))
    h1 = {'host': 'bench1', 'initiator': 'iqn.2024-01.bench:h1',
          'mode': 'rw'}
    h2 = {'host': 'bench2', 'initiator': 'iqn.2024-01.bench:h2',
          'mode': 'rw'}
    series = {name: [] for name in ('initialize_first', 'initialize_second',
                                    'terminate_second', 'terminate_last')}

    def timed(name, call, *call_args):
        start = time.perf_counter()
        call(*call_args)
        series[name].append((time.perf_counter() - start) * 1000.0)
    try:
        for _i in range(args.n):
            timed('initialize_first', driver.initialize_connection, volume,
                  h1)
            timed('initialize_second', driver.initialize_connection, volume,
                  h2)
            timed('terminate_second', driver.terminate_connection, volume,
                  h2)
            timed('terminate_last', driver.terminate_connection, volume, h1)
    finally:
        driver.delete_volume(volume)
        shutil.rmtree(state, ignore_errors=True)
    print(json.dumps({
        'runs': args.n,
        'python': platform.python_version(),
        'cpus': os.cpu_count(),
        'ms': {name: {'p50': round(percentile(s, 0.5), 2),
                      'p99': round(percentile(s, 0.99), 2),
                      'max': round(max(s), 2)}
               for name, s in series.items()},
    }, indent=2))


if __name__ == '__main__':
    main()
