"""The whole system with the ``rbd`` backend on a real one-node Ceph
(``tests/fixtures/ceph.py``): /v3 volumes (the images made, grown,
removed), attachments (Cinder's RBD ``connection_info``, a per-host cephx
identity the host's client opens the image with), migration between
``rbd`` and ``file`` (the bytes stay), and the fence of a disconnect (the
host's client still holding the image is blocklisted: its next write
fails). A private cluster whose OSD or monitor is stopped gives a clear
fault within the timeout. The connect and the fence run in a process
SIGKILLed before each of their commands to Ceph, and the call asked
again finishes them.

Skips without Ceph (``tests/fixtures/ceph.py``), unless
``NOVA_LITE_REQUIRE_CEPH=1``.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import fixtures
import testtools

from nova_lite import context
from nova_lite import exception
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume_service import drivers
from tests.fixtures import ceph as ceph_fixture
from tests.fixtures import conf as conf_fixture
from tests.functional.volume import base

GiB = 1024 ** 3
DATA = b'written before the migration'
OFFSET = 5 * 1024 * 1024 + 3


class RBDBackend(object):
    """Mixin: the backend ``ceph`` (driver ``rbd``) on the shared cluster,
    with a ``file`` backend beside it."""

    def setUp(self):
        self.ceph = self.useFixture(ceph_fixture.Ceph())
        self.CONF = dict(self.CONF, **{
            'volume.enabled_backends': ['ceph', 'file'],
            'ceph.volume_driver': 'rbd'}, **self.ceph.conf_overrides('ceph'))
        super().setUp()
        self.driver = drivers.get_driver(self.conf, 'ceph')
        self.create_type('rbd', extra_specs={'volume_backend_name': 'ceph'})
        self.create_type('rbd-ma', extra_specs={
            'volume_backend_name': 'ceph', 'multiattach': '<is> True'})

    def row(self, volume_id):
        return volume_db.volume_get(context.get_admin_context(), volume_id)

    def image(self, volume_id):
        row = self.row(volume_id)
        return 'volume-%s' % (row.name_id or row.id)

    def image_size(self, name):
        with self.ceph.client() as cluster:
            with cluster.open_ioctx(self.ceph.pool) as ioctx:
                with self.rbd.Image(ioctx, name, read_only=True) as img:
                    return img.size()

    @property
    def rbd(self):
        import rbd
        return rbd

    @property
    def rados(self):
        import rados
        return rados


class RBDTestCase(RBDBackend, base.VolumeTestCase):

    def admin_action(self, volume_id, body, expect=202):
        resp = self.admin.post('/v3/volumes/%s/action' % volume_id,
                               body=body)
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def open_as(self, info, volume_id):
        """The image opened by a client of the connection's identity (a
        host's QEMU, cache off as QEMU's ``cache='none'``)."""
        data = info
        keyring = os.path.join(self.useFixture(fixtures.TempDir()).path,
                               'keyring')
        with open(keyring, 'w') as f:
            f.write(data['keyring'])
        cluster = self.ceph.connect(user=data['auth_username'],
                                    keyring=keyring, timeout=10)
        cluster.conf_set('rbd_cache', 'false')
        self.addCleanup(cluster.shutdown)
        ioctx = cluster.open_ioctx(data['name'].split('/')[0])
        self.addCleanup(ioctx.close)
        image = self.rbd.Image(ioctx, data['name'].split('/')[1])
        self.addCleanup(image.close)
        return cluster, image


class VolumeLifecycleTest(RBDTestCase):

    def test_create_extend_delete(self):
        volume = self.create_volume(volume_type='rbd')
        self.assertEqual('available', self.status(volume['id']))
        name = self.image(volume['id'])
        self.assertIn(name, self.ceph.images())
        self.assertEqual(GiB, self.image_size(name))
        caps = self.admin.get('/v3/capabilities/ceph').body
        self.assertEqual('ceph', caps['storage_protocol'])

        self.admin_action(volume['id'], {'os-extend': {'new_size': 2}})
        self.assertEqual(2, self.show_volume(volume['id'])['size'])
        self.assertEqual(2 * GiB, self.image_size(name))
        self.assertEqual(2, self.driver.volume_size(
            backend_conf.volume_dict(self.row(volume['id']))))

        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % volume['id']).status)
        self.assertEqual(404, self.vol.get(
            '/v3/volumes/%s' % volume['id']).status)
        self.assertNotIn(name, self.ceph.images())
        # The backend's delete again (settling): no error.
        self.driver.delete_volume({'id': volume['id'],
                                   'name_id': volume['id']})

    def test_multiattach_image_features(self):
        volume = self.create_volume(volume_type='rbd-ma')
        with self.ceph.client() as cluster:
            with cluster.open_ioctx(self.ceph.pool) as ioctx:
                with self.rbd.Image(ioctx, self.image(volume['id']),
                                    read_only=True) as img:
                    features = img.features()
        self.assertEqual(0, features & (self.rbd.RBD_FEATURE_EXCLUSIVE_LOCK |
                                        self.rbd.RBD_FEATURE_OBJECT_MAP |
                                        self.rbd.RBD_FEATURE_FAST_DIFF |
                                        self.rbd.RBD_FEATURE_JOURNALING))
        self.assertTrue(features & self.rbd.RBD_FEATURE_LAYERING)

    def test_delete_refused_while_open(self):
        volume = self.create_volume(volume_type='rbd')
        name = self.image(volume['id'])
        self.addCleanup(self.ceph.remove_image, name)
        with self.ceph.client() as cluster:
            with cluster.open_ioctx(self.ceph.pool) as ioctx:
                with self.rbd.Image(ioctx, name):
                    resp = self.vol.delete('/v3/volumes/%s' % volume['id'])
        # Cinder's VolumeIsBusy: refused, the volume usable again.
        self.assertEqual(409, resp.status, resp.text)
        self.assertEqual('volume.state',
                         resp.body['conflictingRequest']['error_code'])
        self.assertIn('is busy: open by', resp.text)
        self.assertEqual('available', self.status(volume['id']))
        self.assertIn(name, self.ceph.images())
        # Once no client holds it, the delete goes through.
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % volume['id']).status)
        self.assertNotIn(name, self.ceph.images())


class ConnectionTest(RBDTestCase):

    def test_connection_info_and_fence(self):
        host = 'fence-%s' % uuid.uuid4().hex[:8]
        volume = self.create_volume(volume_type='rbd')
        name = self.image(volume['id'])
        attachment = self.reserve(volume['id'])
        # As an administrator: a member is not shown the keyring.
        info = self.connect(attachment['id'], host=host,
                            api=self.admin)['connection_info']
        entity = 'client.nova-lite.' + host
        self.addCleanup(self.ceph.ceph, 'auth', 'rm', entity)
        key = self.ceph.ceph('auth', 'get', entity, '-f', 'json')[0]['key']
        self.assertEqual({
            'driver_volume_type': 'rbd',
            'name': 'volumes/' + name,
            'hosts': ['127.0.0.1'],
            'ports': [str(self.ceph.mon_port)],
            'cluster_name': 'ceph',
            'auth_enabled': True,
            'auth_username': 'nova-lite.' + host,
            'secret_type': 'ceph',
            'secret_uuid': str(uuid.uuid5(
                uuid.uuid5(uuid.NAMESPACE_URL,
                           'https://opendev.org/nova-lite/rbd-secret'),
                '%s/%s' % (self.ceph.fsid, entity))),
            'keyring': '[%s]\n\tkey = %s\n' % (entity, key),
            'volume_id': volume['id'],
            'discard': True,
            'access_mode': 'rw',
            'encrypted': False,
            'qos_specs': None,
            'attachment_id': attachment['id'],
        }, info)
        self.complete(attachment['id'])

        # The host's QEMU has the image open, another client too (another
        # host's, as the admin).
        host_client, image = self.open_as(info, volume['id'])
        image.write(b'host write', 0)
        with self.ceph.client() as other:
            with other.open_ioctx(self.ceph.pool) as ioctx:
                with self.rbd.Image(ioctx, name) as other_image:
                    other_addr = other.get_addrs()
                    self.assertEqual(2, len(self.ceph.watchers(name)))
                    # The host is disconnected (its guest may still run).
                    resp = self.vol.delete('/v3/attachments/%s' %
                                           attachment['id'])
                    self.assertEqual(200, resp.status, resp.text)
                    blocked = [e['addr'] for e in self.ceph.blocklist()]
                    for addr in blocked:
                        self.addCleanup(self.ceph.ceph, 'osd', 'blocklist',
                                        'rm', addr)
                    self.assertIn(host_client.get_addrs(), blocked)
                    self.assertNotIn(other_addr, blocked)
                    # Cut off at once; the other client writes on.
                    self.assertRaises(self.rbd.Error, image.write,
                                      b'stale write', 512)
                    other_image.write(b'other write', 4096)
        self.assertEqual(b'host write', self.ceph.rbd_read(name, 0, 10))
        self.assertEqual(b'\0' * 11, self.ceph.rbd_read(name, 512, 11))

    def test_normal_detach_blocklists_nothing(self):
        volume = self.create_volume(volume_type='rbd')
        attachment = self.reserve(volume['id'])
        host = 'detach-%s' % uuid.uuid4().hex[:8]
        info = self.connect(attachment['id'], host=host)['connection_info']
        self.addCleanup(self.ceph.ceph, 'auth', 'rm',
                        'client.nova-lite.' + host)
        self.complete(attachment['id'])
        before = self.ceph.blocklist()
        resp = self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual(200, resp.status, resp.text)
        # Nothing added to the cluster's blocklist (another test running
        # beside this one may end its own entries meanwhile).
        self.assertEqual([], [e for e in self.ceph.blocklist()
                              if e not in before])
        self.assertEqual('rw', info['access_mode'])


class MigrationTest(RBDTestCase):

    def test_rbd_to_file_and_back_keeps_the_bytes(self):
        volume = self.create_volume(volume_type='rbd')
        self.ceph.rbd_write(self.image(volume['id']), OFFSET, DATA)
        first_image = self.image(volume['id'])

        self.admin_action(volume['id'], {'os-migrate_volume': {
            'host': 'file'}})
        shown = self.show_volume(volume['id'], api=self.admin)
        self.assertEqual(('success', 'available'),
                         (shown['migration_status'], shown['status']))
        row = self.row(volume['id'])
        self.assertEqual('file', row.host)
        with open(row.provider_location, 'rb') as f:
            f.seek(OFFSET)
            self.assertEqual(DATA, f.read(len(DATA)))
        self.assertNotIn(first_image, self.ceph.images())

        self.admin_action(volume['id'], {'os-migrate_volume': {
            'host': 'ceph'}})
        row = self.row(volume['id'])
        self.assertEqual('ceph', row.host)
        self.assertEqual(DATA, self.ceph.rbd_read(
            self.image(volume['id']), OFFSET, len(DATA)))


class CloneTest(RBDTestCase):
    """A volume created from another (``source_volid``): a copy-on-write
    clone of a snapshot named after it, flattened past
    ``rbd_max_clone_depth``; deleting a source that clones depend on hides
    its image until the last of them goes."""

    def parent_of(self, name):
        with self.ceph.client() as cluster:
            with cluster.open_ioctx(self.ceph.pool) as ioctx:
                with self.rbd.Image(ioctx, name, read_only=True) as img:
                    try:
                        spec = img.get_parent_image_spec()
                    except self.rbd.ImageNotFound:
                        return None
        return spec['image_name'], spec['snap_name']

    def test_clone_reads_the_source_and_outlives_it(self):
        source = self.create_volume(volume_type='rbd')
        name = self.image(source['id'])
        self.ceph.rbd_write(name, OFFSET, DATA)
        clone = self.create_volume(source_volid=source['id'], size=2)
        self.assertEqual(('available', 'rbd', source['id']),
                         (clone['status'], clone['volume_type'],
                          clone['source_volid']))
        clone_name = self.image(clone['id'])
        self.assertEqual((name, clone_name + '.clone_snap'),
                         self.parent_of(clone_name))
        self.assertEqual(2 * GiB, self.image_size(clone_name))
        self.assertEqual(DATA, self.ceph.rbd_read(clone_name, OFFSET,
                                                  len(DATA)))
        # Written after the clone: the source's alone.
        self.ceph.rbd_write(name, OFFSET, b'X' * len(DATA))
        self.assertEqual(DATA, self.ceph.rbd_read(clone_name, OFFSET,
                                                  len(DATA)))

        # The source goes (its image hidden), the clone still reads.
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % source['id']).status)
        self.assertEqual(404, self.vol.get(
            '/v3/volumes/%s' % source['id']).status)
        self.assertNotIn(name, self.ceph.images())
        self.assertIn(name + '.deleted', self.ceph.images())
        self.assertEqual(DATA, self.ceph.rbd_read(clone_name, OFFSET,
                                                  len(DATA)))
        # The clone's delete takes the hidden image with it.
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % clone['id']).status)
        self.assertEqual([], [i for i in self.ceph.images()
                              if i in (name + '.deleted', clone_name)])

    def test_clone_past_the_depth_is_flattened(self):
        self.conf.set_override('rbd_max_clone_depth', 1, group='ceph')
        source = self.create_volume(volume_type='rbd')
        self.ceph.rbd_write(self.image(source['id']), OFFSET, DATA)
        first = self.create_volume(source_volid=source['id'])
        second = self.create_volume(source_volid=first['id'])
        self.assertEqual('available', second['status'])
        self.assertIsNotNone(self.parent_of(self.image(first['id'])))
        self.assertIsNone(self.parent_of(self.image(second['id'])))
        self.assertEqual(DATA, self.ceph.rbd_read(
            self.image(second['id']), OFFSET, len(DATA)))
        # No snapshot is left for the flattened one: the first clone's
        # delete removes its image at once.
        for each in (second, first, source):
            self.assertEqual(202, self.vol.delete(
                '/v3/volumes/%s' % each['id']).status)
        self.assertEqual([], [i for i in self.ceph.images()
                              if i.endswith('.deleted')])

    def test_clone_to_a_type_of_another_backend_is_refused(self):
        source = self.create_volume(volume_type='rbd')
        self.create_type('disk', extra_specs={'volume_backend_name': 'file'})
        resp = self.create_volume(source_volid=source['id'],
                                  volume_type='disk', expect=400)
        self.assertIn('requested type is not compatible', resp.text)


class OutageTest(testtools.TestCase):
    """A private cluster taken down: calls fail within the timeout."""

    TIMEOUT = 3

    def setUp(self):
        super().setUp()
        self.ceph = self.useFixture(ceph_fixture.Ceph(private=True))

    def driver_of(self):
        conf = self.useFixture(conf_fixture.ConfFixture(**dict({
            'volume.enabled_backends': ['ceph'],
            'ceph.volume_driver': 'rbd',
            'ceph.rados_connect_timeout': self.TIMEOUT},
            **self.ceph.conf_overrides('ceph')))).conf
        return drivers.get_driver(conf, 'ceph')

    def assert_fails_in_time(self, call, *args):
        started = time.monotonic()
        error = self.assertRaises(exception.VolumeBackendAPIException,
                                  call, *args)
        self.assertLess(time.monotonic() - started, 4 * self.TIMEOUT)
        self.assertIn('Ceph cluster ceph (pool volumes)', str(error))
        self.assertIn('timed out after %ss' % self.TIMEOUT, str(error))

    def test_osd_down_then_mon_down(self):
        driver = self.driver_of()
        volume = {'id': str(uuid.uuid4()), 'size': 1, 'multiattach': False}
        driver.create_volume(volume)
        self.ceph.stop_osd()
        self.assert_fails_in_time(driver.extend_volume, volume, 2)
        self.assert_fails_in_time(driver.create_volume,
                                  dict(volume, id=str(uuid.uuid4())))
        self.ceph.stop_mon()
        self.assert_fails_in_time(driver.delete_volume, volume)
        self.ceph.start_mon()
        self.ceph.start_osd()
        driver.extend_volume(volume, 2)
        self.assertEqual(2, driver.volume_size(volume))


# A process running one call of the ``ceph`` backend's driver, SIGKILLed
# just before its Nth command to Ceph (DIE_AT), as a crash there would.
CHILD = r'''
import json, os, signal, sys
from oslo_config import cfg
from nova_lite import config
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import rbd
args = json.loads(sys.argv[1])
conf = cfg.ConfigOpts()
config.prepare(conf)
conf([], project='nova-lite', default_config_files=[])
conf.set_override('enabled_backends', ['ceph'], group='volume')
drivers.register_backend_opts(conf)
conf.set_override('volume_driver', 'rbd', group='ceph')
drivers.register_backend_opts(conf)
for name, value in args['backend'].items():
    conf.set_override(name, value, group='ceph')
die_at = int(os.environ['DIE_AT'])
calls = [0]
command = rbd.RBDDriver._command
def counted(self, *a, **kw):
    calls[0] += 1
    if calls[0] == die_at:
        os.kill(os.getpid(), signal.SIGKILL)
    return command(self, *a, **kw)
rbd.RBDDriver._command = counted
driver = drivers.get_driver(conf, 'ceph')
getattr(driver, args['call'])(args['volume'], args['connector'])
'''


class ProcessDeathTest(RBDTestCase):
    """The driver's connect and fence in a real process SIGKILLed before
    each of its commands to Ceph in turn; the call asked again (the
    attachment is unchanged: the attach or detach is retried) finishes
    what the dead one began."""

    def run_child(self, call, volume, connector, die_at):
        """Run ``call`` in a process killed at Ceph command ``die_at``;
        whether it was killed."""
        backend = {key.split('.')[1]: value for key, value in
                   self.ceph.conf_overrides('ceph').items()}
        child = subprocess.run(
            [sys.executable, '-c', CHILD, json.dumps({
                'backend': backend, 'call': call, 'connector': connector,
                'volume': volume})],
            env=dict(os.environ, DIE_AT=str(die_at)), capture_output=True,
            text=True, timeout=120)
        if child.returncode == -signal.SIGKILL:
            return True
        self.assertEqual(0, child.returncode, child.stderr)
        return False

    def volume(self):
        volume = self.create_volume(volume_type='rbd')
        return {'id': volume['id'], 'name_id': volume['id'], 'size': 1,
                'multiattach': False}

    def test_connect_killed_at_each_step(self):
        volume = self.volume()
        host = 'crash-%s' % uuid.uuid4().hex[:8]
        entity = 'client.nova-lite.' + host
        self.addCleanup(self.ceph.ceph, 'auth', 'rm', entity)
        step = 0
        while True:
            step += 1
            if not self.run_child('initialize_connection', volume,
                                  {'host': host}, step):
                break
            # Asked again: one identity, its key the same every time.
            info = self.driver.initialize_connection(volume, {'host': host})
            self.assertEqual(
                self.ceph.ceph('auth', 'get', entity, '-f', 'json')[0][
                    'key'],
                info['data']['keyring'].split('key = ')[1].strip())
        self.assertGreater(step, 2)

    def test_fence_killed_at_each_step(self):
        volume = self.volume()
        name = 'volume-%s' % volume['id']
        host = 'crash-%s' % uuid.uuid4().hex[:8]
        self.addCleanup(self.ceph.ceph, 'auth', 'rm',
                        'client.nova-lite.' + host)
        step = 0
        while True:
            step += 1
            # The host's guest holds the image open and writes.
            info = self.driver.initialize_connection(volume, {'host': host})
            client, image = self.open_as(info['data'], volume['id'])
            image.write(b'before the fence', 0)
            killed = self.run_child('terminate_connection', volume,
                                    {'host': host}, step)
            if killed:
                # The detach is asked again: it finishes the fence.
                self.driver.terminate_connection(volume, {'host': host})
            self.addCleanup(self.ceph.ceph, 'osd', 'blocklist', 'rm',
                            client.get_addrs())
            self.assertIn(client.get_addrs(),
                          [e['addr'] for e in self.ceph.blocklist()], step)
            self.assertRaises(self.rbd.Error, image.write, b'stale write!',
                              0)
            self.assertEqual(b'before the fence',
                             self.ceph.rbd_read(name, 0, 16))
            if not killed:
                break
        # mon dump, the monitor's sessions, the blocklist entry, then the
        # OSD map's epoch, the OSDs and each OSD's map: each a step.
        self.assertGreater(step, 4)
