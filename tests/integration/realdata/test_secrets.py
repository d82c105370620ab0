"""Connection credentials on the production layout (MariaDB, separate
processes, tgtd with CHAP): the guest reads an ``iscsi`` volume whose CHAP
secret went through the database encrypted (``[database] secret_keys``,
set by the deployment), the rows on the server hold no secret in plain
text, and a project member is not shown it.
"""

import sqlalchemy as sa

from tests.integration.realdata import base

DATA = b'secret-at-rest-1'
SECRET_KEYS = ('auth_password', 'discovery_auth_password', 'keyring')
# (table, column) of every row that may hold a connection's credentials.
COLUMNS = (('volume_attachment', 'connection_info'),
           ('block_device_mappings', 'connection_info'),
           ('block_device_mappings', 'task_data'),
           ('volumes', 'provider_auth'))


class TestSecrets(base.RealDataTestCase):

    def raw_rows(self):
        """Every stored value of COLUMNS, read with SQL on the server."""
        engine = sa.create_engine(self.deployment.connection_url,
                                  poolclass=sa.pool.NullPool)
        self.addCleanup(engine.dispose)
        with engine.connect() as conn:
            return [value for table, column in COLUMNS
                    for (value,) in conn.execute(sa.text(
                        'SELECT %s FROM %s WHERE %s IS NOT NULL' % (
                            column, table, column)))]

    def test_the_guest_reads_through_an_encrypted_chap_secret(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.assertEqual(base.ISCSI, self.volume_backend(volume_id))
        self.host_write(volume_id, 0, DATA)
        resp = self.attach_volume(server_id, volume_id)
        self.assertEqual(200, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'in-use')
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(DATA, guest.read(volume_id, 0, len(DATA)))

        # The service's and the admins' view has the secret...
        found = self.admin_api.as_(volume_version='3.27').get(
            '/v3/admin/attachments/detail?all_tenants=1&volume_id=%s'
            % volume_id)
        self.assertEqual(200, found.status, found)
        [attachment] = found.body['attachments']
        secret = attachment['connection_info']['auth_password']
        self.assertTrue(secret)
        # ... the member's has none.
        shown = self.api.as_(volume_version='3.27').get(
            '/v3/demo/attachments/%s' % attachment['id'])
        self.assertEqual(200, shown.status, shown)
        for key in SECRET_KEYS:
            self.assertNotIn(key, shown.body['attachment'][
                'connection_info'])
        self.assertNotIn(secret, str(shown.body))
        # On the database server: ciphertext, never the secret.
        rows = self.raw_rows()
        self.assertTrue(any('fernet:' in value for value in rows), rows)
        for value in rows:
            self.assertNotIn(secret, value)
