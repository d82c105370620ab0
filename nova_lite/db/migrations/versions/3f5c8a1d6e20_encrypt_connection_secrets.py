"""Connection credentials encrypted at rest

Revision ID: 3f5c8a1d6e20
Revises: d1a7e3c5b9f2
Create Date: 2026-11-28 17:10:00

Rewrites the rows that hold connection credentials (the CHAP secrets and
cephx keyrings of ``nova_lite.db.secrets.SECRET_KEYS``) with each value
encrypted by the first key of ``[database] secret_keys``: attachments'
and block device mappings' ``connection_info``, mappings' ``task_data``
and volumes' ``provider_auth``. Values already encrypted are left as they
are, so the rewrite may run again. With no key set the rows are left in
plain text (``nova_lite.db.secrets`` logs it), as the service would write
them. No schema change; downgrade is not supported (nova_lite has none).

Frozen in what it touches (tables and columns named here, not
nova_lite.db.models); the encryption is ``nova_lite.db.secrets``'s, the
one every reader decrypts.
"""

from alembic import op
import sqlalchemy as sa

from nova_lite.db import secrets

# revision identifiers, used by Alembic.
revision = '3f5c8a1d6e20'
down_revision = 'd1a7e3c5b9f2'
branch_labels = None
depends_on = None

# (table, column, how a stored value is encrypted)
_COLUMNS = (
    ('volume_attachment', 'connection_info', secrets.encrypt_json),
    ('block_device_mappings', 'connection_info', secrets.encrypt_json),
    ('block_device_mappings', 'task_data', secrets.encrypt_json),
    ('volumes', 'provider_auth', secrets.encrypt_text),
)


def upgrade():
    bind = op.get_bind()
    for table_name, column, encrypt in _COLUMNS:
        table = sa.table(table_name, sa.column('id'),
                         sa.column(column, sa.Text))
        rows = bind.execute(sa.select(table.c.id, table.c[column]).where(
            table.c[column].is_not(None))).all()
        for row_id, value in rows:
            stored = encrypt(value)
            if stored != value:
                bind.execute(table.update().where(
                    table.c.id == row_id).values({column: stored}))
