"""The api-ref samples of os-volume_attachments at 2.105: a read-only
attach (request), and the list and show views with ``attach_mode``.

Run with NOVA_LITE_WRITE_SAMPLES=1 to (re)write
api-ref/source/samples/os-volume_attachments/v2.105/; otherwise the test
fails when a sample no longer matches what the API does."""

from tests.functional.compute import test_api_samples


class AttachModeSamplesTest(test_api_samples.APISamplesTest):

    def test_samples(self):
        self.scrub = test_api_samples.Scrubber('http://localhost')
        server_id = self.create_server()
        folder = 'os-volume_attachments'
        url = '/v2.1/servers/%s/os-volume_attachments' % server_id
        volumes = []
        for name, mode in (('data-ro', 'ro'), ('data-rw', None)):
            volume_id = self.create_volume(name=name)
            attachment = {'volumeId': volume_id}
            if mode:
                # The sample: a read-only attach.
                attachment['attach_mode'] = mode
                self._call(self.api, '2.105', 'POST', url, folder,
                           'attach-volume-to-server', status=202,
                           body={'volumeAttachment': attachment})
            else:
                # The default: read/write.
                self.attach(server_id, volume_id, expect=202,
                            api=self.api.as_(compute_version='2.105'))
            self.wait_for_volume_status(volume_id, 'in-use')
            volumes.append(volume_id)
        self._call(self.api, '2.105', 'GET', url, folder,
                   'list-volume-attachments')
        self._call(self.api, '2.105', 'GET', '%s/%s' % (url, volumes[0]),
                   folder, 'volume-attachment-detail')
