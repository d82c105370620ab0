"""The database: one enginefacade transaction context for all of nova_lite.

Query functions live beside the objects that use them, as
``@db_api.context_manager.reader`` or ``.writer`` functions whose first
argument is a ``nova_lite.context.RequestContext`` (an enginefacade
transaction-context provider); one decorated function is one transaction,
and nested calls join the outer one.

``configure(conf)`` must run once per process before the first query (the
WSGI app, the service launchers and nova-lite-manage do it); it reads the
``[database]`` group of the ConfigOpts it is given and nothing else.

SQLite, the embedded default
----------------------------

In ``nova-lite-all`` the API threads, the conductor and the compute hosts
write to one SQLite file from several threads of one process. Left to its
defaults that fails: a transaction that reads and then writes starts as a
reader, and when it tries to upgrade to a writer while another connection
holds the write lock SQLite returns "database is locked" at once, without
waiting on the busy timeout (waiting could deadlock). So for a SQLite file:

* every connection is in WAL mode (readers and the one writer do not block
  each other) with a busy timeout of ``SQLITE_BUSY_TIMEOUT`` seconds, and
  foreign keys are enforced (``sqlite_fk``);
* two engines: enginefacade's reader/writer split is turned on by pointing
  ``slave_connection`` at the same file and setting
  ``synchronous_reader=False``, which routes ``@reader`` transactions to the
  "slave" engine. There is no replication lag to worry about: it is the same
  file, so a reader always sees every committed write.
* the writer engine begins each transaction with ``BEGIN IMMEDIATE``: the
  write lock is taken at BEGIN, so concurrent writer transactions queue on
  the busy timeout instead of failing halfway through. This is SQLAlchemy's
  pysqlite recipe (driver-level BEGIN disabled with ``isolation_level =
  None`` on connect, our own BEGIN from a ``begin`` event). oslo.db already
  installs that recipe with a plain, deferred ``BEGIN``, and SQLAlchemy
  offers no way to run an engine listener before it (``insert=True`` is
  ignored for engine events), so the writer's listener, which runs next,
  replaces that empty transaction: ``ROLLBACK`` (nothing has run in it yet)
  and ``BEGIN IMMEDIATE``.
* the reader engine keeps oslo.db's deferred ``BEGIN``: a reader takes a
  WAL snapshot and never the write lock, so reads proceed while a writer
  works.
* connections are pooled (oslo.db would open one per transaction; see
  ``_sqlite_pool_connections``).

Consequences for code that uses the database: keep writer transactions short
(no RPC or backend calls inside one), and never start a second writer
transaction (``.independent``, or through another context object) while the
same thread is inside one: on SQLite it would wait on itself until the busy
timeout expires. A ``@writer``
function may call ``@reader`` functions (they join its transaction); the
reverse is refused by enginefacade.

MariaDB (``mysql+pymysql://``) and PostgreSQL (``postgresql+psycopg2://``)
are used exactly as oslo.db configures them.
"""

import os
import threading

from oslo_db import options as oslo_db_options
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

# Seconds a SQLite connection waits for a lock (mostly: the write lock at
# BEGIN IMMEDIATE) before giving up with "database is locked".
SQLITE_BUSY_TIMEOUT = 30

context_manager = enginefacade.transaction_context()

_CONFIGURE_LOCK = threading.Lock()


def configure(conf):
    """Point ``context_manager`` at ``conf.database``.

    Safe to call more than once: once the database is in use (or a test
    fixture has patched in its own), later calls change nothing.
    """
    with _CONFIGURE_LOCK:
        if context_manager.is_started:
            return
        _configure_manager(context_manager, dict(conf.database.items()))


def get_engine(use_reader=False):
    """The writer Engine (or the reader Engine) of ``context_manager``."""
    if use_reader:
        return context_manager.reader.get_engine()
    return context_manager.writer.get_engine()


def create_context_manager(connection, **options):
    """A new, independent transaction context for ``connection``.

    Set up exactly as ``configure`` sets up ``context_manager`` (including
    the SQLite locking above); ``options`` are other ``[database]`` options.
    For test fixtures and tools; services use ``context_manager``.
    """
    manager = enginefacade.transaction_context()
    options['connection'] = connection
    _configure_manager(manager, options)
    return manager


def _configure_manager(manager, db_options):
    # Every option is passed explicitly (defaults from oslo.db's option
    # list), so the global cfg.CONF that enginefacade falls back to when it
    # starts is never read for a value.
    values = {opt.dest: opt.default for opt in oslo_db_options.database_opts}
    values.update(db_options)
    if not values.get('connection'):
        raise ValueError('[database] connection is not set')
    url = sa.engine.make_url(values['connection'])
    if url.get_backend_name() != 'sqlite':
        manager.configure(**values)
        return

    plain_file = _sqlite_plain_file(url)
    if plain_file:
        path = os.path.abspath(url.database)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        url = url.set(database=path)
        values['connection'] = url.render_as_string(hide_password=False)
        # Same file, second engine: readers do not take the write lock.
        values['slave_connection'] = values['connection']
        values['synchronous_reader'] = False
    values['sqlite_fk'] = True
    manager.configure(**values)

    # Start now (SQLite has no network to wait for) so that the engines can
    # be given their listeners before anyone uses them.
    writer = manager.writer.get_engine()
    reader = manager.reader.get_engine()
    for engine in {writer, reader}:
        if not sa.event.contains(engine, 'connect', _sqlite_on_connect):
            sa.event.listen(engine, 'connect', _sqlite_on_connect)
    if not sa.event.contains(writer, 'begin', _sqlite_begin_immediate):
        sa.event.listen(writer, 'begin', _sqlite_begin_immediate)
    if reader is not writer and not sa.event.contains(
            reader, 'begin', _sqlite_begin_deferred):
        sa.event.listen(reader, 'begin', _sqlite_begin_deferred)
    for engine in {writer, reader}:
        _sqlite_pool_connections(engine, values)
    if plain_file:
        # Switch the file to WAL now, before several threads connect.
        with writer.connect():
            pass


def _sqlite_plain_file(url):
    # False for in-memory databases (one shared connection: one engine) and
    # for sqlite3 URI filenames (?uri=true), which are used as given.
    return (url.database not in (None, '', ':memory:') and
            not url.query.get('uri'))


def _sqlite_pool_connections(engine, values):
    # oslo.db gives SQLite file engines a NullPool: a new sqlite3 connection
    # (and its PRAGMAs) per transaction, and in WAL mode, whenever that was
    # the only connection, a checkpoint and deletion of the WAL file at
    # close. Measured on this project's machine kind: 0.7-0.9 ms per reader
    # and 0.8-1.4 ms per writer transaction, against 0.2-0.3 ms and
    # 0.4-0.5 ms with pooled connections. So
    # pool them, as SQLAlchemy 2 itself does for SQLite files (the dialect
    # already passes check_same_thread=False). The new pool is built the way
    # Pool.recreate() builds one, sharing the old pool's event dispatch: the
    # connect listeners of the dialect, of oslo.db and above are kept.
    old = engine.pool
    if type(old) is not sa.pool.NullPool:
        return
    engine.pool = sa.pool.QueuePool(
        old._creator,
        pool_size=values.get('max_pool_size') or 5,
        max_overflow=(10 if values.get('max_overflow') is None
                      else values['max_overflow']),
        timeout=values.get('pool_timeout') or 30,
        recycle=old._recycle,
        logging_name=old._orig_logging_name,
        reset_on_return=old._reset_on_return,
        # A file does not drop connections: no "SELECT 1" per checkout.
        pre_ping=False,
        _dispatch=old.dispatch,
        dialect=old._dialect,
    )


def _sqlite_on_connect(dbapi_connection, connection_record):
    cursor = dbapi_connection.cursor()
    try:
        # The timeout first: switching to WAL may have to wait for a lock.
        cursor.execute('PRAGMA busy_timeout = %d' %
                       (SQLITE_BUSY_TIMEOUT * 1000))
        cursor.execute('PRAGMA journal_mode = WAL')
    finally:
        cursor.close()


def _sqlite_begin_immediate(conn):
    # Runs after oslo.db's 'begin' listener, which has just emitted a
    # deferred BEGIN (and set its own marker in conn.info, which it clears on
    # commit/rollback): swap that empty transaction for one that holds the
    # write lock from the start.
    if conn.connection.driver_connection.in_transaction:
        conn.exec_driver_sql('ROLLBACK')
    conn.exec_driver_sql('BEGIN IMMEDIATE')


def _sqlite_begin_deferred(conn):
    # Readers keep oslo.db's deferred BEGIN. oslo.db skips it while its
    # conn.info marker is set, and with pooled connections a marker left
    # behind by a failed BEGIN would otherwise leave the next reader on that
    # connection outside any transaction (no consistent snapshot).
    if not conn.connection.driver_connection.in_transaction:
        conn.exec_driver_sql('BEGIN')
