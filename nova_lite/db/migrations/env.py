"""Alembic environment for nova_lite.

There is no alembic.ini: ``nova_lite.db.migration`` builds the Config in
code and passes the Connection to migrate as
``config.attributes['connection']`` (already inside a transaction, which
alembic then uses as is). Offline mode (``--sql``) needs a
``sqlalchemy.url`` main option on that Config.
"""

from alembic import context

from nova_lite.db import models

config = context.config
target_metadata = models.BASE.metadata


def run_migrations_offline():
    context.configure(
        url=config.get_main_option('sqlalchemy.url'),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={'paramstyle': 'named'},
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    connection = config.attributes.get('connection')
    if connection is None:
        raise RuntimeError(
            'nova_lite migrations run through nova_lite.db.migration '
            '(nova-lite-manage db sync), which passes a connection in '
            "config.attributes['connection']")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode lets later migrations
        # use op.batch_alter_table and work on every backend.
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
