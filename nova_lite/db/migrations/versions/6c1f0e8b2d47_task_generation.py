"""Fencing token of a mapping's task

Revision ID: 6c1f0e8b2d47
Revises: c6e2a9d4f1b3
Create Date: 2026-11-26 16:00:00

``block_device_mappings.task_generation``: a counter every start and
every take-over of the mapping's task raises, and every move, end and
delete of the task's row compares, so that a service that took work over
and the worker it took it from can never both win (the worker's next
write finds the generation moved). Frozen: does not import
nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = '6c1f0e8b2d47'
down_revision = 'c6e2a9d4f1b3'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('block_device_mappings') as batch:
        batch.add_column(sa.Column('task_generation', sa.Integer(),
                                   nullable=False, server_default='0'))
