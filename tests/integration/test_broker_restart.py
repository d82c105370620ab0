"""RabbitMQ dies and comes back under a steady attach/detach load.

A private RabbitMQ node (``tests.integration.faults``) is killed with
SIGKILL while three clients attach (2.101, asynchronous) and detach
volumes in a loop, and started again seconds later. Requests made while
it is down may fail, but none may be lost for good: once the broker is
back and the settling has run, every volume is either ``in-use`` with its
attachment and the server's mapping, or ``available`` with neither, and
every one of them attaches again.
"""

import threading

from tests.integration import base
from tests.integration import deployment as deploy
from tests.integration import faults

CLIENTS = 3


class TestBrokerRestartMariaDB(base.IntegrationTestCase):
    BACKEND = 'mysql'
    # Work whose message was lost is settled once stalled: sooner here.
    EXTRA_CONF = {'recovery': {'settle_interval': 2, 'stalled_after': 5}}

    @classmethod
    def make_deployment(cls):
        return deploy.Deployment(
            cls.BACKEND, compute_hosts=('compute1',), api_processes=2,
            api_threads=2, extra_conf=cls.EXTRA_CONF,
            broker=faults.PrivateRabbitMQ())

    def _cycle(self, api, server_id, volume_id, stop, outcomes):
        """Attach and detach until ``stop``; the statuses seen."""
        while not stop.is_set():
            for call in (self.attach_volume, self.detach_volume):
                try:
                    resp = call(server_id, volume_id, api=api)
                    outcomes.append(resp.status)
                except Exception as e:    # the client's own timeout
                    outcomes.append(type(e).__name__)
                # Let the operation move before the next one.
                try:
                    self.wait_for(lambda: self.show_volume(volume_id)[
                        'status'] in ('available', 'in-use'), timeout=30)
                except Exception as e:
                    outcomes.append(type(e).__name__)

    def test_nothing_is_lost_for_good(self):
        api = self.api.as_(compute_version='2.101')
        server_id = self.create_server()
        self.wait_for_server_status(server_id, 'ACTIVE')
        volumes = [self.create_volume() for _ in range(CLIENTS)]
        for volume_id in volumes:
            self.wait_for_volume_status(volume_id, 'available')
        stop = threading.Event()
        outcomes = []
        threads = [threading.Thread(
            target=self._cycle, args=(api, server_id, v, stop, outcomes))
            for v in volumes]
        for thread in threads:
            thread.start()
        self.wait_for(lambda: len(outcomes) >= 2 * CLIENTS,
                      message='the load did not start')
        broker = self.deployment.broker
        broker.stop()
        # Down until the services have noticed.
        services = list(self.deployment.processes.values())
        self.wait_for(lambda: any('is unreachable' in p.log_text()
                                  for p in services), timeout=60,
                      message='no service noticed the broker was gone')
        broker.start()
        self.wait_for(lambda: len(outcomes) >= 10 * CLIENTS, timeout=180,
                      message=lambda: 'the load did not go on after the '
                                      'broker came back: %s' % outcomes)
        stop.set()
        for thread in threads:
            thread.join(120)
        self.deployment.wait_for_services()

        def settled():
            mapped = {a['volumeId'] for a in self.list_attachments(
                server_id)}
            for volume_id in volumes:
                volume = self.show_volume(volume_id)
                if volume['status'] == 'in-use':
                    if volume_id not in mapped or not volume['attachments']:
                        return False
                elif volume['status'] == 'available':
                    if volume_id in mapped or volume['attachments']:
                        return False
                else:
                    return False
            return True
        self.wait_for(settled, timeout=180, message=lambda: (
            'not settled: %s, mapped %s' % (
                [(v, self.show_volume(v)['status']) for v in volumes],
                self.list_attachments(server_id))))
        self.assertNotIn(500, outcomes, outcomes)
        # Every volume attaches again.
        for volume_id in volumes:
            if self.show_volume(volume_id)['status'] == 'in-use':
                resp = self.detach_volume(server_id, volume_id)
                self.assertEqual(202, resp.status, resp)
                self.wait_for_volume_status(volume_id, 'available')
            resp = self.attach_volume(server_id, volume_id, api=api)
            self.assertEqual(202, resp.status, resp)
            self.wait_for_volume_status(volume_id, 'in-use')
