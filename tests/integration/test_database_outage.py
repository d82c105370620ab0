"""The database goes away under a running deployment, and comes back.

A private MariaDB (``tests.integration.faults``), killed with SIGKILL as a
lost database host would be: while it is down every API request that
needs it answers 503 (``serviceUnavailable``) in the fault format, soon
(not after the client's timeout) and without a 500; nothing half-made is
left; once the server is back the API serves again by itself, and the
conductor and compute host carry on (an attach works end to end).
"""

import requests

from tests.integration import base
from tests.integration import deployment as deploy
from tests.integration import faults

# A request during the outage must be answered well within this; the
# API's own database timeouts are far shorter.
OUTAGE_REQUEST_TIMEOUT = 30


class TestDatabaseOutageMariaDB(base.IntegrationTestCase):
    BACKEND = 'mysql'

    @classmethod
    def make_deployment(cls):
        return deploy.Deployment(
            cls.BACKEND, compute_hosts=('compute1',), api_processes=1,
            api_threads=2, database=faults.PrivateMariaDB())

    def _raw(self, method, path, body=None):
        resp = requests.request(
            method, self.deployment.base_url + path, json=body,
            headers={'X-Auth-Token': 'demo:demo',
                     'Accept': 'application/json'},
            timeout=OUTAGE_REQUEST_TIMEOUT)
        return resp.status_code, resp.json() if resp.content else None

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
            status, fault = self._raw(method, path, body)
            self.assertEqual(503, status, (method, path, fault))
            self.assertEqual(503, fault['serviceUnavailable']['code'])

        self.deployment.database.start()
        self.wait_for(
            lambda: self._raw('GET', '/v2.1/servers/%s' % server_id)[0] ==
            200, message='the API did not serve again after the database '
                         'came back')
        # Nothing was made during the outage, and everything works.
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], self.list_attachments(server_id))
        self.deployment.wait_for_services()
        resp = self.attach_volume(server_id, volume_id)
        self.assertEqual(200, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'in-use')
