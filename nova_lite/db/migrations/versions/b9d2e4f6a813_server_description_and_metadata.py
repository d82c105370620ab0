"""A server's description and metadata

Revision ID: b9d2e4f6a813
Revises: f3a8c2d6e917
Create Date: 2026-11-25 08:05:00

What a create (``description`` from 2.19, ``metadata``) or an update
(``PUT /servers/{id}``) gives and the server shows. The metadata is one
JSON document per server: it is only ever read and written whole.
Frozen: does not import nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'b9d2e4f6a813'
down_revision = 'f3a8c2d6e917'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('display_description', sa.Text,
                                   nullable=True))
        batch.add_column(sa.Column('server_metadata', sa.JSON,
                                   nullable=True))
