"""The ``rbd`` backend with the Ceph bindings replaced at the boundary.

``FakeCeph`` stands for a cluster as the ``rados``/``rbd`` modules show
it: images (size, features, data, snapshots, watchers), cephx users, the
monitors' session lists (the JSON of Ceph 16.2's ``sessions``), the
blocklist and the OSD map epoch. It can be down (every call times out)
or have its OSDs down (image calls time out). The real cluster's
behaviour is tested in ``tests/functional/volume/test_rbd_backend.py``.
"""

import errno
import json
import os
import types
import uuid

import fixtures
import testtools

from nova_lite import exception
from nova_lite import utils
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import base
from nova_lite.volume_service.drivers import rbd as rbd_driver
from tests.fixtures import conf as conf_fixture

GiB = 1024 ** 3
VOLUME = {'id': '8f5a8a1e-5d2a-4b9d-9d56-1b5b9c1f0a11', 'size': 1,
          'host': 'ceph1', 'provider_location': None, 'multiattach': False,
          'name_id': None}
IMAGE = 'volume-' + VOLUME['id']
FSID = 'c0ffee00-0000-4000-8000-000000000001'
H1 = {'host': 'compute1', 'ip': '192.0.2.1'}
H2 = {'host': 'compute2', 'ip': '192.0.2.2'}


class Error(Exception):
    def __init__(self, message='', errno=None):
        super().__init__(message)
        self.errno = errno


def _errors(*names):
    return {name: type(name, (Error,), {}) for name in names}


class FakeImageRecord(object):
    def __init__(self, size, features):
        self.size = size
        self.features = features
        self.data = {}      # offset -> bytes
        self.snaps = []
        self.snap_data = {}     # snapshot -> its data
        self.protected = set()
        self.parent = None      # (image, snapshot) of a clone
        self.watchers = []  # {'addr', 'id', 'cookie'}

    def all_data(self, images):
        """The data the image reads: its parent snapshot's under its own."""
        data = {}
        if self.parent is not None:
            data.update(images[self.parent[0]].snap_data[self.parent[1]])
        data.update(self.data)
        return data


class FakeSnapshots(object):
    """The snapshot and clone calls of the fake ``rbd.Image`` (librbd's
    errors: a protected snapshot, or one with clones, is busy)."""

    def _name(self):
        return [n for n, r in self._ceph.images.items()
                if r is self.record][0]

    def list_snaps(self):
        return iter([{'id': i, 'name': n, 'size': self.record.size}
                     for i, n in enumerate(self.record.snaps)])

    def create_snap(self, name):
        assert not self.read_only
        self.record.snaps.append(name)
        self.record.snap_data[name] = self.record.all_data(
            self._ceph.images)

    def protect_snap(self, name):
        self.record.protected.add(name)

    def is_protected_snap(self, name):
        if name not in self.record.snaps:
            raise self._ceph.rbd.ImageNotFound(name)
        return name in self.record.protected

    def unprotect_snap(self, name):
        if self._ceph.children(self._name(), name):
            raise self._ceph.rbd.ImageBusy(name)
        self.record.protected.discard(name)

    def remove_snap(self, name):
        if name in self.record.protected:
            raise self._ceph.rbd.ImageBusy(name)
        self.record.snaps.remove(name)
        self.record.snap_data.pop(name, None)

    def get_parent_image_spec(self):
        if self.record.parent is None:
            raise self._ceph.rbd.ImageNotFound('no parent')
        return {'pool_name': 'volumes', 'pool_namespace': '',
                'image_name': self.record.parent[0],
                'image_id': 'id', 'snap_name': self.record.parent[1],
                'snap_namespace_type': 0, 'snap_id': 1}

    def flatten(self, on_progress=None):
        self.record.data = self.record.all_data(self._ceph.images)
        self.record.parent = None
        if on_progress is not None:
            on_progress(1, 1)


class FakeCeph(object):
    """A cluster; ``rados``/``rbd`` are modules as the driver uses them."""

    def __init__(self):
        self.images = {}
        self.auth = {}
        self.sessions = {'a': [], 'b': []}
        self.blocklist = []
        self.epoch = 20
        self.down = False
        self.osds_down = False
        self.quota = 0
        self.clients = []
        self.commands = []
        self.rados = types.SimpleNamespace(
            Rados=self._rados_class(), Error=Error,
            **_errors('TimedOut', 'ObjectNotFound'))
        self.rados.Rados.DEFAULT_CONF_FILES = -2
        self.rbd = types.SimpleNamespace(
            RBD=self._rbd_class(), Image=self._image_class(), Error=Error,
            **_errors('ImageNotFound', 'ImageExists', 'ImageBusy',
                      'ImageHasSnapshots', 'Timeout'))

    def timed_out(self, module):
        return module.Error('[errno 110] Connection timed out',
                            errno=errno.ETIMEDOUT)

    def session(self, mon, global_id, entity, nonce):
        """A client session of Ceph 16.2's ``sessions`` on ``mon``."""
        self.sessions[mon].append({
            'name': 'client.?', 'entity_name': entity,
            'addrs': {'addrvec': [{'type': 'any', 'addr': '192.0.2.9:0',
                                   'nonce': nonce}]},
            'con_type': 'client', 'open': True, 'authenticated': True,
            'global_id': global_id, 'global_id_status': 'new_ok'})

    def watch(self, image, global_id, nonce, ip='192.0.2.9'):
        self.images[image].watchers.append({
            'addr': '%s:0/%d' % (ip, nonce), 'id': global_id,
            'cookie': 94000000 + global_id})

    # -- rados ------------------------------------------------------------
    def _rados_class(self):
        ceph = self

        class Rados(object):
            def __init__(self, rados_id=None, clustername=None,
                         conffile=None, conf=None):
                self.rados_id = rados_id
                self.conffile = conffile
                self.conf = dict(conf or {})
                self.connected = False
                self.shut_down = False
                ceph.clients.append(self)

            def connect(self):
                if ceph.down:
                    raise ceph.timed_out(ceph.rados)
                self.connected = True

            def shutdown(self):
                self.shut_down = True

            def conf_get(self, name):
                return {'rbd_default_features': '61'}.get(
                    name, self.conf.get(name))

            def open_ioctx(self, pool):
                assert self.connected
                return types.SimpleNamespace(pool=pool, cluster=self,
                                             close=lambda: None)

            def get_fsid(self):
                return FSID

            def get_instance_id(self):
                return 4100

            def mon_command(self, cmd, inbuf, timeout=0, target=None):
                return ceph.mon_command(cmd, target)

            def osd_command(self, osd, cmd, inbuf, timeout=0):
                return 0, ('{"whoami": %d, "newest_map": %d}' % (
                    osd, ceph.epoch)).encode(), ''
        return Rados

    def mon_command(self, cmd, target):
        cmd = json.loads(cmd)
        self.commands.append(cmd)
        prefix = cmd['prefix']
        if prefix == 'mon dump':
            mons = [{'rank': i, 'name': name, 'public_addrs': {'addrvec': [
                {'type': 'v2', 'addr': '192.0.2.%d:3300' % (10 + i),
                 'nonce': 0},
                {'type': 'v1', 'addr': '192.0.2.%d:6789' % (10 + i),
                 'nonce': 0}]}, 'addr': '192.0.2.%d:6789/0' % (10 + i)}
                for i, name in enumerate(sorted(self.sessions))]
            return 0, json.dumps({'epoch': 1, 'mons': mons}).encode(), ''
        if prefix == 'auth get-or-create':
            entity = cmd['entity']
            caps = dict(zip(cmd['caps'][::2], cmd['caps'][1::2]))
            known = self.auth.get(entity)
            if known and known['caps'] != caps:
                return -errno.EINVAL, b'', (
                    'key for %s exists but cap osd does not match' % entity)
            if not known:
                self.auth[entity] = known = {
                    'entity': entity, 'caps': caps,
                    'key': 'AQ%s==' % uuid.uuid4().hex}
            return 0, json.dumps([known]).encode(), ''
        if prefix == 'auth get':
            return 0, json.dumps([self.auth[cmd['entity']]]).encode(), ''
        if prefix == 'sessions':
            return 0, json.dumps(self.sessions[target]).encode(), ''
        if prefix == 'osd blocklist':
            self.blocklist.append((cmd['addr'], cmd['expire']))
            self.epoch += 1
            return 0, b'', 'blocklisting %s' % cmd['addr']
        if prefix == 'osd stat':
            return 0, json.dumps({'epoch': self.epoch}).encode(), ''
        if prefix == 'osd dump':
            return 0, json.dumps({'epoch': self.epoch, 'osds': [
                {'osd': 0, 'up': 1}, {'osd': 1, 'up': 0}]}).encode(), ''
        if prefix == 'df':
            return 0, json.dumps({
                'stats': {'total_bytes': 100 * GiB},
                'pools': [{'name': 'volumes', 'stats': {
                    'stored': 3 * GiB, 'max_avail': 40 * GiB}}]}).encode(), ''
        if prefix == 'osd pool get-quota':
            return 0, json.dumps({'quota_max_bytes': self.quota}).encode(), ''
        return -errno.EINVAL, b'', 'unknown command'

    # -- rbd --------------------------------------------------------------
    def _check_osds(self):
        if self.osds_down:
            raise self.timed_out(self.rbd)

    def _rbd_class(self):
        ceph = self

        class RBD(object):
            def create(self, ioctx, name, size, old_format=True,
                       features=None):
                ceph._check_osds()
                if name in ceph.images:
                    raise ceph.rbd.ImageExists(name)
                ceph.images[name] = FakeImageRecord(size, features)

            def remove(self, ioctx, name):
                ceph._check_osds()
                record = ceph.images.get(name)
                if record is None:
                    raise ceph.rbd.ImageNotFound(name)
                if record.snaps:
                    raise ceph.rbd.ImageHasSnapshots(name)
                if record.watchers:
                    raise ceph.rbd.ImageBusy(name)
                del ceph.images[name]

            def clone(self, p_ioctx, p_name, p_snapname, c_ioctx, c_name,
                      features=None):
                ceph._check_osds()
                parent = ceph.images[p_name]
                assert p_snapname in parent.protected
                if c_name in ceph.images:
                    raise ceph.rbd.ImageExists(c_name)
                record = FakeImageRecord(parent.size, features)
                record.parent = (p_name, p_snapname)
                ceph.images[c_name] = record

            def rename(self, ioctx, src, dest):
                ceph.images[dest] = ceph.images.pop(src)
                for record in ceph.images.values():
                    if record.parent and record.parent[0] == src:
                        record.parent = (dest, record.parent[1])
        return RBD

    def children(self, name, snap):
        return [n for n, r in self.images.items()
                if r.parent == (name, snap)]

    def _image_class(self):
        ceph = self

        class Image(FakeSnapshots):
            def __init__(self, ioctx, name, read_only=False):
                self._ceph = ceph
                ceph._check_osds()
                if name not in ceph.images:
                    raise ceph.rbd.ImageNotFound(name)
                self.record = ceph.images[name]
                self.read_only = read_only

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.close()

            def close(self):
                pass

            def size(self):
                return self.record.size

            def resize(self, size):
                self.record.size = size

            def watchers_list(self):
                return iter(list(self.record.watchers))

            def write(self, data, offset):
                assert not self.read_only
                self.record.data[offset] = bytes(data)
                return len(data)

            def read(self, offset, length):
                out = bytearray(length)
                for start, data in self.record.all_data(
                        ceph.images).items():
                    for i, byte in enumerate(data):
                        if offset <= start + i < offset + length:
                            out[start + i - offset] = byte
                return bytes(out)

            def flush(self):
                pass

            def diff_iterate(self, offset, length, from_snapshot, cb):
                for start, data in sorted(
                        self.record.all_data(ceph.images).items()):
                    cb(start, len(data), True)

        return Image


class RBDTestCase(testtools.TestCase):
    CONF = {}

    def setUp(self):
        super().setUp()
        self.ceph = FakeCeph()
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.volume_service.drivers.rbd.rados', self.ceph.rados))
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.volume_service.drivers.rbd.rbd', self.ceph.rbd))
        overrides = {'volume.enabled_backends': ['ceph1'],
                     'ceph1.volume_driver': 'rbd',
                     'ceph1.rbd_user': 'cinder'}
        overrides.update(self.CONF)
        self.conf = self.useFixture(conf_fixture.ConfFixture(
            **overrides)).conf
        self.driver = drivers.get_driver(self.conf, 'ceph1')

    def volume(self, **fields):
        return dict(VOLUME, **fields)

    def assert_clients_closed(self):
        self.assertTrue(self.ceph.clients)
        self.assertEqual([], [c for c in self.ceph.clients
                              if not c.shut_down])


class VolumesTest(RBDTestCase):

    def test_create_with_default_features(self):
        self.assertEqual({}, self.driver.create_volume(self.volume(size=2)))
        record = self.ceph.images[IMAGE]
        self.assertEqual(2 * GiB, record.size)
        self.assertEqual(61, record.features)
        self.assert_clients_closed()
        client = self.ceph.clients[0]
        self.assertEqual('cinder', client.rados_id)
        self.assertEqual({'client_mount_timeout': '10',
                          'rados_mon_op_timeout': '10',
                          'rados_osd_op_timeout': '10'}, client.conf)

    def test_multiattach_image_has_no_single_writer_features(self):
        self.driver.create_volume(self.volume(multiattach=True))
        features = self.ceph.images[IMAGE].features
        self.assertEqual(61 & ~(4 | 8 | 16 | 64), features)
        self.assertEqual(1, features & 1)     # layering stays

    def test_storage_named_by_name_id(self):
        other = '11111111-2222-4333-8444-555555555555'
        self.driver.create_volume(self.volume(name_id=other))
        self.assertEqual(['volume-' + other], list(self.ceph.images))

    def test_create_existing_image_refused(self):
        self.driver.create_volume(self.volume())
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.create_volume, self.volume())

    def test_delete_and_delete_again(self):
        self.driver.create_volume(self.volume())
        self.driver.delete_volume(self.volume())
        self.assertEqual({}, self.ceph.images)
        self.driver.delete_volume(self.volume())
        self.assert_clients_closed()

    def test_delete_refused_with_snapshots(self):
        self.driver.create_volume(self.volume())
        self.ceph.images[IMAGE].snaps.append('s1')
        error = self.assertRaises(exception.VolumeBackendAPIException,
                                  self.driver.delete_volume, self.volume())
        self.assertIn('busy: it has snapshots', str(error))
        self.assertIn(IMAGE, self.ceph.images)

    def test_delete_refused_while_open(self):
        self.driver.create_volume(self.volume())
        self.ceph.watch(IMAGE, 4242, 777)
        error = self.assertRaises(exception.VolumeBackendAPIException,
                                  self.driver.delete_volume, self.volume())
        self.assertIn('busy: open by 192.0.2.9:0/777', str(error))
        self.assertIn(IMAGE, self.ceph.images)

    def test_extend_grows_only(self):
        self.driver.create_volume(self.volume())
        self.driver.extend_volume(self.volume(), 3)
        self.assertEqual(3, self.driver.volume_size(self.volume()))
        # Asked again (settling), or with a smaller size: nothing changes.
        self.driver.extend_volume(self.volume(size=3), 3)
        self.driver.extend_volume(self.volume(size=3), 2)
        self.assertEqual(3 * GiB, self.ceph.images[IMAGE].size)

    def test_volume_size_of_missing_image(self):
        self.assertIsNone(self.driver.volume_size(self.volume()))

    def test_capabilities(self):
        caps = self.driver.get_capabilities()
        self.assertEqual('ceph', caps['storage_protocol'])
        self.assertTrue(caps['multiattach'])
        self.assertEqual(40.0, caps['free_capacity_gb'])
        self.assertEqual(43.0, caps['total_capacity_gb'])
        self.assertEqual('up', caps['backend_state'])
        self.ceph.quota = 10 * GiB
        caps = self.driver.get_capabilities()
        self.assertEqual(7.0, caps['free_capacity_gb'])
        self.assertEqual(10.0, caps['total_capacity_gb'])

    def test_capabilities_of_a_cluster_down(self):
        self.ceph.down = True
        caps = self.driver.get_capabilities()
        self.assertEqual('unknown', caps['total_capacity_gb'])
        self.assertEqual('down', caps['backend_state'])
        self.assertTrue(caps['multiattach'])

    def test_no_connections_recorded(self):
        self.assertEqual({}, self.driver.connections(self.volume()))


CLONE = dict(VOLUME, id='0d2f6c2e-6a43-4d58-9a6e-1c6ad7a6a0b1', size=2)
CLONE_IMAGE = 'volume-' + CLONE['id']
SNAP = CLONE_IMAGE + '.clone_snap'


class CloneTest(RBDTestCase):

    def setUp(self):
        super().setUp()
        self.driver.create_volume(self.volume())
        self.ceph.images[IMAGE].data[4096] = b'source bytes'

    def read(self, image, offset=4096, length=12):
        name = IMAGE if image is None else image
        with self.driver.open_volume(self.volume(), 'r') if image is None \
                else rbd_driver.RBDVolumeFile(self.driver, name, 'r') as f:
            f.seek(offset)
            return f.read(length)

    def test_clone_of_a_protected_snapshot_named_after_it(self):
        self.assertEqual({}, self.driver.create_cloned_volume(
            CLONE, self.volume()))
        source = self.ceph.images[IMAGE]
        self.assertEqual([SNAP], source.snaps)
        self.assertEqual({SNAP}, source.protected)
        clone = self.ceph.images[CLONE_IMAGE]
        self.assertEqual((IMAGE, SNAP), clone.parent)
        self.assertEqual(2 * GiB, clone.size)     # grown to its size
        self.assertEqual(61, clone.features)
        self.assertEqual(b'source bytes', self.read(CLONE_IMAGE))
        # A write to the source after the clone is not the clone's.
        source.data[4096] = b'SOURCE BYTES'
        self.assertEqual(b'source bytes', self.read(CLONE_IMAGE))
        self.assert_clients_closed()

    def test_multiattach_clone_has_no_single_writer_features(self):
        self.driver.create_cloned_volume(dict(CLONE, multiattach=True),
                                         self.volume())
        self.assertEqual(61 & ~(4 | 8 | 16 | 64),
                         self.ceph.images[CLONE_IMAGE].features)

    def test_deep_clone_is_flattened(self):
        # volume -> c1 -> c2 ... each a clone of the one before.
        self.conf.set_override('rbd_max_clone_depth', 2, group='ceph1')
        ids = ['00000000-0000-4000-8000-00000000000%d' % i
               for i in range(1, 4)]
        source = self.volume()
        for each in ids:
            clone = dict(VOLUME, id=each)
            self.driver.create_cloned_volume(clone, source)
            source = clone
        first, second, third = ('volume-' + i for i in ids)
        self.assertEqual((IMAGE, first + '.clone_snap'),
                         self.ceph.images[first].parent)
        self.assertEqual((first, second + '.clone_snap'),
                         self.ceph.images[second].parent)
        # The third would be 3 deep: flattened, its snapshot gone.
        self.assertIsNone(self.ceph.images[third].parent)
        self.assertEqual([], self.ceph.images[second].snaps)
        self.assertEqual(b'source bytes', self.read(third))

    def test_full_copy_when_max_depth_is_zero(self):
        self.conf.set_override('rbd_max_clone_depth', 0, group='ceph1')
        self.driver.create_cloned_volume(CLONE, self.volume())
        self.assertEqual([], self.ceph.images[IMAGE].snaps)
        clone = self.ceph.images[CLONE_IMAGE]
        self.assertIsNone(clone.parent)
        self.assertEqual(2 * GiB, clone.size)
        self.assertEqual(b'source bytes', self.read(CLONE_IMAGE))

    def test_failed_clone_releases_its_snapshot(self):
        # The clone's image exists (made by hand): librbd refuses.
        self.ceph.images[CLONE_IMAGE] = existing = FakeImageRecord(GiB, 61)
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.create_cloned_volume, CLONE,
                          self.volume())
        self.assertEqual([], self.ceph.images[IMAGE].snaps)
        self.assertIsNone(existing.parent)

    def test_flatten_progress_error_is_raised(self):
        # The second clone is 2 deep: flattened, the clone's heartbeat
        # beaten meanwhile.
        self.conf.set_override('rbd_max_clone_depth', 1, group='ceph1')
        self.driver.create_cloned_volume(dict(VOLUME, id=CLONE['id']),
                                         self.volume())

        def stop():
            raise exception.InvalidVolume(reason='settled meanwhile')
        grandchild = dict(VOLUME, id='00000000-0000-4000-8000-000000000009')
        self.assertRaises(exception.InvalidVolume,
                          self.driver.create_cloned_volume, grandchild,
                          dict(VOLUME, id=CLONE['id']), progress=stop)

    def test_delete_of_a_source_with_a_clone_hides_it(self):
        self.driver.create_cloned_volume(CLONE, self.volume())
        self.driver.delete_volume(self.volume())
        self.assertNotIn(IMAGE, self.ceph.images)
        self.assertIn(IMAGE + '.deleted', self.ceph.images)
        self.assertEqual(b'source bytes', self.read(CLONE_IMAGE))
        # The last clone's delete takes the hidden image with it.
        self.driver.delete_volume(CLONE)
        self.assertEqual({}, self.ceph.images)
        self.assert_clients_closed()

    def test_delete_of_a_clone_releases_its_snapshot_only(self):
        self.driver.create_cloned_volume(CLONE, self.volume())
        other = dict(VOLUME, id='00000000-0000-4000-8000-000000000009')
        self.driver.create_cloned_volume(other, self.volume())
        self.driver.delete_volume(CLONE)
        self.assertNotIn(CLONE_IMAGE, self.ceph.images)
        self.assertEqual(['volume-%s.clone_snap' % other['id']],
                         self.ceph.images[IMAGE].snaps)
        self.driver.delete_volume(self.volume())      # hidden: a clone left
        self.driver.delete_volume(other)
        self.assertEqual({}, self.ceph.images)

    def test_chain_of_deleted_parents_removed_with_the_last_clone(self):
        self.driver.create_cloned_volume(CLONE, self.volume())
        grandchild = dict(VOLUME, id='00000000-0000-4000-8000-000000000009')
        self.driver.create_cloned_volume(grandchild, CLONE)
        self.driver.delete_volume(self.volume())
        self.driver.delete_volume(CLONE)
        self.assertEqual({IMAGE + '.deleted', CLONE_IMAGE + '.deleted',
                          'volume-' + grandchild['id']},
                         set(self.ceph.images))
        self.driver.delete_volume(grandchild)
        self.assertEqual({}, self.ceph.images)

    def test_delete_drops_snapshots_no_clone_uses(self):
        # A process died between the snapshot and the clone.
        image = self.ceph.images[IMAGE]
        image.snaps.append(SNAP)
        image.snap_data[SNAP] = {}
        image.protected.add(SNAP)
        self.driver.delete_volume(self.volume())
        self.assertEqual({}, self.ceph.images)

    def test_other_snapshots_still_refuse_the_delete(self):
        self.driver.create_cloned_volume(CLONE, self.volume())
        self.ceph.images[IMAGE].snaps.append('s1')
        self.assertRaises(exception.VolumeIsBusy,
                          self.driver.delete_volume, self.volume())
        self.assertIn(IMAGE, self.ceph.images)

    def test_clone_asked_again_reuses_its_snapshot(self):
        # A clone's snapshot made by a process that died before cloning.
        image = self.ceph.images[IMAGE]
        image.snaps.append(SNAP)
        image.snap_data[SNAP] = dict(image.data)
        self.driver.create_cloned_volume(CLONE, self.volume())
        self.assertEqual([SNAP], image.snaps)
        self.assertEqual({SNAP}, image.protected)


class OutageTest(RBDTestCase):
    CONF = {'ceph1.rados_connect_timeout': 7}

    def test_cluster_down(self):
        self.ceph.down = True
        for call, args in ((self.driver.create_volume, ()),
                           (self.driver.delete_volume, ()),
                           (self.driver.extend_volume, (2,)),
                           (self.driver.initialize_connection, (H1,)),
                           (self.driver.terminate_connection, (H1,))):
            error = self.assertRaises(exception.VolumeBackendAPIException,
                                      call, self.volume(), *args)
            self.assertIn('Ceph cluster ceph (pool volumes)', str(error))
            self.assertIn('timed out after 7s', str(error))
        self.assertEqual('7', self.ceph.clients[0].conf[
            'rados_osd_op_timeout'])
        self.assert_clients_closed()

    def test_osds_down(self):
        self.driver.create_volume(self.volume())
        self.ceph.osds_down = True
        error = self.assertRaises(exception.VolumeBackendAPIException,
                                  self.driver.extend_volume, self.volume(),
                                  2)
        self.assertIn('extending image %s timed out after 7s' % IMAGE,
                      str(error))
        self.assert_clients_closed()

    def test_without_bindings(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.volume_service.drivers.rbd.rados', None))
        error = self.assertRaises(exception.VolumeBackendAPIException,
                                  self.driver.create_volume, self.volume())
        self.assertIn('bindings of Ceph', str(error))


class PerHostIdentityTest(RBDTestCase):

    def setUp(self):
        super().setUp()
        self.driver.create_volume(self.volume())

    def test_connection_info(self):
        info = self.driver.initialize_connection(self.volume(), H1)
        entity = 'client.nova-lite.compute1'
        key = self.ceph.auth[entity]['key']
        self.assertEqual({'mon': 'profile rbd',
                          'osd': 'profile rbd pool=volumes'},
                         self.ceph.auth[entity]['caps'])
        self.assertEqual({
            'driver_volume_type': 'rbd',
            'data': {
                'name': 'volumes/' + IMAGE,
                'hosts': ['192.0.2.10', '192.0.2.11'],
                'ports': ['6789', '6789'],
                'cluster_name': 'ceph',
                'auth_enabled': True,
                'auth_username': 'nova-lite.compute1',
                'secret_type': 'ceph',
                'secret_uuid': str(uuid.uuid5(
                    rbd_driver.SECRET_NAMESPACE, FSID + '/' + entity)),
                'keyring': '[%s]\n\tkey = %s\n' % (entity, key),
                'volume_id': VOLUME['id'],
                'discard': True,
                'access_mode': 'rw',
                'encrypted': False,
                'qos_specs': None,
            }}, info)
        # Again (a second attachment): the same identity and secret.
        again = self.driver.initialize_connection(
            self.volume(), dict(H1, mode='ro'))
        self.assertEqual('ro', again['data']['access_mode'])
        self.assertEqual(info['data']['keyring'], again['data']['keyring'])
        self.assertEqual(info['data']['secret_uuid'],
                         again['data']['secret_uuid'])
        other = self.driver.initialize_connection(self.volume(), H2)
        self.assertNotEqual(info['data']['secret_uuid'],
                            other['data']['secret_uuid'])
        self.assertEqual({entity, 'client.nova-lite.compute2'},
                         set(self.ceph.auth))
        self.assert_clients_closed()

    def test_identity_with_other_caps_is_kept(self):
        entity = 'client.nova-lite.compute1'
        self.ceph.auth[entity] = {'entity': entity, 'key': 'AQold==',
                                  'caps': {'mon': 'allow r'}}
        info = self.driver.initialize_connection(self.volume(), H1)
        self.assertIn('key = AQold==', info['data']['keyring'])

    def test_odd_host_names_get_a_digest(self):
        info = self.driver.initialize_connection(
            self.volume(), {'host': 'a b/c'})
        self.assertRegex(info['data']['auth_username'],
                         r'^nova-lite\.sha256-[0-9a-f]{32}$')

    def test_missing_image(self):
        error = self.assertRaises(
            exception.VolumeBackendAPIException,
            self.driver.initialize_connection,
            self.volume(id='00000000-0000-4000-8000-000000000000'), H1)
        self.assertIn('does not exist', str(error))

    def test_terminate_blocklists_the_hosts_clients_only(self):
        # compute1's QEMU (session on mon b), compute2's (on mon a), and
        # one whose session no monitor lists.
        self.ceph.session('b', 501, 'client.nova-lite.compute1', 11)
        self.ceph.session('a', 502, 'client.nova-lite.compute2', 12)
        self.ceph.watch(IMAGE, 501, 11)
        self.ceph.watch(IMAGE, 502, 12)
        self.ceph.watch(IMAGE, 503, 13)
        epoch = self.ceph.epoch
        with fixtures.FakeLogger(
                name='nova_lite.volume_service.drivers.rbd') as log:
            self.driver.terminate_connection(self.volume(), H1)
        self.assertEqual([('192.0.2.9:0/11', 365 * 24 * 3600.0)],
                         self.ceph.blocklist)
        self.assertEqual(epoch + 1, self.ceph.epoch)
        self.assertIn('Blocklisted client 192.0.2.9:0/11', log.output)
        self.assertIn('192.0.2.9:0/13 (client.503) has no monitor session',
                      log.output)

    def test_terminate_matches_by_address_without_global_id(self):
        self.ceph.session('a', 0, 'client.nova-lite.compute1', 21)
        self.ceph.watch(IMAGE, 601, 21)
        self.driver.terminate_connection(self.volume(), H1)
        self.assertEqual(['192.0.2.9:0/21'],
                         [a for a, _e in self.ceph.blocklist])

    def test_terminate_after_a_normal_detach(self):
        self.driver.terminate_connection(self.volume(), H1)
        self.assertEqual([], self.ceph.blocklist)
        self.assertNotIn('sessions', [c['prefix']
                                      for c in self.ceph.commands])
        # The image gone: nothing to do.
        self.driver.terminate_connection(
            self.volume(id='00000000-0000-4000-8000-000000000000'), H1)
        self.assert_clients_closed()

    def test_terminate_every_host(self):
        self.ceph.session('a', 501, 'client.nova-lite.compute1', 11)
        self.ceph.watch(IMAGE, 501, 11)
        self.ceph.watch(IMAGE, 503, 13)
        self.driver.terminate_connection(self.volume(), {})
        self.assertEqual(['192.0.2.9:0/11', '192.0.2.9:0/13'],
                         [a for a, _e in self.ceph.blocklist])


class SharedIdentityTest(RBDTestCase):
    SECRET = '457eb676-33da-42ec-9a8c-9293d545c337'

    def setUp(self):
        self.keyring = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'cinder.keyring')
        with open(self.keyring, 'w') as f:
            f.write('[client.cinder]\n\tkey = AQshared==\n')
        self.CONF = {'ceph1.rbd_secret_uuid': self.SECRET,
                     'ceph1.rbd_keyring_conf': self.keyring,
                     'ceph1.rbd_blocklist_expire': 60}
        super().setUp()
        self.driver.create_volume(self.volume())

    def test_connection_info(self):
        data = self.driver.initialize_connection(self.volume(), H1)['data']
        self.assertEqual('cinder', data['auth_username'])
        self.assertTrue(data['auth_enabled'])
        self.assertEqual(self.SECRET, data['secret_uuid'])
        self.assertEqual('[client.cinder]\n\tkey = AQshared==\n',
                         data['keyring'])
        self.assertEqual({}, self.ceph.auth)
        self.assertEqual(self.keyring,
                         self.ceph.clients[0].conf['keyring'])

    def test_terminate_blocklists_every_watcher(self):
        self.ceph.watch(IMAGE, 501, 11)
        self.ceph.watch(IMAGE, 502, 12)
        self.driver.terminate_connection(self.volume(), H1)
        self.assertEqual([('192.0.2.9:0/11', 60.0), ('192.0.2.9:0/12', 60.0)],
                         self.ceph.blocklist)

    def test_multiattach_terminate_keeps_other_hosts(self):
        self.ceph.watch(IMAGE, 501, 11, ip=H1['ip'])
        self.ceph.watch(IMAGE, 502, 12, ip=H2['ip'])
        self.driver.terminate_connection(self.volume(multiattach=True), H1)
        self.assertEqual(['192.0.2.1:0/11'],
                         [a for a, _e in self.ceph.blocklist])


class SharedWithoutSecretTest(RBDTestCase):
    CONF = {'ceph1.rbd_host_identities': False}

    def test_secret_is_the_fsid_keyring_absent(self):
        self.driver.create_volume(self.volume())
        data = self.driver.initialize_connection(self.volume(), H1)['data']
        self.assertEqual(FSID, data['secret_uuid'])
        self.assertEqual('cinder', data['auth_username'])
        self.assertNotIn('keyring', data)


class OpenVolumeTest(RBDTestCase):

    def test_copy_file_to_image_and_back(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        source = os.path.join(tmp, 'source')
        with open(source, 'wb') as f:
            f.truncate(8 << 20)
            f.seek(5 << 20)
            f.write(b'in the middle')
        self.driver.create_volume(self.volume())
        with base.LocalVolumeFile(source) as src:
            with self.driver.open_volume(self.volume(), 'w') as dst:
                copied = utils.copy_file_data(src, dst)
        # The data extent only (a file-system block), not 8 MiB.
        self.assertLess(copied, 1 << 20)
        with self.driver.open_volume(self.volume()) as image:
            self.assertEqual(GiB, image.size)
            image.seek(5 << 20)
            self.assertEqual(b'in the middle', image.read(13))
        back = os.path.join(tmp, 'back')
        with open(back, 'wb') as f:
            f.truncate(GiB)
        with self.driver.open_volume(self.volume()) as src:
            with base.LocalVolumeFile(back, 'w') as dst:
                utils.copy_file_data(src, dst)
        with open(back, 'rb') as f:
            f.seek(5 << 20)
            self.assertEqual(b'in the middle', f.read(13))
        self.assert_clients_closed()

    def test_progress_may_stop_the_copy(self):
        self.driver.create_volume(self.volume())
        with self.driver.open_volume(self.volume(), 'w') as image:
            image.seek(0)
            image.write(b'x' * 16)

        def stop():
            raise RuntimeError('settled meanwhile')
        tmp = self.useFixture(fixtures.TempDir()).path
        dest = os.path.join(tmp, 'dest')
        with open(dest, 'wb') as f:
            f.truncate(GiB)
        with self.driver.open_volume(self.volume()) as src:
            with base.LocalVolumeFile(dest, 'w') as dst:
                self.assertRaises(RuntimeError, utils.copy_file_data, src,
                                  dst, progress=stop)
        self.assert_clients_closed()

    def test_opening_a_missing_image(self):
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.driver.open_volume, self.volume())
        self.assert_clients_closed()
