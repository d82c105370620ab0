"""A running nova_lite service: one RPC server for one manager, its row in
``services`` and a heartbeat; and the clock tick of the API processes.

Services run on threads (oslo.messaging's ``threading`` executor), so several
of them can share one process in the embedded ``nova-lite-all``, and each runs
alone in ``nova-lite-conductor`` / ``nova-lite-compute``.
"""

import threading
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_lite import baserpc
from nova_lite import context as nl_context
from nova_lite import objects
from nova_lite.objects import service as service_obj
from nova_lite import rpc

LOG = logging.getLogger(__name__)


class Service(object):
    def __init__(self, conf, host, binary, topic, manager):
        self.conf = conf
        self.host = host
        self.binary = binary
        self.topic = topic
        self.manager = manager
        self.service_ref = None
        self._rpc_server = None
        self._stop = threading.Event()
        self._threads = []

    def start(self):
        ctxt = nl_context.get_admin_context()
        objects.register_all()
        # The unfinished work of this host first, then messages; the
        # service shows up (its heartbeat) only once its RPC server
        # consumes: a service seen up before its queues exist would have
        # the casts sent to it meanwhile dropped by the broker.
        self.manager.init_host(ctxt)
        target = messaging.Target(topic=self.topic, server=self.host)
        endpoints = [self.manager, baserpc.BaseRPCAPI(self.binary)]
        self._rpc_server = rpc.get_server(self.conf, target, endpoints)
        self._rpc_server.start()
        self.service_ref = service_obj.Service.register(
            ctxt, self.host, self.binary, self.topic)
        self.service_ref.heartbeat(self.conf.report_interval)
        self._spawn(self._heartbeat_loop, self.conf.report_interval,
                    'heartbeat')
        if self.manager.periodic_interval:
            self._spawn(self._periodic_loop, self.manager.periodic_interval,
                        'periodic')
        LOG.info('%s started on host %s (topic %s)', self.binary, self.host,
                 self.topic)

    def _spawn(self, fn, interval, name):
        thread = threading.Thread(
            target=fn, args=(interval,), daemon=True,
            name='%s-%s-%s' % (self.binary, self.host, name))
        thread.start()
        self._threads.append(thread)

    def _heartbeat_loop(self, interval):
        _beat_loop(self._stop, interval,
                   lambda: self.service_ref.heartbeat(interval),
                   'Heartbeat of %s on %s' % (self.binary, self.host))

    def _periodic_loop(self, interval):
        ctxt = nl_context.get_admin_context()
        while not self._stop.wait(interval):
            try:
                self.manager.periodic_tasks(ctxt)
            except Exception:
                LOG.exception('Periodic tasks of %s failed', self.binary)

    def stop(self):
        """Stop taking new messages (returns at once; see ``wait``)."""
        self._stop.set()
        if self._rpc_server is not None:
            self._rpc_server.stop()

    def wait(self):
        """Wait for messages in progress and the service threads."""
        if self._rpc_server is not None:
            self._rpc_server.wait()
            self._rpc_server = None
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads = []
        self.manager.cleanup_host()
        LOG.info('%s on host %s stopped', self.binary, self.host)


# Seconds between two attempts of a heartbeat (or tick) after one failed:
# once the database answers again, the first one lands soon after.
RETRY_INTERVAL = 1


def _beat_loop(stop, interval, beat, what):
    """Call ``beat`` every ``interval`` seconds until ``stop`` is set; after
    a failure, every ``RETRY_INTERVAL`` seconds until it works again. A
    database outage must not end the loop: it is logged when it starts and
    when it ends (the database's silence does not make the services down:
    ``nova_lite.objects.service``)."""
    wait = interval
    failing_since = None
    while not stop.wait(wait):
        try:
            beat()
        except Exception:
            if failing_since is None:
                failing_since = time.monotonic()
                LOG.exception('%s failed; trying again every %s s', what,
                              min(interval, RETRY_INTERVAL))
            wait = min(interval, RETRY_INTERVAL)
            continue
        if failing_since is not None:
            LOG.info('%s works again after %.1f s', what,
                     time.monotonic() - failing_since)
            failing_since = None
        wait = interval


class ClockTicker(object):
    """The API process's part in the liveness clock: a tick every
    ``report_interval`` seconds (``service_obj.tick``), so that the time
    in which the database takes writes is counted even when no service
    runs. A daemon thread; ``stop()`` ends it."""

    def __init__(self, conf):
        self.conf = conf
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        ctxt = nl_context.get_admin_context()
        interval = self.conf.report_interval
        self._thread = threading.Thread(
            target=_beat_loop, daemon=True,
            args=(self._stop, interval,
                  lambda: service_obj.tick(ctxt, interval),
                  'The clock tick of this API process'),
            name='nova-lite-api-%s-heartbeat' % self.conf.host)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
