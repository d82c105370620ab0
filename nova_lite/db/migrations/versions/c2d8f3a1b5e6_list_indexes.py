"""Indexes for lists paged in SQL

Revision ID: c2d8f3a1b5e6
Revises: a7c4e1f9d203
Create Date: 2026-11-24 22:55:00

Servers and volumes are listed newest first within a project, one page at
a time by keyset (created_at, id): with an index on (project_id,
created_at, id) the database reads the page from the index instead of
sorting every row of the project. Frozen: does not import
nova_lite.db.models.
"""

from alembic import op

# revision identifiers, used by Alembic.
revision = 'c2d8f3a1b5e6'
down_revision = 'a7c4e1f9d203'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_instances_project_id_created_at_id', 'instances',
                    ['project_id', 'created_at', 'id'])
    op.create_index('ix_volumes_project_id_created_at_id', 'volumes',
                    ['project_id', 'created_at', 'id'])
