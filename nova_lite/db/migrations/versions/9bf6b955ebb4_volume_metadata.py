"""Volume metadata (Cinder's ``volume_metadata`` table)

Revision ID: 9bf6b955ebb4
Revises: b9d2e4f6a813
Create Date: 2026-11-25 07:50:00

A volume's user metadata: key/value strings of at most 255 characters,
one row per key, given at create and changed through
``/v3/volumes/{id}/metadata``. Keys and values compare byte for byte on
MySQL/MariaDB too (``utf8mb4_bin``), as on SQLite and PostgreSQL. Frozen:
does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = '9bf6b955ebb4'
down_revision = 'b9d2e4f6a813'
branch_labels = None
depends_on = None

_MYSQL = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def _binary_string():
    return sa.String(255).with_variant(
        mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb')


def upgrade():
    op.create_table(
        'volume_metadata',
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('volume_id', sa.String(36), nullable=False),
        sa.Column('key', _binary_string(), nullable=False),
        sa.Column('value', _binary_string(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_volume_metadata'),
        sa.UniqueConstraint('volume_id', 'key',
                            name='uniq_volume_metadata0volume_id0key'),
        sa.ForeignKeyConstraint(
            ['volume_id'], ['volumes.id'], ondelete='CASCADE',
            name='fk_volume_metadata_volume_id_volumes'),
        **_MYSQL)
