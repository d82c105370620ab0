#!/usr/bin/env python3
"""Latency of one RPC hop through oslo.messaging: inproc:// versus fake://.

For each transport an RPC server (``threading`` executor) and an RPC client
run in this process, as in ``nova-lite-all``.  Two series are timed after a
warm-up:

* ``call``: ``RPCClient.call()`` round trip (request, dispatch, reply);
* ``cast``: ``RPCClient.cast()`` until the endpoint has run (the endpoint
  hands the sequence number back through a queue).

``inproc-nojson`` is the inproc driver with its JSON wire round trip
replaced by passing objects through, to show what the serialization check
costs.  Prints one JSON document: median, p95 and p99 in microseconds per
series.  Each series stops after ``--n`` samples or ``--max-seconds``,
whichever comes first (the fake driver needs ~50 ms a call), so the run
time is bounded.

    python tools/bench/rpc_hop.py [--n 500] [--warmup 50] [--max-seconds 30]
"""

import argparse
import json
import os
import platform
import queue
import statistics
import sys
import time
import uuid

from oslo_config import cfg
from oslo_serialization import jsonutils
import oslo_messaging
from oslo_messaging import conffixture
from oslo_messaging import transport as msg_transport

try:
    from nova_lite.transport import inproc
except ImportError:  # run from a work tree without nova_lite installed
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    from nova_lite.transport import inproc


class NoJSONDriver(inproc.InProcDriver):
    """inproc without the JSON wire: objects are passed through."""

    _dumps = staticmethod(lambda obj: obj)
    _loads = staticmethod(lambda wire: wire)


class Endpoint:
    def __init__(self):
        self.done = queue.SimpleQueue()

    def attach(self, ctxt, instance_uuid, volume_id, device):
        return {'instance_uuid': instance_uuid, 'volume_id': volume_id,
                'device': device, 'status': 'attached'}

    def attach_cast(self, ctxt, instance_uuid, volume_id, device, seq):
        self.done.put(seq)


def make_transport(conf, name):
    """Return (transport, how it was loaded)."""
    if name == 'fake':
        return oslo_messaging.get_rpc_transport(conf, 'fake://'), 'stevedore'
    url = oslo_messaging.TransportURL.parse(conf, 'inproc:///bench')
    if name == 'inproc':
        try:
            return (oslo_messaging.get_rpc_transport(conf, url),
                    'stevedore entry point')
        except msg_transport.DriverLoadFailure:
            pass  # nova_lite not installed: build the driver directly
        driver_cls = inproc.InProcDriver
    else:
        driver_cls = NoJSONDriver
    driver = driver_cls(conf, url, default_exchange=conf.control_exchange)
    return msg_transport.RPCTransport(driver), 'direct construction'


def summarize(samples):
    if len(samples) < 2:
        return {'n': len(samples)}
    us = [s * 1e6 for s in samples]
    cuts = statistics.quantiles(us, n=100, method='inclusive')
    return {'n': len(us), 'median_us': round(statistics.median(us), 1),
            'p95_us': round(cuts[94], 1), 'p99_us': round(cuts[98], 1)}


def run_series(fn, n, warmup, max_seconds):
    for i in range(warmup):
        fn(i)
    samples = []
    stop_at = time.monotonic() + max_seconds
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - start)
        if time.monotonic() > stop_at:
            break
    return summarize(samples)


def bench(conf, name, args):
    transport, loaded_via = make_transport(conf, name)
    endpoint = Endpoint()
    topic = 'bench-%s' % uuid.uuid4().hex
    server = oslo_messaging.get_rpc_server(
        transport, oslo_messaging.Target(topic=topic, server='host1'),
        [endpoint], executor='threading')
    server.start()
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=topic), timeout=30)
    kwargs = {'instance_uuid': str(uuid.uuid4()),
              'volume_id': str(uuid.uuid4()), 'device': '/dev/vdb'}

    def call(i):
        client.call({'request_id': 'req-1'}, 'attach', **kwargs)

    def cast(i):
        client.cast({'request_id': 'req-1'}, 'attach_cast', seq=i, **kwargs)
        got = endpoint.done.get(timeout=30)
        assert got == i, (got, i)

    try:
        return {'loaded_via': loaded_via,
                'call': run_series(call, args.n, args.warmup,
                                   args.max_seconds),
                'cast': run_series(cast, args.n, args.warmup,
                                   args.max_seconds)}
    finally:
        server.stop()
        server.wait()
        transport.cleanup()


def json_roundtrip_us(repeat=2000):
    """Median cost of the JSON wire for this benchmark's request+reply."""
    request = ({'request_id': 'req-1'},
               {'method': 'attach', 'version': '1.0', 'args': {
                   'instance_uuid': str(uuid.uuid4()),
                   'volume_id': str(uuid.uuid4()), 'device': '/dev/vdb'}})
    reply = {'result': dict(request[1]['args'], status='attached'),
             'failure': None}
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        jsonutils.loads(jsonutils.dumps(request))
        jsonutils.loads(jsonutils.dumps(reply))
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1e6, 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--n', type=int, default=500,
                        help='timed samples per series (default 500)')
    parser.add_argument('--warmup', type=int, default=50,
                        help='untimed samples first (default 50)')
    parser.add_argument('--max-seconds', type=float, default=30,
                        help='cap on the timed part of each series')
    parser.add_argument('--transports', default='inproc,inproc-nojson,fake',
                        help='comma-separated: inproc, inproc-nojson, fake')
    args = parser.parse_args(argv)

    conf = cfg.ConfigOpts()
    conffixture.ConfFixture(conf)
    conf([], project='rpc-hop-bench', default_config_files=[])
    started = time.monotonic()
    results = {'python': platform.python_version(),
               'oslo.messaging': _version('oslo.messaging'),
               'cpus': os.cpu_count(), 'n': args.n, 'warmup': args.warmup,
               'json_roundtrip_us': json_roundtrip_us(), 'transports': {}}
    for name in args.transports.split(','):
        results['transports'][name] = bench(conf, name, args)
    results['wall_seconds'] = round(time.monotonic() - started, 1)
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write('\n')


def _version(dist):
    try:
        from importlib import metadata
        return metadata.version(dist)
    except Exception:
        return None


if __name__ == '__main__':
    main()
