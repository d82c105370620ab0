"""Volume type access (Cinder's ``volume_type_projects`` table)

Revision ID: d4f7a2c9e5b1
Revises: 9bf6b955ebb4
Create Date: 2026-11-26 09:00:00

A private volume type (``is_public`` false) is visible and usable only by
administrators and by the projects given access to it
(``/v3/types/{id}/action`` ``addProjectAccess``). One row per (type,
project); deleting the type deletes its rows. Frozen: does not import
nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = 'd4f7a2c9e5b1'
down_revision = '9bf6b955ebb4'
branch_labels = None
depends_on = None

_TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _datetime():
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'volume_type_projects',
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('volume_type_id', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_volume_type_projects'),
        sa.UniqueConstraint(
            'volume_type_id', 'project_id',
            name='uniq_volume_type_projects0volume_type_id0project_id'),
        sa.ForeignKeyConstraint(
            ['volume_type_id'], ['volume_types.id'], ondelete='CASCADE',
            name='fk_volume_type_projects_volume_type_id_volume_types'),
        **_TABLE_ARGS,
    )
