"""The embedded SQLite database, locked by another connection: a request
that must write waits ``[database] sqlite_busy_timeout`` and answers 503
(``serviceUnavailable``, ``Retry-After``), never hangs and leaves nothing
half-made; reads go on (WAL), and writes work again once the lock is gone.
"""

import sqlite3

import sqlalchemy as sa

from nova_lite.api import fault
from nova_lite.db import api as db_api
from tests.functional import base


class LockedDatabaseTest(base.TestCase):
    def setUp(self):
        super().setUp()
        # The lock waits of this test's engines: 0.2 s instead of the
        # option's 30 (the engines are the test fixture's, made before the
        # option could be set).
        for engine in {db_api.get_engine(), db_api.get_engine(True)}:
            sa.event.listen(engine.pool, 'checkout', self._short_busy)
            self.addCleanup(sa.event.remove, engine.pool, 'checkout',
                            self._short_busy)
            engine.pool.dispose()

    @staticmethod
    def _short_busy(dbapi_conn, record, proxy):
        dbapi_conn.execute('PRAGMA busy_timeout = 200')

    def volumes(self):
        resp = self.api.get('/v3/demo/volumes')
        self.assertEqual(200, resp.status, resp.text)
        return [v['id'] for v in resp.body['volumes']]

    def test_locked_database_is_503_then_serves_again(self):
        before = self.volumes()
        path = sa.engine.make_url(self.sys.database.connection_url).database
        holder = sqlite3.connect(path, isolation_level=None)
        self.addCleanup(holder.close)
        holder.execute('BEGIN IMMEDIATE')

        resp = self.api.post('/v3/demo/volumes', {'volume': {'size': 1}})
        self.assertEqual(503, resp.status, resp.text)
        self.assertEqual({'serviceUnavailable': {
            'code': 503, 'message': fault.DATABASE_UNAVAILABLE}}, resp.body)
        self.assertEqual(str(fault.RETRY_AFTER), resp.headers['Retry-After'])
        # Readers are not blocked by the writer's lock.
        self.assertEqual(before, self.volumes())

        holder.execute('ROLLBACK')
        resp = self.api.post('/v3/demo/volumes', {'volume': {'size': 1}})
        self.assertEqual(202, resp.status, resp.text)
        self.assertEqual(sorted(before + [resp.body['volume']['id']]),
                         sorted(self.volumes()))

    def test_the_option_sets_the_busy_timeout(self):
        # [database] sqlite_busy_timeout reaches every new connection.
        manager = db_api.create_context_manager(
            self.sys.database.connection_url, sqlite_busy_timeout=7)
        self.addCleanup(manager.dispose_pool)
        for engine in (manager.writer.get_engine(),
                       manager.reader.get_engine()):
            with engine.connect() as conn:
                self.assertEqual(7000, conn.exec_driver_sql(
                    'PRAGMA busy_timeout').scalar())
