"""A running nova_lite service: one RPC server for one manager, its row in
``services`` and a heartbeat.

Services run on threads (oslo.messaging's ``threading`` executor), so several
of them can share one process in the embedded ``nova-lite-all``, and each runs
alone in ``nova-lite-conductor`` / ``nova-lite-compute``.
"""

import threading

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
        while not self._stop.wait(interval):
            try:
                self.service_ref.heartbeat()
            except Exception:
                # A database outage must not kill the service: the next beat
                # tries again, and meanwhile the API sees this host as down.
                LOG.exception('Heartbeat of %s on %s failed', self.binary,
                              self.host)

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
