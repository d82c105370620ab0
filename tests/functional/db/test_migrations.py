"""The schema on real databases: migrations and models agree on SQLite,
MariaDB and PostgreSQL; the migration API works; and SQLite takes the
concurrent writers of the embedded default without "database is locked".

The MariaDB and PostgreSQL classes use ``opportunistic_url``: they skip
when the server is not reachable, unless NOVA_LITE_REQUIRE_DB_BACKENDS=1.
"""

import os
import sqlite3
import threading

from alembic import script as alembic_script
import fixtures
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_migrations
from oslo_utils import uuidutils
import sqlalchemy as sa
import testtools

import nova_lite.conf
from nova_lite.db import api as db_api
from nova_lite.db import migration
from nova_lite.db import models
from tests.fixtures import database as db_fixture

# Generous upper bound for a thread to finish; tests wait on events and
# joins with this deadline, never on sleeps.
DEADLINE = 60


@enginefacade.transaction_context_provider
class Context(object):
    """The smallest enginefacade transaction-context provider."""


def _head():
    scripts = alembic_script.ScriptDirectory.from_config(
        migration.alembic_config())
    return scripts.get_current_head()


def _instance_values(**values):
    result = {'uuid': uuidutils.generate_uuid(), 'display_name': 'server',
              'project_id': 'project', 'user_id': 'user', 'flavor_id': '1',
              'vm_state': 'active'}
    result.update(values)
    return result


def _bdm_values(instance_uuid, **values):
    result = {'uuid': uuidutils.generate_uuid(),
              'instance_uuid': instance_uuid, 'source_type': 'volume',
              'destination_type': 'volume'}
    result.update(values)
    return result


def add_metadata_of_nothing(manager, context):
    with manager.writer.using(context) as session:
        session.add(models.VolumeMetadata(
            volume_id=uuidutils.generate_uuid(), key='k', value='v'))


class _SchemaTests(test_migrations.ModelsMigrationsSync):
    """Run on each backend: ``self.manager`` is a configured manager on an
    empty database."""

    def get_metadata(self):
        return models.BASE.metadata

    def get_engine(self):
        # The reader engine for comparing and for ModelsMigrationsSync's
        # cleanup, which inspects through a second connection while its
        # first holds a transaction (on SQLite the writer engine would wait
        # for its own write lock).
        return self.manager.reader.get_engine()

    def db_sync(self, engine):
        # Migrate as nova-lite-manage does: on the writer engine.
        migration._upgrade(self.manager.writer.get_engine())

    def _migrated(self):
        migration._upgrade(self.manager.writer.get_engine())
        return Context()

    def test_version_after_upgrade(self):
        self.assertIsNone(migration._version(self.get_engine()))
        migration._upgrade(self.manager.writer.get_engine())
        self.assertEqual(_head(), migration._version(self.get_engine()))

    def test_unique_constraints_settle_races(self):
        context = self._migrated()
        with self.manager.writer.using(context) as session:
            instance = models.Instance(**_instance_values())
            session.add(instance)
            session.flush()
            # NULL volume ids and device names never collide.
            session.add_all([
                models.BlockDeviceMapping(**_bdm_values(
                    instance.uuid, source_type='image',
                    destination_type='local')),
                models.BlockDeviceMapping(**_bdm_values(
                    instance.uuid, source_type='blank',
                    destination_type='local')),
                models.BlockDeviceMapping(**_bdm_values(
                    instance.uuid, volume_id=uuidutils.generate_uuid(),
                    device_name='/dev/vdb')),
            ])
        volume_id = uuidutils.generate_uuid()
        with self.manager.writer.using(context) as session:
            session.add(models.BlockDeviceMapping(**_bdm_values(
                instance.uuid, volume_id=volume_id)))

        def add_bdm(**values):
            with self.manager.writer.using(context) as session:
                session.add(models.BlockDeviceMapping(**_bdm_values(
                    instance.uuid, **values)))

        # Same volume twice on one server; same device name twice.
        self.assertRaises(db_exc.DBDuplicateEntry, add_bdm,
                          volume_id=volume_id)
        self.assertRaises(db_exc.DBDuplicateEntry, add_bdm,
                          volume_id=uuidutils.generate_uuid(),
                          device_name='/dev/vdb')

        # One access row per (volume type, project).
        type_id = uuidutils.generate_uuid()
        with self.manager.writer.using(context) as session:
            session.add(models.VolumeType(id=type_id, name='private',
                                          is_public=False))
            session.flush()
            session.add(models.VolumeTypeProject(volume_type_id=type_id,
                                                 project_id='demo'))

        def add_access():
            with self.manager.writer.using(context) as session:
                session.add(models.VolumeTypeProject(
                    volume_type_id=type_id, project_id='demo'))

        self.assertRaises(db_exc.DBDuplicateEntry, add_access)

    def test_cascades_and_defaults(self):
        context = self._migrated()
        with self.manager.writer.using(context) as session:
            instance = models.Instance(**_instance_values())
            volume_type = models.VolumeType(
                id=uuidutils.generate_uuid(), name='multiattach')
            session.add_all([instance, volume_type])
            session.flush()
            session.add(models.BlockDeviceMapping(**_bdm_values(
                instance.uuid, volume_id=uuidutils.generate_uuid(),
                connection_info='x' * 100000)))
            session.add(models.VolumeTypeExtraSpec(
                volume_type_id=volume_type.id, key='multiattach',
                value='<is> True'))
            session.add(models.VolumeTypeProject(
                volume_type_id=volume_type.id, project_id='demo'))
        with self.manager.reader.using(context) as session:
            bdm = session.execute(
                sa.select(models.BlockDeviceMapping)).scalar_one()
            self.assertEqual(100000, len(bdm.connection_info))
            self.assertIs(False, bdm.delete_on_termination)
            self.assertIsNotNone(bdm.created_at)
            self.assertEqual(0, instance.power_state)
            self.assertIs(True, volume_type.is_public)
        with self.manager.writer.using(context) as session:
            session.execute(sa.delete(models.Instance))
            session.execute(sa.delete(models.VolumeType))
        with self.manager.reader.using(context) as session:
            for model in (models.BlockDeviceMapping,
                          models.VolumeTypeExtraSpec,
                          models.VolumeTypeProject):
                self.assertEqual(0, session.execute(
                    sa.select(sa.func.count()).select_from(model)).scalar())

    def test_default_volume_type_given_to_typeless_volumes(self):
        # A database from before the default type: its live volumes
        # without a type get __DEFAULT__, deleted ones keep theirs.
        engine = self.manager.writer.get_engine()
        migration._upgrade(engine, 'b4e9d2c7a1f8')
        context = Context()
        ids = [uuidutils.generate_uuid() for _ in range(2)]
        with self.manager.writer.using(context) as session:
            for volume_id, deleted in zip(ids, (False, True)):
                session.execute(sa.text(
                    "INSERT INTO volumes (id, project_id, user_id, size, "
                    "status, attach_status, multiattach, bootable, "
                    "encrypted, deleted) VALUES (:id, 'p', 'u', 1, "
                    "'available', 'detached', :f, :f, :f, :deleted)"),
                    {'id': volume_id, 'f': False, 'deleted': deleted})
        migration._upgrade(engine)
        with self.manager.reader.using(context) as session:
            default = session.execute(sa.select(models.VolumeType).where(
                models.VolumeType.name == '__DEFAULT__')).scalar_one()
            self.assertEqual(('Default Volume Type', True),
                             (default.description, default.is_public))
            self.assertEqual([default.id, None], [session.get(
                models.Volume, volume_id).volume_type_id
                for volume_id in ids])

    def test_volume_metadata_keys_are_exact(self):
        # Keys compare byte for byte on every backend (utf8mb4_bin on
        # MariaDB, whose default collation ignores case); one row per key.
        context = self._migrated()
        volume_id = uuidutils.generate_uuid()
        with self.manager.writer.using(context) as session:
            session.add(models.Volume(
                id=volume_id, project_id='p', user_id='u', size=1,
                status='available', attach_status='detached'))
            session.flush()
            session.add_all([
                models.VolumeMetadata(volume_id=volume_id, key=key,
                                      value=value)
                for key, value in (('Type', 'Work'), ('type', 'work'))])

        def add(key):
            with self.manager.writer.using(context) as session:
                session.add(models.VolumeMetadata(volume_id=volume_id,
                                                  key=key, value='x'))

        self.assertRaises(db_exc.DBDuplicateEntry, add, 'Type')
        self.assertRaises(db_exc.DBReferenceError, add_metadata_of_nothing,
                          self.manager, context)
        with self.manager.reader.using(context) as session:
            found = session.execute(
                sa.select(models.VolumeMetadata.key).where(
                    models.VolumeMetadata.value == 'work')).scalars().all()
        self.assertEqual(['type'], found)

    def test_foreign_keys_enforced(self):
        context = self._migrated()

        def add_orphan_bdm():
            with self.manager.writer.using(context) as session:
                session.add(models.BlockDeviceMapping(**_bdm_values(
                    uuidutils.generate_uuid())))

        self.assertRaises(db_exc.DBReferenceError, add_orphan_bdm)


class TestModelsMigrationsSQLite(_SchemaTests, testtools.TestCase):

    def setUp(self):
        super().setUp()
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'empty.sqlite')
        self.manager = db_api.create_context_manager('sqlite:///' + path)
        self.addCleanup(self.manager.dispose_pool)


class _OpportunisticBackend(_SchemaTests):
    BACKEND = None

    def setUp(self):
        super().setUp()
        url, drop = db_fixture.opportunistic_url(self.BACKEND)
        self.addCleanup(drop)
        self.manager = db_api.create_context_manager(url)
        self.addCleanup(self.manager.dispose_pool)


class TestModelsMigrationsMySQL(_OpportunisticBackend, testtools.TestCase):
    BACKEND = 'mysql'

    def test_mysql_types(self):
        self._migrated()
        inspector = sa.inspect(self.get_engine())
        columns = {c['name']: c for c in inspector.get_columns('volumes')}
        self.assertEqual(6, columns['created_at']['type'].fsp)
        columns = {c['name']: c
                   for c in inspector.get_columns('volume_attachment')}
        self.assertEqual('MEDIUMTEXT',
                         type(columns['connection_info']['type']).__name__)
        self.assertEqual('InnoDB', inspector.get_table_options(
            'volumes')['mysql_engine'])
        columns = {c['name']: c
                   for c in inspector.get_columns('volume_metadata')}
        for name in ('key', 'value'):
            self.assertEqual('utf8mb4_bin', columns[name]['type'].collation)


class TestModelsMigrationsPostgreSQL(_OpportunisticBackend,
                                     testtools.TestCase):
    BACKEND = 'postgresql'


class TestMigrationAPI(testtools.TestCase):
    """upgrade/version/stamp through ConfigOpts, as nova-lite-manage calls
    them. The process-wide context manager is swapped for an unconfigured
    one for the test, so that configure(conf) here is a first call."""

    def setUp(self):
        super().setUp()
        self.state = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'state', 'deeper')
        self.conf = cfg.ConfigOpts()
        nova_lite.conf.register_opts(self.conf)
        self.conf([], project='nova-lite', default_config_files=[])
        self.conf.set_override('state_path', self.state)
        fresh = enginefacade.transaction_context()
        self.addCleanup(fresh.dispose_pool)
        self.addCleanup(db_api.context_manager.patch_factory(fresh))

    def test_upgrade_version_stamp(self):
        head = _head()
        self.assertIsNone(migration.version(self.conf))
        # configure() made the state directory for the SQLite file.
        self.assertTrue(os.path.isdir(self.state))

        migration.upgrade(self.conf)
        self.assertEqual(head, migration.version(self.conf))
        tables = set(sa.inspect(db_api.get_engine()).get_table_names())
        self.assertEqual(
            models.COMPUTE_TABLES | models.VOLUME_TABLES | {'alembic_version'},
            tables)

        migration.stamp(self.conf, 'base')
        self.assertIsNone(migration.version(self.conf))
        migration.stamp(self.conf, 'head')
        self.assertEqual(head, migration.version(self.conf))
        # At head already: nothing to do, no error.
        migration.upgrade(self.conf)
        self.assertEqual(head, migration.version(self.conf))

    def test_configure_twice(self):
        db_api.configure(self.conf)
        engine = db_api.get_engine()
        self.assertEqual(
            os.path.join(self.state, 'nova_lite.sqlite'),
            engine.url.database)
        other = cfg.ConfigOpts()
        nova_lite.conf.register_opts(other)
        other([], project='nova-lite', default_config_files=[])
        other.set_override('state_path', self.state + '-other')
        db_api.configure(other)
        db_api.configure(self.conf)
        self.assertIs(engine, db_api.get_engine())

    def test_sqlite_reader_and_writer_engines(self):
        db_api.configure(self.conf)
        writer = db_api.get_engine()
        reader = db_api.get_engine(use_reader=True)
        self.assertIsNot(writer, reader)
        self.assertEqual(writer.url, reader.url)
        # Pooled (oslo.db would give SQLite files a NullPool), with the
        # settings oslo.db's listeners made and the WAL ones.
        for engine in (writer, reader):
            self.assertIsInstance(engine.pool, sa.pool.QueuePool)
            with engine.connect() as connection:
                raw = connection.connection.driver_connection
                self.assertIsNone(raw.isolation_level)
                for pragma, value in (
                        ('journal_mode', 'wal'), ('foreign_keys', 1),
                        ('synchronous', 1),
                        ('busy_timeout', db_api.SQLITE_BUSY_TIMEOUT * 1000)):
                    self.assertEqual(value, connection.exec_driver_sql(
                        'PRAGMA %s' % pragma).scalar(), pragma)
                self.assertEqual(1, connection.exec_driver_sql(
                    "SELECT 'vdb' REGEXP '^vd'").scalar())
        # A connection serves one transaction after another.
        with writer.connect() as connection:
            first = connection.connection.driver_connection
        with writer.connect() as connection:
            self.assertIs(first, connection.connection.driver_connection)

    def test_sqlite_synchronous_off_is_honoured(self):
        self.conf.set_override('sqlite_synchronous', False, 'database')
        db_api.configure(self.conf)
        with db_api.get_engine().connect() as connection:
            self.assertEqual(0, connection.exec_driver_sql(
                'PRAGMA synchronous').scalar())


class TestDatabaseFixture(testtools.TestCase):

    def test_fresh_database_per_use_and_restored(self):
        original = db_api.context_manager._factory
        urls = []
        for _ in range(2):
            db = db_fixture.Database()
            with db:
                urls.append(db.connection_url)
                self.assertIsNot(original, db_api.context_manager._factory)
                self.assertEqual(_head(), migration._version(db.engine))
                context = Context()
                with db_api.context_manager.writer.using(context) as session:
                    self.assertEqual(0, session.execute(
                        sa.select(sa.func.count()).select_from(
                            models.Service)).scalar())
                    session.add(models.Service(
                        uuid=uuidutils.generate_uuid(), host='h',
                        binary='nova-lite-compute', topic='compute'))
            self.assertIs(original, db_api.context_manager._factory)
        self.assertNotEqual(urls[0], urls[1])

    def test_conf_override(self):
        conf = cfg.ConfigOpts()
        nova_lite.conf.register_opts(conf)
        conf([], project='nova-lite', default_config_files=[])
        db = self.useFixture(db_fixture.Database(conf=conf))
        self.assertEqual(db.connection_url, conf.database.connection)
        # configure() under the fixture keeps the fixture's database.
        db_api.configure(conf)
        self.assertIs(db.engine, db_api.get_engine())


class TestSQLiteLocking(testtools.TestCase):
    """Writers take the write lock at BEGIN; readers never take it."""

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(db_fixture.Database())
        self.context = Context()
        with db_api.context_manager.writer.using(self.context) as session:
            service = models.Service(
                uuid=uuidutils.generate_uuid(), host='host1',
                binary='nova-lite-compute', topic='compute')
            session.add(service)
            session.flush()
            self.service_id = service.id

    def _version(self):
        @db_api.context_manager.reader
        def get(context):
            return context.session.get(models.Service,
                                       self.service_id).version
        return get(Context())

    def _start(self, target):
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        return thread

    def test_concurrent_read_then_write(self):
        @db_api.context_manager.writer
        def increment(context):
            service = context.session.get(models.Service, self.service_id)
            service.version = service.version + 1

        errors = []

        def worker():
            context = Context()
            try:
                for _ in range(25):
                    increment(context)
            except Exception as e:
                errors.append(e)

        threads = [self._start(worker) for _ in range(8)]
        for thread in threads:
            thread.join(DEADLINE)
            self.assertFalse(thread.is_alive())
        self.assertEqual([], errors)
        self.assertEqual(200, self._version())

    def test_reader_not_blocked_by_writer(self):
        holding = threading.Event()
        release = threading.Event()
        self.addCleanup(release.set)

        @db_api.context_manager.writer
        def hold_write_lock(context):
            context.session.execute(
                sa.update(models.Service).values(version=5))
            holding.set()
            release.wait(DEADLINE)

        writer = self._start(lambda: hold_write_lock(Context()))
        self.assertTrue(holding.wait(DEADLINE))
        seen = []
        reader = self._start(lambda: seen.append(self._version()))
        # A reader that wanted the write lock would wait for the busy
        # timeout here; it must finish while the writer still holds it.
        reader.join(DEADLINE / 2)
        self.assertFalse(reader.is_alive())
        self.assertTrue(writer.is_alive())
        self.assertEqual([0], seen)  # not the uncommitted write
        release.set()
        writer.join(DEADLINE)
        self.assertEqual(5, self._version())

    def _trace_begins(self):
        # sqlite3's trace callback sees every statement the connection runs,
        # the BEGINs of the 'begin' listeners included.
        statements = []
        for engine in (db_api.get_engine(), db_api.get_engine(True)):
            def checkout(dbapi_conn, record, proxy, engine=engine):
                dbapi_conn.set_trace_callback(
                    lambda sql: statements.append((engine, sql)))

            def checkin(dbapi_conn, record):
                dbapi_conn.set_trace_callback(None)

            for name, fn in (('checkout', checkout), ('checkin', checkin)):
                sa.event.listen(engine.pool, name, fn)
                self.addCleanup(sa.event.remove, engine.pool, name, fn)
        return statements

    def test_begin_statements(self):
        statements = self._trace_begins()
        writer = db_api.get_engine()
        reader = db_api.get_engine(use_reader=True)

        @db_api.context_manager.writer
        def write(context):
            # A reader called from a writer joins the writer's transaction.
            read(context)
            context.session.execute(
                sa.update(models.Service).values(version=1))

        @db_api.context_manager.reader
        def read(context):
            return context.session.execute(
                sa.select(models.Service.version)).scalar()

        def ends():
            found = [(engine, sql) for engine, sql in statements
                     if sql.startswith(('BEGIN', 'ROLLBACK', 'COMMIT'))]
            del statements[:]
            return found

        write(Context())
        # oslo.db's deferred BEGIN, swapped for an immediate one before
        # anything ran in it.
        self.assertEqual([(writer, 'BEGIN'), (writer, 'ROLLBACK'),
                          (writer, 'BEGIN IMMEDIATE'), (writer, 'COMMIT')],
                         ends())
        read(Context())
        # The reader keeps the one deferred BEGIN.
        self.assertEqual([(reader, 'BEGIN'), (reader, 'ROLLBACK')], ends())

    def test_write_lock_not_granted_is_a_db_error(self):
        # Another connection holds the write lock past the busy timeout:
        # the writer's BEGIN IMMEDIATE fails with SQLAlchemy's exception
        # (not the driver's), and the transaction never starts.
        engine = db_api.get_engine()

        def short_timeout(dbapi_conn, record, proxy):
            dbapi_conn.execute('PRAGMA busy_timeout = 50')
        sa.event.listen(engine.pool, 'checkout', short_timeout)
        self.addCleanup(sa.event.remove, engine.pool, 'checkout',
                        short_timeout)
        holder = sqlite3.connect(engine.url.database, isolation_level=None)
        self.addCleanup(holder.close)
        holder.execute('BEGIN IMMEDIATE')

        @db_api.context_manager.writer
        def write(context):
            context.session.execute(
                sa.update(models.Service).values(version=7))

        exc = self.assertRaises(sa.exc.OperationalError, write, Context())
        self.assertIn('database is locked', str(exc))
        holder.execute('ROLLBACK')
        self.assertEqual(0, self._version())
        write(Context())
        self.assertEqual(7, self._version())

    def test_wal_synchronous_normal(self):
        for engine in (db_api.get_engine(), db_api.get_engine(True)):
            with engine.connect() as conn:
                self.assertEqual('wal', conn.exec_driver_sql(
                    'PRAGMA journal_mode').scalar())
                # 1 = NORMAL: no fsync per commit in WAL mode.
                self.assertEqual(1, conn.exec_driver_sql(
                    'PRAGMA synchronous').scalar())

    def test_no_eventlet_yield_on_checkin(self):
        # oslo.db's thread_checkin listener (time.sleep(0) per checkin) is
        # for eventlet; nova_lite runs on native threads.
        for engine in (db_api.get_engine(), db_api.get_engine(True)):
            self.assertEqual([], [
                fn for fn in engine.pool.dispatch.checkin
                if getattr(fn, '__name__', '') == '_thread_yield'])
