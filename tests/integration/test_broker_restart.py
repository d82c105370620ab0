"""RabbitMQ restarts under a steady attach/detach load, and no accepted
attach is lost.

A private RabbitMQ node (``tests.integration.faults``) configured as the
production example says (``[oslo_messaging_rabbit] rabbit_quorum_queue``:
the conductor's and compute hosts' queues are durable and replicated,
messages persistent; publisher confirms and the mandatory flag on every
send, nova_lite.rpc). Three clients attach (2.101, asynchronous) and detach
a volume each in a loop; the node's application is stopped
(``rabbitmqctl stop_app``: every connection closed, the port refuses) for
``OUTAGE`` seconds and started again.

* Every attach answered 202 ends attached, and every detach answered 202
  ends detached: nothing accepted is lost or rolled back (the broker had
  confirmed each of those messages into a durable queue before the API
  answered). To be sure that messages wait in a queue across the restart,
  the conductor is paused (SIGSTOP) until each client has an attach
  accepted, and resumed after the broker.
* A request that cannot hand its message to the broker answers 503 after
  ``[DEFAULT] rpc_send_retries`` and changes nothing (an attach sent while
  the broker is down: no mapping, the volume ``available``).
* Afterwards every volume is ``in-use`` with its mapping or ``available``
  without one, and attaches again.

Settling is kept out of the way (``stalled_after`` far above the outage):
this test is about messages; what settles work whose message is lost is
another test's.
"""

import signal
import threading
import time

from testtools import content

from tests.integration import base
from tests.integration import deployment as deploy
from tests.integration import faults

CLIENTS = 3
OUTAGE = 20
COMPUTE_VERSION = '2.101'
# An accepted operation completes within this once the broker is back
# (the services reconnect with oslo.messaging's backoff, up to
# rabbit_interval_max).
COMPLETE_TIMEOUT = 120


class _BrokerRestartTests(object):
    EXTRA_CONF = {
        'oslo_messaging_rabbit': {'rabbit_quorum_queue': True},
        'recovery': {'settle_interval': 2, 'stalled_after': 600},
    }

    @classmethod
    def make_deployment(cls):
        return deploy.Deployment(
            cls.BACKEND, compute_hosts=('compute1',), api_processes=2,
            api_threads=2, extra_conf=cls.EXTRA_CONF,
            broker=faults.PrivateRabbitMQ())

    def _state(self, server_id, volume_id):
        """(volume status, mapped to the server?)"""
        mapped = volume_id in [a['volumeId'] for a in
                               self.list_attachments(server_id)]
        return self.show_volume(volume_id)['status'], mapped

    def _wait_state(self, server_id, volume_id, wanted):
        """Poll until (status, mapped) == ``wanted``; returns the last
        state seen, or 'lost' when the mapping of an accepted attach
        disappears before the volume is in-use (rolled back)."""
        deadline = time.monotonic() + COMPLETE_TIMEOUT
        while True:
            state = self._state(server_id, volume_id)
            if state == wanted:
                return state
            if wanted == ('in-use', True) and not state[1]:
                return 'lost: %s' % (state,)
            if time.monotonic() > deadline:
                return 'stuck: %s' % (state,)
            time.sleep(0.2)

    def _client(self, api, server_id, volume_id, stop, log, errors):
        """Attach and detach ``volume_id`` until ``stop``; every answer in
        ``log``, every broken promise in ``errors``."""
        try:
            while not stop.is_set():
                for op, call, done in (
                        ('attach', self.attach_volume, ('in-use', True)),
                        ('detach', self.detach_volume,
                         ('available', False))):
                    before = self._state(server_id, volume_id)
                    while True:
                        resp = call(server_id, volume_id, api=api)
                        log.append((volume_id, op, resp.status,
                                    time.monotonic()))
                        if resp.status == 202:
                            break
                        if resp.status != 503:
                            errors.append((volume_id, op, resp))
                            return
                        # Not sent: nothing changed.
                        now = self._state(server_id, volume_id)
                        if now != before:
                            errors.append((volume_id, op, '503 but %s -> %s'
                                           % (before, now)))
                            return
                    reached = self._wait_state(server_id, volume_id, done)
                    if reached != done:
                        errors.append((volume_id, op, reached))
                        return
        except Exception as e:      # an assertion in a helper
            errors.append((volume_id, 'client', repr(e)))

    def test_no_accepted_attach_is_lost(self):
        api = self.api.as_(compute_version=COMPUTE_VERSION)
        server_id = self.create_server()
        self.wait_for_server_status(server_id, 'ACTIVE')
        volumes = [self.create_volume() for _ in range(CLIENTS + 1)]
        for volume_id in volumes:
            self.wait_for_volume_status(volume_id, 'available')
        probe = volumes.pop()
        broker = self.deployment.broker
        # The production settings made durable, replicated queues.
        queues = broker.queues()
        for name in ('conductor', 'compute.compute1'):
            self.assertEqual((True, 'quorum'), queues[name][:2], queues)

        stop = threading.Event()
        log, errors = [], []
        threads = [threading.Thread(
            target=self._client,
            args=(api, server_id, v, stop, log, errors)) for v in volumes]
        for thread in threads:
            thread.start()
        self.addCleanup(stop.set)
        self.wait_for(lambda: sum(1 for e in log if e[2] == 202) >=
                      2 * CLIENTS, message='the load did not start')

        # Messages waiting in a queue when the broker stops: the conductor
        # is paused (SIGSTOP) until every client waits on an accepted
        # attach that only the conductor can carry on (its last answer an
        # attach's 202). One accepted just before the pause counts: the
        # paused conductor has not acknowledged it (a client waiting on it
        # sends nothing more, so requiring an attach sent after the pause
        # from every client could wait for ever).
        conductor = self.deployment.processes[self.deployment.CONDUCTOR]
        conductor.signal(signal.SIGSTOP)
        self.addCleanup(conductor.signal, signal.SIGCONT)

        def waiting():
            last = {}
            for entry in list(log):
                last[entry[0]] = entry
            return (len(last) == CLIENTS and
                    all(e[1] == 'attach' and e[2] == 202
                        for e in last.values()))
        self.wait_for(lambda: errors or waiting(),
                      message=lambda: 'no attach waits in the queue: %s' %
                      log[-10:])

        broker.stop_app()
        stopped = time.monotonic()
        # An attach sent while the broker is down: 503, nothing made.
        resp = self.attach_volume(server_id, probe, api=api)
        probe_time = time.monotonic() - stopped
        self.assertEqual(503, resp.status, resp)
        self.assertIn('Retry-After', resp.headers)
        self.assertEqual(('available', False),
                         self._state(server_id, probe))
        # Down for OUTAGE seconds: a fault's duration, not a wait for work.
        stop.wait(max(0, OUTAGE - (time.monotonic() - stopped)))
        broker.start_app()
        conductor.signal(signal.SIGCONT)
        restarted = time.monotonic()
        self.wait_for(
            lambda: errors or sum(1 for e in log if e[3] > restarted and
                                  e[2] == 202) >= 4 * CLIENTS,
            timeout=240, message=lambda: 'the load did not go on after '
            'the broker came back: %s' % log[-20:])
        stop.set()
        for thread in threads:
            thread.join(COMPLETE_TIMEOUT + 60)
        accepted = sum(1 for e in log if e[2] == 202)
        refused = sum(1 for e in log if e[2] == 503)
        self.addDetail('broker-restart', content.text_content(
            'accepted %d (attach %d), 503 %d; probe 503 after %.1f s; '
            'errors %s' % (
                accepted, sum(1 for e in log if e[1] == 'attach' and
                              e[2] == 202), refused, probe_time, errors)))
        self.assertEqual([], errors)

        # Every volume settled, and every one attaches again.
        for volume_id in volumes + [probe]:
            status, mapped = self._state(server_id, volume_id)
            self.assertIn((status, mapped), (('in-use', True),
                                             ('available', False)))
            if status == 'in-use':
                self.assertEqual(202, self.detach_volume(
                    server_id, volume_id).status)
                self.wait_for_volume_status(volume_id, 'available')
            self.assertEqual(202, self.attach_volume(
                server_id, volume_id, api=api).status)
            self.wait_for_volume_status(volume_id, 'in-use')


class TestBrokerRestartMariaDB(_BrokerRestartTests, base.IntegrationTestCase):
    BACKEND = 'mysql'
