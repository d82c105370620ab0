"""nova_lite.db.secrets: what a stored value looks like. (The rows on
SQLite, MariaDB and PostgreSQL: tests/functional/db/
test_secrets_at_rest.py.)"""

from oslo_serialization import jsonutils
import testtools

from nova_lite.db import secrets
from nova_lite import exception
from tests.fixtures import conf as conf_fixture

SECRET = 'chap-secret-unit'


class SecretsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        secrets.configure(self.conf)
        self.addCleanup(secrets.configure, self.conf)

    def set_keys(self, keys):
        self.conf.set_override('secret_keys', keys, group='database')
        secrets.configure(self.conf)

    def test_every_secret_key_at_any_depth(self):
        value = {'data': {'auth_password': SECRET, 'target_lun': 1},
                 'old': [{'keyring': SECRET + 'k'}],
                 'discovery_auth_password': SECRET + 'd',
                 'auth_username': 'user'}
        stored = secrets.encrypt_json(jsonutils.dumps(value))
        self.assertNotIn(SECRET, stored)
        decoded = jsonutils.loads(stored)
        self.assertEqual(('user', 1), (decoded['auth_username'],
                                       decoded['data']['target_lun']))
        for token in (decoded['data']['auth_password'],
                      decoded['old'][0]['keyring'],
                      decoded['discovery_auth_password']):
            self.assertTrue(token.startswith(secrets.PREFIX))
        self.assertEqual(value, jsonutils.loads(secrets.decrypt_json(
            stored)))
        # Encrypting what is stored changes nothing.
        self.assertEqual(stored, secrets.encrypt_json(stored))

    def test_values_without_secrets_are_stored_as_they_are(self):
        text = jsonutils.dumps({'driver_volume_type': 'file',
                                'data': {'device_path': '/x'}})
        self.assertIs(text, secrets.encrypt_json(text))
        self.assertIs(text, secrets.decrypt_json(text))
        self.assertIsNone(secrets.encrypt_json(None))
        self.assertIsNone(secrets.decrypt_text(None))

    def test_provider_auth_as_a_whole(self):
        stored = secrets.encrypt_text('CHAP user ' + SECRET)
        self.assertTrue(stored.startswith(secrets.PREFIX))
        self.assertNotIn(SECRET, stored)
        self.assertLessEqual(len(stored), 255)
        self.assertEqual('CHAP user ' + SECRET, secrets.decrypt_text(stored))
        # Plain text (an older release's) is read as it is.
        self.assertEqual('CHAP a b', secrets.decrypt_text('CHAP a b'))

    def test_no_key_stores_plain_text_and_cannot_read_tokens(self):
        stored = secrets.encrypt_text(SECRET)
        self.set_keys(None)
        self.assertEqual(SECRET, secrets.encrypt_text(SECRET))
        self.assertRaises(exception.InvalidConfiguration,
                          secrets.decrypt_text, stored)

    def test_rotation_and_bad_keys(self):
        stored = secrets.encrypt_text(SECRET)
        self.set_keys([secrets.generate_key(), conf_fixture.SECRET_KEY])
        self.assertEqual(SECRET, secrets.decrypt_text(stored))
        self.set_keys([secrets.generate_key()])
        self.assertRaises(exception.InvalidConfiguration,
                          secrets.decrypt_text, stored)
        self.conf.set_override('secret_keys', ['not-a-key'],
                               group='database')
        self.assertRaises(exception.InvalidConfiguration,
                          secrets.configure, self.conf)
        self.set_keys([conf_fixture.SECRET_KEY])
