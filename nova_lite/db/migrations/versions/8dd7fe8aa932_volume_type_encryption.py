"""Volume type encryption (Cinder's ``encryption`` table)

Revision ID: 8dd7fe8aa932
Revises: 50f9baf8f6b2
Create Date: 2026-05-20 12:00:00

A volume type may carry encryption specs (``/v3/types/{id}/encryption``);
the multi-attach spec refuses multiattach with encryption. Frozen: does not
import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = '8dd7fe8aa932'
down_revision = '50f9baf8f6b2'
branch_labels = None
depends_on = None

_TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'encryption',
        sa.Column('encryption_id', sa.String(36), nullable=False),
        sa.Column('volume_type_id', sa.String(36), nullable=False),
        sa.Column('provider', sa.String(255), nullable=False),
        sa.Column('control_location', sa.String(255), nullable=False),
        sa.Column('cipher', sa.String(255), nullable=True),
        sa.Column('key_size', sa.Integer(), nullable=True),
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.PrimaryKeyConstraint('encryption_id', name='pk_encryption'),
        sa.UniqueConstraint('volume_type_id',
                            name='uniq_encryption0volume_type_id'),
        sa.ForeignKeyConstraint(
            ['volume_type_id'], ['volume_types.id'], ondelete='CASCADE',
            name='fk_encryption_volume_type_id_volume_types'),
        **_TABLE_ARGS,
    )
