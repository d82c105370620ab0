"""Connection credentials: shown to the connecting service and admins only,
and stored encrypted.

The ``fake`` backend with ``connection_secrets`` gives every connection
the credentials an ``iscsi`` or ``rbd`` one carries (``auth_password``,
``discovery_auth_password``, ``keyring``). A project member walks every
route of both block-storage APIs (``/v3``, and the compute API's
``os-volumes`` proxy and ``os-volume_attachments``) at every microversion
and is never shown one; the compute service (its service token) and an
administrator are, where they need them. At rest, the raw rows (read with
SQL, under the data-access layer) hold none in plain text, and every
reader above that layer gets them back.
"""

from oslo_serialization import jsonutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_lite.api import microversion as mv
from nova_lite import context
from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite.db import secrets
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.volume.db import attachments as attachment_db
from tests.fixtures import conf as conf_fixture
from tests.functional.compute import base

SERVICE_TOKEN = 'service:service'
SECRET_KEYS = ('auth_password', 'discovery_auth_password', 'keyring')


class SecretsTestCase(base.TestCase):
    CONF = {'volume.enabled_backends': ['fake'],
            'fake.connection_secrets': True}

    def setUp(self):
        super().setUp()
        self.v3 = self.api.as_(volume_version=mv.VOLUME_MAX)
        self.v3_admin = self.admin_api.as_(volume_version=mv.VOLUME_MAX)
        # A server with a volume attached through the compute API (the
        # compute service connects it with its service token).
        self.server_id = self.create_server()
        self.volume_id = self.create_volume()
        self.attach(self.server_id, self.volume_id,
                    api=self.api.as_(compute_version='2.1'))
        self.wait_for_volume_status(self.volume_id, 'in-use')
        found = self.v3_admin.get(
            '/v3/attachments/detail?all_tenants=1&volume_id=%s'
            % self.volume_id).body['attachments']
        self.assertEqual(1, len(found))
        self.attachment = found[0]
        self.secrets = [self.attachment['connection_info'][key]
                        for key in SECRET_KEYS]

    def assert_no_secret(self, resp, secrets=None):
        for value in list(secrets or self.secrets) + list(SECRET_KEYS):
            self.assertNotIn(value, resp.text,
                             '%s %s' % (resp.status, resp.text))


class RoutesTest(SecretsTestCase):

    def test_the_service_and_admins_are_shown_the_credentials(self):
        path = '/v3/attachments/%s' % self.attachment['id']
        info = self.attachment['connection_info']
        self.assertEqual(3, len(set(self.secrets)))
        for value in self.secrets:
            self.assertTrue(value.startswith('fake-'), value)
        for api, headers in ((self.v3_admin, None),
                             (self.v3, {'X-Service-Token': SERVICE_TOKEN})):
            shown = api.get(path, headers=headers)
            self.assertEqual(200, shown.status, shown.text)
            self.assertEqual(info, shown.body['attachment'][
                'connection_info'])
        # The compute service reads its own mapping's connection in plain
        # text (the data-access layer decrypts it).
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            context.get_admin_context(), self.volume_id, self.server_id)
        self.assertEqual(dict(info, serial=self.volume_id),
                         bdm.get_connection_info())

    def test_a_member_is_never_shown_one(self):
        attachment_id = self.attachment['id']
        for version in mv.VOLUME_VERSIONS:
            api = self.api.as_(volume_version=version)
            for path in ('/v3/attachments', '/v3/attachments/detail',
                         '/v3/attachments/%s' % attachment_id,
                         '/v3/attachments?volume_id=%s' % self.volume_id,
                         '/v3/volumes', '/v3/volumes/detail',
                         '/v3/volumes/%s' % self.volume_id):
                resp = api.get(path)
                expect = 404 if ('attachments' in path and
                                 version in _BEFORE_ATTACH) else 200
                self.assertEqual(expect, resp.status,
                                 '%s at %s: %s' % (path, version, resp.text))
                self.assert_no_secret(resp)
        # What the member is shown of an attachment is the connection
        # without its credentials, nothing else removed.
        shown = self.v3.get('/v3/attachments/%s' % attachment_id).body[
            'attachment']['connection_info']
        self.assertEqual({k: v for k, v in self.attachment[
            'connection_info'].items() if k not in SECRET_KEYS}, shown)

    def test_a_member_connecting_is_never_shown_one(self):
        # Create (with a connector), update (connect) and delete at every
        # version that has attachments, as the volumes' owner.
        volume_id, other_id = self.create_volume(), self.create_volume()
        for version in mv.VOLUME_VERSIONS:
            if version in _BEFORE_ATTACH:
                continue
            api = self.api.as_(volume_version=version)
            created = api.post('/v3/attachments', body={'attachment': {
                'volume_uuid': volume_id,
                'instance_uuid': uuidutils.generate_uuid(),
                'connector': {'host': 'compute9', 'initiator': 'iqn.x'}}})
            self.assertEqual(200, created.status, created.text)
            made = self.v3_admin.get('/v3/attachments/%s' % created.body[
                'attachment']['id']).body['attachment']
            secrets_of = [made['connection_info'][k] for k in SECRET_KEYS]
            self.assert_no_secret(created, secrets_of)
            reserved = api.post('/v3/attachments', body={'attachment': {
                'volume_uuid': other_id,
                'instance_uuid': uuidutils.generate_uuid()}})
            self.assertEqual(200, reserved.status, reserved.text)
            path = '/v3/attachments/%s' % reserved.body['attachment']['id']
            updated = api.put(path, body={'attachment': {'connector': {
                'host': 'compute8', 'initiator': 'iqn.y'}}})
            self.assertEqual(200, updated.status, updated.text)
            made = self.v3_admin.get(path).body['attachment']
            self.assertIn('auth_password', made['connection_info'])
            self.assert_no_secret(updated, [
                made['connection_info'][k] for k in SECRET_KEYS])
            for resp in (api.delete(path), api.delete(
                    '/v3/attachments/%s' % created.body['attachment'][
                        'id'])):
                self.assertEqual(200, resp.status, resp.text)
                self.assert_no_secret(resp)

    def test_the_compute_api_never_shows_one(self):
        server = '/v2.1/servers/%s' % self.server_id
        for version in mv.COMPUTE_VERSIONS:
            for api in (self.api, self.admin_api):
                api = api.as_(compute_version=version)
                paths = [server, '/v2.1/servers/detail',
                         server + '/os-volume_attachments',
                         server + '/os-volume_attachments/%s'
                         % self.volume_id,
                         server + '/os-instance-actions']
                if version in _PROXY_VERSIONS:
                    paths += ['/v2.1/os-volumes', '/v2.1/os-volumes/detail',
                              '/v2.1/os-volumes/%s' % self.volume_id]
                for path in paths:
                    resp = api.get(path)
                    self.assertEqual(200, resp.status, '%s at %s: %s' % (
                        path, version, resp.text))
                    # Nova's views have no connection_info at all.
                    self.assertNotIn('connection_info', resp.text)
                    self.assert_no_secret(resp)


_BEFORE_ATTACH = set(mv.VOLUME_VERSIONS[:mv.VOLUME_VERSIONS.index(
    mv.NEW_ATTACH)])
_PROXY_VERSIONS = set(mv.COMPUTE_VERSIONS[:mv.COMPUTE_VERSIONS.index(
    mv.MAX_PROXY_API) + 1])


def raw_values(engine, table, column):
    """Every non-null stored value of ``table.column``, read with SQL
    under the data-access layer (no type decorator)."""
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(sa.text(
            'SELECT %s FROM %s WHERE %s IS NOT NULL' % (
                column, table, column)))]


class AtRestTest(SecretsTestCase):

    def test_rows_hold_no_credential_in_plain_text(self):
        engine = self.sys.database.engine
        stored = {
            (table, column): raw_values(engine, table, column)
            for table, column in (('volume_attachment', 'connection_info'),
                                  ('block_device_mappings',
                                   'connection_info'))}
        for where, values in stored.items():
            self.assertTrue(values, where)
            for value in values:
                for secret in self.secrets:
                    self.assertNotIn(secret, value, where)
                # The rest of the row stays readable JSON.
                info = jsonutils.loads(value)
                found = info.get('data', info)
                self.assertEqual(self.volume_id, found['volume_id'])
                for key in SECRET_KEYS:
                    self.assertTrue(
                        found[key].startswith(secrets.PREFIX), where)
        # Every reader above the data-access layer gets them back.
        row = attachment_db.attachment_get(context.get_admin_context(),
                                           self.attachment['id'])
        self.assertEqual(self.attachment['connection_info'],
                         jsonutils.loads(row.connection_info))

    def test_task_data_and_provider_auth_are_encrypted(self):
        info = self.attachment['connection_info']
        task_data = jsonutils.dumps({'connection_info': info,
                                     'migration': {'new_connection_info': [
                                         info]}})
        auth = 'CHAP user %s' % self.secrets[0]

        @db_api.context_manager.writer
        def write(ctxt):
            ctxt.session.execute(sa.update(models.BlockDeviceMapping).where(
                models.BlockDeviceMapping.volume_id == self.volume_id).values(
                    task_data=task_data))
            ctxt.session.execute(sa.update(models.Volume).where(
                models.Volume.id == self.volume_id).values(
                    provider_auth=auth))

        @db_api.context_manager.reader
        def read(ctxt):
            return (ctxt.session.scalar(sa.select(
                models.BlockDeviceMapping.task_data).where(
                    models.BlockDeviceMapping.volume_id == self.volume_id)),
                ctxt.session.scalar(sa.select(
                    models.Volume.provider_auth).where(
                        models.Volume.id == self.volume_id)))

        write(context.get_admin_context())
        engine = self.sys.database.engine
        for table, column in (('block_device_mappings', 'task_data'),
                              ('volumes', 'provider_auth')):
            values = raw_values(engine, table, column)
            self.assertEqual(1, len(values))
            for secret in self.secrets:
                self.assertNotIn(secret, values[0])
        self.assertTrue(raw_values(engine, 'volumes', 'provider_auth')[
            0].startswith(secrets.PREFIX))
        self.assertEqual((task_data, auth), read(context.get_admin_context()))

    def test_another_key_cannot_read_them(self):
        conf = self.useFixture(conf_fixture.ConfFixture()).conf
        conf.set_override('secret_keys', [secrets.generate_key()],
                          group='database')
        secrets.configure(conf)
        self.addCleanup(secrets.configure, self.conf)
        self.assertRaises(
            exception.InvalidConfiguration, attachment_db.attachment_get,
            context.get_admin_context(), self.attachment['id'])
        # Rotation: the new key first, the old one after it.
        conf.set_override('secret_keys', [secrets.generate_key(),
                                          conf_fixture.SECRET_KEY],
                          group='database')
        secrets.configure(conf)
        row = attachment_db.attachment_get(context.get_admin_context(),
                                           self.attachment['id'])
        self.assertEqual(self.attachment['connection_info'],
                         jsonutils.loads(row.connection_info))
