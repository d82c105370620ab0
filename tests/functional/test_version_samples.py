"""The api-ref samples of the version documents (``versions.inc``):
``GET /``, ``GET /v2.1``, ``GET /v3`` and ``GET /volume/``. Run with
NOVA_LITE_WRITE_SAMPLES=1 to (re)write api-ref/source/samples/versions/."""

from tests.functional import api_samples
from tests.functional import base


class VersionSamplesTest(api_samples.SampleAssertions, base.TestCase):
    def test_samples(self):
        self.scrub = api_samples.Scrubber('http://localhost')
        for path, name in (('/', 'versions-get-resp.json'),
                           ('/v2.1', 'v21-version-get-resp.json'),
                           ('/v3', 'v3-versions-get-resp.json'),
                           ('/volume/', 'volume-versions-get-resp.json')):
            resp = self.api.get(path)
            self.assertIn(resp.status, (200, 300), resp.text)
            self._sample('versions', name, resp.body)
