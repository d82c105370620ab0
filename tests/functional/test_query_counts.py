"""The number of SQL statements of the attach path does not grow with the
number of attachments: no N+1 query can come back unnoticed.

Statements are counted with a SQLAlchemy ``before_cursor_execute`` listener
on both engines (writer and reader), in every thread: the API's and the
conductor's and compute host's RPC workers, so the asynchronous part of an
attach or detach is counted too. Left out: the services' heartbeat and
periodic threads and the compute host's power-state sync (they run on
their own clock), and the test's own polling
while it waits for asynchronous work to finish.

Each operation is measured on a server with few volumes attached and again
with more, and the counts must be equal. Asynchronous work counts until the
server's last instance action has all its events finished (its last row).
The statements are in the failure message; doc/source/admin/performance.rst
says how to find the query that was added.
"""

import contextlib
import threading

import sqlalchemy as sa

from nova_lite.db import api as db_api
from tests.fixtures import system
from tests.functional.compute import base

FEW = 1
MANY = 6
LATEST_COMPUTE = '2.100'
VOLUME_VERSION = '3.27'


class StatementCounter(object):
    """Counts the statements run on ``engines`` by the threads of interest
    while ``counting()`` is active."""

    _IGNORED_SUFFIXES = ('-heartbeat', '-periodic')
    # The compute host's power-state sync runs on its own clock too (its
    # periodic run and the hypervisor's lifecycle events).
    _IGNORED_PREFIXES = ('power-sync',)

    def __init__(self, engines):
        self.engines = list(engines)
        self.statements = []
        self._active = False
        self._quiet_threads = set()
        self._lock = threading.Lock()

    def _record(self, conn, cursor, statement, parameters, context,
                executemany):
        if not self._active:
            return
        thread = threading.current_thread()
        if (thread.ident in self._quiet_threads or
                thread.name.endswith(self._IGNORED_SUFFIXES) or
                thread.name.startswith(self._IGNORED_PREFIXES)):
            return
        with self._lock:
            self.statements.append((thread.name, statement))

    def install(self):
        for engine in self.engines:
            sa.event.listen(engine, 'before_cursor_execute', self._record)

    def remove(self):
        for engine in self.engines:
            sa.event.remove(engine, 'before_cursor_execute', self._record)

    @contextlib.contextmanager
    def counting(self):
        with self._lock:
            self.statements = []
        self._active = True
        try:
            yield self
        finally:
            self._active = False

    @contextlib.contextmanager
    def quiet(self):
        """Statements of the current thread (the test polling) do not
        count inside this block."""
        ident = threading.get_ident()
        self._quiet_threads.add(ident)
        try:
            yield
        finally:
            self._quiet_threads.discard(ident)

    def __len__(self):
        return len(self.statements)


class QueryCountTest(base.TestCase):

    def setUp(self):
        super().setUp()
        engines = {db_api.get_engine(), db_api.get_engine(use_reader=True)}
        self.counter = StatementCounter(engines)
        self.counter.install()
        self.addCleanup(self.counter.remove)
        self.compute = self.api.as_(compute_version=LATEST_COMPUTE)
        self.volumes = self.api.as_(volume_version=VOLUME_VERSION)

    # -- helpers --------------------------------------------------------
    def _server_with_volumes(self, count):
        server_id = self.create_server()
        for _ in range(count):
            volume_id = self.create_volume()
            self.attach(server_id, volume_id, api=self.compute)
            self.wait_for_volume_status(volume_id, 'in-use')
            system.wait_for(lambda: self._settled(server_id), timeout=30)
        self.assertEqual(count, len(self.attachments(server_id)))
        return server_id

    def _settled(self, server_id):
        """The server's last action has a compute event and all its events
        are finished: the asynchronous work has written its last row."""
        admin = self.admin_api.as_(compute_version=LATEST_COMPUTE)
        path = '/v2.1/servers/%s/os-instance-actions' % server_id
        actions = admin.get(path).body['instanceActions']
        if not actions:
            return False
        latest = max(actions, key=lambda a: a['start_time'])
        events = admin.get('%s/%s' % (path, latest['request_id'])).body[
            'instanceAction']['events']
        return (any(e['event'].startswith('compute_') for e in events) and
                all(e['finish_time'] for e in events))

    def _wait_quietly(self, predicate):
        with self.counter.quiet():
            system.wait_for(predicate, timeout=30)

    def _volume_status(self, volume_id):
        return self.volumes.get('/v3/volumes/%s' % volume_id).body[
            'volume']['status']

    def _mapping_gone(self, server_id, volume_id):
        return self.compute.get('/v2.1/servers/%s/os-volume_attachments/%s'
                                % (server_id, volume_id)).status == 404

    def _count(self, operation, server_id):
        """Statements of ``operation`` on ``server_id``."""
        with self.counter.counting():
            operation(server_id)
        return list(self.counter.statements)

    def _assert_flat(self, name, operation):
        few = self._count(operation, self._server_with_volumes(FEW))
        many = self._count(operation, self._server_with_volumes(MANY))
        self.assertGreater(len(few), 0, '%s ran no statement' % name)
        self.assertEqual(
            len(few), len(many),
            '%s: %d statements with %d volume(s) attached, %d with %d:\n%s'
            % (name, len(few), FEW, len(many), MANY,
               '\n'.join('%s: %s' % s for s in many)))
        return len(few)

    # -- operations -----------------------------------------------------
    def _list(self, server_id):
        resp = self.compute.get('/v2.1/servers/%s/os-volume_attachments'
                                % server_id)
        self.assertEqual(200, resp.status, resp.text)

    def _show_server(self, server_id):
        resp = self.compute.get('/v2.1/servers/%s' % server_id)
        self.assertEqual(200, resp.status, resp.text)

    def _attach_and_wait(self, server_id):
        volume_id = self._quiet(self.create_volume)
        self.attach(server_id, volume_id, api=self.compute)
        self._wait_quietly(
            lambda: self._volume_status(volume_id) == 'in-use' and
            self._settled(server_id))

    def _detach_and_wait(self, server_id):
        volume_id = self._quiet(
            lambda: self.attachments(server_id)[0]['volumeId'])
        self.detach(server_id, volume_id, api=self.compute)
        self._wait_quietly(
            lambda: self._volume_status(volume_id) == 'available' and
            self._mapping_gone(server_id, volume_id) and
            self._settled(server_id))

    def _quiet(self, fn):
        with self.counter.quiet():
            return fn()

    # -- tests ----------------------------------------------------------
    def test_list_volume_attachments(self):
        self._assert_flat('GET os-volume_attachments', self._list)

    def test_show_server(self):
        self._assert_flat('GET /servers/{id}', self._show_server)

    def test_attach_volume(self):
        # The API request and the conductor's and compute host's work,
        # until the volume is in-use.
        self._assert_flat('attach (POST until in-use)',
                          self._attach_and_wait)

    def test_detach_volume(self):
        self._assert_flat('detach (DELETE until available)',
                          self._detach_and_wait)

    def test_list_block_storage_attachments(self):
        def list_attachments(server_id):
            resp = self.volumes.get('/v3/attachments/detail')
            self.assertEqual(200, resp.status, resp.text)
        # Every attachment of the project is listed: 1 + FEW, then
        # 1 + FEW + MANY, in the same number of statements.
        self._assert_flat('GET /v3/attachments/detail', list_attachments)

    def test_external_events_read_their_servers_at_once(self):
        # Cinder may name several servers in one request (a multiattach
        # volume extended): they are read in one statement, whatever
        # their number. The events are of a kind the hosts drop.
        servers = [self.create_server(name='events-%d' % i)
                   for i in range(MANY)]
        admin = self.admin_api.as_(compute_version=LATEST_COMPUTE)
        thread = threading.current_thread().name

        def post(server_ids):
            events = [{'name': 'network-changed', 'server_uuid': s}
                      for s in server_ids]
            with self.counter.counting():
                resp = admin.post('/v2.1/os-server-external-events',
                                  body={'events': events})
            self.assertEqual(200, resp.status, resp.text)
            self.assertEqual([200] * len(server_ids),
                             [e['code'] for e in resp.body['events']])
            # The request's own statements (the hosts act later).
            return [s for t, s in self.counter.statements if t == thread]

        few, many = post(servers[:FEW]), post(servers)
        self.assertGreater(len(few), 0)
        self.assertEqual(len(few), len(many), '\n'.join(many))
