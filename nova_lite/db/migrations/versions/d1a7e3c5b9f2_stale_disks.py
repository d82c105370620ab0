"""Stale disks: the volume disks a fenced host may still give its guests

Revision ID: d1a7e3c5b9f2
Revises: e8a3c5f1b2d4
Create Date: 2026-11-28 16:30:00

``stale_disks``: a volume freed without its compute host while the host
was fenced (or a disk the host found and could not remove), until the
host's guest no longer has the disk. A host with rows cannot be let go
(``forced_down: false``). Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = 'd1a7e3c5b9f2'
down_revision = 'e8a3c5f1b2d4'
branch_labels = None
depends_on = None


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'stale_disks',
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('device_name', sa.String(255), nullable=False),
        sa.Column('volume_id', sa.String(36), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_stale_disks'),
        sa.UniqueConstraint(
            'host', 'instance_uuid', 'device_name', 'volume_id',
            name='uniq_stale_disks0host0instance_uuid0device_name0volume_id'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
