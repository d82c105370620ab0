"""Scaffolding of the real-data tier.

``RealDataDeployment`` is ``tests.integration.deployment.Deployment``
with the libvirt driver and real block storage: before anything starts it
checks that libvirtd answers and that the test guest builds
(``tests.guest.fixture``: a skip saying what is missing, a failure with
``NOVA_LITE_REQUIRE_LIBVIRT=1``) and that tgtd runs
(``tests.fixtures.tgt.Tgtd``, the node's daemon: a failure with
``NOVA_LITE_REQUIRE_TGT=1``), makes a directory QEMU's user can reach and
points the compute services' ``instances_path`` into it, and configures
``[libvirt]`` for the guest (TCG, its kernel, initramfs and agent channel;
no shutdown grace). Two backends, each with its ``volumes_dir`` in that
directory:

* ``iscsi`` (the default: the ``__DEFAULT__`` type has no backend and
  ``iscsi`` is enabled first): a tgtd target per connected volume, CHAP
  (an account per host connection), the ACL by the host's initiator name
  (each compute host has its own, ``[libvirt] iscsi_initiator_name``
  ``iqn.2010-10.org.nova-lite.test:<host>``, in a configuration file of
  its own; ``shared_initiator=True`` gives them one, as a misconfigured
  deployment would), on the node's tgtd under a target
  prefix of the deployment's own (the fixture deletes whatever targets and
  accounts with that prefix are left at cleanup); the guests' disks are
  QEMU's iSCSI initiator logged in to 127.0.0.1:3260;
* ``file``: a plain file the domain opens;
* ``rbd``, where Ceph is installed (``tests.fixtures.ceph.Ceph``, the
  machine's one-node cluster, started when it does not answer; without
  Ceph the deployment has no ``rbd`` backend and ``require_rbd()`` skips
  saying why, or fails with ``NOVA_LITE_REQUIRE_CEPH=1``): images in the
  cluster's ``volumes`` pool, each compute host connecting with a cephx
  identity of its own that the backend makes; the guests' disks are
  QEMU's librbd client.

``RealDataDeployment(..., private_ceph=True)`` puts ``rbd`` on a
one-node Ceph of the deployment's own, whose OSD and monitor a test may
stop. ``RealDataDeployment(..., all_in_one=True)`` is the embedded default
instead of the production layout: one ``nova-lite-all`` process with its
one compute host (``tests.integration.deployment``).

After setUp, ``volume_types`` names a type per backend and per
multiattach: ``{(backend, multiattach): type name}`` (made through the
API; ``volume_type('file')``, ``volume_type('iscsi', multiattach=True)``).

The compute services are named uniquely per deployment (``compute1-<hex>``,
``compute2-<hex>``), and so are their domains (``[DEFAULT]
instance_name_template`` ``instance-<hex>-%08x``): they share the
machine's libvirtd with every other deployment running (a compute host
leaves alone the domains its database does not know, whatever host they
name).

``RealDataTestCase`` adds, on top of ``IntegrationTestCase``'s API
helpers, what only the guest and the hypervisor and the storage can tell:

* ``guest(server_id)``: the agent of the server's guest
  (``tests.guest.agent.Guest``: ``disks()``, ``read``, ``write``,
  ``wait_for_disk``...), found through the domain's live XML;
* ``domain_disks(server_id)``: ``{target dev: serial}`` of the domain
  (the live XML, or the definition with ``inactive=True``);
* ``host_write``/``host_read``: bytes of a volume on the host, in its
  backend's file (the ``file`` volume, or the iSCSI LUN's backing file)
  or its RBD image;
* ``target(volume_id)``: the volume's tgtd target
  (``nova_lite.volume_service.drivers.iscsi.Target``: ``acl``, ``luns``,
  ``sessions``...) as ``tgtadm --op show`` has it, or None;
* ``create_volume(backend=..., multiattach=...)``,
  ``create_servers(count, ...)`` (a multi-create), ``wait_for_attached``
  (an asynchronous attach done), ``set_compute_status`` (a host that
  takes no new server).

Add scenarios as ``test_*.py`` modules of this package (one database is
enough: the database is not what they prove)::

    class TestDataPath(base.RealDataTestCase):
        def test_guest_reads_the_volume(self):
            server_id = self.active_server()
            ...
"""

import json
import os
import unittest

from oslo_utils import uuidutils

from tests.fixtures import ceph as ceph_fixture
from tests.fixtures import tgt as tgt_fixture
from tests.guest import agent
from tests.guest import fixture as guest_fixture
from tests.integration import base
from tests.integration import deployment as deploy

# A guest boots in ~5 s idle, ~15 s on a loaded two-core machine (TCG).
BOOT_TIMEOUT = 180
# Instance action events with their details.
EVENTS_VERSION = '2.84'

ISCSI = 'iscsi'
FILE = 'file'
RBD = 'rbd'
BACKENDS = (ISCSI, FILE)


class RealDataDeployment(deploy.Deployment):
    #: The prefix of the compute hosts' iSCSI initiator names.
    INITIATOR_PREFIX = 'iqn.2010-10.org.nova-lite.test:'

    def __init__(self, backend, private_ceph=False, shared_initiator=False,
                 **kwargs):
        """``private_ceph``: the ``rbd`` backend on a Ceph cluster of the
        deployment's own (``Ceph(private=True)``: its OSD and monitor
        may be stopped) instead of the machine's. ``shared_initiator``:
        every compute host with one iSCSI initiator name (a
        misconfiguration) instead of one each."""
        self.private_ceph = private_ceph
        self.shared_initiator = shared_initiator
        self.tag = tag = uuidutils.generate_uuid()[:8]
        kwargs.setdefault('compute_hosts', ('compute1-%s' % tag,
                                            'compute2-%s' % tag))
        super().__init__(backend, **kwargs)

    def _setUp(self):
        self.useFixture(guest_fixture.Libvirtd())
        self.guest_image = self.useFixture(guest_fixture.GuestImage()).guest
        # Its cleanup (this deployment's targets and accounts) runs after
        # the services stopped.
        self.tgtd = self.useFixture(tgt_fixture.Tgtd())
        self.shared = self.useFixture(guest_fixture.SharedDir()).path
        self.ceph, self.no_ceph = self._ceph()
        self.volumes_dirs = {name: os.path.join(self.shared, name)
                             for name in BACKENDS}
        for path in self.volumes_dirs.values():
            os.makedirs(path, mode=0o755)
        # ``volumes_dir``: the ``file`` backend's.
        self.volumes_dir = self.volumes_dirs[FILE]
        iscsi_conf = {'volume_driver': 'iscsi',
                      'volumes_dir': self.volumes_dirs[ISCSI]}
        for key, value in self.tgtd.conf_overrides(ISCSI).items():
            iscsi_conf[key.partition('.')[2]] = value
        conf = {
            'DEFAULT': {
                'compute_driver': 'libvirt',
                'instances_path': os.path.join(self.shared, 'instances'),
                'shutdown_timeout': 0,
                'my_ip': '127.0.0.1',
                # Domain names are unique per libvirtd: each deployment's
                # row ids start at 1.
                'instance_name_template': 'instance-%s-%%08x' % self.tag,
            },
            'libvirt': {
                'virt_type': 'qemu',
                'connection_uri': guest_fixture.uri(),
                'kernel_path': self.guest_image['kernel'],
                'initrd_path': self.guest_image['initramfs'],
                'kernel_cmdline': self.guest_image['cmdline'],
                'guest_channels': self.guest_image['channel'],
                # A guest that ignores an unplug fails in seconds.
                'device_detach_attempts': 3,
                'device_detach_timeout': 5,
            },
            'volume': {'enabled_backends': ','.join(
                BACKENDS + ((RBD,) if self.ceph else ()))},
            ISCSI: iscsi_conf,
            FILE: {'volume_driver': 'file',
                   'volumes_dir': self.volumes_dirs[FILE]},
        }
        if self.ceph:
            conf[RBD] = {'volume_driver': 'rbd'}
            for key, value in self.ceph.conf_overrides(RBD).items():
                conf[RBD][key.partition('.')[2]] = value
        for section, options in self.extra_conf.items():
            conf.setdefault(section, {}).update(options)
        self.extra_conf = conf
        enabled = conf['volume']['enabled_backends'].split(',')
        self.backends = tuple(b for b in BACKENDS + (RBD,) if b in enabled)
        if RBD not in self.backends:
            self.ceph = None
        super()._setUp()
        self.volume_types = self._make_volume_types()

    def initiator(self, host):
        """The iSCSI initiator name of compute host ``host`` (``[libvirt]
        iscsi_initiator_name``)."""
        return self.INITIATOR_PREFIX + (
            'shared-%s' % self.tag if self.shared_initiator else host)

    def _service(self, name, script, host):
        # Each compute host its own initiator name (or, with
        # ``shared_initiator``, one for all), in a configuration file of
        # its own after the deployment's.
        proc = super()._service(name, script, host)
        if script == 'nova-lite-compute':
            path = os.path.join(self.path, '%s.conf' % host)
            with open(path, 'w') as f:
                f.write('[libvirt]\niscsi_initiator_name = %s\n' %
                        self.initiator(host))
            proc.argv = proc.argv + ['--config-file', path]
        return proc

    def _ceph(self):
        """The machine's Ceph, or (None, why not) without it (a skip of
        the fixture; with NOVA_LITE_REQUIRE_CEPH=1 it fails instead)."""
        try:
            return self.useFixture(ceph_fixture.Ceph(
                private=self.private_ceph)), None
        except unittest.SkipTest as e:
            return None, str(e)

    def _make_volume_types(self):
        api = self.admin_api.as_(volume_version='3.0')
        types = {}
        for backend in self.backends:
            for multiattach in (False, True):
                name = '%s%s' % (backend, '-multiattach' if multiattach
                                 else '')
                specs = {'volume_backend_name': backend}
                if multiattach:
                    specs['multiattach'] = '<is> True'
                resp = api.post('/v3/admin/types', body={'volume_type': {
                    'name': name, 'extra_specs': specs}})
                if resp.status != 200:
                    raise AssertionError('volume type %s: %r' % (name, resp))
                types[(backend, multiattach)] = name
        return types

    def volume_type(self, backend=ISCSI, multiattach=False):
        return self.volume_types[(backend, multiattach)]


class RealDataTestCase(base.IntegrationTestCase):
    BACKEND = 'mysql'

    #: One ``nova-lite-all`` process instead of the production layout.
    ALL_IN_ONE = False
    #: The ``rbd`` backend on a Ceph of the deployment's own.
    PRIVATE_CEPH = False
    #: The compute hosts with one iSCSI initiator name instead of one
    #: each.
    SHARED_INITIATOR = False

    @classmethod
    def make_deployment(cls):
        return RealDataDeployment(cls.BACKEND, extra_conf=cls.EXTRA_CONF,
                                  all_in_one=cls.ALL_IN_ONE,
                                  private_ceph=cls.PRIVATE_CEPH,
                                  shared_initiator=cls.SHARED_INITIATOR)

    def require_rbd(self):
        """Skip (saying why) when the deployment has no ``rbd`` backend:
        Ceph is not installed here."""
        if not self.deployment.ceph:
            self.skipTest(self.deployment.no_ceph)

    def setUp(self):
        super().setUp()
        self._guests = {}

    def events(self, server_id, action):
        """The events of the server's latest ``action``, with details."""
        api = self.admin_api.as_(compute_version=EVENTS_VERSION)
        actions = api.get('/v2.1/servers/%s/os-instance-actions' %
                          server_id).body['instanceActions']
        latest = [a for a in actions if a['action'] == action]
        if not latest:
            return []
        return api.get('/v2.1/servers/%s/os-instance-actions/%s' % (
            server_id, latest[0]['request_id'])).body['instanceAction'][
                'events']

    def active_server(self, **fields):
        server_id = self.create_server(**fields)
        self.wait_for_server_status(server_id, 'ACTIVE')
        return server_id

    def create_volume(self, size=1, api=None, project_id='demo',
                      backend=None, multiattach=False, **fields):
        """A volume of ``backend`` (``iscsi``, ``file``; None: the
        default type's, iscsi), multiattach or not (its type), unless
        ``volume_type`` is given; waits until ``available``."""
        if backend is not None or multiattach:
            fields.setdefault('volume_type', self.deployment.volume_type(
                backend or ISCSI, multiattach))
        return super().create_volume(size=size, api=api,
                                     project_id=project_id, **fields)

    def create_servers(self, count, api=None, **fields):
        """A multi-create of ``count`` servers (``min_count``, at 2.105
        unless ``api`` says otherwise): the ids of the servers it made
        (those of the reservation it answers), each cleaned up."""
        api = api or self.api.as_(compute_version='2.105')
        server = {'name': 'integration-%s' % self.getUniqueString(),
                  'flavorRef': '1', 'imageRef': self.IMAGE_REF,
                  'min_count': count, 'return_reservation_id': True}
        server.update(fields)
        resp = api.post('/v2.1/servers', body={'server': server})
        self.assertEqual(202, resp.status, resp)
        reservation = resp.body['reservation_id']
        admin = self.admin_api.as_(compute_version='2.3')
        seen = {}

        def made():
            listed = admin.get('/v2.1/servers/detail?all_tenants=1')
            self.assertEqual(200, listed.status, listed)
            seen['ids'] = [
                s['id'] for s in listed.body['servers']
                if s['OS-EXT-SRV-ATTR:reservation_id'] == reservation]
            return len(seen['ids']) == count

        self.wait_for(made, message=lambda: 'reservation %s made %s' % (
            reservation, seen.get('ids')))
        for server_id in seen['ids']:
            self.addCleanup(self._delete_server, server_id)
        return seen['ids']

    def set_compute_status(self, host, status):
        """Enable or disable (``status``) the compute service of ``host``
        (``PUT /v2.1/os-services/{id}``, 2.53): a disabled host gets no
        new server. A disable is undone at cleanup."""
        api = self.admin_api.as_(compute_version='2.53')
        service = self.deployment.services()[('nova-lite-compute', host)]
        resp = api.put('/v2.1/os-services/%s' % service['id'],
                       body={'status': status})
        self.assertEqual(200, resp.status, resp)
        if status == 'disabled':
            self.addCleanup(self.set_compute_status, host, 'enabled')

    def wait_for_attached(self, server_id, volume_id):
        """Wait until the volume's block-storage attachment to the server
        is ``attached`` (the host connected it: an asynchronous attach,
        2.101 and later, is done); returns the volume's view."""
        def attached():
            volume = self.show_volume(volume_id)
            if volume['status'] == 'error':
                raise AssertionError('volume went to error: %s' % volume)
            return volume if any(
                a['server_id'] == server_id
                for a in volume['attachments']) else None

        return self.wait_for(attached, message='volume %s never attached '
                             'to %s: %s' % (volume_id, server_id,
                                            self.show_volume(volume_id)))

    # -- the hypervisor's view -------------------------------------------
    def _domain(self, server_id):
        import libvirt
        conn = libvirt.open(guest_fixture.uri())
        self.addCleanup(conn.close)
        return conn.lookupByUUIDString(server_id)

    def domain_disks(self, server_id, inactive=False):
        import libvirt
        from nova_lite.virt.libvirt import config as vconfig
        flags = libvirt.VIR_DOMAIN_XML_INACTIVE if inactive else 0
        root = vconfig.parse(self._domain(server_id).XMLDesc(flags))
        return {dev: disk['serial']
                for dev, disk in vconfig.disks(root).items()}

    def guest(self, server_id, reconnect=False):
        """The agent of the server's running guest (connected once per
        test and server; ``reconnect`` after the guest was started again:
        a power cycle, an unshelve)."""
        guest = None if reconnect else self._guests.get(server_id)
        if guest is None:
            from nova_lite.virt.libvirt import config as vconfig
            root = vconfig.parse(self._domain(server_id).XMLDesc(0))
            path = vconfig.channel_paths(root).get(
                self.deployment.guest_image['channel'])
            self.assertIsNotNone(path, 'server %s has no agent channel' %
                                 server_id)
            guest = agent.wait_ready(path, timeout=BOOT_TIMEOUT)
            self.addCleanup(guest.close)
            self._guests[server_id] = guest
        return guest

    # -- the storage's view -----------------------------------------------
    def volume_backend(self, volume_id):
        """The backend of the volume (``iscsi``, ``file``, ``rbd``), from
        its ``host@backend#pool``."""
        return self.show_volume(volume_id)['os-vol-host-attr:host'].partition(
            '@')[2].partition('#')[0]

    def storage_id(self, volume_id):
        """The id naming the volume's storage: its file, its target (the
        volume it was migrated into, once a migration gave it one)."""
        return self.show_volume(volume_id)[
            'os-vol-mig-status-attr:name_id'] or volume_id

    def volume_path(self, volume_id):
        """The file of the volume's bytes (a ``file`` volume, an iSCSI
        LUN's backing store)."""
        return os.path.join(
            self.deployment.volumes_dirs[self.volume_backend(volume_id)],
            'volume-%s' % self.storage_id(volume_id))

    def image(self, volume_id):
        """The RBD image of an ``rbd`` volume."""
        return 'volume-%s' % self.storage_id(volume_id)

    def host_write(self, volume_id, offset, data):
        if self.volume_backend(volume_id) == RBD:
            self.deployment.ceph.rbd_write(self.image(volume_id), offset,
                                           data)
            return
        with open(self.volume_path(volume_id), 'r+b') as f:
            f.seek(offset)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    def host_read(self, volume_id, offset, length):
        if self.volume_backend(volume_id) == RBD:
            return self.deployment.ceph.rbd_read(self.image(volume_id),
                                                 offset, length)
        with open(self.volume_path(volume_id), 'rb') as f:
            f.seek(offset)
            return f.read(length)

    def target(self, volume_id):
        """The volume's target on tgtd (``iscsi.Target``), or None when
        tgtd exports it to no host (none, or the volume's target ready
        for a first connection: an empty ACL). Its ``accounts`` are
        those of host connections: the volume's spare account (bound,
        its secret never given out) is left out."""
        target = self.deployment.tgtd.targets().get('%svolume-%s' % (
            self.deployment.tgtd.prefix, self.storage_id(volume_id)))
        if target is None or not target.acl:
            return None
        spare = os.path.join(
            os.path.dirname(self.volume_path(volume_id)), 'targets',
            'volume-%s' % self.storage_id(volume_id), 'spare')
        try:
            with open(spare) as f:
                user = json.load(f)['chap'][0]
        except FileNotFoundError:
            return target
        return target._replace(accounts=[
            u for u in target.accounts if u != user])
