"""Liveness (nova_lite.objects.service): a stall of the database does not
make services down, a service silent while the database takes writes
does, and an API process's tick keeps the time counted when no service
runs.

The database stalls here as the embedded SQLite stalls: another connection
holds its write lock, so every heartbeat fails (``database is locked``)
while readers (WAL) still read: what a reader sees while writes cannot
land, and after. The services run in-process with ``report_interval`` 1 s.
"""

import datetime
import sqlite3

import sqlalchemy as sa

from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite import objects
from nova_lite import service as nl_service
from tests.fixtures import system
from tests.functional import base

COMPUTE = 'nova-lite-compute'
CONDUCTOR = 'nova-lite-conductor'
# Above what a stall costs a live service (its last interval, the clock's
# max gap of two intervals, the first retry after the stall).
DOWN_TIME = 6
# Lock waits of the in-process services while the test holds the lock.
BUSY_MS = 200


class LivenessTest(base.TestCase):
    COMPUTE_HOSTS = ['compute1', 'compute2']
    CONF = {'service_down_time': DOWN_TIME}

    def setUp(self):
        super().setUp()
        for engine in {db_api.get_engine(), db_api.get_engine(True)}:
            sa.event.listen(engine.pool, 'checkout', self._short_busy)
            self.addCleanup(sa.event.remove, engine.pool, 'checkout',
                            self._short_busy)
        self.wait_for_states({(COMPUTE, 'compute1'): 'up',
                              (COMPUTE, 'compute2'): 'up',
                              (CONDUCTOR, 'compute1'): 'up'})

    @staticmethod
    def _short_busy(dbapi_conn, record, proxy):
        dbapi_conn.execute('PRAGMA busy_timeout = %d' % BUSY_MS)

    def states(self):
        resp = self.admin_api.get('/v2.1/os-services')
        self.assertEqual(200, resp.status, resp.text)
        return {(s['binary'], s['host']): s['state']
                for s in resp.body['services']}

    def wait_for_states(self, expected, timeout=30):
        system.wait_for(
            lambda: all(self.states().get(k) == v
                        for k, v in expected.items()),
            timeout=timeout, interval=0.2,
            message=lambda: 'not %s: %s' % (expected, self.states()))

    def last_seen(self):
        ctxt = nl_context.get_admin_context()
        return {(s.binary, s.host): s.last_seen_up
                for s in objects.Service.list(ctxt)}

    def ages(self):
        """Seconds since each service's last heartbeat: what Nova's rule
        compares with service_down_time."""
        now = datetime.datetime.utcnow()
        return {k: (now - v.replace(tzinfo=None)).total_seconds()
                for k, v in self.last_seen().items()}

    def hold_write_lock(self):
        path = sa.engine.make_url(self.sys.database.connection_url).database
        holder = sqlite3.connect(path, isolation_level=None)
        self.addCleanup(holder.close)
        holder.execute('BEGIN IMMEDIATE')
        return holder

    def stop_services(self, *hosts_and_binaries):
        stopping = [s for s in self.sys.system.services
                    if (s.binary, s.host) in hosts_and_binaries]
        for svc in stopping:
            svc.stop()
        for svc in stopping:
            svc.wait()
            self.sys.system.services.remove(svc)

    def test_a_stalled_database_leaves_every_service_up(self):
        holder = self.hold_write_lock()
        # Until every heartbeat is older than service_down_time: Nova's
        # rule now calls every service down.
        system.wait_for(
            lambda: min(self.ages().values()) > DOWN_TIME + 1, timeout=30,
            interval=0.2)
        self.assertEqual({'up'}, set(self.states().values()))
        before = self.last_seen()
        holder.execute('ROLLBACK')
        # The heartbeats land again; no service was down in between.
        system.wait_for(
            lambda: all(self.last_seen()[k] > v for k, v in before.items()),
            timeout=10, interval=0.1)
        self.assertEqual({'up'}, set(self.states().values()))

    def test_silent_while_the_database_takes_writes_is_down(self):
        self.stop_services((COMPUTE, 'compute2'))
        # Nobody ages its heartbeat: the others' beats count the time.
        self.wait_for_states({(COMPUTE, 'compute2'): 'down'})
        self.assertEqual('up', self.states()[(COMPUTE, 'compute1')])
        self.assertGreater(self.ages()[(COMPUTE, 'compute2')], DOWN_TIME)

    def test_the_api_tick_counts_the_time_when_no_service_runs(self):
        # The volume service too: its heartbeats tick the clock as well.
        self.stop_services((COMPUTE, 'compute1'), (COMPUTE, 'compute2'),
                           (CONDUCTOR, 'compute1'),
                           ('nova-lite-volume', 'compute1'))
        # Nothing writes: the database cannot tell its own silence from
        # everyone's, and counts neither.
        system.wait_for(
            lambda: min(self.ages().values()) > DOWN_TIME + 3, timeout=30,
            interval=0.2)
        self.assertEqual({'up'}, set(self.states().values()))
        # An API process's tick says the database takes writes.
        ticker = nl_service.ClockTicker(self.conf).start()
        self.addCleanup(ticker.stop)
        self.wait_for_states({(COMPUTE, 'compute1'): 'down',
                              (COMPUTE, 'compute2'): 'down',
                              (CONDUCTOR, 'compute1'): 'down'})
