"""Volume administrator metadata

Revision ID: b4e9d2c7a1f8
Revises: d4f7a2c9e5b1
Create Date: 2026-11-26 09:00:00

Cinder's ``volume_admin_metadata``: key/value rows the service keeps about
a volume (the ``readonly`` flag of ``os-update_readonly_flag``). Frozen:
does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = 'b4e9d2c7a1f8'
down_revision = 'd4f7a2c9e5b1'
branch_labels = None
depends_on = None


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'volume_admin_metadata',
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('volume_id', sa.String(36), nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_volume_admin_metadata'),
        sa.UniqueConstraint(
            'volume_id', 'key',
            name='uniq_volume_admin_metadata0volume_id0key'),
        sa.ForeignKeyConstraint(
            ['volume_id'], ['volumes.id'],
            name='fk_volume_admin_metadata_volume_id_volumes'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('ix_volume_admin_metadata_volume_id',
                    'volume_admin_metadata', ['volume_id'])
