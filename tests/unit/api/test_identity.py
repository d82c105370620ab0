"""``/identity``: Keystone's token API in front of noauth2, and the client
files nova-lite-all writes (clouds.yaml, openrc) with the passwords it
checks."""

import datetime
import json
import os
import stat

from oslo_serialization import jsonutils
import webob
import yaml

from nova_lite.api import auth
from nova_lite.api.handlers import identity
from nova_lite import embedded
from tests import base

BASE = 'http://localhost'
ETC = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                   'nova-lite')


def password_request(user, password, project=None, scope=None,
                     user_domain=None, methods=('password',)):
    user_ref = {'name': user, 'password': password,
                'domain': user_domain or {'name': 'Default'}}
    body = {'auth': {'identity': {'methods': list(methods),
                                  'password': {'user': user_ref}}}}
    if scope is not None:
        body['auth']['scope'] = scope
    elif project is not None:
        body['auth']['scope'] = {'project': {
            'name': project, 'domain': {'name': 'Default'}}}
    return body


class IdentityTestCase(base.TestCase):
    def setUp(self):
        super().setUp()
        self.passwords = identity.ensure_passwords(self.conf)
        self.app = identity.identity_app(self.conf)

    def call(self, method, path, body=None, headers=None):
        req = webob.Request.blank(path, method=method)
        if body is not None:
            req.body = (body if isinstance(body, bytes)
                        else jsonutils.dump_as_bytes(body))
            req.content_type = 'application/json'
        req.headers.update(headers or {})
        return req.get_response(self.app)

    def issue(self, *args, **kwargs):
        return self.call('POST', '/v3/auth/tokens',
                         password_request(*args, **kwargs))

    def assertRefused(self, resp, code=401):
        self.assertEqual(code, resp.status_int, resp.text)
        self.assertEqual(code, resp.json['error']['code'])
        self.assertNotIn('X-Subject-Token', resp.headers)
        if code == 401:
            self.assertEqual('Keystone uri="%s/identity"' % BASE,
                             resp.headers['WWW-Authenticate'])


class VersionTest(IdentityTestCase):
    def test_root_is_keystones_version_list(self):
        resp = self.call('GET', '/')
        self.assertEqual(300, resp.status_int)
        [version] = resp.json['versions']['values']
        self.assertEqual(('v3.14', 'stable'),
                         (version['id'], version['status']))
        self.assertEqual(BASE + '/identity/v3/',
                         version['links'][0]['href'])

    def test_v3(self):
        for path in ('/v3', '/v3/'):
            resp = self.call('GET', path)
            self.assertEqual(200, resp.status_int)
            self.assertEqual('v3.14', resp.json['version']['id'])

    def test_other_paths_are_404(self):
        for path in ('/v3/projects', '/v3/users', '/v2.0/tokens',
                     '/v3/auth/tokens/x'):
            resp = self.call('GET', path)
            self.assertRefused(resp, 404)

    def test_other_methods_are_405(self):
        resp = self.call('DELETE', '/v3/auth/tokens',
                         headers={'X-Auth-Token': 'admin:admin',
                                  'X-Subject-Token': 'admin:admin'})
        self.assertRefused(resp, 405)
        self.assertEqual('GET, HEAD, POST', resp.headers['Allow'])


class IssueTest(IdentityTestCase):
    def test_admin_gets_an_admin_token_with_the_catalog(self):
        resp = self.issue('admin', self.passwords['admin'], 'admin')
        self.assertEqual(201, resp.status_int, resp.text)
        self.assertEqual('admin:admin', resp.headers['X-Subject-Token'])
        token = resp.json['token']
        self.assertEqual(['password'], token['methods'])
        self.assertEqual(('admin', 'admin'),
                         (token['user']['id'], token['project']['id']))
        self.assertEqual('default', token['project']['domain']['id'])
        # The roles noauth2 gives the token, no more.
        self.assertEqual(auth.noauth_identity('admin:admin')[2],
                         [r['name'] for r in token['roles']])
        issued = datetime.datetime.strptime(token['issued_at'],
                                            '%Y-%m-%dT%H:%M:%S.%fZ')
        expires = datetime.datetime.strptime(token['expires_at'],
                                             '%Y-%m-%dT%H:%M:%S.%fZ')
        self.assertEqual(identity.TOKEN_LIFETIME, expires - issued)
        urls = {(s['type'], e['interface']): e['url']
                for s in token['catalog'] for e in s['endpoints']}
        self.assertEqual(BASE + '/v2.1', urls['compute', 'public'])
        self.assertEqual(BASE + '/volume/v3/admin',
                         urls['block-storage', 'public'])
        self.assertEqual(BASE + '/volume/v3/admin',
                         urls['volumev3', 'public'])
        self.assertEqual(BASE + '/identity', urls['identity', 'public'])
        self.assertEqual({'public', 'internal', 'admin'},
                         {i for _t, i in urls})
        self.assertEqual({'RegionOne'}, {e['region_id']
                                         for s in token['catalog']
                                         for e in s['endpoints']})

    def test_demo_is_a_member_of_its_project(self):
        resp = self.issue('demo', self.passwords['demo'], 'demo')
        self.assertEqual(201, resp.status_int, resp.text)
        self.assertEqual('demo:demo', resp.headers['X-Subject-Token'])
        self.assertEqual(['member', 'reader'],
                         [r['name'] for r in resp.json['token']['roles']])
        self.assertIn(BASE + '/volume/v3/demo', resp.text)

    def test_user_and_project_by_id_and_unscoped(self):
        body = password_request('demo', self.passwords['demo'],
                                scope={'project': {'id': 'demo'}})
        del body['auth']['identity']['password']['user']['name']
        body['auth']['identity']['password']['user']['id'] = 'demo'
        resp = self.call('POST', '/v3/auth/tokens', body)
        self.assertEqual('demo:demo', resp.headers['X-Subject-Token'])
        # Unscoped: the user's own project, as Keystone's default project.
        resp = self.issue('demo', self.passwords['demo'])
        self.assertEqual('demo:demo', resp.headers['X-Subject-Token'])
        resp = self.issue('demo', self.passwords['demo'], scope='unscoped')
        self.assertEqual('demo:demo', resp.headers['X-Subject-Token'])

    def test_nocatalog(self):
        resp = self.call('POST', '/v3/auth/tokens?nocatalog',
                         password_request('demo', self.passwords['demo']))
        self.assertEqual(201, resp.status_int)
        self.assertNotIn('catalog', resp.json['token'])

    def test_a_wrong_password_is_401(self):
        self.assertRefused(self.issue('admin', self.passwords['demo'],
                                      'admin'))
        self.assertRefused(self.issue('admin', '', 'admin'))
        self.assertRefused(self.issue('admin', self.passwords['admin'] + 'x',
                                      'admin'))

    def test_a_user_without_a_password_is_401(self):
        for user in ('service', 'eve', 'admin:admin'):
            self.assertRefused(self.issue(user, self.passwords['admin']))

    def test_no_passwords_file_is_401(self):
        os.unlink(identity.passwords_path(self.conf))
        self.assertRefused(self.issue('admin', self.passwords['admin'],
                                      'admin'))

    def test_another_domain_is_401(self):
        self.assertRefused(self.issue('admin', self.passwords['admin'],
                                      user_domain={'name': 'Other'}))
        self.assertRefused(self.issue(
            'admin', self.passwords['admin'],
            scope={'project': {'name': 'admin', 'domain': {'id': 'x'}}}))

    def test_another_project_is_401(self):
        self.assertRefused(self.issue('demo', self.passwords['demo'],
                                      'admin'))
        self.assertRefused(self.issue('admin', self.passwords['admin'],
                                      'demo'))

    def test_other_scopes_are_401(self):
        for scope in ({'system': {'all': True}},
                      {'domain': {'id': 'default'}},
                      {'OS-TRUST:trust': {'id': 'x'}}):
            self.assertRefused(self.issue('admin', self.passwords['admin'],
                                          scope=scope))

    def test_other_methods_are_401(self):
        self.assertRefused(self.issue('admin', self.passwords['admin'],
                                      methods=('token',)))
        self.assertRefused(self.issue('admin', self.passwords['admin'],
                                      methods=('password', 'totp')))

    def test_malformed_requests_are_400(self):
        for body in (b'not json', b'[]', {'auth': {}},
                     {'auth': {'identity': {'methods': []}}},
                     {'auth': {'identity': {
                         'methods': ['password'],
                         'password': {'user': {'password': 'x'}}}}},
                     password_request('admin', 3)):
            resp = self.call('POST', '/v3/auth/tokens', body)
            self.assertRefused(resp, 400)

    def test_keystone_strategy_serves_versions_only(self):
        self.conf.set_override('auth_strategy', 'keystone', group='api')
        app = identity.identity_app(self.conf)
        req = webob.Request.blank('/v3/auth/tokens', method='POST')
        req.body = jsonutils.dump_as_bytes(
            password_request('admin', self.passwords['admin']))
        self.assertEqual(404, req.get_response(app).status_int)
        self.assertEqual(
            200, webob.Request.blank('/v3').get_response(app).status_int)


class ValidateTest(IdentityTestCase):
    def validate(self, caller, subject, method='GET'):
        headers = {}
        if caller:
            headers['X-Auth-Token'] = caller
        if subject:
            headers['X-Subject-Token'] = subject
        return self.call(method, '/v3/auth/tokens', headers=headers)

    def test_own_token(self):
        resp = self.validate('demo:demo', 'demo:demo')
        self.assertEqual(200, resp.status_int)
        self.assertEqual('demo:demo', resp.headers['X-Subject-Token'])
        self.assertEqual('demo', resp.json['token']['project']['id'])
        self.assertEqual(200, self.validate('demo:demo', 'demo:demo',
                                            'HEAD').status_int)

    def test_admin_and_service_validate_any_token(self):
        for caller in ('admin:admin', 'service:service'):
            resp = self.validate(caller, 'demo:demo')
            self.assertEqual(200, resp.status_int)
            self.assertEqual(['member', 'reader'],
                             [r['name'] for r in resp.json['token']['roles']])

    def test_another_users_token_is_403(self):
        self.assertRefused(self.validate('eve:eve', 'demo:demo'), 403)

    def test_missing_tokens(self):
        self.assertRefused(self.validate(None, 'demo:demo'), 401)
        self.assertRefused(self.validate('demo:demo', None), 400)


class PasswordsTest(base.TestCase):
    def test_generated_once_and_private(self):
        passwords = identity.ensure_passwords(self.conf)
        self.assertEqual(set(identity.USERS), set(passwords))
        self.assertNotEqual(passwords['admin'], passwords['demo'])
        self.assertGreaterEqual(len(passwords['admin']), 24)
        path = identity.passwords_path(self.conf)
        self.assertEqual(0o600, stat.S_IMODE(os.stat(path).st_mode))
        self.assertEqual(passwords, identity.ensure_passwords(self.conf))

    def test_a_missing_user_is_added_and_the_others_kept(self):
        path = identity.passwords_path(self.conf)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            json.dump({'admin': 'kept', 'eve': 'dropped'}, f)
        passwords = identity.ensure_passwords(self.conf)
        self.assertEqual('kept', passwords['admin'])
        self.assertEqual({'admin', 'demo'}, set(passwords))
        with open(path) as f:
            self.assertEqual(passwords, json.load(f))
        self.assertTrue(identity.check_password(self.conf, 'admin', 'kept'))
        self.assertFalse(identity.check_password(self.conf, 'eve',
                                                 'dropped'))

    def test_an_invalid_file_is_replaced(self):
        path = identity.passwords_path(self.conf)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write('[1, 2')
        self.assertFalse(identity.check_password(self.conf, 'admin', ''))
        passwords = identity.ensure_passwords(self.conf)
        self.assertTrue(identity.check_password(self.conf, 'admin',
                                                passwords['admin']))


class ClientFilesTest(base.TestCase):
    def test_clouds_yaml_and_openrc(self):
        path = embedded.write_client_files(self.conf, 'http://h:1')
        passwords = identity.ensure_passwords(self.conf)
        with open(path) as f:
            clouds = yaml.safe_load(f)['clouds']
        self.assertEqual({'nova-lite', 'nova-lite-demo'}, set(clouds))
        for cloud, user in (('nova-lite', 'admin'),
                            ('nova-lite-demo', 'demo')):
            self.assertEqual('password', clouds[cloud]['auth_type'])
            self.assertEqual({
                'auth_url': 'http://h:1/identity', 'username': user,
                'password': passwords[user], 'project_name': user,
                'user_domain_name': 'Default',
                'project_domain_name': 'Default'}, clouds[cloud]['auth'])
            self.assertEqual('RegionOne', clouds[cloud]['region_name'])
        state = os.path.dirname(path)
        for name in ('clouds.yaml', 'admin-openrc', 'demo-openrc'):
            self.assertEqual(0o600, stat.S_IMODE(
                os.stat(os.path.join(state, name)).st_mode), name)
        with open(os.path.join(state, 'demo-openrc')) as f:
            rc = f.read()
        self.assertIn("export OS_PASSWORD='%s'\n" % passwords['demo'], rc)
        self.assertIn('export OS_AUTH_URL=http://h:1/identity\n', rc)
        self.assertIn('export OS_PROJECT_NAME=demo\n', rc)
        # A new address at the next start; the same passwords.
        embedded.write_client_files(self.conf, 'http://h:2')
        with open(path) as f:
            clouds = yaml.safe_load(f)['clouds']
        self.assertEqual('http://h:2/identity',
                         clouds['nova-lite']['auth']['auth_url'])
        self.assertEqual(passwords['admin'],
                         clouds['nova-lite']['auth']['password'])

    def test_sample_is_what_nova_lite_all_writes(self):
        with open(os.path.join(ETC, 'clouds.yaml.sample')) as f:
            sample = f.read()
        self.assertTrue(sample.endswith(embedded.clouds(
            'http://127.0.0.1:8774',
            {'admin': 'ADMIN_PASSWORD', 'demo': 'DEMO_PASSWORD'})),
            'etc/nova-lite/clouds.yaml.sample is not what '
            'embedded.clouds() writes')
