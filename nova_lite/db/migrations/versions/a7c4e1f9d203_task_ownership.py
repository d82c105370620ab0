"""Durable ownership of in-flight work

Revision ID: a7c4e1f9d203
Revises: 8dd7fe8aa932
Create Date: 2026-11-24 12:00:00

A block device mapping records the volume operation in flight on it
(``task``), the service that owns it, the step it reached, what settling
it needs (``task_data``) and when it last moved; a server records who owns
its ``task_state`` and since when. Services take their own unfinished work
back at start and a periodic task settles work whose owner is gone.
Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = 'a7c4e1f9d203'
down_revision = '8dd7fe8aa932'
branch_labels = None
depends_on = None


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    with op.batch_alter_table('block_device_mappings') as batch:
        batch.add_column(sa.Column('task', sa.String(36), nullable=True))
        batch.add_column(sa.Column('task_owner', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('task_step', sa.String(64),
                                   nullable=True))
        batch.add_column(sa.Column('task_data', sa.Text(), nullable=True))
        batch.add_column(sa.Column('task_updated_at', _datetime(),
                                   nullable=True))
        batch.create_index('ix_block_device_mappings_task', ['task'])
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('task_owner', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('task_updated_at', _datetime(),
                                   nullable=True))
