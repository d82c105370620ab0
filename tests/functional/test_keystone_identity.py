"""Identity comes only from Keystone's answer, in keystone mode too.

keystonemiddleware's own ``AuthTokenFixture`` stands in for the Keystone
server (it answers token validation; everything from the middleware on is
real). Identity and role headers a client sends, ``X-Service-Roles``
above all, which the OSSA-2023-003 guard relies on, must not reach the
application: a user cannot pass for the compute service or an admin.
"""

from keystonemiddleware import fixture as ksm_fixture
from oslo_utils import uuidutils

from tests.functional.volume import base

FORGED = (
    {'X-Service-Roles': 'service'},
    {'X-Service-Roles': 'service', 'X-Service-Identity-Status': 'Confirmed'},
    {'X-Roles': 'admin,service'},
    {'X-Roles': 'admin', 'X-Identity-Status': 'Confirmed',
     'X-User-Id': 'admin', 'X-Project-Id': 'admin'},
    {'X_Roles': 'admin'},
)


class KeystoneIdentityTest(base.VolumeTestCase):
    CONF = {'api.auth_strategy': 'keystone',
            # Where a 401 sends clients (WWW-Authenticate).
            'keystone_authtoken.www_authenticate_uri':
                'http://127.0.0.1:5000/v3'}

    def setUp(self):
        super().setUp()
        tokens = self.useFixture(ksm_fixture.AuthTokenFixture())
        self.user_token = 'user-token'
        tokens.add_token_data(
            token_id=self.user_token, user_id='demo', project_id='demo',
            role_list=['member', 'reader'])
        self.admin_token = 'admin-token'
        tokens.add_token_data(
            token_id=self.admin_token, user_id='admin', project_id='admin',
            role_list=['admin', 'member', 'reader'])
        self.service_token = 'service-token'
        tokens.add_token_data(
            token_id=self.service_token, user_id='nova',
            project_id='service', role_list=['service', 'admin'])
        self.user = self.api.as_(token=self.user_token,
                                 volume_version='3.44')
        self.admin = self.api.as_(token=self.admin_token,
                                  volume_version='3.44')

    def _held_attachment(self):
        resp = self.user.post('/v3/volumes', body={'volume': {'size': 1}})
        self.assertEqual(202, resp.status, resp.text)
        volume_id = resp.body['volume']['id']
        instance_uuid = uuidutils.generate_uuid()
        resp = self.user.post('/v3/attachments', body={'attachment': {
            'volume_uuid': volume_id, 'instance_uuid': instance_uuid,
            'connector': {'host': 'compute1'}}})
        self.assertEqual(200, resp.status, resp.text)
        attachment = resp.body['attachment']
        base.server_holding(attachment)
        return volume_id, attachment['id']

    def test_no_token_and_unknown_token_are_401(self):
        self.assertEqual(401, self.api.as_(token='').get(
            '/v3/volumes', token='').status)
        self.assertEqual(401, self.api.get('/v3/volumes',
                                           token='not-a-token').status)

    def test_forged_service_roles_do_not_pass_the_guard(self):
        volume_id, attachment_id = self._held_attachment()
        path = '/v3/attachments/%s' % attachment_id
        for headers in FORGED:
            resp = self.user.delete(path, headers=headers)
            self.assertEqual(409, resp.status, (headers, resp.text))
            self.assertIn('conflictingRequest', resp.body)
        shown = self.admin.get(path).body['attachment']
        self.assertEqual('attaching', shown['status'])
        # The compute service's token, as it sends it, is recognised.
        resp = self.user.delete(
            path, headers={'X-Service-Token': self.service_token})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(404, self.admin.get(path).status)

    def test_forged_roles_do_not_make_an_admin(self):
        for headers in FORGED:
            resp = self.user.get('/v2.1/os-services', headers=headers)
            self.assertEqual(403, resp.status, (headers, resp.text))
        self.assertEqual(200, self.admin.get('/v2.1/os-services').status)
