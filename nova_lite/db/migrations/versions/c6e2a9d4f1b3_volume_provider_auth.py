"""A volume's provider_auth

Revision ID: c6e2a9d4f1b3
Revises: b4e9d2c7a1f8
Create Date: 2026-11-26 14:30:00

Cinder's ``provider_auth``: the credentials a backend made for the
volume's exports (``CHAP <user> <secret>`` for the ``iscsi`` backend),
kept with the volume and given to hosts in its ``connection_info``.
Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'c6e2a9d4f1b3'
down_revision = 'b4e9d2c7a1f8'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('volumes') as batch:
        batch.add_column(sa.Column('provider_auth', sa.String(255),
                                   nullable=True))
