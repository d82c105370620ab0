"""A silent compute host holds no API thread for long (issue: bounded
waits).

On the production layout (uWSGI 2 processes x 2 threads, RabbitMQ,
MariaDB), compute1 is stopped with SIGSTOP: alive, only silent. Here
``[DEFAULT] rpc_response_timeout`` is ``RPC_TIMEOUT`` s and
``service_down_time`` ``DOWN_TIME`` s, so that a host stopped a moment ago
still reads ``up``:

* while it reads ``up``, synchronous attaches (2.100) to its server, one
  per API thread, each answer 409 ("the compute host of the server did
  not answer") after about ``RPC_TIMEOUT`` s: the conductor's reservation
  call got no heartbeat from the host (``call_monitor_timeout``) and the
  conductor undid the attach, so no mapping is left ``reserving`` and the
  volumes are ``available``. A request sent while every thread is taken
  is answered as soon as one is free, within about ``RPC_TIMEOUT`` s;
  before call-monitor heartbeats the attaches waited for
  ``long_rpc_timeout`` (1800 s) and the API answered nothing else;
* once it reads ``down``, a synchronous attach answers 409 at once,
  before anything is written.
"""

from concurrent import futures
import signal
import time

from testtools import content

from tests.integration import base

RPC_TIMEOUT = 10
# Long enough that the host still reads up while the attaches are sent.
DOWN_TIME = 30
# What a bounded answer may take beyond RPC_TIMEOUT (the conductor's roll
# back, block storage, the queueing of requests on the API's threads).
MARGIN = 8
# An answer "at once": no RPC, a few reads.
AT_ONCE = 3
SYNC = '2.100'
HOST_DID_NOT_ANSWER = ('Service is unavailable at this time: the compute '
                       'host of the server did not answer.')


class _BoundedWaitTests(object):
    EXTRA_CONF = {'DEFAULT': {'rpc_response_timeout': RPC_TIMEOUT,
                              'service_down_time': DOWN_TIME}}

    def setUp(self):
        super().setUp()
        self.server_id = self.create_server_on_each_host()['compute1']

    def stop_host(self, host):
        """SIGSTOP ``host`` (resumed at cleanup); it still reads up for
        up to ``DOWN_TIME`` s."""
        proc = self.deployment.processes[host]
        proc.signal(signal.SIGSTOP)
        self.addCleanup(self._resume, host)

    def _resume(self, host):
        proc = self.deployment.processes[host]
        if proc.running:
            proc.signal(signal.SIGCONT)
        self.wait_for_service_state('nova-lite-compute', host, 'up')

    def timed_attach(self, volume_id):
        """(response, seconds) of a synchronous attach, on a client of its
        own (one session per thread)."""
        api = self.api.as_(compute_version=SYNC)
        start = time.monotonic()
        resp = self.attach_volume(self.server_id, volume_id, api=api)
        return resp, time.monotonic() - start

    def busy_threads(self):
        """API threads serving a request (uWSGI's stats)."""
        return sum(core['in_request'] for worker in
                   self.deployment.uwsgi_workers().values()
                   for core in worker['cores'])

    def assert_untouched(self, volume_ids):
        """No mapping left (none ``reserving``), the volumes free."""
        listed = [a['volumeId'] for a in self.list_attachments(
            self.server_id)]
        for volume_id in volume_ids:
            self.assertNotIn(volume_id, listed)
            volume = self.show_volume(volume_id)
            self.assertEqual(('available', []),
                             (volume['status'], volume['attachments']))

    def test_silent_host_fails_sync_attaches_in_time(self):
        threads = (self.deployment.api_processes *
                   self.deployment.api_threads)
        volume_ids = [self.create_volume() for _ in range(threads)]
        self.stop_host('compute1')
        with futures.ThreadPoolExecutor(threads) as pool:
            attaches = [pool.submit(self.timed_attach, volume_id)
                        for volume_id in volume_ids]
            # Every API thread waits on the silent host: another request
            # is answered once one is free.
            self.wait_for(lambda: self.busy_threads() == threads,
                          timeout=RPC_TIMEOUT / 2,
                          message='the attaches did not take every thread')
            start = time.monotonic()
            resp = self.api.get('/v2.1/servers/%s' % self.server_id)
            served_in = time.monotonic() - start
            results = [a.result() for a in attaches]
        self.assertEqual(200, resp.status, resp)
        self.assertLess(served_in, RPC_TIMEOUT + MARGIN)
        for resp, took in results:
            self.assertEqual(409, resp.status, resp)
            self.assertEqual(HOST_DID_NOT_ANSWER,
                             resp.body['conflictingRequest']['message'])
            self.assertEqual('compute.host_unavailable',
                             resp.body['conflictingRequest']['error_code'])
            # The call monitor, not the long timeout, ended the wait.
            self.assertGreaterEqual(took, RPC_TIMEOUT - 1)
            self.assertLess(took, RPC_TIMEOUT + MARGIN)
        self.assert_untouched(volume_ids)
        self.addDetail('timings', content.text_content(
            'attaches answered in %s s; GET served in %.1f s' % (
                ', '.join('%.1f' % took for _, took in results),
                served_in)))

    def test_down_host_refuses_sync_attach_at_once(self):
        volume_id = self.create_volume()
        self.stop_host('compute1')
        self.wait_for_service_state('nova-lite-compute', 'compute1', 'down',
                                    timeout=DOWN_TIME + 30)
        resp, took = self.timed_attach(volume_id)
        self.assertEqual(409, resp.status, resp)
        self.assertEqual('Service is unavailable at this time.',
                         resp.body['conflictingRequest']['message'])
        self.assertLess(took, AT_ONCE)
        self.assert_untouched([volume_id])
        self.addDetail('timings',
                       content.text_content('answered in %.2f s' % took))


class TestBoundedWaitsMariaDB(_BoundedWaitTests, base.IntegrationTestCase):
    BACKEND = 'mysql'
