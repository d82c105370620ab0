"""Quotas

Revision ID: e5b1c7d9f042
Revises: c2d8f3a1b5e6
Create Date: 2026-11-25 05:10:00

Per-project limits of compute resources (``quotas``) and of block-storage
resources (``volume_quotas``, with quota classes in
``volume_quota_classes``), and one lock row per project and service
(``quota_locks``, ``volume_quota_locks``) that creations lock while they
count usage and insert. Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = 'e5b1c7d9f042'
down_revision = 'c2d8f3a1b5e6'
branch_labels = None
depends_on = None

_MYSQL = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def _limits(table, owner):
    op.create_table(
        table,
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column(owner, sa.String(255), nullable=False),
        sa.Column('resource', sa.String(255), nullable=False),
        sa.Column('hard_limit', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_%s' % table),
        sa.UniqueConstraint(owner, 'resource',
                            name='uniq_%s0%s0resource' % (table, owner)),
        **_MYSQL)


def _locks(table):
    op.create_table(
        table,
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint('project_id', name='pk_%s' % table),
        **_MYSQL)


def upgrade():
    _limits('quotas', 'project_id')
    _locks('quota_locks')
    _limits('volume_quotas', 'project_id')
    _limits('volume_quota_classes', 'class_name')
    _locks('volume_quota_locks')
