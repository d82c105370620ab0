"""The api-ref samples of /v2.1/os-volumes (below 2.36): create, show,
list and list with details, with one volume attached to a server.

Run with NOVA_LITE_WRITE_SAMPLES=1 to (re)write
api-ref/source/samples/os-volumes/; otherwise the test fails when a
sample no longer matches what the API does."""

from tests.functional.compute import test_api_samples

URL = '/v2.1/os-volumes'


class OSVolumesSamplesTest(test_api_samples.APISamplesTest):

    def test_samples(self):
        self.scrub = test_api_samples.Scrubber('http://localhost')
        api = self.api.as_(compute_version='2.35')
        server_id = self.create_server()
        folder = 'os-volumes'
        created = self._call(
            api, '2.1', 'POST', URL, folder, 'os-volumes-post',
            body={'volume': {'size': 10, 'display_name': 'data',
                             'display_description': 'The database files.',
                             'availability_zone': 'nova'}})
        volume_id = created['volume']['id']
        self.attach(server_id, volume_id, api=api)
        self.wait_for_volume_status(volume_id, 'in-use')
        resp = api.post(URL, body={'volume': {'size': 1,
                                              'display_name': 'scratch'}})
        self.assertEqual(200, resp.status, resp.text)
        self._call(api, '2.1', 'GET', '%s/%s' % (URL, volume_id), folder,
                   'os-volumes-get')
        self._call(api, '2.1', 'GET', URL, folder, 'os-volumes-index')
        self._call(api, '2.1', 'GET', URL + '/detail', folder,
                   'os-volumes-detail')
