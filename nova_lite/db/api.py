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
* with WAL, ``PRAGMA synchronous = NORMAL`` instead of SQLite's default
  ``FULL`` (unless ``[database] sqlite_synchronous = False`` asked for
  ``OFF``): a commit appends to the WAL without an fsync, and the WAL is
  synced at checkpoints. SQLite documents this as safe with WAL: the
  database cannot be corrupted and an application crash loses nothing; a
  power loss or OS crash may roll back the last transactions committed
  before it. ``FULL`` costs an fsync on every commit (0.1-0.2 ms each on
  this project's machine kind, while holding the write lock, about twenty
  times per attach and detach). Deployments that need every commit on disk
  before it is acknowledged use MariaDB or PostgreSQL;
* two engines: enginefacade's reader/writer split is turned on by pointing
  ``slave_connection`` at the same file and setting
  ``synchronous_reader=False``, which routes ``@reader`` transactions to the
  "slave" engine. There is no replication lag to worry about: it is the same
  file, so a reader always sees every committed write.
* the writer engine begins each transaction with ``BEGIN IMMEDIATE``: the
  write lock is taken at BEGIN, so concurrent writer transactions queue on
  the busy timeout instead of failing halfway through. oslo.db installs
  SQLAlchemy's pysqlite recipe (driver-level BEGIN disabled on connect, a
  deferred ``BEGIN`` emitted from a ``begin`` event); the writer's own
  ``begin`` listener runs after it and replaces that empty transaction:
  ``ROLLBACK`` (nothing has run in it yet) and ``BEGIN IMMEDIATE``. A
  ``BEGIN IMMEDIATE`` that does not get the lock within the busy timeout
  raises SQLAlchemy's ``OperationalError`` ("database is locked").
* the reader engine keeps the deferred ``BEGIN`` (its listener emits one
  only if none was emitted): a reader takes a WAL snapshot and never the
  write lock, so reads proceed while a writer works.
* connections are pooled: oslo.db gives SQLite file engines a
  ``NullPool``, so that each transaction would open a connection, run the
  PRAGMAs above, parse the schema and close it (about 0.2 ms of SQLite
  alone, and when the last connection closes SQLite checkpoints and
  removes the WAL, which the next one creates again). The attach cycle of
  ``nova-lite-all`` ran at 12 cycles/s and 75 ms of server CPU per cycle
  so, and at 32 cycles/s and 28 ms with a pool (``tools/bench/
  attach_cycle.py --only cycles``, same minutes). Each engine's pool is
  replaced by a ``QueuePool`` (``SQLITE_POOL_SIZE`` kept, more opened on
  demand), and oslo.db's per-connection settings for SQLite, which were
  listeners of the replaced pool, are made again
  (``_oslo_db_sqlite_settings``).

All of this goes through public APIs: SQLAlchemy's event API
(``sqlalchemy.event.listen`` on the engines' ``connect`` and ``begin``
events), its pool and dialect API (``QueuePool``,
``Dialect.create_connect_args``, ``Dialect.connect``, ``Engine.pool``)
and oslo.db's enginefacade configuration.

On every backend, oslo.db's eventlet yield on connection check-in
(``thread_checkin``, a ``time.sleep(0)`` after every transaction) is turned
off: nova_lite runs on native threads, where that sleep only hands the GIL
to another thread, so that the thread that just committed waits for a
switch interval (up to 5 ms) behind any busy thread before it goes on.

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
import re
import threading

from oslo_db import options as oslo_db_options
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

# Seconds a SQLite connection waits for a lock (mostly: the write lock at
# BEGIN IMMEDIATE) before giving up with "database is locked".
SQLITE_BUSY_TIMEOUT = 30
# Connections a SQLite file engine keeps open between transactions (more
# are opened when more threads need one at once, and closed after use).
SQLITE_POOL_SIZE = 10

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
    # Native threads, not eventlet: no sleep(0) per connection check-in
    # (see the module docstring).
    values['thread_checkin'] = False
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
    # be given their pool and listeners before anyone uses them.
    writer = manager.writer.get_engine()
    reader = manager.reader.get_engine()
    for engine in {writer, reader}:
        if plain_file and not isinstance(engine.pool, sa.pool.QueuePool):
            _pool_connections(engine, values)
            sa.event.listen(engine, 'connect', _oslo_db_sqlite_settings(
                synchronous=values.get('sqlite_synchronous', True),
                foreign_keys=values.get('sqlite_fk', False)))
        if not sa.event.contains(engine, 'connect', _sqlite_on_connect):
            sa.event.listen(engine, 'connect', _sqlite_on_connect)
    if not sa.event.contains(writer, 'begin', _sqlite_begin_immediate):
        sa.event.listen(writer, 'begin', _sqlite_begin_immediate)
    if reader is not writer and not sa.event.contains(
            reader, 'begin', _sqlite_begin_deferred):
        sa.event.listen(reader, 'begin', _sqlite_begin_deferred)
    if plain_file:
        # Switch the file to WAL now, before several threads connect.
        with writer.connect():
            pass


def _pool_connections(engine, values):
    """Give a SQLite file engine a ``QueuePool`` instead of oslo.db's
    ``NullPool`` (see the module docstring), built with SQLAlchemy's public
    pool and dialect API. oslo.db's own per-connection settings for SQLite
    were listeners of the pool replaced here: ``_sqlite_on_connect`` makes
    them again."""
    cargs, cparams = engine.dialect.create_connect_args(engine.url)
    # A pooled connection serves one thread at a time, but not always the
    # same thread.
    cparams['check_same_thread'] = False
    engine.pool = sa.pool.QueuePool(
        lambda: engine.dialect.connect(*cargs, **cparams),
        pool_size=SQLITE_POOL_SIZE, max_overflow=-1,
        dialect=engine.dialect)


def _regexp(expr, item):
    return re.search(expr, str(item)) is not None


def _oslo_db_sqlite_settings(synchronous, foreign_keys):
    """What oslo.db's 'connect' listener does on the SQLite pool it made
    (the pooled engine's pool is a new one, without it): no driver-level
    BEGIN (the 'begin' listeners emit it), a REGEXP function, foreign keys
    when ``[database] sqlite_fk``, synchronous OFF when ``[database]
    sqlite_synchronous`` is False. Runs before ``_sqlite_on_connect``."""
    def on_connect(dbapi_connection, connection_record):
        dbapi_connection.isolation_level = None
        dbapi_connection.create_function('regexp', 2, _regexp)
        if not synchronous:
            dbapi_connection.execute('PRAGMA synchronous = OFF')
        if foreign_keys:
            dbapi_connection.execute('PRAGMA foreign_keys = ON')
    return on_connect


def _sqlite_plain_file(url):
    # False for in-memory databases (one shared connection: one engine) and
    # for sqlite3 URI filenames (?uri=true), which are used as given.
    return (url.database not in (None, '', ':memory:') and
            not url.query.get('uri'))


def _sqlite_on_connect(dbapi_connection, connection_record):
    cursor = dbapi_connection.cursor()
    try:
        # The timeout first: switching to WAL may have to wait for a lock.
        cursor.execute('PRAGMA busy_timeout = %d' %
                       (SQLITE_BUSY_TIMEOUT * 1000))
        mode = cursor.execute('PRAGMA journal_mode = WAL').fetchone()[0]
        # OFF when [database] sqlite_synchronous is False (set by oslo.db
        # or _oslo_db_sqlite_settings), SQLite's default FULL (2)
        # otherwise. With WAL, NORMAL is safe and spares an fsync per
        # commit (module docstring).
        synchronous = cursor.execute('PRAGMA synchronous').fetchone()[0]
        if mode == 'wal' and synchronous == 2:
            cursor.execute('PRAGMA synchronous = NORMAL')
    finally:
        cursor.close()


def _sqlite_begin_immediate(conn):
    # Take the write lock at BEGIN. oslo.db's 'begin' listener, which runs
    # first, has just emitted a deferred BEGIN: swap that empty transaction
    # for an immediate one.
    if conn.connection.driver_connection.in_transaction:
        conn.exec_driver_sql('ROLLBACK')
    conn.exec_driver_sql('BEGIN IMMEDIATE')


def _sqlite_begin_deferred(conn):
    # A deferred BEGIN: one consistent WAL snapshot, no write lock. oslo.db's
    # own listener has usually emitted it already.
    if not conn.connection.driver_connection.in_transaction:
        conn.exec_driver_sql('BEGIN')
