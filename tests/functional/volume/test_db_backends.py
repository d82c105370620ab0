"""The attachment moves and the quotas on MariaDB and PostgreSQL, under
contention.

SQLite serialises writers (BEGIN IMMEDIATE); on MariaDB and PostgreSQL the
compare-and-swaps and the volume row lock of nova_lite.volume.db, and the
quota lock rows (nova_lite.quota), are what keep concurrent requests from
both winning. These tests use the
opportunistic servers (see tests/fixtures/database.py): they skip when a
server is missing, unless NOVA_LITE_REQUIRE_DB_BACKENDS=1.
"""

import concurrent.futures
import threading
from unittest import mock

from oslo_utils import uuidutils
import testtools

from nova_lite.compute import flavors
from nova_lite.compute import quotas as compute_quotas
from nova_lite import context
from nova_lite.db import api as db_api
from nova_lite.db import migration
from nova_lite.db import models
from nova_lite import exception
from nova_lite import policy
from nova_lite.volume import api as volume_api
from nova_lite.volume import metadata as vmeta
from nova_lite.volume import quotas as volume_quotas
from nova_lite.volume_service import drivers
from tests.fixtures import conf as conf_fixture
from tests.fixtures import database as db_fixture
from tests.fixtures import volume_service as volume_service_fixture


class _Contention(object):
    BACKEND = None

    def setUp(self):
        super().setUp()
        url, drop = db_fixture.opportunistic_url(self.BACKEND)
        self.addCleanup(drop)
        manager = db_api.create_context_manager(url, max_pool_size=25,
                                                max_overflow=10)
        self.addCleanup(manager.dispose_pool)
        migration._upgrade(manager.writer.get_engine())
        self.addCleanup(db_api.context_manager.patch_factory(manager))
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        # Twenty volumes of one project at once: above the default quota.
        self.conf.set_override('volumes', -1, group='quota')
        policy.init(self.conf)
        self.addCleanup(policy.reset)
        # The backends, before the volume service loads them: file, and
        # fake (multiattach) for the shared connections.
        self.conf.set_override('enabled_backends', ['file', 'fake'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.useFixture(volume_service_fixture.VolumeService(self.conf))
        self.api = volume_api.API(self.conf)
        self.ctxt = context.RequestContext('demo', 'demo',
                                           roles=['member', 'reader'])

    def _race(self, fn, n=20):
        start = threading.Barrier(n)

        def one(_i):
            start.wait(timeout=30)
            try:
                return fn()
            except exception.InvalidVolume as e:
                return e
        with concurrent.futures.ThreadPoolExecutor(n) as pool:
            return list(pool.map(one, range(n)))

    def test_twenty_reservations_one_wins(self):
        volume = self.api.create(self.ctxt, 1)
        results = self._race(lambda: self.api.attachments.create(
            self.ctxt, volume.id, uuidutils.generate_uuid()))
        won = [r for r in results if not isinstance(r, Exception)]
        self.assertEqual(1, len(won))
        self.assertEqual(19, len(results) - len(won))
        self.assertEqual(1, len(self.api.attachments.get_all(
            self.ctxt, filters={'volume_id': volume.id})))
        volume = self.api.get(self.ctxt, volume.id)
        self.assertEqual(('reserved', 'reserved'),
                         (volume.status, volume.attach_status))

    def test_multiattach_reservations_and_deletes_keep_status_right(self):
        vtype = self.api.types.create(
            self.ctxt.elevated(), 'ma',
            extra_specs={'multiattach': '<is> True'})
        volume = self.api.create(self.ctxt, 1, volume_type=vtype.name)
        attachments = []
        for i in range(6):
            att = self.api.attachments.create(
                self.ctxt, volume.id, uuidutils.generate_uuid(),
                connector={'host': 'h%d' % i})
            self.api.attachments.complete(self.ctxt, att.id)
            attachments.append(att.id)
        ids = iter(attachments)
        lock = threading.Lock()

        def delete_next():
            with lock:
                attachment_id = next(ids)
            return self.api.attachments.delete(self.ctxt, attachment_id)
        self._race(delete_next, n=6)
        volume = self.api.get(self.ctxt, volume.id)
        self.assertEqual(('available', 'detached'),
                         (volume.status, volume.attach_status))

    def test_concurrent_deletes_on_one_host_disconnect_it_once(self):
        vtype = self.api.types.create(
            self.ctxt.elevated(), 'ma',
            extra_specs={'multiattach': '<is> True',
                         'volume_backend_name': 'fake'})
        volume = self.api.create(self.ctxt, 1, volume_type=vtype.name)
        attachments = []
        for _i in range(6):
            att = self.api.attachments.create(
                self.ctxt, volume.id, uuidutils.generate_uuid(),
                connector={'host': 'h1'})
            self.api.attachments.complete(self.ctxt, att.id)
            attachments.append(att.id)
        driver = drivers.get_driver(self.conf, 'fake')
        self.assertEqual(['h1'], list(driver.connections({'id': volume.id})))
        ids = iter(attachments)
        lock = threading.Lock()
        terminated = []
        real = driver.terminate_connection

        def terminate(vol, connector):
            terminated.append(connector['host'])
            return real(vol, connector)

        def delete_next():
            with lock:
                attachment_id = next(ids)
            return self.api.attachments.delete(self.ctxt, attachment_id)
        with mock.patch.object(driver, 'terminate_connection', terminate):
            results = self._race(delete_next, n=6)
        self.assertEqual(1, [shared for _rem, shared in results].count([]))
        self.assertEqual(['h1'], terminated)
        self.assertEqual({}, driver.connections({'id': volume.id}))
        volume = self.api.get(self.ctxt, volume.id)
        self.assertEqual(('available', 'detached'),
                         (volume.status, volume.attach_status))

    def test_twenty_attach_cycles_of_different_volumes_at_once(self):
        # Many servers attaching at once (the asynchronous attach of 2.101
        # makes this the normal load): reserve, connect, complete and
        # delete of twenty volumes in parallel, no deadlock on MariaDB.
        volumes = iter([self.api.create(self.ctxt, 1) for _ in range(20)])
        lock = threading.Lock()
        connector = {'host': 'h1', 'initiator': 'iqn.h1', 'ip': '10.0.0.1',
                     'mountpoint': '/dev/vdb', 'mode': 'rw'}

        def cycle():
            with lock:
                volume = next(volumes)
            attachment = self.api.attachments.create(
                self.ctxt, volume.id, uuidutils.generate_uuid())
            self.api.attachments.update(self.ctxt, attachment.id, connector)
            self.api.attachments.complete(self.ctxt, attachment.id)
            self.api.attachments.delete(self.ctxt, attachment.id)
            return self.api.get(self.ctxt, volume.id).status
        self.assertEqual(['available'] * 20, self._race(cycle))

    def test_concurrent_volume_creates_take_the_last_units_once(self):
        admin = context.get_admin_context()
        volume_quotas.update(admin, 'demo', {'volumes': 5})

        def create():
            try:
                return self.api.create(self.ctxt, 1).status
            except exception.VolumeLimitExceeded:
                return 'over'
        results = self._race(create)
        self.assertEqual(5, len([r for r in results if r != 'over']),
                         results)
        self.assertEqual(15, results.count('over'))
        self.assertEqual(5, volume_quotas.usage(admin, 'demo')['volumes'])

    def test_concurrent_server_creates_take_the_last_units_once(self):
        admin = context.get_admin_context()
        compute_quotas.update(admin, self.conf, 'demo', {'instances': 7})
        flavor = flavors.get('1')

        def insert(index, count):
            with db_api.context_manager.writer.using(self.ctxt) as session:
                session.add(models.Instance(
                    uuid=uuidutils.generate_uuid(), display_name='s',
                    project_id='demo', user_id='demo', flavor_id='1',
                    vm_state='building'))
            return index

        def create():
            try:
                return len(compute_quotas.create_servers(
                    self.ctxt, self.conf, flavor, 1, 2, insert))
            except exception.TooManyInstances:
                return 0
        # Each asks for 1 to 2 servers: 7 units go, never more.
        created = self._race(create)
        self.assertEqual(7, sum(created), created)
        self.assertEqual(7, compute_quotas.usage(admin, 'demo')[
            'instances'])

    def test_concurrent_metadata_writers_lose_no_key(self):
        volume = self.api.create(self.ctxt, 1, metadata={'base': '-'})
        numbers = iter(range(20))
        lock = threading.Lock()

        def add():
            with lock:
                i = next(numbers)
            return self.api.metadata.create(
                self.ctxt, volume.id, {'k%02d' % i: str(i), 'base': str(i)})
        self._race(add)
        metadata = self.api.metadata.get(self.ctxt, volume.id)
        self.assertEqual({'k%02d' % i: str(i) for i in range(20)},
                         {k: v for k, v in metadata.items() if k != 'base'})
        self.assertIn(metadata['base'], [str(i) for i in range(20)])

    def test_if_match_lets_one_of_concurrent_writers_win(self):
        volume = self.api.create(self.ctxt, 1, metadata={'v': '-'})
        etag = vmeta.etag(self.api.metadata.get(self.ctxt, volume.id))
        numbers = iter(range(10))
        lock = threading.Lock()

        def put():
            with lock:
                i = next(numbers)
            try:
                self.api.metadata.update(self.ctxt, volume.id,
                                         {'v': str(i)}, replace=True,
                                         if_match=[etag])
            except exception.MetadataChanged:
                return None
            return i
        won = [i for i in self._race(put, n=10) if i is not None]
        self.assertEqual(1, len(won))
        self.assertEqual({'v': str(won[0])},
                         self.api.metadata.get(self.ctxt, volume.id))

    def test_clones_and_the_delete_of_their_source_at_once(self):
        # Each clone's row is made under the source's row lock, checking
        # its status; the source's delete waits while a clone is
        # creating: no clone loses its source half way (error).
        source = self.api.create(self.ctxt, 1)
        calls = iter(['delete'] + ['clone'] * 9)
        lock = threading.Lock()

        def clone_or_delete():
            with lock:
                call = next(calls)
            try:
                if call == 'delete':
                    return call, self.api.delete(self.ctxt, source.id)
                return call, self.api.create(self.ctxt, None,
                                             source_volid=source.id)
            except (exception.VolumeNotFound, exception.InvalidVolume) as e:
                return call, e
        results = self._race(clone_or_delete, n=10)
        clones = [r for call, r in results if call == 'clone' and
                  not isinstance(r, Exception)]
        [deleted] = [r for call, r in results if call == 'delete']
        self.assertEqual(['available'] * len(clones),
                         [c.status for c in clones])
        if not isinstance(deleted, Exception):
            # The delete won: the source is gone.
            self.assertRaises(exception.VolumeNotFound, self.api.get,
                              self.ctxt, source.id)

    def test_metadata_keys_differing_in_trailing_spaces(self):
        volume = self.api.create(self.ctxt, 1, metadata={'a': '1'})
        if self.BACKEND == 'mysql':
            # MariaDB compares "a" and "a " equal, even in utf8mb4_bin:
            # 400, and nothing changes.
            self.assertRaises(exception.InvalidVolumeMetadata,
                              self.api.metadata.create, self.ctxt,
                              volume.id, {'a ': '2'})
            self.assertRaises(exception.InvalidVolumeMetadata,
                              self.api.create, self.ctxt, 1,
                              metadata={'b': '1', 'b ': '2'})
            self.assertEqual({'a': '1'},
                             self.api.metadata.get(self.ctxt, volume.id))
            self.assertEqual(1, len(self.api.get_all(self.ctxt)))
        else:
            self.assertEqual({'a': '1', 'a ': '2'},
                             self.api.metadata.create(self.ctxt, volume.id,
                                                      {'a ': '2'}))
        # Changed and removed by id, never by key: one key replaces the
        # other on every backend, and only the key named goes.
        self.assertEqual({'a ': '3'}, self.api.metadata.update(
            self.ctxt, volume.id, {'a ': '3'}, replace=True))
        self.assertRaises(exception.VolumeMetadataNotFound,
                          self.api.metadata.delete, self.ctxt, volume.id,
                          'a')
        self.assertEqual({'a ': '3'},
                         self.api.metadata.get(self.ctxt, volume.id))


class TestMySQL(_Contention, testtools.TestCase):
    BACKEND = 'mysql'


class TestPostgreSQL(_Contention, testtools.TestCase):
    BACKEND = 'postgresql'
