"""Regression tests of malformed requests that answered 500: each is a
400 in the API's fault format, and changes nothing."""

import webob

from tests.functional.volume import base

FAULT = 'badRequest'


class HostileInputTest(base.VolumeTestCase):

    def raw(self, method, path, body=None, headers=None):
        req = webob.Request.blank(path, method=method)
        req.headers.update(self.vol.base_headers())
        if body is not None:
            req.body = body
            req.content_type = 'application/json'
        req.headers.update(headers or {})
        resp = req.get_response(self.vol.app)
        return resp.status_int, resp.json_body

    def assert_bad_request(self, answer, text):
        status, body = answer
        self.assertEqual(400, status, body)
        self.assertEqual({FAULT}, set(body))
        self.assertEqual(400, body[FAULT]['code'])
        self.assertIn(text, body[FAULT]['message'])

    def volume_names(self):
        return sorted(v['name'] for v in self.vol.get(
            '/v3/volumes/detail').body['volumes'])

    def test_json_nested_too_deeply(self):
        deep = b'{"volume": ' + b'[' * 990 + b']' * 990 + b'}'
        self.assert_bad_request(self.raw('POST', '/v3/volumes', deep),
                                'nested too deeply')
        self.assertEqual([], self.volume_names())

    def test_lone_surrogate_in_a_stored_string(self):
        body = b'{"volume": {"size": 1, "name": "bad\\ud800name"}}'
        self.assert_bad_request(self.raw('POST', '/v3/volumes', body),
                                'lone surrogate')
        self.assertEqual([], self.volume_names())

    def test_path_that_is_not_utf8(self):
        # Before authentication, as the fuzzer found it.
        self.assert_bad_request(
            self.raw('GET', '/v3/attachments/%FF%FE',
                     headers={'X-Auth-Token': ''}), 'not valid UTF-8')
        self.assert_bad_request(self.raw('GET', '/v3/volumes/%FF'),
                                'not valid UTF-8')

    def test_query_string_that_is_not_utf8(self):
        self.assert_bad_request(self.raw('GET', '/v2.1/servers?name=%ff'),
                                'not valid UTF-8')

    def test_microversion_with_thousands_of_digits(self):
        status, body = self.raw('GET', '/v3/volumes', headers={
            'OpenStack-API-Version': 'volume 3.' + '9' * 5000})
        self.assertEqual(400, status, body)
        self.assertEqual({FAULT}, set(body))

    def test_integer_parameters_with_thousands_of_digits(self):
        digits = '9' * 5000
        for path in ('/v3/volumes?limit=%s' % digits,
                     '/v3/volumes?offset=%s' % digits,
                     '/v2.1/flavors?minRam=%s' % digits,
                     '/v2.1/flavors/detail?minDisk=%s' % digits,
                     '/v2.1/servers?limit=%s' % digits):
            status, body = self.raw('GET', path)
            self.assertEqual(400, status, (path, body))
            self.assertEqual({FAULT}, set(body))
        status, body = self.raw(
            'POST', '/v2.1/servers', headers={
                'OpenStack-API-Version': 'compute 2.37'},
            body=('{"server": {"name": "s", "flavorRef": "1", '
                  '"imageRef": "155d900f-4e14-4e4c-a73d-069cbf4541e6", '
                  '"networks": "none", "max_count": "%s"}}' % digits
                  ).encode())
        self.assertEqual(400, status, body)
        self.assertEqual([], self.api.get('/v2.1/servers').body['servers'])

    def test_offset_beyond_what_a_database_takes(self):
        status, body = self.raw('GET', '/v3/volumes?offset=%d' % 2 ** 63)
        self.assertEqual(400, status, body)
        self.assertEqual({FAULT}, set(body))
        status, body = self.raw('GET',
                                '/v3/volumes?offset=%d' % (10 ** 18 - 1))
        self.assertEqual(200, status, body)
        self.assertEqual([], body['volumes'])
