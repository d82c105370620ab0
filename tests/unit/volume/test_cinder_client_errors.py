"""The ``cinder`` VolumeClient's errors (what a failed call of block
storage becomes: the class the ``local`` client raises, and a message
that names the call when the server failed or could not be reached) and
whose token a request carries."""

from cinderclient import exceptions as cinder_exc
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import identity
from keystoneauth1 import service_token
import testtools

from nova_lite import context
from nova_lite import exception
from nova_lite.volume_client import cinder
from tests.fixtures import conf as conf_fixture

UPDATE = 'attachment_update of attachment a1'


class TranslateTest(testtools.TestCase):

    def test_server_error_names_the_call_and_the_request(self):
        error = cinder._translate(
            cinder_exc.ClientException(
                500, message='The server has either erred or is incapable '
                'of performing the requested operation.',
                request_id='req-1'),
            None, UPDATE)
        self.assertIsInstance(error, exception.VolumeBackendAPIException)
        self.assertIn('Block storage failed attachment_update of attachment '
                      'a1 (HTTP 500, request req-1): The server has either '
                      'erred', str(error))

    def test_unreachable_names_the_call(self):
        error = cinder._translate(
            ks_exc.ConnectFailure('Unable to establish connection'), None,
            UPDATE)
        self.assertIsInstance(error, exception.ServiceUnavailable)
        self.assertEqual(503, error.code)
        self.assertIn('The block-storage API cannot be reached (%s): Unable '
                      'to establish connection' % UPDATE, str(error))

    def test_a_refusal_keeps_the_servers_message(self):
        error = cinder._translate(
            cinder_exc.BadRequest(400, message='Invalid volume: busy'),
            None, UPDATE)
        self.assertIsInstance(error, exception.InvalidVolume)
        self.assertNotIn('attachment_update', str(error))
        self.assertIn('Invalid volume: busy', str(error))

    def test_without_an_operation(self):
        error = cinder._translate(
            cinder_exc.ClientException(500, message='boom'), None)
        self.assertIsInstance(error, exception.VolumeBackendAPIException)
        self.assertIn('boom', str(error))
        self.assertNotIn('Block storage failed', str(error))
        error = cinder._translate(ks_exc.ConnectFailure('refused'), None)
        self.assertIn('The block-storage API cannot be reached: refused',
                      str(error))


class TokenlessContextTest(testtools.TestCase):
    """A context without a token (settling, periodic tasks) reaches a
    Keystone-backed Cinder as the ``[cinder]`` service user, as Nova's
    admin auth does; a user's request keeps the user's token."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.conf.set_override('endpoint_override',
                               'http://cinder.test/v3/service-project',
                               group='volume')
        self.client = cinder.CinderClient(self.conf)
        # What [cinder] auth_type = password loads (never asked here).
        self.service_auth = identity.Token('http://keystone.test/v3',
                                           'service-user-token')
        self.client._service_auth = self.service_auth

    def auth_of(self, ctxt):
        return self.client._client(ctxt, '3.44').client.auth

    def test_without_a_token_the_service_user(self):
        ctxt = context.RequestContext(user_id='u1', project_id='p1',
                                      is_admin=True)
        self.assertIs(self.service_auth, self.auth_of(ctxt))
        wrapped = self.auth_of(context.service_context(ctxt))
        self.assertIsInstance(wrapped, service_token.ServiceTokenAuthWrapper)
        self.assertIs(self.service_auth, wrapped.user_auth)
        self.assertIs(self.service_auth, wrapped.service_auth)

    def test_a_users_request_keeps_its_token(self):
        ctxt = context.RequestContext(user_id='u1', project_id='p1',
                                      auth_token='user-token')
        auth = self.auth_of(ctxt)
        self.assertEqual('user-token', auth.get_token(None))
        wrapped = self.auth_of(context.service_context(ctxt))
        self.assertEqual('user-token', wrapped.user_auth.get_token(None))
        self.assertIs(self.service_auth, wrapped.service_auth)

    def test_without_a_service_user_the_noauth_form(self):
        self.client._service_auth = None
        ctxt = context.RequestContext(user_id='u1', project_id='p1')
        self.assertEqual('u1:p1', self.auth_of(ctxt).get_token(None))
