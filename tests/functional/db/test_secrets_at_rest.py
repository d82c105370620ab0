"""Connection credentials at rest (nova_lite.db.secrets), on SQLite,
MariaDB and PostgreSQL: the rows read with SQL hold none in plain text,
every reader through the models gets them back, and the migration
encrypts the rows an older release wrote in plain text.

The MariaDB and PostgreSQL classes use the opportunistic servers
(tests/fixtures/database.py): they skip when a server is missing, unless
NOVA_LITE_REQUIRE_DB_BACKENDS=1.
"""

import os

import fixtures
from oslo_serialization import jsonutils
from oslo_utils import uuidutils
import sqlalchemy as sa
import testtools

from nova_lite.db import api as db_api
from nova_lite.db import migration
from nova_lite.db import models
from nova_lite.db import secrets
from nova_lite import exception
from tests.fixtures import conf as conf_fixture
from tests.fixtures import database as db_fixture
from tests.functional.db import test_migrations

# The revision before the credentials were encrypted.
BEFORE = 'd1a7e3c5b9f2'
PASSWORD = 'chap-secret-7f3e9a'
KEYRING = '[client.nova]\n\tkey = AQBkeyringsecret=='
INFO = {'driver_volume_type': 'iscsi',
        'data': {'target_iqn': 'iqn.2024-01.org.nova-lite:volume-1',
                 'auth_method': 'CHAP', 'auth_username': 'user',
                 'auth_password': PASSWORD,
                 'discovery_auth_password': PASSWORD + '-d',
                 'keyring': KEYRING}}
FLAT = dict(INFO['data'], driver_volume_type='iscsi')
TASK_DATA = {'attachment_id': 'a', 'migration': {
    'new_connection_info': FLAT, 'old': [INFO]}}
PROVIDER_AUTH = 'CHAP user %s' % PASSWORD
# (table, column): what each holds in these tests.
COLUMNS = {
    ('volume_attachment', 'connection_info'): jsonutils.dumps(FLAT),
    ('block_device_mappings', 'connection_info'): jsonutils.dumps(INFO),
    ('block_device_mappings', 'task_data'): jsonutils.dumps(TASK_DATA),
    ('volumes', 'provider_auth'): PROVIDER_AUTH,
}
SECRETS = (PASSWORD, 'AQBkeyringsecret')


class _AtRest(object):

    def setUp(self):
        super().setUp()
        self.manager = self.make_manager()
        self.addCleanup(self.manager.dispose_pool)
        self.engine = self.manager.writer.get_engine()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.addCleanup(secrets.configure, self.conf)
        self.context = test_migrations.Context()

    def set_keys(self, keys):
        self.conf.set_override('secret_keys', keys, group='database')
        secrets.configure(self.conf)

    def write_rows(self):
        """A volume, its attachment, a server and its mapping, each
        column of COLUMNS holding its value (through the models)."""
        volume_id, server = uuidutils.generate_uuid(), (
            test_migrations._instance_values())
        with self.manager.writer.using(self.context) as session:
            session.add(models.Volume(
                id=volume_id, project_id='p', user_id='u', size=1,
                status='in-use', attach_status='attached',
                provider_auth=PROVIDER_AUTH))
            session.add(models.Instance(**server))
            session.flush()
            session.add(models.VolumeAttachment(
                id=uuidutils.generate_uuid(), volume_id=volume_id,
                attach_status='attached',
                connection_info=COLUMNS[('volume_attachment',
                                         'connection_info')]))
            session.add(models.BlockDeviceMapping(
                **test_migrations._bdm_values(
                    server['uuid'], volume_id=volume_id,
                    connection_info=COLUMNS[('block_device_mappings',
                                             'connection_info')],
                    task_data=COLUMNS[('block_device_mappings',
                                       'task_data')])))

    def raw(self):
        """{(table, column): stored value}, read with SQL (no model)."""
        result = {}
        with self.engine.connect() as conn:
            for table, column in COLUMNS:
                result[(table, column)] = conn.execute(sa.text(
                    'SELECT %s FROM %s' % (column, table))).scalar_one()
        return result

    def read(self):
        """{(table, column): value}, read through the models."""
        model = {'volume_attachment': models.VolumeAttachment,
                 'block_device_mappings': models.BlockDeviceMapping,
                 'volumes': models.Volume}
        with self.manager.reader.using(self.context) as session:
            return {(table, column): session.execute(sa.select(getattr(
                model[table], column))).scalar_one()
                for table, column in COLUMNS}

    def assert_encrypted(self, stored):
        for where, value in stored.items():
            for secret in SECRETS:
                self.assertNotIn(secret, value, where)
            self.assertIn(secrets.PREFIX, value, where)
            if where[1] != 'provider_auth':
                # The rest stays readable JSON.
                self.assertIn('iqn.2024-01.org.nova-lite:volume-1', value)

    def test_written_encrypted_read_plain(self):
        migration._upgrade(self.engine)
        self.set_keys([conf_fixture.SECRET_KEY])
        self.write_rows()
        self.assert_encrypted(self.raw())
        self.assertEqual(COLUMNS, self.read())
        # A Core UPDATE through the table is encrypted too.
        with self.manager.writer.using(self.context) as session:
            session.execute(sa.update(models.BlockDeviceMapping).values(
                connection_info=jsonutils.dumps(FLAT)))
        stored = self.raw()[('block_device_mappings', 'connection_info')]
        self.assertNotIn(PASSWORD, stored)
        self.assertEqual(FLAT, jsonutils.loads(self.read()[
            ('block_device_mappings', 'connection_info')]))

    def test_migration_encrypts_plain_rows(self):
        migration._upgrade(self.engine, BEFORE)
        # An older release wrote them in plain text.
        self.set_keys([])
        self.write_rows()
        self.assertEqual(COLUMNS, self.raw())
        self.set_keys([conf_fixture.SECRET_KEY])
        migration._upgrade(self.engine)
        stored = self.raw()
        self.assert_encrypted(stored)
        self.assertEqual(COLUMNS, self.read())
        # Run again (stamped back), it encrypts nothing twice.
        migration._stamp(self.engine, BEFORE)
        migration._upgrade(self.engine)
        self.assertEqual(stored, self.raw())

    def test_a_missing_key_refuses_tokens(self):
        migration._upgrade(self.engine)
        self.set_keys([conf_fixture.SECRET_KEY])
        self.write_rows()
        self.set_keys([secrets.generate_key()])
        self.assertRaises(exception.InvalidConfiguration, self.read)
        self.set_keys([])
        self.assertRaises(exception.InvalidConfiguration, self.read)


class TestSQLite(_AtRest, testtools.TestCase):

    def make_manager(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'at_rest.sqlite')
        return db_api.create_context_manager('sqlite:///' + path)


class _Opportunistic(_AtRest):
    BACKEND = None

    def make_manager(self):
        url, drop = db_fixture.opportunistic_url(self.BACKEND)
        self.addCleanup(drop)
        return db_api.create_context_manager(url)


class TestMySQL(_Opportunistic, testtools.TestCase):
    BACKEND = 'mysql'


class TestPostgreSQL(_Opportunistic, testtools.TestCase):
    BACKEND = 'postgresql'
