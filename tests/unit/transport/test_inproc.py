"""Tests for the in-process oslo.messaging driver (``inproc://``).

The tests drive the driver through the public oslo.messaging API (RPC
client and server, notifier and notification listener) with the
``threading`` executor.  They wait on queues and events with generous
deadlines and never sleep; speed is measured by ``tools/bench/rpc_hop.py``,
not here.
"""

import configparser
import logging
import os
import queue
import subprocess
import sys
import textwrap
import threading
import types
import uuid

import fixtures
from oslo_config import cfg
from oslo_context import context as oslo_context
import oslo_messaging
from oslo_messaging import conffixture
from oslo_messaging import transport as msg_transport
from stevedore import extension
import testtools

from nova_lite.transport import inproc

# Deadline for anything a test waits for; a healthy run needs milliseconds.
WAIT = 30
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))


class InProcTestError(Exception):
    """An endpoint exception whose module callers may allow."""

    def __init__(self, message, code=None):
        super().__init__(message, code)
        self.kwargs = {}
        self.code = code


class InProcDriverFixture(fixtures.Fixture):
    """Make ``inproc://`` resolvable without installing nova_lite.

    oslo.messaging finds drivers with
    ``stevedore.driver.DriverManager('oslo.messaging.drivers', name)``,
    which needs the ``inproc`` entry point of an installed nova_lite.  This
    fixture replaces the ``driver`` module that ``oslo_messaging.transport``
    uses (and nothing else) with one that builds ``InProcDriver`` for the
    name ``inproc`` through stevedore's test manager and defers every other
    lookup to stevedore.
    """

    def _setUp(self):
        real = msg_transport.driver

        def driver_manager(namespace, name, invoke_on_load=False,
                           invoke_args=(), invoke_kwds=None, **kwargs):
            if namespace == 'oslo.messaging.drivers' and name == 'inproc':
                obj = inproc.InProcDriver(*invoke_args,
                                          **(invoke_kwds or {}))
                ext = extension.Extension(name, None, inproc.InProcDriver,
                                          obj)
                return real.DriverManager.make_test_instance(
                    ext, namespace=namespace)
            return real.DriverManager(namespace, name,
                                      invoke_on_load=invoke_on_load,
                                      invoke_args=invoke_args,
                                      invoke_kwds=invoke_kwds or {},
                                      **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging.transport.driver',
            types.SimpleNamespace(DriverManager=driver_manager)))


class Recorder:
    """Collects what endpoints saw, for the test thread to wait on."""

    def __init__(self):
        self.items = queue.Queue()

    def put(self, item):
        self.items.put(item)

    def get(self):
        return self.items.get(timeout=WAIT)

    def drain(self):
        found = []
        while True:
            try:
                found.append(self.items.get_nowait())
            except queue.Empty:
                return found


class Endpoint:
    """An RPC endpoint that records what it is sent."""

    target = oslo_messaging.Target(version='1.3')

    def __init__(self, name, recorder):
        self.name = name
        self.recorder = recorder

    def echo(self, ctxt, value):
        return value

    def whoami(self, ctxt):
        return self.name

    def record(self, ctxt, value):
        self.recorder.put((self.name, value))

    def get_context(self, ctxt):
        return ctxt

    def mutate(self, ctxt, value):
        value['mutated'] = True
        return value

    def type_of(self, ctxt, value):
        return type(value).__name__

    def fail(self, ctxt, message):
        raise InProcTestError(message, code=409)

    def fail_builtin(self, ctxt):
        raise ValueError('bad value')

    @oslo_messaging.expected_exceptions(InProcTestError)
    def fail_expected(self, ctxt, message):
        raise InProcTestError(message, code=404)


class Box:
    def __init__(self, value):
        self.value = value


class BoxSerializer(oslo_messaging.Serializer):
    """Turns Box into {'box': value} on the wire and back."""

    def serialize_entity(self, ctxt, entity):
        if isinstance(entity, Box):
            return {'box': entity.value}
        return entity

    def deserialize_entity(self, ctxt, entity):
        if isinstance(entity, dict) and set(entity) == {'box'}:
            return Box(entity['box'])
        return entity

    def serialize_context(self, ctxt):
        return dict(ctxt, serialized=True)

    def deserialize_context(self, ctxt):
        return ctxt


class BoxEndpoint:
    def unbox_and_rebox(self, ctxt, box):
        return Box([type(box).__name__, box.value, ctxt.get('serialized')])


class InProcTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.Timeout(120, gentle=True))
        self.useFixture(InProcDriverFixture())
        self.conf = cfg.ConfigOpts()
        self.useFixture(conffixture.ConfFixture(self.conf))
        # A private virtual host per test: no test sees another's queues.
        self.vhost = 'test-%s' % uuid.uuid4().hex
        self.url = 'inproc:///%s' % self.vhost
        self.transport = self.rpc_transport()
        self.recorder = Recorder()
        self._servers = []
        self.addCleanup(self._stop_servers)

    def rpc_transport(self, url=None, allowed=(__name__,)):
        transport = oslo_messaging.get_rpc_transport(
            self.conf, url or self.url, allowed_remote_exmods=list(allowed))
        self.addCleanup(transport.cleanup)
        return transport

    def notification_transport(self):
        transport = oslo_messaging.get_notification_transport(
            self.conf, self.url)
        self.addCleanup(transport.cleanup)
        return transport

    def start_server(self, topic='t', server='s1', endpoints=None,
                     transport=None, serializer=None):
        if endpoints is None:
            endpoints = [Endpoint(server, self.recorder)]
        srv = oslo_messaging.get_rpc_server(
            transport or self.transport,
            oslo_messaging.Target(topic=topic, server=server),
            endpoints, executor='threading', serializer=serializer)
        srv.start()
        self._servers.append(srv)
        return srv

    @staticmethod
    def stop_server(srv):
        # stop() and wait() are idempotent; wait() cleans the listener up.
        srv.stop()
        srv.wait()

    def _stop_servers(self):
        # wait() joins the executor's idle workers, which futurist wakes
        # only every second: stop the servers in parallel.
        threads = [threading.Thread(target=self.stop_server, args=(srv,))
                   for srv in self._servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def client(self, topic='t', transport=None, **kwargs):
        return oslo_messaging.get_rpc_client(
            transport or self.transport,
            oslo_messaging.Target(topic=topic), **kwargs)

    def broker(self):
        return inproc._get_broker(self.vhost)


class TestLoading(InProcTestCase):

    def test_url_selects_driver(self):
        self.assertIsInstance(self.transport, msg_transport.RPCTransport)
        self.assertIsInstance(self.transport._driver, inproc.InProcDriver)

    def test_direct_construction(self):
        url = oslo_messaging.TransportURL.parse(self.conf, self.url)
        transport = msg_transport.RPCTransport(
            inproc.InProcDriver(self.conf, url, default_exchange='openstack'))
        self.addCleanup(transport.cleanup)
        self.start_server()
        self.assertEqual('s1', self.client(transport=transport).call(
            {}, 'whoami'))

    def test_entry_point_when_installed(self):
        """setup.cfg's entry point resolves, as in an installed nova_lite.

        A child interpreter imports nova_lite through a symlink (so that no
        ``nova_lite.egg-info`` of the work tree is on its path) and gets the
        transport through plain ``get_rpc_transport(conf, 'inproc://')``.
        When nova_lite is not installed, a throw-away distribution carrying
        the entry points that setup.cfg declares stands in for it.
        """
        parser = configparser.ConfigParser()
        parser.read(os.path.join(REPO_ROOT, 'setup.cfg'))
        drivers = parser.get('entry_points', 'oslo.messaging.drivers')
        self.assertIn('nova_lite.transport.inproc:InProcDriver', drivers)

        tmp = self.useFixture(fixtures.TempDir()).path
        os.symlink(os.path.join(REPO_ROOT, 'nova_lite'),
                   os.path.join(tmp, 'nova_lite'))
        probe = os.path.join(tmp, 'probe')
        dist = os.path.join(probe, 'nova_lite_entry_point_probe-0.dist-info')
        os.makedirs(dist)
        with open(os.path.join(dist, 'METADATA'), 'w') as f:
            f.write('Metadata-Version: 2.1\n'
                    'Name: nova-lite-entry-point-probe\n'
                    'Version: 0\n')
        with open(os.path.join(dist, 'entry_points.txt'), 'w') as f:
            f.write('[oslo.messaging.drivers]\n%s\n' % drivers.strip())
        script = textwrap.dedent('''
            import importlib.metadata
            import sys

            from oslo_config import cfg
            import oslo_messaging
            from oslo_messaging import conffixture

            installed = [
                ep for ep in importlib.metadata.entry_points(
                    group='oslo.messaging.drivers') if ep.name == 'inproc']
            if not installed:
                sys.path.insert(0, sys.argv[1])


            class E:
                def echo(self, ctxt, value):
                    return value


            conf = cfg.ConfigOpts()
            conffixture.ConfFixture(conf)
            t = oslo_messaging.get_rpc_transport(conf, 'inproc://')
            s = oslo_messaging.get_rpc_server(
                t, oslo_messaging.Target(topic='t', server='s'), [E()],
                executor='threading')
            s.start()
            c = oslo_messaging.get_rpc_client(
                t, oslo_messaging.Target(topic='t'), timeout=30)
            print(type(t._driver).__module__, c.call({}, 'echo', value=42))
            s.stop()
            s.wait()
            t.cleanup()
        ''')
        env = dict(os.environ, XDG_CACHE_HOME=tmp, PYTHONPATH=tmp)
        proc = subprocess.run(
            [sys.executable, '-W', 'ignore', '-c', script, probe],
            cwd=tmp, env=env, capture_output=True, text=True,
            timeout=WAIT * 3)
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual('nova_lite.transport.inproc 42',
                         proc.stdout.strip().splitlines()[-1])


class TestRPC(InProcTestCase):

    def test_call_returns_reply(self):
        self.start_server()
        self.assertEqual({'a': [1, 2]},
                         self.client().call({}, 'echo', value={'a': [1, 2]}))

    def test_cast(self):
        self.start_server()
        self.client().cast({}, 'record', value='hello')
        self.assertEqual(('s1', 'hello'), self.recorder.get())

    def test_payload_goes_over_json_wire(self):
        self.start_server()
        client = self.client()
        # A tuple arrives as a list, as over RabbitMQ.
        self.assertEqual('list', client.call({}, 'type_of', value=(1, 2)))
        # The endpoint works on its own copy.
        sent = {'a': 1}
        self.assertEqual({'a': 1, 'mutated': True},
                         client.call({}, 'mutate', value=sent))
        self.assertEqual({'a': 1}, sent)

    def test_unserializable_payload_fails_at_sender(self):
        self.start_server()
        self.assertRaises((TypeError, ValueError), self.client().cast,
                          {}, 'record', value=object())

    def test_context_object_sent_as_dict(self):
        self.start_server()
        ctxt = oslo_context.RequestContext(user_id='u1', project_id='p1')
        got = self.client().call(ctxt, 'get_context')
        self.assertEqual('u1', got['user'])
        self.assertEqual('p1', got['project_id'])

    def test_serializer(self):
        serializer = BoxSerializer()
        self.start_server(endpoints=[BoxEndpoint()], serializer=serializer)
        got = self.client(serializer=serializer).call(
            {}, 'unbox_and_rebox', box=Box(7))
        self.assertIsInstance(got, Box)
        self.assertEqual(['Box', 7, True], got.value)

    def test_versioning(self):
        self.start_server()
        client = self.client()
        self.assertEqual('ok', client.prepare(version='1.2').call(
            {}, 'echo', value='ok'))
        err = self.assertRaises(oslo_messaging.RemoteError,
                                client.prepare(version='1.4').call,
                                {}, 'echo', value='ok')
        self.assertEqual('UnsupportedVersion', err.exc_type)
        capped = self.client(version_cap='1.1')
        self.assertRaises(oslo_messaging.RPCVersionCapError,
                          capped.prepare(version='1.2').call,
                          {}, 'echo', value='ok')
        err = self.assertRaises(oslo_messaging.RemoteError,
                                client.call, {}, 'no_such_method')
        self.assertEqual('NoSuchMethod', err.exc_type)

    def test_remote_exception_of_allowed_module(self):
        self.start_server()
        err = self.assertRaises(InProcTestError, self.client().call,
                                {}, 'fail', message='boom')
        # As with rabbit: a "_Remote" subclass carrying args and kwargs.
        self.assertEqual('InProcTestError_Remote', type(err).__name__)
        self.assertEqual(409, err.code)
        self.assertIn('boom', str(err))

    def test_remote_exception_of_other_module(self):
        self.start_server()
        client = self.client(transport=self.rpc_transport(allowed=()))
        err = self.assertRaises(oslo_messaging.RemoteError, client.call,
                                {}, 'fail', message='boom')
        self.assertEqual('InProcTestError', err.exc_type)
        self.assertIn('boom', err.value)

    def test_remote_builtin_exception(self):
        self.start_server()
        client = self.client(transport=self.rpc_transport(allowed=()))
        err = self.assertRaises(ValueError, client.call, {}, 'fail_builtin')
        self.assertIn('bad value', str(err))

    def test_expected_exceptions(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='oslo_messaging.rpc.server', level=logging.DEBUG))
        self.start_server()
        client = self.client()
        err = self.assertRaises(InProcTestError, client.call,
                                {}, 'fail_expected', message='gone')
        self.assertEqual(404, err.code)
        self.assertIn('Expected exception during message handling',
                      log.output)
        self.assertNotIn('Exception during message handling\n', log.output)
        self.assertRaises(InProcTestError, client.call,
                          {}, 'fail', message='boom')
        self.assertIn('Exception during message handling\n', log.output)

    def test_call_timeout_without_server(self):
        client = self.client(timeout=0.1)
        self.assertRaises(oslo_messaging.MessagingTimeout,
                          client.call, {}, 'echo', value=1)
        self.assertRaises(oslo_messaging.MessagingTimeout,
                          client.prepare(server='nobody').call,
                          {}, 'echo', value=1)

    def test_call_timeout_when_server_does_not_reply(self):
        # A listener bound to the topic that never answers.
        driver = self.transport._driver
        listener = driver.listen(
            oslo_messaging.Target(topic='t', server='mute'), 1, None)
        got = Recorder()
        listener.start(got.put)
        self.addCleanup(listener.cleanup)
        self.addCleanup(listener.stop)
        client = self.client(timeout=0.1)
        self.assertRaises(oslo_messaging.MessagingTimeout,
                          client.call, {}, 'echo', value=1)
        [incoming] = got.get()
        self.assertEqual('echo', incoming.message['method'])
        # A late reply is harmless.
        incoming.reply('late')

    def test_server_specific_target(self):
        self.start_server(server='s1')
        self.start_server(server='s2')
        client = self.client()
        for _ in range(10):
            self.assertEqual('s2', client.prepare(server='s2').call(
                {}, 'whoami'))
            self.assertEqual('s1', client.prepare(server='s1').call(
                {}, 'whoami'))

    def test_fanout_reaches_every_server(self):
        for name in ('s1', 's2', 's3'):
            self.start_server(server=name)
        self.client().prepare(fanout=True).cast({}, 'record', value='all')
        got = sorted(self.recorder.get() for _ in range(3))
        self.assertEqual([('s1', 'all'), ('s2', 'all'), ('s3', 'all')], got)

    def test_servers_on_one_topic_share_messages(self):
        for name in ('s1', 's2', 's3'):
            self.start_server(server=name)
        client = self.client()
        for i in range(60):
            client.cast({}, 'record', value=i)
        values = sorted(self.recorder.get()[1] for _ in range(60))
        self.assertEqual(list(range(60)), values)
        self._stop_servers()
        # Every message was handled once: nothing more arrived.
        self.assertEqual([], self.recorder.drain())

    def test_cast_without_listener_is_dropped(self):
        client = self.client()
        client.cast({}, 'record', value='lost')
        srv = self.start_server()
        client.cast({}, 'record', value='marker')
        self.assertEqual(('s1', 'marker'), self.recorder.get())
        self.stop_server(srv)
        self.assertEqual([], self.recorder.drain())

    def test_queue_deleted_when_last_listener_cleaned_up(self):
        srv = self.start_server()
        self.assertIn((self.conf.control_exchange, 't'),
                      self.broker()._topics)
        self.stop_server(srv)
        self.assertEqual({}, self.broker()._topics)
        client = self.client()
        client.cast({}, 'record', value='lost')
        srv = self.start_server()
        client.cast({}, 'record', value='marker')
        self.assertEqual(('s1', 'marker'), self.recorder.get())
        self.stop_server(srv)
        self.assertEqual([], self.recorder.drain())

    def test_server_restart(self):
        srv = self.start_server()
        client = self.client()
        self.assertEqual(1, client.call({}, 'echo', value=1))
        self.stop_server(srv)
        srv.start()
        self.assertEqual(2, client.call({}, 'echo', value=2))

    def test_idle_server_stops(self):
        srv = self.start_server()
        listener = srv.listener
        self.stop_server(srv)
        # The poll thread woke up on stop() and ended; nothing is bound.
        listener._listen_thread.join(WAIT)
        self.assertFalse(listener._listen_thread.is_alive())
        self.assertEqual({}, self.broker()._topics)

    def test_transport_cleanup_unbinds_its_listeners(self):
        transport = self.rpc_transport()
        srv = self.start_server(transport=transport)
        transport.cleanup()
        self.assertEqual({}, self.broker()._topics)
        # The server, now idle, still stops cleanly.
        self.stop_server(srv)

    def test_transports_share_a_virtual_host(self):
        self.start_server(transport=self.rpc_transport())
        self.assertEqual('s1', self.client(
            transport=self.rpc_transport()).call({}, 'whoami'))

    def test_virtual_hosts_are_isolated(self):
        self.start_server()
        other = self.rpc_transport('inproc:///%s-other' % self.vhost)
        self.assertRaises(oslo_messaging.MessagingTimeout,
                          self.client(transport=other, timeout=0.1).call,
                          {}, 'whoami')

    def test_concurrent_callers(self):
        self.start_server(server='s1')
        self.start_server(server='s2')
        client = self.client()
        errors = []

        def caller(n):
            try:
                for i in range(50):
                    value = [n, i]
                    if client.call({}, 'echo', value=value) != value:
                        errors.append(('wrong reply', n, i))
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=caller, args=(n,))
                   for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
            self.assertFalse(t.is_alive())
        self.assertEqual([], errors)


class TestCallMonitor(InProcTestCase):
    """call_monitor_timeout, driven at the driver level."""

    def setUp(self):
        super().setUp()
        self.driver = self.transport._driver
        listener = self.driver.listen(
            oslo_messaging.Target(topic='t', server='s'), 1, None)
        self.incoming = Recorder()
        listener.start(self.incoming.put)
        self.addCleanup(listener.cleanup)
        self.addCleanup(listener.stop)
        self.target = oslo_messaging.Target(topic='t')

    def call_in_thread(self, **kwargs):
        result = Recorder()

        def run():
            try:
                result.put(('reply', self.driver.send(
                    self.target, {}, {'method': 'm', 'args': {}},
                    wait_for_reply=True, **kwargs)))
            except Exception as exc:
                result.put(('error', exc))

        threading.Thread(target=run, daemon=True).start()
        return result

    def test_heartbeat_then_reply(self):
        result = self.call_in_thread(timeout=WAIT, call_monitor_timeout=WAIT)
        [msg] = self.incoming.get()
        self.assertEqual(WAIT, msg.client_timeout)
        msg.heartbeat()
        msg.reply({'done': True})
        self.assertEqual(('reply', {'done': True}), result.get())

    def test_missing_heartbeat_times_out(self):
        # The overall timeout is far away: only the call monitor can end
        # the call before the test's own timeout fixture does.
        result = self.call_in_thread(timeout=3600, call_monitor_timeout=0.1)
        self.incoming.get()
        kind, exc = result.get()
        self.assertEqual('error', kind)
        self.assertIsInstance(exc, oslo_messaging.MessagingTimeout)


class NotificationEndpoint:
    def __init__(self, name, recorder, requeue_first=False):
        self.name = name
        self.recorder = recorder
        self.requeue_first = requeue_first
        self.seen = set()

    def _record(self, priority, ctxt, publisher_id, event_type, payload):
        self.recorder.put((self.name, priority, publisher_id, event_type,
                           payload))

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        key = repr(payload)
        if self.requeue_first and key not in self.seen:
            self.seen.add(key)
            self.recorder.put((self.name, 'requeued', payload))
            return oslo_messaging.NotificationResult.REQUEUE
        self._record('info', ctxt, publisher_id, event_type, payload)

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self._record('error', ctxt, publisher_id, event_type, payload)


class BatchEndpoint:
    def __init__(self, recorder):
        self.recorder = recorder

    def info(self, messages):
        self.recorder.put([m['payload'] for m in messages])


class TestNotifications(InProcTestCase):

    def setUp(self):
        super().setUp()
        self.ntransport = self.notification_transport()
        self.notifier = oslo_messaging.Notifier(
            self.ntransport, publisher_id='compute.host1',
            driver='messaging', topics=['notif'])

    def start_listener(self, endpoint, pool=None, allow_requeue=False):
        listener = oslo_messaging.get_notification_listener(
            self.ntransport, [oslo_messaging.Target(topic='notif')],
            [endpoint], executor='threading', pool=pool,
            allow_requeue=allow_requeue)
        listener.start()
        self._servers.append(listener)
        return listener

    def test_listener_receives_notifications(self):
        self.start_listener(NotificationEndpoint('l1', self.recorder))
        self.notifier.info({}, 'volume.attach', {'id': 1})
        self.notifier.error({}, 'volume.attach.error', {'id': 2})
        got = sorted([self.recorder.get(), self.recorder.get()])
        self.assertEqual(
            [('l1', 'error', 'compute.host1', 'volume.attach.error',
              {'id': 2}),
             ('l1', 'info', 'compute.host1', 'volume.attach', {'id': 1})],
            got)

    def test_pools(self):
        # One copy per pool; listeners of one pool share it.
        for name, pool in (('a1', 'a'), ('a2', 'a'), ('b1', 'b')):
            self.start_listener(NotificationEndpoint(name, self.recorder),
                                pool=pool)
        for i in range(20):
            self.notifier.info({}, 'e', i)
        got = [self.recorder.get() for _ in range(40)]
        self._stop_servers()
        self.assertEqual([], self.recorder.drain())
        pool_a = sorted(g[4] for g in got if g[0] in ('a1', 'a2'))
        pool_b = sorted(g[4] for g in got if g[0] == 'b1')
        self.assertEqual(list(range(20)), pool_a)
        self.assertEqual(list(range(20)), pool_b)

    def test_notification_without_listener_is_dropped(self):
        self.notifier.info({}, 'e', 'lost')
        listener = self.start_listener(NotificationEndpoint(
            'l1', self.recorder))
        self.notifier.info({}, 'e', 'marker')
        self.assertEqual('marker', self.recorder.get()[4])
        self.stop_server(listener)
        self.assertEqual([], self.recorder.drain())

    def test_requeue(self):
        self.start_listener(
            NotificationEndpoint('l1', self.recorder, requeue_first=True),
            allow_requeue=True)
        self.notifier.info({}, 'e', {'n': 1})
        self.assertEqual(('l1', 'requeued', {'n': 1}), self.recorder.get())
        self.assertEqual(('l1', 'info', 'compute.host1', 'e', {'n': 1}),
                         self.recorder.get())

    def test_batch_listener(self):
        listener = oslo_messaging.get_batch_notification_listener(
            self.ntransport, [oslo_messaging.Target(topic='notif')],
            [BatchEndpoint(self.recorder)], executor='threading',
            batch_size=2, batch_timeout=0.05)
        listener.start()
        self._servers.append(listener)
        for i in range(3):
            self.notifier.info({}, 'e', i)
        got = []
        while len(got) < 3:
            got.extend(self.recorder.get())
        self.assertEqual([0, 1, 2], sorted(got))
