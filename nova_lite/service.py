"""A running nova_lite service: one RPC server for one manager, its row in
``services`` and a heartbeat; and the clock tick of the API processes.

Services run on threads (oslo.messaging's ``threading`` executor), so several
of them can share one process in the embedded ``nova-lite-all``, and each runs
alone in ``nova-lite-conductor`` / ``nova-lite-compute``. Their heartbeat and
their manager's periodic tasks are ``futurist.periodics``.
"""

import functools
import threading
import time

import futurist
from futurist import periodics
from oslo_log import log as logging
import oslo_messaging as messaging

from nova_lite import baserpc
from nova_lite import context as nl_context
from nova_lite import objects
from nova_lite.objects import service as service_obj
from nova_lite import rpc

LOG = logging.getLogger(__name__)


def create(conf, host, binary, topic, manager_class):
    """The ``binary`` service of ``host`` (``[DEFAULT] host`` when None)
    serving ``topic`` with a ``manager_class`` manager, not started."""
    host = host or conf.host
    return Service(conf, host, binary, topic, manager_class(conf, host))


class Service(object):
    """``servers``: the server names of ``topic`` it consumes (default:
    its host); ``rows``: the ``(host, binary)`` rows of ``services`` it
    registers and beats (default: its own)."""

    def __init__(self, conf, host, binary, topic, manager, servers=None,
                 rows=None):
        self.conf = conf
        self.host = host
        self.binary = binary
        self.topic = topic
        self.manager = manager
        self.servers = list(servers or [host])
        self.rows = list(rows or [(host, binary)])
        self.service_ref = None
        self.service_refs = []
        self._rpc_servers = []
        self._periodics = None

    def start(self):
        ctxt = nl_context.get_admin_context()
        objects.register_all()
        # The unfinished work of this host first, then messages; the
        # service shows up (its heartbeat) only once its RPC server
        # consumes: a service seen up before its queues exist would have
        # the casts sent to it meanwhile dropped by the broker.
        self.manager.init_host(ctxt)
        endpoints = [self.manager, baserpc.BaseRPCAPI(self.binary)]
        for server in self.servers:
            target = messaging.Target(topic=self.topic, server=server)
            rpc_server = rpc.get_server(self.conf, target, endpoints)
            rpc_server.start()
            self._rpc_servers.append(rpc_server)
        interval = self.conf.report_interval
        callables = []
        for host, binary in self.rows:
            ref = service_obj.Service.register(ctxt, host, binary,
                                               self.topic)
            ref.heartbeat(interval)
            self.service_refs.append(ref)
            callables.append(beat_every(
                interval, functools.partial(ref.heartbeat, interval),
                'Heartbeat of %s on %s' % (binary, host)))
        self.service_ref = self.service_refs[0]
        if self.manager.periodic_interval:
            @periodics.periodic(self.manager.periodic_interval)
            def periodic_tasks():
                try:
                    self.manager.periodic_tasks(ctxt)
                except Exception:
                    LOG.exception('Periodic tasks of %s failed', self.binary)
            callables.append(periodic_tasks)
        self._periodics = Periodics(
            callables, '%s-%s' % (self.binary, self.host)).start()
        LOG.info('%s started on host %s (topic %s)', self.binary, self.host,
                 self.topic)

    def stop(self):
        """Stop taking new messages (returns at once; see ``wait``)."""
        if self._periodics is not None:
            self._periodics.stop()
        for rpc_server in self._rpc_servers:
            rpc_server.stop()

    def wait(self):
        """Wait for messages in progress and the service's periodics."""
        for rpc_server in self._rpc_servers:
            rpc_server.wait()
        self._rpc_servers = []
        if self._periodics is not None:
            self._periodics.wait()
            self._periodics = None
        self.manager.cleanup_host()
        LOG.info('%s on host %s stopped', self.binary, self.host)


class Periodics(object):
    """``futurist.periodics`` callables run by a ``PeriodicWorker`` on a
    thread of their own, each on a thread of a small pool (a long run of
    one, the conductor's settling say, never delays another, a
    heartbeat). A callable never runs twice at once. The pool's thread
    running a callable is named ``<name>-periodic`` (log lines, and what
    the statement counts of ``tests/functional/test_query_counts.py``
    leave out)."""

    def __init__(self, callables, name):
        self.name = name
        self._worker = periodics.PeriodicWorker(
            [(_on_named_thread(c, '%s-periodic' % name), None, None)
             for c in callables],
            executor_factory=lambda: futurist.ThreadPoolExecutor(
                max_workers=len(callables)))
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._worker.start,
                                        daemon=True,
                                        name='%s-periodics' % self.name)
        self._thread.start()
        return self

    def stop(self):
        self._worker.stop()

    def wait(self, timeout=5):
        self._worker.wait(timeout=timeout)
        self._thread.join(timeout=timeout)


def _on_named_thread(callable_, name):
    """``callable_`` (a ``periodics.periodic``: ``functools.wraps`` keeps
    its spacing) run with the current thread named ``name``."""
    @functools.wraps(callable_)
    def run(*args, **kwargs):
        threading.current_thread().name = name
        return callable_(*args, **kwargs)
    return run


# Seconds between two attempts of a heartbeat (or tick) after one failed:
# once the database answers again, the first one lands soon after.
RETRY_INTERVAL = 1


def beat_every(interval, beat, what):
    """A periodic callable that calls ``beat`` every ``interval`` seconds
    and, after a failure, every ``RETRY_INTERVAL`` seconds until it works
    again (the periodic itself runs every ``min(interval,
    RETRY_INTERVAL)`` seconds and beats when one is due). A database
    outage must not stop it: it is logged when it starts and when it ends
    (the database's silence does not make the services down:
    ``nova_lite.objects.service``)."""
    state = {'due': time.monotonic() + interval, 'failing_since': None}

    @periodics.periodic(min(interval, RETRY_INTERVAL))
    def periodic_beat():
        now = time.monotonic()
        if now < state['due']:
            return
        try:
            beat()
        except Exception:
            if state['failing_since'] is None:
                state['failing_since'] = now
                LOG.exception('%s failed; trying again every %s s', what,
                              min(interval, RETRY_INTERVAL))
            state['due'] = now + min(interval, RETRY_INTERVAL)
            return
        if state['failing_since'] is not None:
            LOG.info('%s works again after %.1f s', what,
                     now - state['failing_since'])
            state['failing_since'] = None
        state['due'] = now + interval
    return periodic_beat


class ClockTicker(object):
    """The API process's part in the liveness clock: a tick every
    ``report_interval`` seconds (``service_obj.tick``), so that the time
    in which the database takes writes is counted even when no service
    runs. A periodic of its own; ``stop()`` ends it."""

    def __init__(self, conf):
        self.conf = conf
        self._periodics = None

    def start(self):
        ctxt = nl_context.get_admin_context()
        interval = self.conf.report_interval
        self._periodics = Periodics([beat_every(
            interval, lambda: service_obj.tick(ctxt, interval),
            'The clock tick of this API process')],
            'nova-lite-api-%s' % self.conf.host).start()
        return self

    def stop(self):
        if self._periodics is not None:
            self._periodics.stop()
            self._periodics.wait()
            self._periodics = None
