"""Every wait for the database is bounded (nova_lite.db.api, "Bounded
waits"): the driver parameters nova_lite adds, psycopg2's wait callback,
the API's start without retries, and which errors mean "the database is
unavailable" (503). The servers here are loopback sockets of the test that
accept a connection and then say nothing, as a stalled database server's
kernel does."""

import socket
import threading

import fixtures
from oslo_db import exception as db_exc
import psycopg2
import psycopg2.extensions
import pymysql
import sqlalchemy as sa
import testtools

from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from tests.fixtures import conf as conf_fixture


class SilentServer(object):
    """A listening loopback socket whose kernel completes every TCP
    handshake; ``accept()`` is called (and the connection kept open,
    silent) so that the client's bytes are acknowledged and read by
    nobody. ``accepted``: how many connections came."""

    def __init__(self, test):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._conns = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        test.addCleanup(self.close)

    def _serve(self):
        while not self._stop:
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self._conns.append(conn)

    def close(self):
        self._stop = True
        self.sock.close()
        for conn in self._conns:
            conn.close()


class DriverParametersTest(testtools.TestCase):
    def _values(self, url, **extra):
        values = {'connection_parameters': extra.pop('params', '')}

        class Manager(object):
            hooks = []

            def append_on_engine_create(self, fn):
                self.hooks.append(fn)
        waits = dict({'connect_timeout': 3, 'read_timeout': 7,
                      'sqlite_busy_timeout': 30}, **extra)
        db_api._bound_waits(Manager(), sa.engine.make_url(url), values,
                            waits)
        return values['connection_parameters']

    def test_pymysql_gets_connect_read_and_write_timeouts(self):
        self.assertEqual(
            'connect_timeout=3&read_timeout=7&write_timeout=7',
            self._values('mysql+pymysql://u:p@db/nova_lite?charset=utf8mb4'))

    def test_what_the_operator_gave_is_kept(self):
        # In the URL or in connection_parameters: never given twice.
        self.assertEqual(
            'ssl_ca=/ca.pem&read_timeout=60&write_timeout=7',
            self._values('mysql+pymysql://u:p@db/nova_lite?connect_timeout=1',
                         params='ssl_ca=/ca.pem&read_timeout=60'))

    def test_psycopg2_gets_connect_timeout_and_the_wait_callback(self):
        previous = psycopg2.extensions.get_wait_callback()
        self.addCleanup(psycopg2.extensions.set_wait_callback, previous)
        self.assertEqual('connect_timeout=3',
                         self._values('postgresql+psycopg2://u:p@db/n'))
        self.assertIs(db_api._pg_wait,
                      psycopg2.extensions.get_wait_callback())
        self.assertEqual({'connect': 3, 'read': 7}, db_api._PG_WAITS)

    def test_other_drivers_are_left_alone(self):
        self.assertEqual('', self._values('mysql+mysqldb://u:p@db/n'))


class SilentServerTest(testtools.TestCase):
    """A server that accepts and answers nothing: each wait ends."""

    def test_pymysql_greeting_is_bounded(self):
        server = SilentServer(self)
        manager = db_api.create_context_manager(
            'mysql+pymysql://u:p@127.0.0.1:%d/n' % server.port,
            connect_timeout=1, read_timeout=1, max_retries=0)

        @manager.reader
        def read(context):
            context.session.execute(sa.text('SELECT 1'))

        exc = self.assertRaises(db_exc.DBConnectionError, read,
                                nl_context.get_admin_context())
        self.assertTrue(db_api.is_unavailable(exc))
        self.assertIn('timed out', str(exc))

    def test_api_start_does_not_retry_connecting(self):
        # oslo.db's start tries max_retries (10) times, retry_interval (10
        # s) apart; configure(wait_for_database=False) makes the first
        # transaction fail after one attempt, like any later one.
        server = SilentServer(self)
        conf = self.useFixture(conf_fixture.ConfFixture()).conf
        conf.set_override(
            'connection', 'mysql+pymysql://u:p@127.0.0.1:%d/n' % server.port,
            group='database')
        conf.set_override('connect_timeout', 1, group='database')
        conf.set_override('read_timeout', 1, group='database')
        manager = db_api.enginefacade.transaction_context()
        self.addCleanup(manager.dispose_pool)
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.db.api.context_manager', manager))
        db_api.configure(conf, wait_for_database=False)

        @manager.writer
        def write(context):
            context.session.execute(sa.text('SELECT 1'))

        self.assertRaises(db_exc.DBConnectionError, write,
                          nl_context.get_admin_context())
        self.assertEqual(1, server.accepted)

    def test_psycopg2_connect_is_bounded_by_the_wait_callback(self):
        # libpq ignores connect_timeout in the asynchronous mode that a
        # wait callback puts psycopg2 in: the callback bounds it.
        server = SilentServer(self)
        previous = psycopg2.extensions.get_wait_callback()
        self.addCleanup(psycopg2.extensions.set_wait_callback, previous)
        self.addCleanup(db_api._PG_WAITS.update, dict(db_api._PG_WAITS))
        db_api._PG_WAITS.update(connect=1, read=1)
        db_api._install_pg_wait_callback()
        exc = self.assertRaises(
            psycopg2.OperationalError, psycopg2.connect, host='127.0.0.1',
            port=server.port, user='u', dbname='n')
        self.assertIn('could not connect to server', str(exc))


class IsUnavailableTest(testtools.TestCase):
    def _operational(self, orig):
        return sa.exc.OperationalError('SELECT 1', {}, orig)

    def test_unavailable(self):
        for exc in (
                db_exc.DBConnectionError(Exception('gone')),
                self._operational(Exception('database is locked')),
                self._operational(pymysql.err.OperationalError(
                    1205, 'Lock wait timeout exceeded')),
                self._operational(pymysql.err.OperationalError(
                    2013, 'Lost connection to MySQL server during query')),
                db_exc.DBError(self._operational(
                    pymysql.err.OperationalError(2003, "Can't connect"))),
                # libpq's own: no SQLSTATE.
                self._operational(psycopg2.OperationalError(
                    'Connection refused')),
        ):
            self.assertTrue(db_api.is_unavailable(exc), repr(exc))

    def test_invalidated_connection_is_unavailable(self):
        exc = sa.exc.OperationalError('SELECT 1', {}, Exception('x'),
                                      connection_invalidated=True)
        self.assertTrue(db_api.is_unavailable(exc))

    def test_other_errors_are_not(self):
        for exc in (
                db_exc.DBDuplicateEntry(),
                db_exc.DBDeadlock(),
                self._operational(pymysql.err.OperationalError(
                    1054, "Unknown column 'x'")),
                self._operational(Exception('no such table: x')),
                ValueError('database is locked'),
        ):
            self.assertFalse(db_api.is_unavailable(exc), repr(exc))
