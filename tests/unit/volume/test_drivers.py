"""Backends: registration from [volume] enabled_backends, the fake and
file drivers, and placement by type."""

import os
import threading

import fixtures
from oslo_config import cfg
import testtools

from nova_lite import exception
from nova_lite.volume import backends as backend_conf
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import fake
from nova_lite.volume_service.drivers import file as file_driver
from tests.fixtures import conf as conf_fixture

VOLUME = {'id': '8f5a8a1e-5d2a-4b9d-9d56-1b5b9c1f0a11', 'size': 1,
          'host': None, 'provider_location': None, 'multiattach': False}


class BackendsTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf

    def test_default_is_one_file_backend(self):
        backends = drivers.get_backends(self.conf)
        self.assertEqual(['file'], list(backends))
        self.assertIsInstance(backends['file'], file_driver.FileDriver)
        self.assertIs(backends, drivers.get_backends(self.conf))

    def test_named_backends_with_groups(self):
        self.conf.set_override('enabled_backends', ['fake1', 'disk'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'fake', group='fake1')
        self.conf.set_override('volume_driver', 'file', group='disk')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_backend_name', 'gold', group='disk')
        backends = drivers.get_backends(self.conf)
        self.assertIsInstance(backends['fake1'], fake.FakeDriver)
        self.assertIsInstance(backends['disk'], file_driver.FileDriver)
        self.assertEqual('gold', backends['disk'].volume_backend_name)
        self.assertEqual('fake1', backends['fake1'].volume_backend_name)

    def test_cinders_host_at_backend_hash_pool(self):
        self.conf.set_override('enabled_backends', ['fake1', 'disk'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'fake', group='fake1')
        self.conf.set_override('volume_driver', 'file', group='disk')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('backend_host', 'storage', group='disk')
        self.assertEqual('compute1@fake1#fake1',
                         backend_conf.volume_host(self.conf, 'fake1'))
        self.assertEqual('storage@disk#disk',
                         backend_conf.volume_host(self.conf, 'disk'))
        self.assertEqual('fake1', drivers.get_driver(
            self.conf, 'fake1').get_capabilities()['pool_name'])
        # A backend no longer enabled, and a volume no backend took.
        self.assertEqual('compute1@gone#gone',
                         backend_conf.volume_host(self.conf, 'gone'))
        self.assertIsNone(backend_conf.volume_host(self.conf, None))
        for name in ('disk', 'storage@disk#disk', 'storage@disk',
                     'a@b@disk#p'):
            self.assertEqual('disk', backend_conf.backend_of(name))

    def test_unknown_driver(self):
        self.conf.set_override('enabled_backends', ['nope'], group='volume')
        self.assertRaises(exception.NovaLiteException,
                          drivers.get_backends, self.conf)

    def test_unknown_backend_of_a_volume(self):
        self.assertRaises(exception.VolumeBackendAPIException,
                          drivers.get_driver, self.conf, 'gone')

    def test_reported_capabilities_are_cached(self):
        self.conf.set_override('enabled_backends', ['fake1'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'fake', group='fake1')
        driver = drivers.get_driver(self.conf, 'fake1')
        caps = driver.reported_capabilities(60)
        self.assertTrue(caps['multiattach'])
        self.assertEqual('fake', caps['storage_protocol'])
        self.assertIn('updated', caps)
        self.conf.set_override('multiattach', False, group='fake1')
        # Still the cached report...
        self.assertTrue(driver.reported_capabilities(60)['multiattach'])
        # ...until asked again.
        self.assertFalse(driver.reported_capabilities(0)['multiattach'])

    def test_fits(self):
        caps = {'volume_backend_name': 'gold', 'multiattach': False}
        self.assertTrue(backend_conf.fits(caps, {}, False))
        self.assertTrue(backend_conf.fits(
            caps, {'volume_backend_name': 'gold'}, False))
        self.assertFalse(backend_conf.fits(
            caps, {'volume_backend_name': 'x'}, False))
        self.assertFalse(backend_conf.fits(caps, {}, True))

    def test_sample_opts_have_both_drivers(self):
        opts = drivers.sample_opts()
        self.assertIn('connect_delay', [o.name for o in opts['fake']])
        self.assertIn('volumes_dir', [o.name for o in opts['file']])


class FakeDriverTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.conf.set_override('enabled_backends', ['fake1'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'fake', group='fake1')
        self.driver = drivers.get_driver(self.conf, 'fake1')
        # The fake's connection record is per process: a fresh one.
        self.useFixture(fixtures.MockPatchObject(fake, '_CONNECTIONS', {}))
        self.useFixture(fixtures.MockPatchObject(fake, '_SIZES', {}))

    def test_connection_info_from_the_volume_alone(self):
        updates = self.driver.create_volume(VOLUME)
        volume = dict(VOLUME, **updates)
        info = self.driver.initialize_connection(volume, {'mode': 'ro'})
        self.assertEqual('fake', info['driver_volume_type'])
        self.assertEqual('ro', info['data']['access_mode'])
        self.assertEqual(VOLUME['id'], info['data']['volume_id'])
        # Another driver object (another process) gives the same answer.
        other = fake.FakeDriver(self.conf, 'fake1')
        self.assertEqual(info, other.initialize_connection(volume,
                                                           {'mode': 'ro'}))

    def test_extend_and_size(self):
        self.assertIsNone(self.driver.volume_size(VOLUME))
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        self.assertEqual(1, self.driver.volume_size(volume))
        self.driver.extend_volume(volume, 3)
        self.assertEqual(3, self.driver.volume_size(volume))
        self.driver.extend_volume(dict(volume, size=3), 2)   # never shrinks
        self.assertEqual(3, self.driver.volume_size(volume))
        # Another process did not see it: it cannot tell.
        self.useFixture(fixtures.MockPatchObject(fake, '_SIZES', {}))
        self.assertIsNone(self.driver.volume_size(volume))

    def test_fail_extend(self):
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        self.conf.set_override('fail_extend', True, group='fake1')
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.extend_volume, volume, 2)
        self.assertEqual(1, self.driver.volume_size(volume))

    def test_default_mode_is_rw(self):
        info = self.driver.initialize_connection(VOLUME, {})
        self.assertEqual('rw', info['data']['access_mode'])

    def test_fail_connect(self):
        self.conf.set_override('fail_connect', True, group='fake1')
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.initialize_connection, VOLUME, {})
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.terminate_connection, VOLUME, {})

    def test_connect_delay(self):
        slept = []
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.volume_service.drivers.fake.time.sleep', slept.append))
        self.conf.set_override('connect_delay', 0.25, group='fake1')
        self.driver.initialize_connection(VOLUME, {})
        self.driver.terminate_connection(VOLUME, {})
        self.assertEqual([0.25, 0.25], slept)

    def test_capabilities(self):
        self.assertTrue(self.driver.get_capabilities()['multiattach'])
        self.conf.set_override('multiattach', False, group='fake1')
        self.assertFalse(self.driver.get_capabilities()['multiattach'])

    def test_connections_are_recorded_per_host(self):
        self.assertEqual({}, self.driver.connections(VOLUME))
        self.driver.initialize_connection(VOLUME, {'host': 'h1',
                                                   'mode': 'ro'})
        self.driver.initialize_connection(VOLUME, {'host': 'h1'})
        self.driver.initialize_connection(VOLUME, {'host': 'h2'})
        conns = self.driver.connections(VOLUME)
        self.assertEqual(['h1', 'h2'], sorted(conns))
        self.assertEqual(('rw', 2), (conns['h1']['mode'],
                                     conns['h1']['initialized']))
        # Another driver object of the backend sees the same (one process).
        other = fake.FakeDriver(self.conf, 'fake1')
        self.assertEqual(conns, other.connections(VOLUME))
        self.driver.terminate_connection(VOLUME, {'host': 'h1'})
        self.assertEqual(['h2'], sorted(self.driver.connections(VOLUME)))
        self.driver.terminate_connection(VOLUME, {'host': 'h1'})  # again
        # An unknown connector disconnects every host.
        self.driver.initialize_connection(VOLUME, {'host': 'h3'})
        self.driver.terminate_connection(VOLUME, {})
        self.assertEqual({}, self.driver.connections(VOLUME))
        self.driver.initialize_connection(VOLUME, {'host': 'h1'})
        self.driver.delete_volume(VOLUME)
        self.assertEqual({}, self.driver.connections(VOLUME))


class FileDriverTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.driver = drivers.get_driver(self.conf, 'file')

    def test_sparse_file_lifecycle(self):
        updates = self.driver.create_volume(VOLUME)
        path = updates['provider_location']
        self.assertTrue(path.startswith(os.path.abspath(
            self.conf.state_path)))
        st = os.stat(path)
        self.assertEqual(1024 ** 3, st.st_size)
        self.assertLess(st.st_blocks * 512, 1024 ** 2)  # sparse
        volume = dict(VOLUME, **updates)
        info = self.driver.initialize_connection(volume, {'mode': 'ro'})
        self.assertEqual({'driver_volume_type': 'file',
                          'data': {'path': path, 'access_mode': 'ro'}}, info)
        self.driver.terminate_connection(volume, {})
        self.driver.delete_volume(volume)
        self.assertFalse(os.path.exists(path))
        self.driver.delete_volume(volume)  # already gone: fine

    def test_extend_grows_the_sparse_file(self):
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        self.assertEqual(1, self.driver.volume_size(volume))
        self.driver.extend_volume(volume, 4)
        st = os.stat(volume['provider_location'])
        self.assertEqual(4 * 1024 ** 3, st.st_size)
        self.assertLess(st.st_blocks * 512, 1024 ** 2)  # still sparse
        self.assertEqual(4, self.driver.volume_size(volume))
        self.driver.extend_volume(dict(volume, size=4), 2)  # never shrinks
        self.assertEqual(4, self.driver.volume_size(volume))
        self.driver.delete_volume(volume)
        self.assertIsNone(self.driver.volume_size(volume))
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.extend_volume, volume, 5)

    def test_connections_are_recorded_beside_the_file(self):
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        self.driver.initialize_connection(
            volume, {'host': 'compute/1', 'mode': 'ro'})
        self.driver.initialize_connection(volume, {'host': 'compute/1'})
        self.driver.initialize_connection(volume, {'host': 'h2',
                                                   'mode': 'ro'})
        # Another process sharing the directory sees the record.
        other = file_driver.FileDriver(self.conf, 'file')
        conns = other.connections(volume)
        self.assertEqual(['compute/1', 'h2'], sorted(conns))
        self.assertEqual({'host': 'compute/1', 'mode': 'rw',
                          'initialized': 2,
                          'connector': {'host': 'compute/1'}},
                         conns['compute/1'])
        self.assertEqual('ro', conns['h2']['mode'])
        self.driver.terminate_connection(volume, {'host': 'compute/1'})
        self.assertEqual(['h2'], sorted(self.driver.connections(volume)))
        self.driver.delete_volume(volume)
        self.assertEqual({}, self.driver.connections(volume))
        self.assertFalse(os.path.exists(os.path.join(
            os.path.dirname(volume['provider_location']), 'connections',
            'volume-%s' % VOLUME['id'])))

    def test_reconnect_after_the_last_disconnect(self):
        # The records' directory outlives its last record (no directory
        # made and removed per attach and detach); a new connection counts
        # from one; deleting the volume removes the directory.
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        where = os.path.dirname(self.driver._host_file(volume, 'h1'))
        for _ in range(2):
            self.driver.initialize_connection(volume, {'host': 'h1'})
            self.assertEqual(1, self.driver.connections(volume)['h1'][
                'initialized'])
            self.driver.terminate_connection(volume, {'host': 'h1'})
            self.assertEqual({}, self.driver.connections(volume))
            self.assertEqual([], os.listdir(where))
        self.driver.delete_volume(volume)
        self.assertFalse(os.path.exists(where))

    def test_host_names_too_long_for_a_file_name(self):
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        hosts = ['h' * 250, '\u00e9' * 255, '%' * 100]
        for host in hosts:
            self.driver.initialize_connection(volume, {'host': host})
        where = os.path.dirname(self.driver._host_file(volume, 'h'))
        names = os.listdir(where)
        self.assertEqual(3, len(names))
        self.assertTrue(all(len(n.encode()) <= 255 for n in names), names)
        self.assertEqual(sorted(hosts),
                         sorted(self.driver.connections(volume)))
        for host in hosts:
            self.driver.terminate_connection(volume, {'host': host})
        self.assertEqual([], os.listdir(where))

    def test_unreadable_record_is_replaced(self):
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        self.driver.initialize_connection(volume, {'host': 'h1'})
        with open(self.driver._host_file(volume, 'h1'), 'w') as f:
            f.write('{"initialized": ')
        self.driver.initialize_connection(volume, {'host': 'h1'})
        self.assertEqual(1, self.driver.connections(volume)['h1'][
            'initialized'])

    def test_concurrent_connections_of_one_host(self):
        # A multi-create connects one multiattach volume for several
        # servers of one host at once: every connect is recorded, none
        # fails on another's temporary file.
        volume = dict(VOLUME, **self.driver.create_volume(VOLUME))
        errors = []
        start = threading.Barrier(8)

        def connect():
            start.wait()
            try:
                for _ in range(10):
                    self.driver.initialize_connection(
                        volume, {'host': 'h1', 'mode': 'ro'})
            except Exception as e:
                errors.append(e)
        threads = [threading.Thread(target=connect) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual([], errors)
        self.assertEqual(80, self.driver.connections(volume)['h1'][
            'initialized'])
        where = os.path.dirname(self.driver._host_file(volume, 'h1'))
        self.assertEqual([], [n for n in os.listdir(where)
                              if n.endswith('.tmp')])

    def test_connect_missing_file(self):
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.initialize_connection, VOLUME, {})

    def test_volumes_dir_option(self):
        where = self.useFixture(fixtures.TempDir()).path
        self.conf.set_override('volumes_dir', where, group='file')
        updates = self.driver.create_volume(VOLUME)
        self.assertEqual(os.path.join(where, 'volume-%s' % VOLUME['id']),
                         updates['provider_location'])
        self.assertTrue(self.driver.get_capabilities()['multiattach'])

    def test_clone_copies_the_data_into_a_larger_sparse_file(self):
        source = dict(VOLUME, **self.driver.create_volume(VOLUME))
        with open(source['provider_location'], 'r+b') as f:
            f.seek(4096)
            f.write(b'source bytes')
            f.seek(1024 ** 3 - 3)
            f.write(b'end')
        clone_id = '0d2f6c2e-6a43-4d58-9a6e-1c6ad7a6a0b1'
        beats = []
        updates = self.driver.create_cloned_volume(
            dict(VOLUME, id=clone_id, size=2), source,
            progress=lambda: beats.append(1))
        path = updates['provider_location']
        self.assertEqual('volume-%s' % clone_id, os.path.basename(path))
        st = os.stat(path)
        self.assertEqual(2 * 1024 ** 3, st.st_size)
        self.assertLess(st.st_blocks * 512, 1024 ** 2)  # holes stay holes
        with open(path, 'rb') as f:
            f.seek(4096)
            self.assertEqual(b'source bytes', f.read(12))
            f.seek(1024 ** 3 - 3)
            self.assertEqual(b'end' + b'\0' * 8, f.read(11))
        self.assertTrue(beats)
        # The source is left as it was.
        with open(source['provider_location'], 'rb') as f:
            f.seek(4096)
            self.assertEqual(b'source bytes', f.read(12))

    def test_failed_clone_leaves_no_storage(self):
        source = dict(VOLUME, **self.driver.create_volume(VOLUME))
        clone = dict(VOLUME, id='0d2f6c2e-6a43-4d58-9a6e-1c6ad7a6a0b1')

        def stop():
            raise exception.InvalidVolume(reason='settled meanwhile')
        with open(source['provider_location'], 'r+b') as f:
            f.write(b'data')
        self.assertRaises(exception.InvalidVolume,
                          self.driver.create_cloned_volume, clone, source,
                          progress=stop)
        self.assertEqual(['volume-%s' % VOLUME['id']], sorted(
            n for n in os.listdir(os.path.dirname(
                source['provider_location'])) if n.startswith('volume-')))
        # A source with no storage: the clone fails, nothing is left.
        self.driver.delete_volume(source)
        self.assertRaises(FileNotFoundError,
                          self.driver.create_cloned_volume, clone, source)
        self.assertIsNone(self.driver.volume_size(clone))


class FakeCloneTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.conf.set_override('enabled_backends', ['fake1'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'fake', group='fake1')
        self.driver = drivers.get_driver(self.conf, 'fake1')
        self.useFixture(fixtures.MockPatchObject(fake, '_SIZES', {}))

    def test_a_clone_is_a_create(self):
        self.driver.create_volume(VOLUME)
        clone = dict(VOLUME, id='0d2f6c2e-6a43-4d58-9a6e-1c6ad7a6a0b1',
                     size=3)
        updates = self.driver.create_cloned_volume(clone, VOLUME)
        self.assertEqual('fake://fake1/%s' % clone['id'],
                         updates['provider_location'])
        self.assertEqual(3, self.driver.volume_size(clone))


class ConfigGroupTest(testtools.TestCase):
    def test_register_is_idempotent_and_late(self):
        conf = cfg.ConfigOpts()
        conf_fixture.config.prepare(conf)
        conf([], default_config_files=[])
        conf.set_override('enabled_backends', ['fake'], group='volume')
        drivers.register_backend_opts(conf)
        drivers.register_backend_opts(conf)
        self.assertEqual(0.0, conf.fake.connect_delay)
        self.assertIsNone(conf.fake.volume_driver)
