"""In-process, non-polling oslo.messaging driver (``inproc://``).

Why
---
``nova-lite-all`` runs the API, the conductor and the compute hosts as
threads of one process and still talks between them through oslo.messaging,
so that the code paths (targets, version caps, serializers, RPC servers,
notifiers) are the ones a ``rabbit://`` deployment runs.  The stock
``fake://`` driver makes an idle listener poll an empty queue and sleep up to
50 ms between polls, so every hop costs 0-50 ms and a call ~50 ms;
``kombu+memory://`` goes through the rabbit driver but busy-polls a CPU.
This driver keeps oslo.messaging's own machinery (the poll-style listener
adapter, the fake driver's incoming message, the RPC dispatcher and the
remote-exception codec) and replaces only the queueing: a listener waiting
for a message blocks on an event that the sender sets, so a hop costs a
thread wake-up instead of a poll interval.

Design
------
* A *broker* per transport URL virtual host (``inproc://`` and
  ``inproc:///`` share the default one; ``inproc:///name`` is a separate,
  isolated namespace, handy for tests).  All drivers of the process that
  use the same virtual host see the same queues, whichever ``Transport``
  object they belong to.
* Queues follow the AMQP shape the rabbit driver uses: for an RPC server
  ``(exchange, topic, server)`` and a shared ``(exchange, topic)`` queue;
  for a notification listener a ``(exchange, topic.priority)`` queue per
  pool.  A plain send goes to the shared queue(s) (one copy per
  notification pool; among several servers of a topic, exactly one takes
  it), a ``server=`` send to that server's queue, a fanout send to every
  server queue of the topic.
* A queue is declared by the first listener that binds it and deleted,
  with whatever it still holds, when the last listener bound to it is
  cleaned up (the server's ``cleanup()`` or the transport's), like an
  auto-delete AMQP queue.  A message for which no queue exists is dropped:
  a cast or a notification is lost, a call raises
  ``oslo_messaging.MessagingTimeout`` when its timeout expires, as it would
  on RabbitMQ.  So start servers and notification listeners before
  sending to them.
* Every message goes over a "wire": ``jsonutils.dumps`` on the sending
  side, ``jsonutils.loads`` on the receiving side, as the AMQP drivers do.
  The fake driver only calls ``jsonutils.dumps`` to catch payloads that
  cannot be serialized; doing the whole round trip also gives the receiver
  its own copy (no aliasing between threads) and the same types RabbitMQ
  gives (tuples arrive as lists, datetimes as strings).  It costs a few
  microseconds per message, a small part of a hop (see
  ``doc/source/contributor/inproc-transport.rst`` and
  ``tools/bench/rpc_hop.py``).  Contexts that are objects are sent through
  their ``to_dict()``, as the AMQP drivers do.
* Replies carry failures as ``serialize_remote_exception`` data and the
  caller rebuilds them with ``deserialize_remote_exception`` and the
  transport's ``allowed_remote_exmods``, exactly like the AMQP drivers: an
  exception whose module is allowed (or a builtin) is raised again at the
  caller as a ``<Name>_Remote`` subclass of its class, anything else as
  ``oslo_messaging.RemoteError``.  ``expected_exceptions`` behaves as with
  RabbitMQ because the RPC server handles it before the driver.
* ``call_monitor_timeout`` is honoured: the server heartbeats and the
  caller fails when no heartbeat or reply arrived in time.  Notification
  requeue is supported (the message goes back to the end of its queue).

Limits
------
* One process only, nothing persists: queues and messages are Python
  objects and vanish with the process.
* No flow control: a queue grows as long as its listeners are slower than
  its senders.
* ``retry`` and ``transport_options`` are accepted and ignored: sending
  cannot fail for a transport reason.
"""

import collections
import logging
import queue
import threading
import time
import weakref

from oslo_serialization import jsonutils

import oslo_messaging
from oslo_messaging._drivers import base
from oslo_messaging._drivers import common as rpc_common
from oslo_messaging._drivers import impl_fake

LOG = logging.getLogger(__name__)

# Put in a call's reply box by a call-monitor heartbeat.
_HEARTBEAT = object()


class _Queue:
    """A declared queue: pending messages and the listeners bound to it."""

    __slots__ = ('name', 'messages', 'listeners')

    def __init__(self, name):
        self.name = name
        self.messages = collections.deque()
        self.listeners = []


class _Topic:
    """The queues of one (exchange, topic): per server and per pool."""

    __slots__ = ('servers', 'pools')

    def __init__(self):
        self.servers = {}
        self.pools = {}


class _Broker:
    """The queues of one virtual host, shared by every driver using it.

    One lock guards all queues; it is held only for dictionary and deque
    operations, never while waiting.
    """

    def __init__(self, name):
        self.name = name
        self._lock = threading.Lock()
        self._topics = {}

    def bind(self, listener, exchange, topic, server=None, pool=None):
        """Declare (if needed) a queue and bind a listener to it."""
        with self._lock:
            entry = self._topics.get((exchange, topic))
            if entry is None:
                entry = self._topics[(exchange, topic)] = _Topic()
            if server is not None:
                queues, key = entry.servers, server
            else:
                queues, key = entry.pools, pool
            q = queues.get(key)
            if q is None:
                q = queues[key] = _Queue((exchange, topic, server, pool))
            if listener not in q.listeners:
                q.listeners.append(listener)
            return q

    def unbind(self, listener, queues):
        """Unbind a listener; delete the queues nobody listens to any more.

        Messages still in a deleted queue are dropped (a call waiting for
        one of them times out).
        """
        with self._lock:
            for q in queues:
                if listener in q.listeners:
                    q.listeners.remove(listener)
                if q.listeners:
                    continue
                exchange, topic, server, pool = q.name
                entry = self._topics.get((exchange, topic))
                if entry is None:
                    continue
                if server is not None:
                    if entry.servers.get(server) is q:
                        del entry.servers[server]
                elif entry.pools.get(pool) is q:
                    del entry.pools[pool]
                if q.messages:
                    LOG.debug('inproc: queue %s deleted with %d pending '
                              'message(s)', q.name, len(q.messages))
                    q.messages.clear()
                if not entry.servers and not entry.pools:
                    del self._topics[(exchange, topic)]

    def publish(self, exchange, topic, item, server=None, fanout=False):
        """Append a message to the queues it is routed to; wake listeners.

        Returns the number of queues that received it (0: dropped).
        """
        with self._lock:
            entry = self._topics.get((exchange, topic))
            if entry is None:
                queues = ()
            elif fanout:
                queues = list(entry.servers.values())
            elif server is not None:
                q = entry.servers.get(server)
                queues = (q,) if q is not None else ()
            else:
                queues = list(entry.pools.values())
            to_wake = []
            for q in queues:
                q.messages.append(item)
                to_wake.extend(q.listeners)
        for listener in to_wake:
            listener.wake()
        return len(queues)

    def requeue(self, q, item):
        """Put a message back at the end of the queue it came from."""
        with self._lock:
            if not q.listeners:
                return
            q.messages.append(item)
            to_wake = list(q.listeners)
        for listener in to_wake:
            listener.wake()

    def take(self, queues, start):
        """Pop the first pending message of ``queues``, from ``start`` on."""
        n = len(queues)
        with self._lock:
            for i in range(n):
                q = queues[(start + i) % n]
                if q.messages:
                    return q, q.messages.popleft()
        return None


_brokers = {}
_brokers_lock = threading.Lock()


def _get_broker(virtual_host):
    name = virtual_host or ''
    with _brokers_lock:
        broker = _brokers.get(name)
        if broker is None:
            broker = _brokers[name] = _Broker(name)
        return broker


class InProcIncomingMessage(impl_fake.FakeIncomingMessage):
    """A received message; replies travel JSON-encoded like AMQP replies."""

    def __init__(self, ctxt, message, reply_box, requeue, client_timeout,
                 dumps):
        super().__init__(ctxt, message, reply_box, requeue)
        self.client_timeout = client_timeout
        self._dumps = dumps

    def reply(self, reply=None, failure=None):
        if self._reply_q is None:
            return
        if failure:
            failure = rpc_common.serialize_remote_exception(failure)
        self._reply_q.put(self._dumps({'result': reply, 'failure': failure}))

    def heartbeat(self):
        if self._reply_q is not None:
            self._reply_q.put(_HEARTBEAT)


class InProcListener(base.PollStyleListener):
    """A listener that blocks on an event set by senders: no polling."""

    def __init__(self, driver, bindings):
        super().__init__()
        self._broker = driver._broker
        self._loads = driver._loads
        self._dumps = driver._dumps
        self._wakeup = threading.Event()
        self._stopped = False
        self._next = 0
        queues = []
        for exchange, topic, server, pool in bindings:
            q = self._broker.bind(self, exchange, topic, server, pool)
            if q not in queues:
                queues.append(q)
        self._queues = queues

    def wake(self):
        self._wakeup.set()

    @base.batch_poll_helper
    def poll(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopped:
            # Clear before looking: a message published after the look
            # sets the event again, so no wake-up is lost.
            self._wakeup.clear()
            queues = self._queues
            if queues:
                self._next += 1
                found = self._broker.take(queues, self._next)
                if found is not None:
                    return self._incoming(*found)
            if deadline is None:
                self._wakeup.wait()
            else:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._wakeup.wait(left)
        return None

    def _incoming(self, q, item):
        wire, reply_box, client_timeout = item
        ctxt, message = self._loads(wire)
        broker = self._broker

        def requeue():
            broker.requeue(q, item)

        return InProcIncomingMessage(ctxt, message, reply_box, requeue,
                                     client_timeout, self._dumps)

    def stop(self):
        self._stopped = True
        self._wakeup.set()

    def cleanup(self):
        self.detach()

    def detach(self):
        """Unbind from all queues (idempotent)."""
        queues, self._queues = self._queues, []
        if queues:
            self._broker.unbind(self, queues)


class InProcDriver(base.BaseDriver):
    """oslo.messaging driver for ``inproc://``: in memory, wakes on send.

    Loaded by oslo.messaging through the ``oslo.messaging.drivers`` entry
    point ``inproc``; see the module docstring for semantics and limits.
    """

    # The wire codec (see the module docstring).
    _dumps = staticmethod(jsonutils.dumps)
    _loads = staticmethod(jsonutils.loads)

    def __init__(self, conf, url, default_exchange=None,
                 allowed_remote_exmods=None):
        super().__init__(conf, url, default_exchange, allowed_remote_exmods)
        self._broker = _get_broker(getattr(url, 'virtual_host', None))
        self._listeners = weakref.WeakSet()
        self._listeners_lock = threading.Lock()

    def require_features(self, requeue=False):
        """Every feature (requeue) is supported."""

    def _encode(self, ctxt, message):
        if ctxt is not None and not isinstance(ctxt, dict):
            ctxt = ctxt.to_dict()
        return self._dumps((ctxt, message))

    def _publish(self, target, item):
        exchange = target.exchange or self._default_exchange
        if not self._broker.publish(exchange, target.topic, item,
                                    server=target.server,
                                    fanout=target.fanout):
            LOG.debug('inproc: no queue for %s, message dropped', target)

    def send(self, target, ctxt, message, wait_for_reply=None, timeout=None,
             call_monitor_timeout=None, retry=None, transport_options=None):
        wire = self._encode(ctxt, message)
        if not wait_for_reply:
            self._publish(target, (wire, None, None))
            return None
        reply_box = queue.SimpleQueue()
        self._publish(target, (wire, reply_box, call_monitor_timeout))
        return self._wait_for_reply(reply_box, target, message, timeout,
                                    call_monitor_timeout)

    def _wait_for_reply(self, reply_box, target, message, timeout,
                        call_monitor_timeout):
        now = time.monotonic()
        deadline = None if timeout is None else now + timeout
        cm_deadline = (None if not call_monitor_timeout
                       else now + call_monitor_timeout)
        while True:
            ends = [d for d in (deadline, cm_deadline) if d is not None]
            wait = min(ends) - time.monotonic() if ends else None
            try:
                if wait is not None and wait <= 0:
                    raise queue.Empty()
                reply = reply_box.get(timeout=wait)
            except queue.Empty:
                raise oslo_messaging.MessagingTimeout(
                    'Timed out waiting for a reply to %s on %s'
                    % (message.get('method') if isinstance(message, dict)
                       else None, target)) from None
            if reply is _HEARTBEAT:
                if call_monitor_timeout:
                    cm_deadline = time.monotonic() + call_monitor_timeout
                continue
            reply = self._loads(reply)
            if reply['failure']:
                raise rpc_common.deserialize_remote_exception(
                    reply['failure'], self._allowed_remote_exmods)
            return reply['result']

    def send_notification(self, target, ctxt, message, version, retry=None):
        self._publish(target, (self._encode(ctxt, message), None, None))

    def _listen(self, bindings, batch_size, batch_timeout):
        listener = InProcListener(self, bindings)
        with self._listeners_lock:
            self._listeners.add(listener)
        return base.PollStyleListenerAdapter(listener, batch_size,
                                             batch_timeout)

    def listen(self, target, batch_size, batch_timeout):
        exchange = target.exchange or self._default_exchange
        return self._listen([(exchange, target.topic, target.server, None),
                             (exchange, target.topic, None, None)],
                            batch_size, batch_timeout)

    def listen_for_notifications(self, targets_and_priorities, pool,
                                 batch_size, batch_timeout):
        bindings = [(target.exchange or self._default_exchange,
                     f'{target.topic}.{priority}', None, pool)
                    for target, priority in targets_and_priorities]
        return self._listen(bindings, batch_size, batch_timeout)

    def cleanup(self):
        """Unbind this driver's listeners from their queues.

        Unlike the fake driver this does not wipe the queues of other
        transports in the process.  A listener whose server is still
        running keeps blocking, idle, until that server is stopped.
        """
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener.detach()
