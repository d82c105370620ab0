"""The default volume type, __DEFAULT__

Revision ID: 390b633e4ea7
Revises: c6e1a4f8d2b7
Create Date: 2026-11-27 09:00:00

Cinder's default type: a public __DEFAULT__ type ("Default Volume
Type"), which volumes created without a type get ([volume]
default_volume_type names it). Live volumes that have no type get it
too, so no volume shows volume_type: null. Deleted volumes keep what
they had. A database that already has a type of that name keeps it.
Frozen: does not import nova_lite.db.models.
"""

import datetime
import uuid

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = '390b633e4ea7'
down_revision = 'c6e1a4f8d2b7'
branch_labels = None
depends_on = None

DEFAULT_VOLUME_TYPE = '__DEFAULT__'

_types = sa.table('volume_types',
                  sa.column('id', sa.String), sa.column('name', sa.String),
                  sa.column('description', sa.Text),
                  sa.column('is_public', sa.Boolean),
                  sa.column('created_at', sa.DateTime),
                  sa.column('updated_at', sa.DateTime))
_volumes = sa.table('volumes', sa.column('volume_type_id', sa.String),
                    sa.column('deleted', sa.Boolean))


def upgrade():
    bind = op.get_bind()
    type_id = bind.execute(sa.select(_types.c.id).where(
        _types.c.name == DEFAULT_VOLUME_TYPE)).scalar()
    if type_id is None:
        type_id = str(uuid.uuid4())
        now = datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None)
        bind.execute(_types.insert().values(
            id=type_id, name=DEFAULT_VOLUME_TYPE,
            description='Default Volume Type', is_public=True,
            created_at=now, updated_at=now))
    bind.execute(_volumes.update().where(
        _volumes.c.volume_type_id.is_(None),
        _volumes.c.deleted.is_(False)).values(volume_type_id=type_id))
