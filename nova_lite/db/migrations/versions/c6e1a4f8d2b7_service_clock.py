"""The database's clock of heartbeats

Revision ID: c6e1a4f8d2b7
Revises: 6c1f0e8b2d47
Create Date: 2026-11-26 16:00:00

``service_clock`` (one row): when the database last took a write of a
nova_lite process and how long, in all, it took none (its silences), and
``services.excluded_ms``: that total at a service's last heartbeat. A
silence of the database is then not counted against the services
(nova_lite.objects.service). Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = 'c6e1a4f8d2b7'
down_revision = '6c1f0e8b2d47'
branch_labels = None
depends_on = None


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'service_clock',
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('ticked_at', _datetime(), nullable=False),
        sa.Column('excluded_ms', sa.BigInteger(), nullable=False),
        sa.Column('max_gap_ms', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_service_clock'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    with op.batch_alter_table('services') as batch:
        batch.add_column(sa.Column('excluded_ms', sa.BigInteger(),
                                   nullable=True))
