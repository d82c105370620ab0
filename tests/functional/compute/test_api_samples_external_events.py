"""The api-ref samples of /v2.1/os-server-external-events: Cinder's
``volume-extended`` for an attached volume (200), and a request whose
events are not all accepted (207).

Run with NOVA_LITE_WRITE_SAMPLES=1 to (re)write
api-ref/source/samples/os-server-external-events/; otherwise the test
fails when a sample no longer matches what the API does."""

from tests.functional.compute import test_api_samples

URL = '/v2.1/os-server-external-events'
FOLDER = 'os-server-external-events'
MISSING = '0ea9cf5b-4d2a-4d3c-9f4c-1d5e2c0c9a77'


class ExternalEventsSamplesTest(test_api_samples.APISamplesTest):

    def test_samples(self):
        self.scrub = test_api_samples.Scrubber('http://localhost')
        service = self.api.as_(token='service:demo')
        server_id = self.create_server()
        volume_id = self.create_volume()
        self.attach(server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self._call(service, '2.51', 'POST', URL, FOLDER, 'event-create',
                   body={'events': [{'name': 'volume-extended',
                                     'server_uuid': server_id,
                                     'tag': volume_id}]})
        self._call(service, '2.93', 'POST', URL, FOLDER,
                   'event-create-multi-status',
                   status=207,
                   body={'events': [{'name': 'volume-extended',
                                     'server_uuid': server_id,
                                     'tag': volume_id},
                                    {'name': 'volume-reimaged',
                                     'server_uuid': MISSING,
                                     'status': 'completed'}]})
