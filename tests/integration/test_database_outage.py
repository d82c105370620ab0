"""The database goes away, or stalls, under a running deployment.

A private database server (``tests.integration.faults``):

* killed with SIGKILL, as a lost database host would be: while it is down
  every API request that needs it answers 503 (``serviceUnavailable``) in
  the fault format, soon and without a 500; nothing half-made is left; once
  the server is back the API serves again by itself, and the conductor and
  compute host carry on (an attach works end to end);
* stopped with SIGSTOP for longer than ``service_down_time``: its kernel
  still accepts connections and takes requests, and nothing answers. Every
  request (GET server, GET volume, lists, attach, detach) answers 503 with
  ``Retry-After`` within the configured waits (the figures are a detail of
  the test: p50 and max); no service is seen ``down`` because of the stall,
  while every heartbeat is older than ``service_down_time`` and after;
  nothing the requests tried is left behind, and after SIGCONT the
  deployment works again: an attach and a detach complete.

The deployment's timers are short: ``[database] connect_timeout`` and
``read_timeout`` 2 s, ``report_interval`` 1 s, ``service_down_time`` 10 s.
"""

import datetime
import statistics
import time

import requests
import sqlalchemy as sa
from testtools import content

from tests.integration import base
from tests.integration import deployment as deploy
from tests.integration import faults

# A request during the outage must be answered well within this: the
# API's own database waits are far shorter (a pooled connection's ping
# (read_timeout), then a new connection (connect_timeout, the server's
# greeting under read_timeout)).
OUTAGE_REQUEST_TIMEOUT = 30
DOWN_TIME = 10
# How long the database stays stopped: past service_down_time, so that a
# heartbeat's age alone would call every service down.
STALL = DOWN_TIME + 5
COMPUTE_VERSION = '2.101'


class _OutageTests(object):
    EXTRA_CONF = {
        'DEFAULT': {'service_down_time': DOWN_TIME},
        'database': {'connect_timeout': 2, 'read_timeout': 2,
                     'pool_timeout': 2},
    }

    @classmethod
    def make_deployment(cls):
        return deploy.Deployment(
            cls.BACKEND, compute_hosts=('compute1',), api_processes=1,
            api_threads=2, extra_conf=cls.EXTRA_CONF,
            database=cls.DATABASE())

    def _raw(self, method, path, body=None):
        headers = {'X-Auth-Token': 'demo:demo', 'Accept': 'application/json'}
        if path.startswith('/v2.1/'):
            headers['OpenStack-API-Version'] = 'compute %s' % COMPUTE_VERSION
        return requests.request(
            method, self.deployment.base_url + path, json=body,
            headers=headers, timeout=OUTAGE_REQUEST_TIMEOUT)

    def _services(self):
        """{(binary, host): (state, seconds since its heartbeat)} from
        os-services; None if the API answered otherwise than 200."""
        resp = self.admin_api.get('/v2.1/os-services')
        if resp.status != 200:
            return None
        now = datetime.datetime.utcnow()
        return {(s['binary'], s['host']): (
            s['state'], (now - datetime.datetime.strptime(
                s['updated_at'], '%Y-%m-%dT%H:%M:%S.%f')).total_seconds())
            for s in resp.body['services']}

    def _lock_clock(self):
        """A connection of the test whose transaction holds the
        ``service_clock`` row (every heartbeat and tick waits for it);
        ``close()`` lets go."""
        engine = sa.create_engine(self.deployment.connection_url,
                                  poolclass=sa.pool.NullPool)
        self.addCleanup(engine.dispose)
        conn = engine.connect()
        self.addCleanup(conn.close)
        conn.begin()
        self.assertEqual(1, conn.execute(sa.text(
            'SELECT id FROM service_clock FOR UPDATE')).scalar())
        return conn

    def _assert_503(self, resp, what):
        self.assertEqual(503, resp.status_code, (what, resp.text))
        self.assertEqual(503, resp.json()['serviceUnavailable']['code'],
                         what)
        self.assertIn('Retry-After', resp.headers, what)

    def test_503_while_the_database_is_down_then_serves_again(self):
        server_id = self.create_server()
        self.wait_for_server_status(server_id, 'ACTIVE')
        volume_id = self.create_volume()
        self.wait_for_volume_status(volume_id, 'available')

        self.deployment.database.stop()
        for method, path, body in (
                ('GET', '/v2.1/servers/%s' % server_id, None),
                ('GET', '/v2.1/servers', None),
                ('GET', '/v3/demo/volumes/%s' % volume_id, None),
                ('POST', '/v3/demo/volumes', {'volume': {'size': 1}}),
                ('POST', '/v2.1/servers/%s/os-volume_attachments' %
                 server_id, {'volumeAttachment': {'volumeId': volume_id}})):
            self._assert_503(self._raw(method, path, body), (method, path))

        self.deployment.database.start()
        self.wait_for(
            lambda: self._raw('GET', '/v2.1/servers/%s' % server_id)
            .status_code == 200,
            message='the API did not serve again after the database came '
                    'back')
        # Nothing was made during the outage, and everything works.
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], self.list_attachments(server_id))
        self.deployment.wait_for_services()
        api = self.api.as_(compute_version=COMPUTE_VERSION)
        resp = self.attach_volume(server_id, volume_id, api=api)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'in-use')

    def test_stalled_database_503_in_seconds_and_services_stay_up(self):
        api = self.api.as_(compute_version=COMPUTE_VERSION)
        server_id = self.create_server()
        self.wait_for_server_status(server_id, 'ACTIVE')
        attached, spare = self.create_volume(), self.create_volume()
        self.wait_for_volume_status(spare, 'available')
        self.wait_for_volume_status(attached, 'available')
        self.assertEqual(202, self.attach_volume(server_id, attached,
                                                 api=api).status)
        self.wait_for_volume_status(attached, 'in-use')
        requests_ = [
            ('GET server', 'GET', '/v2.1/servers/%s' % server_id, None),
            ('GET volume', 'GET', '/v3/demo/volumes/%s' % spare, None),
            ('list servers', 'GET', '/v2.1/servers/detail', None),
            ('list volumes', 'GET', '/v3/demo/volumes/detail', None),
            ('attach', 'POST', '/v2.1/servers/%s/os-volume_attachments' %
             server_id, {'volumeAttachment': {'volumeId': spare}}),
            ('detach', 'DELETE', '/v2.1/servers/%s/os-volume_attachments/%s'
             % (server_id, attached), None),
        ]

        # The test's own transaction holds the liveness clock's row, so
        # that after SIGCONT no heartbeat lands until the test lets go: the
        # window in which a reader sees only heartbeats older than the
        # stall, made as long as the test needs instead of the moment it
        # lasts by itself.
        clock_lock = self._lock_clock()
        database = self.deployment.database
        database.pause()
        paused = time.monotonic()
        latencies = {}
        try:
            while time.monotonic() - paused < STALL:
                for name, method, path, body in requests_:
                    start = time.monotonic()
                    resp = self._raw(method, path, body)
                    latencies.setdefault(name, []).append(
                        time.monotonic() - start)
                    self._assert_503(resp, name)
        finally:
            database.resume()
        every = sorted(t for ts in latencies.values() for t in ts)
        self.addDetail('stall-latencies', content.text_content(
            'requests while stopped: %d, p50 %.2f s, max %.2f s\n%s' % (
                len(every), statistics.median(every), max(every),
                '\n'.join('%s: %s' % (k, ' '.join('%.2f' % t for t in v))
                          for k, v in sorted(latencies.items())))))

        # Every heartbeat is older than service_down_time (Nova's rule:
        # every service down); none is seen down.
        seen = []

        def stale_and_up():
            services = self._services()
            if services is None:
                return False    # the API's first connections after it
            seen.append(services)
            oldest = min(age for _state, age in services.values())
            return oldest > DOWN_TIME + 1
        self.wait_for(stale_and_up, timeout=30)
        clock_lock.close()
        released = time.monotonic()

        def all_beaten():
            services = self._services()
            if services is None:
                return False
            seen.append(services)
            return all(age < time.monotonic() - released
                       for _state, age in services.values())
        self.wait_for(all_beaten, timeout=30)
        self.assertEqual({'up'}, {state for services in seen
                                  for state, _age in services.values()},
                         seen)

        # Nothing the requests tried happened, and everything works.
        self.assertEqual('available', self.show_volume(spare)['status'])
        self.assertEqual('in-use', self.show_volume(attached)['status'])
        self.assertEqual([attached], [a['volumeId'] for a in
                                      self.list_attachments(server_id)])
        self.assertEqual(202, self.attach_volume(server_id, spare,
                                                 api=api).status)
        self.assertEqual(202, self.detach_volume(server_id, attached).status)
        self.wait_for_volume_status(spare, 'in-use')
        self.wait_for_volume_status(attached, 'available')


class TestDatabaseOutageMariaDB(_OutageTests, base.IntegrationTestCase):
    BACKEND = 'mysql'
    DATABASE = faults.PrivateMariaDB


class TestDatabaseOutagePostgreSQL(_OutageTests, base.IntegrationTestCase):
    BACKEND = 'postgresql'
    DATABASE = faults.PrivatePostgreSQL
