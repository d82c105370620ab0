"""``/identity`` through the whole API application: the token Keystone's
token API issues for a checked password is a token the compute and block
storage APIs accept, with the roles noauth2 gives it; the catalog's URLs
are served. With Keystone (``auth_strategy = keystone``) only version
discovery is left."""

import copy
import urllib.parse

from nova_lite.api.handlers import identity
from tests.functional import api_samples
from tests.functional import base


def password_body(user, password):
    return {'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': user, 'domain': {'name': 'Default'},
            'password': password}}},
        'scope': {'project': {'name': user, 'domain': {'name': 'Default'}}},
    }}


class TokenAPITest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.passwords = identity.ensure_passwords(self.conf)

    def issue(self, user, password):
        return self.api.post('/identity/v3/auth/tokens',
                             body=password_body(user, password), token='')

    def test_issued_tokens_work_on_the_catalogs_endpoints(self):
        resp = self.issue('demo', self.passwords['demo'])
        self.assertEqual(201, resp.status, resp.text)
        token = resp.headers['X-Subject-Token']
        urls = {s['type']: s['endpoints'][0]['url']
                for s in resp.body['token']['catalog']}
        path = urllib.parse.urlsplit(urls['block-storage']).path
        self.assertEqual('/volume/v3/demo', path)
        created = self.api.post(path + '/volumes',
                                body={'volume': {'size': 1}}, token=token)
        self.assertEqual(202, created.status, created.text)
        self.assertEqual('demo', created.body['volume']['user_id'])
        path = urllib.parse.urlsplit(urls['compute']).path
        listed = self.api.get(path + '/servers', token=token)
        self.assertEqual((200, {'servers': []}),
                         (listed.status, listed.body))
        # A member's token: the admin-only API refuses it.
        services = self.api.as_(compute_version='2.53').get(
            path + '/os-services', token=token)
        self.assertEqual(403, services.status)

    def test_admin_token_is_an_administrators(self):
        resp = self.issue('admin', self.passwords['admin'])
        self.assertEqual(201, resp.status, resp.text)
        services = self.api.as_(compute_version='2.53').get(
            '/v2.1/os-services', token=resp.headers['X-Subject-Token'])
        self.assertEqual(200, services.status, services.text)

    def test_a_wrong_password_changes_nothing(self):
        resp = self.issue('admin', self.passwords['demo'])
        self.assertEqual(401, resp.status)
        self.assertNotIn('X-Subject-Token', resp.headers)
        self.assertEqual('Unauthorized', resp.body['error']['title'])
        self.assertEqual(self.passwords,
                         identity.ensure_passwords(self.conf))

    def test_version_discovery_needs_no_token(self):
        resp = self.api.get('/identity', token='')
        self.assertEqual(300, resp.status)
        self.assertEqual('v3.14', resp.body['versions']['values'][0]['id'])
        for path in ('/identity/v3', '/identity/v3/'):
            resp = self.api.get(path, token='')
            self.assertEqual(200, resp.status, path)
            self.assertEqual('v3.14', resp.body['version']['id'])
        resp = self.api.get('/identity/v3/projects')
        self.assertEqual(404, resp.status)
        self.assertIn('no identity service', resp.text)


class KeystoneStrategyTest(base.TestCase):
    CONF = {'api.auth_strategy': 'keystone'}

    def test_only_version_discovery(self):
        passwords = identity.ensure_passwords(self.conf)
        resp = self.api.post('/identity/v3/auth/tokens', token='',
                             body=password_body('admin',
                                                passwords['admin']))
        self.assertEqual(404, resp.status)
        self.assertEqual(200, self.api.get('/identity/v3', token='').status)


class IdentitySamplesTest(api_samples.SampleAssertions, base.TestCase):
    """The api-ref samples of ``identity.inc``. Run with
    NOVA_LITE_WRITE_SAMPLES=1 to (re)write
    api-ref/source/samples/identity/."""

    def test_samples(self):
        passwords = identity.ensure_passwords(self.conf)

        class Scrubber(api_samples.Scrubber):
            def prepare(self, data):
                data = copy.deepcopy(data)
                token = data.get('token', {})
                if 'audit_ids' in token:
                    token.update(audit_ids=['3T2dc1CGQxyJsUDxS4fNpg'],
                                 issued_at='2026-11-21T20:36:50.000000Z',
                                 expires_at='2026-11-21T21:36:50.000000Z')
                user = data.get('auth', {}).get('identity', {}).get(
                    'password', {}).get('user')
                if user:
                    user['password'] = 'DEMO_PASSWORD'
                return data
        self.scrub = Scrubber('http://localhost')
        resp = self.api.get('/identity', token='')
        self._sample('identity', 'versions-get-resp.json', resp.body)
        resp = self.api.get('/identity/v3', token='')
        self._sample('identity', 'v3-version-get-resp.json', resp.body)
        body = password_body('demo', passwords['demo'])
        self._sample('identity', 'auth-tokens-post-req.json', body)
        resp = self.api.post('/identity/v3/auth/tokens', body=body,
                             token='')
        self.assertEqual(201, resp.status, resp.text)
        self._sample('identity', 'auth-tokens-post-resp.json', resp.body)
