"""Volume name_id: the id naming a volume's storage

Revision ID: ccf5d5e542b7
Revises: 390b633e4ea7
Create Date: 2026-11-27 10:00:00

Cinder's ``_name_id``: after a migration the volume keeps its id while its
storage on the new backend is the one made for the migration's temporary
volume (named after that volume's id). NULL means the volume's own id.
Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'ccf5d5e542b7'
down_revision = '390b633e4ea7'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('volumes', sa.Column('name_id', sa.String(36),
                                       nullable=True))
