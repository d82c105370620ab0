"""Schema migrations: alembic, driven from code.

``upgrade``, ``version`` and ``stamp`` take the ConfigOpts, configure
``nova_lite.db.api`` from its ``[database]`` group and run alembic on a
connection of the writer engine, so a migration holds the same locks as any
other writer (on SQLite: the write lock for the whole upgrade, in one
transaction). No alembic.ini is read: the alembic Config is built here.

To write a new migration from a development checkout::

    from alembic import command
    from nova_lite.db import migration
    command.revision(migration.alembic_config(), 'add foo', rev_id=...)

then write explicit ``op`` calls in the new file (models and migrations are
compared by ``tests/functional/db/test_migrations.py``).
"""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config_module
from alembic import migration as alembic_migration

from nova_lite.db import api as db_api

MIGRATIONS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              'migrations')


def alembic_config(connection=None):
    """An alembic Config for nova_lite's migrations (no ini file)."""
    config = alembic_config_module.Config()
    # The value goes through configparser interpolation: escape '%'.
    config.set_main_option('script_location',
                           MIGRATIONS_DIR.replace('%', '%%'))
    if connection is not None:
        config.attributes['connection'] = connection
    return config


def upgrade(conf, revision='head'):
    """Upgrade the database of ``conf`` to ``revision``."""
    db_api.configure(conf)
    _upgrade(db_api.get_engine(), revision)


def version(conf):
    """The current revision of the database of ``conf``, or None."""
    db_api.configure(conf)
    return _version(db_api.get_engine(use_reader=True))


def stamp(conf, revision):
    """Record ``revision`` as current without running migrations."""
    db_api.configure(conf)
    _stamp(db_api.get_engine(), revision)


def _upgrade(engine, revision='head'):
    with engine.begin() as connection:
        alembic_command.upgrade(alembic_config(connection), revision)


def _version(engine):
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def _stamp(engine, revision):
    with engine.begin() as connection:
        alembic_command.stamp(alembic_config(connection), revision)
