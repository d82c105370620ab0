"""[database] options: oslo.db's, with nova_lite's embedded default."""

from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///$state_path/nova_lite.sqlite'


def register_opts(conf):
    # oslo.db owns the [database] group (connection, max_pool_size, ...);
    # nova_lite only sets the default: a SQLite file under state_path.
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION)


def list_opts():
    # Documented through the ``oslo.db`` namespace of the config generator;
    # the default above reaches the sample through ``opts.set_defaults``.
    return {}
