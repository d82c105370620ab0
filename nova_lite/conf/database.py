"""[database] options: oslo.db's, with nova_lite's defaults, and the
bounds nova_lite puts on every wait for the database."""

from oslo_config import cfg
from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///$state_path/nova_lite.sqlite'
# oslo.db's pool_timeout defaults to SQLAlchemy's 30 s.
DEFAULT_POOL_TIMEOUT = 10

database_group = cfg.OptGroup('database')

WAIT_OPTS = [
    cfg.IntOpt(
        'connect_timeout',
        default=5,
        min=1,
        help="""
Seconds to open a connection to MariaDB/MySQL or PostgreSQL before the
attempt fails: the TCP connection, and on PostgreSQL the whole login.

A database server that is stopped (or stalled: a paused VM, a stuck disk)
still accepts TCP connections in its kernel and then answers nothing;
without this bound a request would wait for as long as the server is
silent. A request
that cannot get a connection answers 503 (``Retry-After``).

Given to the driver as its ``connect_timeout`` (PyMySQL, libpq) unless the
connection URL or ``connection_parameters`` already name one.

Related options:

* ``read_timeout``: PyMySQL reads the server's greeting under this one.
"""),
    cfg.IntOpt(
        'read_timeout',
        default=5,
        min=1,
        help="""
Seconds the database server may stay silent while nova_lite waits for its
answer (to a statement, to a COMMIT, to the login) or for room to send a
request, before the connection is dropped as broken and the request answers
503.

This bounds one round trip, not a whole transaction. nova_lite's statements
take milliseconds; a wait this long means a stalled server or a lock held by
another transaction for that long (the statement is abandoned and its
transaction rolled back). A COMMIT that gets no answer in time is in doubt:
the server may still apply it (doc/source/admin/config.rst says what the API
answers then).

MariaDB/MySQL: PyMySQL's ``read_timeout`` and ``write_timeout`` (unless the
connection URL or ``connection_parameters`` name them). PostgreSQL: libpq has
no such bound, so nova_lite waits for the server's socket itself (psycopg2's
wait callback) and closes the connection when this time has passed.
"""),
    cfg.IntOpt(
        'sqlite_busy_timeout',
        default=30,
        min=1,
        help="""
Seconds a SQLite connection (the embedded default) waits for a lock held by
another connection (mostly the write lock) before the request fails with 503
("database is locked"). Ignored by other databases.
"""),
]

SECRET_OPTS = [
    cfg.ListOpt(
        'secret_keys',
        default=None,
        secret=True,
        help="""
Fernet keys (32 url-safe base64-encoded bytes each, as
``python3 -c 'from cryptography.fernet import Fernet;
print(Fernet.generate_key().decode())'`` prints) that encrypt the connection
credentials stored in the database: the CHAP secrets of ``iscsi``
connections and the cephx keyring of ``rbd`` ones, in attachments, block
device mappings, their task data and volumes' ``provider_auth``.

The first key encrypts; every key decrypts. To rotate, put a new key first
and keep the old ones after it until every row holding a credential has
been written again. Every process that uses the database (API, conductor,
compute, volume service, nova-lite-manage) needs the same list.

Unset: the credentials are stored in plain text (a warning is logged).
Set it on every deployment whose backends make credentials (``iscsi``,
``rbd``); ``nova-lite-manage db sync`` then encrypts those stored before.
"""),
]


def register_opts(conf):
    # oslo.db owns the [database] group (connection, max_pool_size,
    # pool_timeout, connection_parameters...); nova_lite sets defaults
    # (a SQLite file under state_path; a pool checkout waits seconds, not
    # SQLAlchemy's 30) and adds the bounds on connecting and reading.
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION,
                            pool_timeout=DEFAULT_POOL_TIMEOUT)
    conf.register_opts(WAIT_OPTS + SECRET_OPTS, group=database_group)


def list_opts():
    # oslo.db's options are documented through the ``oslo.db`` namespace of
    # the config generator; the defaults above reach the sample through
    # ``opts.set_defaults``.
    return {database_group: WAIT_OPTS + SECRET_OPTS}
