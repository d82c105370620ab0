"""A server's access IP addresses and hostname

Revision ID: f3a8c2d6e917
Revises: e5b1c7d9f042
Create Date: 2026-11-25 06:40:00

What a create may give (``accessIPv4``, ``accessIPv6``; ``hostname``
from 2.90) and the server shows. Frozen: does not import
nova_lite.db.models.
"""

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'f3a8c2d6e917'
down_revision = 'e5b1c7d9f042'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('access_ip_v4', sa.String(39),
                                   nullable=True))
        batch.add_column(sa.Column('access_ip_v6', sa.String(39),
                                   nullable=True))
        batch.add_column(sa.Column('hostname', sa.String(255),
                                   nullable=True))
