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
are used as oslo.db configures them, with every wait bounded (below).

Bounded waits
-------------

A database server that stops answering (SIGSTOP, a paused VM, a stuck
disk) still accepts TCP connections in its kernel and acknowledges what is
sent to it; without bounds every request would wait for as long as it is
silent. ``[database] connect_timeout`` and ``read_timeout`` bound each
wait (doc/source/admin/config.rst):

* MariaDB/MySQL: PyMySQL's ``connect_timeout`` (the TCP connection) and
  ``read_timeout``/``write_timeout`` (every round trip, the server's
  greeting included), added to the URL's query unless the URL or
  ``[database] connection_parameters`` already name them;
* PostgreSQL: libpq's ``connect_timeout`` likewise, but libpq has no bound
  on a read. So nova_lite installs psycopg2's wait callback (its public
  API for cooperative waiting, ``psycopg2.extensions.set_wait_callback``):
  psycopg2 then runs every operation asynchronously and calls it to wait
  for the socket; it waits at most ``connect_timeout`` while connecting and
  ``read_timeout`` for each answer of a connection of nova_lite's engines,
  then raises ``OperationalError``, on which psycopg2 closes the
  connection. Connections that other code of the process opens with
  psycopg2 are waited for without a bound once connected (a test fixture's
  ``CREATE DATABASE`` may be slow);
* the pool: a checkout waits at most ``[database] pool_timeout`` (oslo.db's
  option; nova_lite's default is seconds, not SQLAlchemy's 30);
* at start: oslo.db tries to connect up to ``max_retries`` times before a
  process's first transaction. The API does not
  (``configure(conf, wait_for_database=False)``): its first request during
  an outage answers 503 like the others instead of waiting for minutes;
* SQLite: a lock is waited for ``[database] sqlite_busy_timeout``.

``is_unavailable(exc)`` says whether an exception means "the database could
not be reached, did not answer in time, or stayed locked": the API answers
those 503 with ``Retry-After`` (``nova_lite.api.fault``). A COMMIT whose
answer did not come in time raises the same way, but the server may apply
it when it resumes (measured with MariaDB: it does); see the admin guide
for what the API answers then.
"""

import os
import re
import select
import sys
import threading
import time
import urllib.parse
import weakref

from oslo_db import exception as db_exc
from oslo_db import options as oslo_db_options
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa
from sqlalchemy.ext import compiler as sa_compiler

from nova_lite.db import secrets

# Seconds a SQLite connection waits for a lock (mostly: the write lock at
# BEGIN IMMEDIATE) before giving up with "database is locked", unless
# [database] sqlite_busy_timeout says otherwise.
SQLITE_BUSY_TIMEOUT = 30
# nova_lite's own [database] options (nova_lite.conf.database), which are
# not enginefacade's.
_WAIT_OPTIONS = ('connect_timeout', 'read_timeout', 'sqlite_busy_timeout')
# Connections a SQLite file engine keeps open between transactions (more
# are opened when more threads need one at once, and closed after use).
SQLITE_POOL_SIZE = 10

context_manager = enginefacade.transaction_context()

_CONFIGURE_LOCK = threading.Lock()


def configure(conf, wait_for_database=True):
    """Point ``context_manager`` at ``conf.database``.

    ``wait_for_database=False`` (the API): the first transaction does not
    retry connecting (oslo.db's ``max_retries``) but fails at once, like any
    later one, when the database cannot be reached.

    Safe to call more than once: once the database is in use (or a test
    fixture has patched in its own), later calls change nothing.
    """
    # The keys of the credentials at rest are every process's, also when
    # a test fixture patched in its own database.
    secrets.configure(conf)
    with _CONFIGURE_LOCK:
        if context_manager.is_started:
            return
        options = dict(conf.database.items())
        if not wait_for_database:
            options['max_retries'] = 0
        _configure_manager(context_manager, options)


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
    waits = {name: values.pop(name, None) for name in _WAIT_OPTIONS}
    # nova_lite's keys of credentials at rest (nova_lite.db.secrets).
    values.pop('secret_keys', None)
    # Native threads, not eventlet: no sleep(0) per connection check-in
    # (see the module docstring).
    values['thread_checkin'] = False
    if not values.get('connection'):
        raise ValueError('[database] connection is not set')
    url = sa.engine.make_url(values['connection'])
    if url.get_backend_name() != 'sqlite':
        _bound_waits(manager, url, values, waits)
        manager.configure(**values)
        return

    # oslo.db hands pool_timeout to SQLAlchemy's NullPool of a SQLite
    # engine, which refuses it; a SQLite file engine's pool (below) opens a
    # connection instead of waiting for one.
    values['pool_timeout'] = None
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
        on_connect = _sqlite_on_connect(
            waits['sqlite_busy_timeout'] or SQLITE_BUSY_TIMEOUT)
        if not sa.event.contains(engine, 'connect', on_connect):
            sa.event.listen(engine, 'connect', on_connect)
    if not sa.event.contains(writer, 'begin', _sqlite_begin_immediate):
        sa.event.listen(writer, 'begin', _sqlite_begin_immediate)
    if reader is not writer and not sa.event.contains(
            reader, 'begin', _sqlite_begin_deferred):
        sa.event.listen(reader, 'begin', _sqlite_begin_deferred)
    if plain_file:
        # Switch the file to WAL now, before several threads connect.
        with writer.connect():
            pass


def _bound_waits(manager, url, values, waits):
    """Bound every wait of a MariaDB/MySQL or PostgreSQL engine (the module
    docstring): driver parameters through oslo.db's
    ``connection_parameters``, psycopg2's wait callback for PostgreSQL."""
    connect_timeout = waits['connect_timeout']
    read_timeout = waits['read_timeout']
    driver = url.get_driver_name()
    if driver == 'pymysql':
        params = {'connect_timeout': connect_timeout,
                  'read_timeout': read_timeout,
                  'write_timeout': read_timeout}
    elif driver == 'psycopg2':
        params = {'connect_timeout': connect_timeout}
        _PG_WAITS.update(connect=connect_timeout, read=read_timeout)
        _install_pg_wait_callback()
        manager.append_on_engine_create(_track_pg_connections)
    else:
        return
    extra = values.get('connection_parameters') or ''
    given = set(url.query) | {k for k, v in urllib.parse.parse_qsl(extra)}
    added = '&'.join('%s=%s' % (k, v) for k, v in sorted(params.items())
                     if v is not None and k not in given)
    if added:
        values['connection_parameters'] = (
            '%s&%s' % (extra, added) if extra else added)


class utcnow(sa.sql.functions.FunctionElement):
    """The database server's clock, naive UTC, as a SQL expression (the
    same clock for every process that compares two of its values)."""

    type = sa.DateTime()
    inherit_cache = True
    name = 'utcnow'


@sa_compiler.compiles(utcnow)
def _utcnow_default(element, compiler, **kw):
    return 'CURRENT_TIMESTAMP'


@sa_compiler.compiles(utcnow, 'sqlite')
def _utcnow_sqlite(element, compiler, **kw):
    return "STRFTIME('%Y-%m-%d %H:%M:%f', 'now')"


@sa_compiler.compiles(utcnow, 'mysql')
@sa_compiler.compiles(utcnow, 'mariadb')
def _utcnow_mysql(element, compiler, **kw):
    return 'UTC_TIMESTAMP(6)'


@sa_compiler.compiles(utcnow, 'postgresql')
def _utcnow_postgresql(element, compiler, **kw):
    return "TIMEZONE('UTC', STATEMENT_TIMESTAMP())"


# -- compare-and-swap: conditional updates and deletes ------------------------
#
# Every move of state nova_lite makes across processes is one of these: one
# UPDATE (or DELETE) whose WHERE clause holds what the caller read, so of
# two processes moving the same row from the same state one wins and the
# other learns it lost (Cinder's ``conditional_update``). The objects reach
# them through ``NovaLiteObject.conditional_update``/``conditional_destroy``,
# block storage's records through ``volume.db``.


class Not(object):
    """An expected value a column must *not* hold: ``Not(None)`` (IS NOT
    NULL), ``Not('x')``, ``Not(['x', 'y'])`` (NOT IN; NULL is not in it)."""

    def __init__(self, value):
        self.value = value


_LISTS = (list, tuple, set, frozenset)


def _shape(value):
    """What the SQL of the condition for the expected ``value`` depends
    on (not the values themselves, which are bound parameters)."""
    if isinstance(value, Not):
        return ('not',) + _shape(value.value)
    if value is None:
        return ('null',)
    if isinstance(value, _LISTS):
        count = sum(1 for v in value if v is not None)
        return ('in', count, count != len(value))
    return ('eq',)


def _param(column, name, index):
    return sa.bindparam('%s_%d' % (name, index), type_=column.type)


def _condition(column, shape, name):
    """The condition that ``column`` holds an expected value of ``shape``,
    its values the bound parameters ``<name>_0``, ``<name>_1``...: a list
    is any of its values (``None`` among them: NULL), ``None`` is NULL, a
    ``Not`` the opposite (NULL is never in a ``Not``), anything else
    equality."""
    kind = shape[0]
    if kind == 'not':
        inner = shape[1:]
        if inner[0] == 'null' or inner[:2] == ('in', 0):
            return column.is_not(None)
        if inner[0] == 'in':
            return sa.and_(column.is_not(None), column.not_in(
                [_param(column, name, i) for i in range(inner[1])]))
        return sa.and_(column.is_not(None),
                       column != _param(column, name, 0))
    if kind == 'null':
        return column.is_(None)
    if kind == 'in':
        # One bound parameter per value: a plain in_(<list>) would make an
        # expanding parameter, whose SQL is rendered again at every
        # execution of the cached statement.
        clauses = [column.in_([_param(column, name, i)
                               for i in range(shape[1])])] if shape[1] else []
        if shape[2]:
            clauses.append(column.is_(None))
        return sa.or_(*clauses) if clauses else sa.false()
    return column == _param(column, name, 0)


def _values(value, name, params):
    """Add the bound values of the expected ``value`` to ``params`` (an
    aware datetime as the naive UTC the columns hold)."""
    if isinstance(value, Not):
        value = value.value
    if value is None:
        return params
    if not isinstance(value, _LISTS):
        value = (value,)
    for index, item in enumerate(v for v in value if v is not None):
        if getattr(item, 'tzinfo', None) is not None:
            item = (item - item.utcoffset()).replace(tzinfo=None)
        params['%s_%d' % (name, index)] = item
    return params


# conditional_update's and conditional_destroy's statements, built once
# per table, columns set and shape of the expected values: a statement
# costs about as much to build as to run on SQLite.
_STATEMENTS = {}


def _statement(kind, table, values, expected_values):
    key = (kind, table.name, tuple(values),
           tuple((name, _shape(v)) for name, v in expected_values.items()))
    statement = _STATEMENTS.get(key)
    if statement is None:
        where = [_condition(table.c[name], shape, 'e_' + name)
                 for name, shape in key[3]]
        if kind == 'update':
            statement = sa.update(table).where(*where).values(
                {name: sa.bindparam('v_' + name, type_=table.c[name].type)
                 for name in values})
        else:
            statement = sa.delete(table).where(*where)
        _STATEMENTS[key] = statement
    params = {'v_' + name: value for name, value in values.items()}
    for name, value in expected_values.items():
        _values(value, 'e_' + name, params)
    return statement, params


@context_manager.writer
def conditional_update(context, model, values, expected_values, filters=()):
    """``UPDATE <model> SET values`` of the rows whose columns hold
    ``expected_values`` (``{column: expected}``: a value, a list of them,
    ``None`` for NULL, ``Not(...)``) and match every clause of ``filters``
    (a statement is then built for this call); True if a row was updated
    (the caller won), False if none matched (another process moved it
    first, or it is gone). Joins the caller's transaction. Column
    defaults apply (``updated_at``)."""
    statement, params = _statement('update', model.__table__, values,
                                   expected_values)
    if filters:
        statement = statement.where(*filters)
    return context.session.execute(statement, params).rowcount > 0


@context_manager.writer
def conditional_destroy(context, model, expected_values, filters=()):
    """``DELETE`` the rows of ``model`` whose columns hold
    ``expected_values`` and match ``filters``; True if a row was deleted,
    as ``conditional_update``."""
    statement, params = _statement('delete', model.__table__, {},
                                   expected_values)
    if filters:
        statement = statement.where(*filters)
    return context.session.execute(statement, params).rowcount > 0


# -- PostgreSQL: psycopg2's wait callback ------------------------------------

# Seconds: the bound on connecting, and on each wait for an answer of a
# connection of nova_lite's engines ([database] connect_timeout and
# read_timeout of the last configure: one configuration per process).
_PG_WAITS = {'connect': None, 'read': None}
# The DBAPI connections of nova_lite's PostgreSQL engines.
_PG_CONNECTIONS = weakref.WeakSet()


def _install_pg_wait_callback():
    import psycopg2.extensions
    if psycopg2.extensions.get_wait_callback() is not _pg_wait:
        psycopg2.extensions.set_wait_callback(_pg_wait)


def _track_pg_connections(engine):
    """on_engine_create hook: remember the engine's connections, whose
    reads are bounded: first of the 'connect' listeners, before the
    dialect's first queries. The connection oslo.db's start-up test made
    before this hook ran waits in the pool: closed, so that every
    connection the engine hands out is a tracked one."""
    def on_connect(dbapi_connection, connection_record):
        _PG_CONNECTIONS.add(dbapi_connection)
    sa.event.listen(engine, 'connect', on_connect, insert=True)
    engine.pool.dispose()


def _pg_wait(conn):
    """psycopg2's wait callback: poll ``conn`` until its operation is done,
    waiting for its socket at most ``_PG_WAITS`` seconds at a time (the
    connect bound while connecting, the read bound for nova_lite's
    connections, none for others). On expiry it raises
    ``OperationalError``; psycopg2 then closes the connection."""
    import psycopg2
    import psycopg2.extensions as ext
    if conn.status == ext.STATUS_SETUP:
        timeout, what = _PG_WAITS['connect'], 'could not connect to server'
    elif conn in _PG_CONNECTIONS:
        timeout, what = _PG_WAITS['read'], 'could not receive data from server'
    else:
        timeout, what = None, None
    while True:
        state = conn.poll()
        if state == ext.POLL_OK:
            return
        if state == ext.POLL_READ:
            ready = _wait_socket(conn.fileno(), False, timeout)
        elif state == ext.POLL_WRITE:
            ready = _wait_socket(conn.fileno(), True, timeout)
        else:
            raise psycopg2.OperationalError('bad result from poll: %r' %
                                            state)
        if not ready:
            # The message matches SQLAlchemy's and oslo.db's disconnect
            # and connection-error patterns.
            raise psycopg2.OperationalError(
                '%s: no answer within %s seconds' % (what, timeout))


def _wait_socket(fd, write, timeout):
    """True once ``fd`` is readable (writable), False after ``timeout``
    seconds (None: no bound)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = (None if deadline is None
                else max(0, deadline - time.monotonic()))
        try:
            if write:
                ready = select.select([], [fd], [fd], left)
            else:
                ready = select.select([fd], [], [fd], left)
        except InterruptedError:
            continue
        return any(ready)


def is_unavailable(exc):
    """True if ``exc`` means that the database could not be used for now:
    not reachable, no answer within the bounds (module docstring), or a
    lock not granted in time (SQLite's "database is locked", MySQL's lock
    wait timeout, PostgreSQL's lock or statement timeout). The request may
    be tried again later; nothing of an unfinished transaction was kept."""
    if isinstance(exc, db_exc.DBConnectionError):
        return True
    if isinstance(exc, db_exc.DBError):
        exc = exc.inner_exception
    if not isinstance(exc, (sa.exc.OperationalError, sa.exc.InternalError)):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    text = str(orig)
    if 'database is locked' in text:            # SQLite
        return True
    if getattr(orig, 'args', None) and orig.args[0] in _MYSQL_UNAVAILABLE:
        return True
    if _is_psycopg2_error(orig):
        # libpq's own errors (refused, lost, timed out: no server answered
        # them) have no SQLSTATE; the server's have one.
        return orig.pgcode is None or orig.pgcode in _PG_UNAVAILABLE
    return False


def _is_psycopg2_error(exc):
    psycopg2 = sys.modules.get('psycopg2')
    return psycopg2 is not None and isinstance(exc, psycopg2.OperationalError)


# MySQL: lock wait timeout, and the client errors of a connection that
# failed (can't connect, gone away, lost during a query, timed out).
_MYSQL_UNAVAILABLE = frozenset((1205, 2002, 2003, 2006, 2013))
# PostgreSQL: lock_not_available, query_canceled (statement_timeout),
# cannot_connect_now, admin_shutdown, connection_failure.
_PG_UNAVAILABLE = frozenset(('55P03', '57014', '57P03', '57P01', '08006'))


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


# busy timeout (s) -> its 'connect' listener (one function per value, so
# that configuring an engine twice does not add a second listener).
_SQLITE_ON_CONNECT = {}


def _sqlite_on_connect(busy_timeout):
    """The 'connect' listener of a SQLite engine whose connections wait
    ``busy_timeout`` seconds for a lock."""
    listener = _SQLITE_ON_CONNECT.get(busy_timeout)
    if listener is None:
        listener = _SQLITE_ON_CONNECT.setdefault(
            busy_timeout, _sqlite_settings(busy_timeout))
    return listener


def _sqlite_settings(busy_timeout):
    def on_connect(dbapi_connection, connection_record):
        cursor = dbapi_connection.cursor()
        try:
            # The timeout first: switching to WAL may have to wait for a
            # lock.
            cursor.execute('PRAGMA busy_timeout = %d' % (busy_timeout * 1000))
            mode = cursor.execute('PRAGMA journal_mode = WAL').fetchone()[0]
            # OFF when [database] sqlite_synchronous is False (set by
            # oslo.db or _oslo_db_sqlite_settings), SQLite's default FULL
            # (2) otherwise. With WAL, NORMAL is safe and spares an fsync
            # per commit (module docstring).
            synchronous = cursor.execute('PRAGMA synchronous').fetchone()[0]
            if mode == 'wal' and synchronous == 2:
                cursor.execute('PRAGMA synchronous = NORMAL')
        finally:
            cursor.close()
    return on_connect


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
