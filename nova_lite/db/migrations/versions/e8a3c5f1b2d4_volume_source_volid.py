"""Volume source_volid: the volume a volume was cloned from

Revision ID: e8a3c5f1b2d4
Revises: ccf5d5e542b7
Create Date: 2026-11-28 16:10:00

Cinder's ``source_volid``: the id of the volume whose data a volume was
created from (``POST /volumes`` with ``source_volid``), NULL for a volume
created empty. Indexed: a delete checks that no clone of the volume is
still being made from it. Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'e8a3c5f1b2d4'
down_revision = 'ccf5d5e542b7'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('volumes') as batch:
        batch.add_column(sa.Column('source_volid', sa.String(36),
                                   nullable=True))
        batch.create_index('ix_volumes_source_volid', ['source_volid'])
