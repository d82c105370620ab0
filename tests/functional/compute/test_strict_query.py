"""Microversion 2.102: the compute GETs refuse unknown query parameters
(400), except os-volume_attachments show, which tolerates them as Nova's
(its 2.102 schema is not wired upstream)."""

from tests.functional.compute import base


class StrictQueryTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.server_id = self.create_server()
        self.volume_id = self.create_volume()
        self.attach(self.server_id, self.volume_id)
        self.wait_for_volume_status(self.volume_id, 'in-use')
        actions = self.api.get('/v2.1/servers/%s/os-instance-actions' %
                               self.server_id).body['instanceActions']
        self.request_id = actions[0]['request_id']

    def get(self, path, version, api=None):
        return (api or self.api).as_(compute_version=version).get(path)

    def test_unknown_parameters_refused_from_2_102(self):
        paths = [
            ('/v2.1/servers', self.api),
            ('/v2.1/servers/detail', self.api),
            ('/v2.1/servers/%s' % self.server_id, self.api),
            ('/v2.1/flavors/1', self.api),
            ('/v2.1/servers/%s/os-instance-actions/%s' % (
                self.server_id, self.request_id), self.api),
            ('/v2.1/os-services', self.admin_api),
        ]
        for path, api in paths:
            resp = self.get(path + '?bogus=1', '2.101', api)
            self.assertEqual(200, resp.status, '%s %s' % (path, resp.text))
            resp = self.get(path + '?bogus=1', '2.102', api)
            self.assertEqual(400, resp.status, path)
            self.assertIn('bogus', resp.body['badRequest']['message'])
            # Known parameters still work.
            self.assertEqual(200, self.get(path, '2.102', api).status)
        resp = self.get('/v2.1/servers?name=server&limit=1', '2.102')
        self.assertEqual(1, len(resp.body['servers']))

    def test_volume_attachment_show_still_tolerant(self):
        path = '/v2.1/servers/%s/os-volume_attachments/%s?bogus=1' % (
            self.server_id, self.volume_id)
        for version in ('2.102', '2.105'):
            self.assertEqual(200, self.get(path, version).status)
        # The list has refused them since 2.75.
        resp = self.get('/v2.1/servers/%s/os-volume_attachments?bogus=1' %
                        self.server_id, '2.102')
        self.assertEqual(400, resp.status)
