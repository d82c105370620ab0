"""``rbd``: each volume an RBD image in a Ceph pool, as Cinder's RBD driver.

::

    [volume]
    enabled_backends = ceph

    [ceph]
    volume_driver = rbd
    rbd_pool = volumes
    rbd_ceph_conf = /etc/ceph/ceph.conf
    rbd_user = cinder

A volume is the image ``volume-<id>`` of ``rbd_pool`` (``<id>`` the id
naming its storage: ``name_id`` once a migration gave it another
volume's), made with the cluster's ``rbd_default_features`` (layering,
exclusive-lock, object-map, fast-diff, deep-flatten on Ceph 16) or, for a
multiattach volume, without exclusive-lock, object-map, fast-diff and
journaling, which allow one writer only (Cinder's exclusions). Images
are thin: capacity is the pool's (``ceph df``; Cinder's dynamic total:
free plus stored). Nothing is exported: a host opens the image itself
through librbd (QEMU's ``rbd:`` protocol), so ``connections`` is ``{}``
(the backend keeps no record of connected hosts) and ``ensure_exports``
has nothing to do.

Every call connects to the cluster as ``rbd_user`` (Cinder's
``RADOSClient``) and disconnects at its end; nothing stays open between
requests. ``rados_connect_timeout`` bounds the connection and every
monitor and OSD operation (``client_mount_timeout``,
``rados_mon_op_timeout``, ``rados_osd_op_timeout``): a cluster whose
monitor or OSDs are down fails the call with a
``VolumeBackendAPIException`` naming Ceph and the timeout, not a hang.

``connection_info`` is Cinder's for RBD: ``{'driver_volume_type': 'rbd',
'data': {'name': '<pool>/volume-<id>', 'hosts': [monitor addresses],
'ports': [their v1 ports, as strings], 'cluster_name', 'auth_enabled',
'auth_username', 'secret_type': 'ceph', 'secret_uuid', 'keyring',
'volume_id', 'discard': True, 'access_mode', 'encrypted', 'qos_specs':
None}}``. The monitors are the cluster's (``mon dump``), not the
configuration's. Which cephx identity the host uses:

* per-host identities (``rbd_host_identities``, the default, and no
  ``rbd_secret_uuid``): host H gets a cephx user of its own,
  ``client.<rbd_identity_prefix>H`` (a name of other characters than
  letters, digits, ``.``, ``-`` and ``_`` is replaced by a digest of it),
  made on its first connection (``auth get-or-create``, caps ``mon
  'profile rbd'``, ``osd 'profile rbd pool=<rbd_pool>'``); ``keyring`` is
  its key (``[client.X]\\n\\tkey = ...\\n``) and ``secret_uuid`` the
  uuid5 of ``<fsid>/<entity>``, so every host names the libvirt secret of
  one identity alike. ``rbd_user`` must be allowed ``auth get-or-create``
  and ``osd blocklist`` (e.g. ``mon 'allow *'``). The key gives the host
  access to every image of the pool: the block-storage API shows the
  ``keyring`` only to the service that connects and to administrators
  (``volume.views.sees_secrets``);
* a shared identity (``rbd_secret_uuid`` set, or ``rbd_host_identities``
  off): Cinder's: ``auth_username`` is ``rbd_user``, ``secret_uuid`` is
  ``rbd_secret_uuid`` (the cluster's fsid when unset, as Cinder), and
  ``keyring`` is the text of ``rbd_keyring_conf`` when it can be read.

A volume made from another volume (``create_cloned_volume``, Cinder's
scheme and names): the source image gets a protected snapshot named
after the clone, ``volume-<source>@volume-<clone>.clone_snap``, and the
clone is a copy-on-write child of it, grown to its size. A clone whose
chain of parents would pass ``rbd_max_clone_depth`` is flattened and its
snapshot removed at once; with ``rbd_max_clone_depth`` 0 every clone is
a full copy (the generic one of ``base.VolumeDriver``). Deleting:

* a volume whose image has clone snapshots that no clone depends on any
  more drops them first;
* a volume whose image clones still depend on is not removed but renamed
  ``volume-<id>.deleted`` (out of sight; the delete succeeds);
* a clone's image is removed, then the snapshot of its parent that it was
  made from; a ``.deleted`` parent left with no snapshot is removed too,
  and so on up the chain.

Read-only attachments get ``access_mode: ro``; the identity may write,
so the compute host enforces it (libvirt's ``<readonly/>``), as with
Cinder's RBD driver.

Fencing: ``terminate_connection`` has no export to remove; it cuts off
the clients that still have the image open and belong to the host
(``osd blocklist add <addr> <rbd_blocklist_expire>``, each logged at
WARNING), then waits until every up OSD has the OSD map that holds the
blocklist, so the client's next write fails (an OSD still on the older
map would take it: measured ~0.1 s after the monitor answered, on one
node). After a normal detach the guest has closed the image and nothing
is blocklisted; after a host was forced down, its guest's QEMU (which may
still run) is cut off at once. Which clients belong to host H:

* per-host identities: the image's watchers (``rbd.Image.watchers_list()``:
  ``{'addr': 'ip:port/nonce', 'id': <global id>, 'cookie'}``, one per
  client that has it open for writing or reading; a read-only open by
  this driver registers none) whose cephx entity is H's. The entity comes
  from the monitors' session lists (the ``sessions`` command sent to each
  monitor, ``mon_command(..., target=<mon name>)``; each monitor lists
  only the sessions made to it): ``[{'name': 'client.?' or
  'client.<global id>', 'entity_name': 'client.X', 'addrs': {'addrvec':
  [{'type': 'any', 'addr': 'ip:port', 'nonce': N}]}, 'global_id': <the
  watcher's 'id'>, 'con_type': 'client', ...}]`` (Ceph 16.2; a client may
  have two sessions, alike but for ``name``). A watcher is matched by its
  global id, else by its address and nonce; a watcher no session names
  is left alone (logged);
* a shared identity, or no host named (an empty connector disconnects
  every host): every watcher, but for a multiattach volume and a
  connector with an ``ip``, only the watchers at that address (the other
  hosts' guests keep the volume).

Each step is idempotent. What a process that dies between two calls
leaves, and who settles it:

* ``create_volume``: an image with the volume still ``creating`` (the
  row was not moved): block storage's settling makes it ``error`` once
  stalled; its delete takes an image that is there or not;
* ``create_cloned_volume``: as ``create_volume``; a clone snapshot of the
  source with no clone (made, but the clone not yet, or the clone
  flattened) is dropped by the source's delete; a clone not yet
  flattened stays a clone (it works as one);
* ``delete_volume``: the image gone (or not) with the volume
  ``deleting``: block storage's settling deletes it again, a missing
  image being no error;
* ``extend_volume``: the image grown (or not) with the volume
  ``extending``: settling reads the image's size (``volume_size``);
  resizing to a size the image has is no error;
* ``initialize_connection``: a cephx identity made for a host whose
  attachment was not connected: left (made again alike on the next
  connection; removed by an operator with ``ceph auth rm``);
* ``terminate_connection``: clients blocklisted (or not yet, or the
  OSDs not yet told) with the attachment unchanged: the detach is asked
  again, and blocklisting what is listed again is no error.

``tests/functional/volume/test_rbd_backend.py`` kills a process running
the connect and the fence before each of their commands to Ceph.

A blocklisted client stays cut off until ``rbd_blocklist_expire``; the
host's QEMU opens the image again with a new client (a new address).

The Python bindings are Debian's ``python3-rados``/``python3-rbd``; this
module imports without them, and the backend's calls then fail saying so.
"""

import contextlib
import errno
import hashlib
import io
import json
import os
import re
import time
import uuid

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import excutils

from nova_lite import exception
from nova_lite.volume_service.drivers import base

try:
    import rados
    import rbd
except ImportError:     # the backend's calls say so
    rados = None
    rbd = None

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3
#: Bytes read or written at once by ``open_volume``'s files.
CHUNK = 4 * 1024 * 1024
#: Features a multiattach image is made without (Cinder's exclusions:
#: each allows one writer only). librbd's values.
FEATURE_LAYERING = 1
FEATURE_EXCLUSIVE_LOCK = 4
FEATURE_OBJECT_MAP = 8
FEATURE_FAST_DIFF = 16
FEATURE_JOURNALING = 64
MULTIATTACH_EXCLUSIONS = (FEATURE_EXCLUSIVE_LOCK | FEATURE_OBJECT_MAP |
                          FEATURE_FAST_DIFF | FEATURE_JOURNALING)
FEATURE_NAMES = {'layering': 1, 'striping': 2, 'exclusive-lock': 4,
                 'object-map': 8, 'fast-diff': 16, 'deep-flatten': 32,
                 'journaling': 64, 'data-pool': 128}
#: The snapshot of a source image a clone ``volume-<id>`` is made from,
#: named after the clone (Cinder's).
CLONE_SNAP = '%s.clone_snap'
#: The name a deleted volume's image takes while clones still depend on
#: it (Cinder's): removed with the last of them.
DELETED_SUFFIX = '.deleted'
#: The namespace of the secret uuids of per-host identities.
SECRET_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL,
                              'https://opendev.org/nova-lite/rbd-secret')
# What a cephx entity id may hold as it is.
ENTITY_RE = re.compile(r'^[A-Za-z0-9._-]{1,128}$')

OPTS = [
    cfg.StrOpt(
        'rbd_pool',
        default='volumes',
        help="""
The RADOS pool holding the volumes' images (initialised for RBD: ``rbd
pool init``).
"""),
    cfg.StrOpt(
        'rbd_ceph_conf',
        help="""
The Ceph configuration file of the cluster. Unset means librados's
default search (``$CEPH_CONF``, ``/etc/ceph/ceph.conf``...).
"""),
    cfg.StrOpt(
        'rbd_cluster_name',
        default='ceph',
        help="""
The name of the Ceph cluster (``cluster_name`` of ``connection_info``).
"""),
    cfg.StrOpt(
        'rbd_user',
        help="""
The cephx user block storage acts as, without ``client.`` (e.g.
``cinder``). Unset means librados's default (``admin``). With per-host
identities (``rbd_host_identities``) it must be allowed ``auth
get-or-create`` and ``osd blocklist`` (e.g. ``mon 'allow *'``).

Related options: ``rbd_keyring_conf``, ``rbd_secret_uuid``.
"""),
    cfg.StrOpt(
        'rbd_keyring_conf',
        help="""
The keyring file of ``rbd_user``. Unset means librados's search
(``/etc/ceph/$cluster.$name.keyring``...). With a shared identity
(``rbd_secret_uuid``) its text, when readable, is given to hosts as
``keyring`` in ``connection_info``.
"""),
    cfg.StrOpt(
        'rbd_secret_uuid',
        help="""
The uuid of the libvirt secret under which compute hosts know the key of
``rbd_user`` (Cinder's). When set, every host connects as ``rbd_user``
with this secret (a shared identity) and no per-host identity is made.

Related options: ``rbd_host_identities``.
"""),
    cfg.IntOpt(
        'rados_connect_timeout',
        default=10,
        help="""
Seconds a connection to the cluster, and each monitor and OSD operation
of a call, may take (``client_mount_timeout``, ``rados_mon_op_timeout``,
``rados_osd_op_timeout``) before the call fails. A value < 0 leaves
librados's own (no bound: a call against a cluster whose OSDs are down
waits for them).
"""),
    cfg.BoolOpt(
        'rbd_host_identities',
        default=True,
        help="""
Give each compute host a cephx user of its own
(``client.<rbd_identity_prefix><host>``), made on its first connection,
so that disconnecting a host can blocklist exactly that host's clients
(fencing). Off (or with ``rbd_secret_uuid`` set) every host connects as
``rbd_user``.

Related options: ``rbd_identity_prefix``, ``rbd_secret_uuid``.
"""),
    cfg.StrOpt(
        'rbd_identity_prefix',
        default='nova-lite.',
        help="""
The prefix of the per-host cephx users: host H connects as
``client.<prefix>H``.
"""),
    cfg.IntOpt(
        'rbd_max_clone_depth',
        default=5,
        help="""
How many copy-on-write clones deep a volume made from another volume
(``source_volid``) may be: a clone whose chain of parent images would be
longer is flattened (its data copied from its parents) and no longer
depends on its source. 0 (or less) makes every such volume a full copy,
never a clone (Cinder's option).
"""),
    cfg.IntOpt(
        'rbd_blocklist_expire',
        default=365 * 24 * 3600,
        min=1,
        help="""
Seconds a client cut off by a disconnect stays blocklisted.
"""),
]


class CephError(exception.VolumeBackendAPIException):
    """A call to the Ceph cluster failed."""


def _timed_out(exc):
    return getattr(exc, 'errno', None) in (errno.ETIMEDOUT, -errno.ETIMEDOUT)


def _addr_key(addr, nonce):
    """``ip:port/nonce`` (a watcher's ``addr``) of a session's address."""
    return '%s/%s' % (addr, nonce)


class RBDDriver(base.VolumeDriver):
    OPTS = OPTS
    STORAGE_PROTOCOL = 'ceph'

    # -- the cluster --------------------------------------------------------
    @property
    def _pool(self):
        return self.backend_conf.rbd_pool

    def _where(self):
        return 'Ceph cluster %s (pool %s)' % (
            self.backend_conf.rbd_cluster_name, self._pool)

    def _fail(self, what, exc):
        timeout = self.backend_conf.rados_connect_timeout
        if _timed_out(exc):
            data = ('%s: %s timed out after %ss (rados_connect_timeout): '
                    '%s' % (self._where(), what, timeout, exc))
        else:
            data = '%s: %s failed: %s' % (self._where(), what, exc)
        return CephError(data=data)

    @contextlib.contextmanager
    def _errors(self, what):
        """Errors of the bindings become ``CephError``s."""
        try:
            yield
        except (rados.Error, rbd.Error) as e:
            raise self._fail(what, e)

    def _connect(self):
        """A new connection and an I/O context on the pool."""
        if rados is None or rbd is None:
            raise CephError(data='the Python bindings of Ceph (rados, rbd) '
                                 'are not installed')
        conf = self.backend_conf
        options = {}
        if conf.rbd_keyring_conf:
            options['keyring'] = conf.rbd_keyring_conf
        if conf.rados_connect_timeout >= 0:
            timeout = str(conf.rados_connect_timeout)
            for name in ('client_mount_timeout', 'rados_mon_op_timeout',
                         'rados_osd_op_timeout'):
                options[name] = timeout
        user = conf.rbd_user or 'the default user'
        with self._errors('connecting as %s' % user):
            cluster = rados.Rados(
                rados_id=conf.rbd_user, clustername=conf.rbd_cluster_name,
                conffile=conf.rbd_ceph_conf or rados.Rados.DEFAULT_CONF_FILES,
                conf=options)
            try:
                cluster.connect()
                ioctx = cluster.open_ioctx(self._pool)
            except Exception:
                cluster.shutdown()
                raise
        return cluster, ioctx

    @contextlib.contextmanager
    def _client(self, what):
        """``(cluster, ioctx)`` for one call, closed at its end."""
        cluster, ioctx = self._connect()
        try:
            with self._errors(what):
                yield cluster, ioctx
        finally:
            ioctx.close()
            cluster.shutdown()

    def _command(self, cluster, what, target=None, osd=None, **cmd):
        """A monitor (or, with ``osd``, an OSD) command; its JSON answer
        (None when it has none)."""
        cmd.setdefault('format', 'json')
        timeout = max(self.backend_conf.rados_connect_timeout, 0)
        if osd is not None:
            ret, out, status = cluster.osd_command(
                osd, json.dumps(cmd), b'', timeout=timeout)
        else:
            ret, out, status = cluster.mon_command(
                json.dumps(cmd), b'', timeout=timeout, target=target)
        if ret:
            error = self._fail(what, OSError(-ret, status or os.strerror(
                -ret)))
            error.errno = -ret
            raise error
        return json.loads(out) if out.strip() else None

    def _name(self, volume):
        return 'volume-%s' % self.storage_id(volume)

    # -- volumes ------------------------------------------------------------
    def _features(self, cluster, multiattach):
        value = cluster.conf_get('rbd_default_features') or ''
        if value.strip().isdigit():
            features = int(value)
        else:
            features = 0
            for name in value.split(','):
                features |= FEATURE_NAMES.get(name.strip(), 0)
        features = features or FEATURE_LAYERING
        if multiattach:
            features &= ~MULTIATTACH_EXCLUSIONS
        return features

    def create_volume(self, volume):
        name = self._name(volume)
        with self._client('creating image %s' % name) as (cluster, ioctx):
            features = self._features(cluster, volume.get('multiattach'))
            try:
                rbd.RBD().create(ioctx, name, volume['size'] * GiB,
                                 old_format=False, features=features)
            except rbd.ImageExists:
                raise CephError(data='%s: image %s exists already' % (
                    self._where(), name))
        return {}

    def create_cloned_volume(self, volume, src_volume, progress=None):
        if self.backend_conf.rbd_max_clone_depth <= 0:
            # A full copy (the generic one: its progress is the clone's
            # heartbeat).
            return super().create_cloned_volume(volume, src_volume,
                                                progress)
        name, src_name = self._name(volume), self._name(src_volume)
        snap = CLONE_SNAP % name
        with self._client('cloning image %s into %s' % (src_name, name)) as (
                cluster, ioctx):
            features = self._features(cluster, volume.get('multiattach'))
            with rbd.Image(ioctx, src_name) as source:
                if snap not in [s['name'] for s in source.list_snaps()]:
                    source.create_snap(snap)
                if not source.is_protected_snap(snap):
                    source.protect_snap(snap)
            try:
                rbd.RBD().clone(ioctx, src_name, snap, ioctx, name,
                                features=features | FEATURE_LAYERING)
            except Exception:
                with excutils.save_and_reraise_exception():
                    self._release_snap(ioctx, src_name, snap)
            with rbd.Image(ioctx, name) as image:
                depth = self._clone_depth(ioctx, image)
                if depth > self.backend_conf.rbd_max_clone_depth:
                    LOG.info('Image %s is %d clones deep '
                             '(rbd_max_clone_depth %d): flattened', name,
                             depth, self.backend_conf.rbd_max_clone_depth)
                    self._flatten(image, progress)
                if image.size() < volume['size'] * GiB:
                    image.resize(volume['size'] * GiB)
            if depth > self.backend_conf.rbd_max_clone_depth:
                self._release_snap(ioctx, src_name, snap)
        return {}

    @staticmethod
    def _parent(image):
        """``(parent image name, snapshot name)`` of a clone, or None."""
        try:
            spec = image.get_parent_image_spec()
        except rbd.ImageNotFound:
            return None
        return spec['image_name'], spec['snap_name']

    def _clone_depth(self, ioctx, image):
        """How many parent images ``image`` has (the pool's own)."""
        depth = 0
        parent = self._parent(image)
        while parent is not None:
            depth += 1
            with rbd.Image(ioctx, parent[0], read_only=True) as each:
                parent = self._parent(each)
        return depth

    def _flatten(self, image, progress):
        """Flatten ``image``; ``progress()`` beats meanwhile (an error it
        raises is raised once the flatten ended)."""
        failed = []

        def on_progress(offset, total):
            if progress is not None and not failed:
                try:
                    progress()
                except Exception as e:
                    failed.append(e)
            return 0
        image.flatten(on_progress=on_progress)
        if failed:
            raise failed[0]

    @staticmethod
    def _drop_clone_snaps(image):
        """Remove the image's clone snapshots no clone depends on (left by
        a clone that failed, was flattened, or a process that died);
        returns the names of its snapshots left."""
        left = []
        for snap in [s['name'] for s in image.list_snaps()]:
            if not snap.endswith(CLONE_SNAP % ''):
                left.append(snap)
                continue
            try:
                if image.is_protected_snap(snap):
                    image.unprotect_snap(snap)
                image.remove_snap(snap)
            except rbd.ImageBusy:
                left.append(snap)       # a clone depends on it
            except rbd.ImageNotFound:
                pass
        return left

    def _release_snap(self, ioctx, parent_name, snap):
        """The clone snapshot ``snap`` of ``parent_name`` no longer has a
        clone: removed, and then the parent too when it is a deleted
        volume's image that nothing depends on any more (and so on up its
        own parents)."""
        while parent_name is not None:
            try:
                with rbd.Image(ioctx, parent_name) as parent:
                    if snap in [s['name'] for s in parent.list_snaps()]:
                        if parent.is_protected_snap(snap):
                            parent.unprotect_snap(snap)
                        parent.remove_snap(snap)
                    if not parent_name.endswith(DELETED_SUFFIX) or \
                            self._drop_clone_snaps(parent):
                        return
                    grand = self._parent(parent)
                rbd.RBD().remove(ioctx, parent_name)
                LOG.info('Image %s, of a deleted volume, removed with its '
                         'last clone', parent_name)
            except (rbd.ImageNotFound, rbd.ImageBusy,
                    rbd.ImageHasSnapshots) as e:
                # Gone, or still used: another clone's delete has it.
                LOG.debug('Image %s left: %s', parent_name, e)
                return
            parent_name, snap = grand if grand else (None, None)

    def delete_volume(self, volume):
        name = self._name(volume)
        with self._client('deleting image %s' % name) as (cluster, ioctx):
            try:
                with rbd.Image(ioctx, name) as image:
                    snaps = self._drop_clone_snaps(image)
                    parent = self._parent(image)
            except rbd.ImageNotFound:
                LOG.info('Image %s of volume %s is gone already', name,
                         volume['id'])
                return
            if snaps and all(s.endswith(CLONE_SNAP % '') for s in snaps):
                # Clones depend on it: kept, out of sight, until the last
                # of them goes (Cinder's).
                rbd.RBD().rename(ioctx, name, name + DELETED_SUFFIX)
                LOG.info('Image %s of volume %s renamed %s%s: clones '
                         'depend on it', name, volume['id'], name,
                         DELETED_SUFFIX)
                return
            try:
                rbd.RBD().remove(ioctx, name)
            except rbd.ImageNotFound:
                LOG.info('Image %s of volume %s is gone already', name,
                         volume['id'])
            except rbd.ImageHasSnapshots:
                raise exception.VolumeIsBusy(
                    data='%s: image %s is busy: it has snapshots (or '
                         'clones)' % (self._where(), name))
            except rbd.ImageBusy:
                raise exception.VolumeIsBusy(
                    data='%s: image %s is busy: open by %s' % (
                        self._where(), name,
                        self._watchers_text(ioctx, name)))
            if parent is not None:
                self._release_snap(ioctx, *parent)

    def _watchers_text(self, ioctx, name):
        try:
            with rbd.Image(ioctx, name, read_only=True) as image:
                watchers = [w['addr'] for w in image.watchers_list()]
        except rbd.Error:
            return 'a client (or it has clones)'
        return ', '.join(watchers) or 'no client (it has clones)'

    def extend_volume(self, volume, new_size):
        name = self._name(volume)
        with self._client('extending image %s' % name) as (cluster, ioctx):
            with rbd.Image(ioctx, name) as image:
                # Only ever grow: a second call (settling) is a no-op.
                if image.size() < new_size * GiB:
                    image.resize(new_size * GiB)

    def volume_size(self, volume):
        name = self._name(volume)
        with self._client('reading the size of image %s' % name) as (
                cluster, ioctx):
            try:
                with rbd.Image(ioctx, name, read_only=True) as image:
                    return image.size() // GiB
            except rbd.ImageNotFound:
                return None

    def open_volume(self, volume, mode='r'):
        return RBDVolumeFile(self, self._name(volume), mode)

    def get_capabilities(self):
        caps = super().get_capabilities()
        caps.update({
            'multiattach': True,
            'thin_provisioning_support': True,
            'total_capacity_gb': 'unknown',
            'free_capacity_gb': 'unknown',
            'backend_state': 'down',
        })
        try:
            with self._client('reading the pool statistics') as (
                    cluster, ioctx):
                free, total = self._pool_stats(cluster)
        except exception.VolumeBackendAPIException as e:
            LOG.warning('Backend %s: %s', self.backend_name, e)
            return caps
        caps.update({'total_capacity_gb': total, 'free_capacity_gb': free,
                     'backend_state': 'up'})
        return caps

    def _pool_stats(self, cluster):
        """``(free, total)`` GiB of the pool, as Cinder's
        ``_get_pool_stats`` with its dynamic total: quota-bounded free
        space, plus what the pool stores."""
        df = self._command(cluster, 'ceph df', prefix='df')
        quota = self._command(cluster, 'reading the pool quota',
                              prefix='osd pool get-quota', pool=self._pool)
        stats = [p for p in df['pools'] if p['name'] == self._pool][0][
            'stats']
        used = stats.get('stored', stats.get('bytes_used', 0))
        free = stats['max_avail']
        if quota.get('quota_max_bytes'):
            free = max(min(quota['quota_max_bytes'] - used, free), 0)
        return round(free / GiB, 2), round((free + used) / GiB, 2)

    # -- connections ----------------------------------------------------------
    def _per_host(self):
        conf = self.backend_conf
        return conf.rbd_host_identities and not conf.rbd_secret_uuid

    def identity(self, host):
        """The cephx entity (``client.X``) of ``host``'s own identity."""
        conf = self.backend_conf
        if not ENTITY_RE.match(host):
            host = 'sha256-' + hashlib.sha256(
                host.encode('utf-8')).hexdigest()[:32]
        return 'client.%s%s' % (conf.rbd_identity_prefix, host)

    def initialize_connection(self, volume, connector):
        name = self._name(volume)
        host = self.connection_host(connector)
        with self._client('connecting image %s' % name) as (cluster, ioctx):
            try:
                with rbd.Image(ioctx, name, read_only=True):
                    pass
            except rbd.ImageNotFound:
                raise CephError(data='%s: image %s of volume %s does not '
                                     'exist' % (self._where(), name,
                                                volume['id']))
            hosts, ports = self._mon_addrs(cluster)
            if self._per_host():
                if not host:
                    raise CephError(data='the connector names no host: '
                                         'per-host cephx identities need '
                                         'one')
                entity, key = self._host_key(cluster, host)
                user = entity[len('client.'):]
                secret_uuid = str(uuid.uuid5(
                    SECRET_NAMESPACE, '%s/%s' % (cluster.get_fsid(), entity)))
                keyring = '[%s]\n\tkey = %s\n' % (entity, key)
                auth_enabled = True
            else:
                user = self.backend_conf.rbd_user
                secret_uuid = (self.backend_conf.rbd_secret_uuid or
                               cluster.get_fsid())
                keyring = self._keyring_data()
                auth_enabled = user is not None
        data = {
            'name': '%s/%s' % (self._pool, name),
            'hosts': hosts,
            'ports': ports,
            'cluster_name': self.backend_conf.rbd_cluster_name,
            'auth_enabled': auth_enabled,
            'auth_username': user,
            'secret_type': 'ceph',
            'secret_uuid': secret_uuid,
            'volume_id': volume['id'],
            'discard': True,
            'access_mode': self.access_mode(connector),
            'encrypted': bool(volume.get('encrypted')),
            'qos_specs': None,
        }
        if keyring:
            data['keyring'] = keyring
        return {'driver_volume_type': 'rbd', 'data': data}

    def _keyring_data(self):
        path = self.backend_conf.rbd_keyring_conf
        if not path:
            return None
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            LOG.debug('Cannot read the RBD keyring file %s', path)
            return None

    def _mon_addrs(self, cluster):
        """``(hosts, ports)`` of the monitors' v1 addresses (Cinder's
        ``_get_mon_addrs``), from the cluster's monitor map."""
        monmap = self._command(cluster, 'mon dump', prefix='mon dump')
        hosts, ports = [], []
        for mon in monmap['mons']:
            addr = mon.get('addr', '').split('/')[0]
            for each in mon.get('public_addrs', {}).get('addrvec', []):
                if each.get('type') == 'v1':
                    addr = each['addr']
            host, _sep, port = addr.rpartition(':')
            hosts.append(host.strip('[]'))
            ports.append(port)
        return hosts, ports

    def _host_key(self, cluster, host):
        """``(entity, key)`` of ``host``'s identity, made when missing."""
        entity = self.identity(host)
        caps = ['mon', 'profile rbd', 'osd', 'profile rbd pool=%s' %
                self._pool]
        try:
            made = self._command(cluster, 'making cephx user %s' % entity,
                                 prefix='auth get-or-create', entity=entity,
                                 caps=caps)
        except CephError as e:
            if e.errno != errno.EINVAL:
                raise
            # It exists with other caps (an operator changed them).
            LOG.warning('cephx user %s exists with other caps than %s: '
                        'kept', entity, caps)
            made = self._command(cluster, 'reading cephx user %s' % entity,
                                 prefix='auth get', entity=entity)
        return entity, made[0]['key']

    def terminate_connection(self, volume, connector):
        name = self._name(volume)
        host = self.connection_host(connector)
        with self._client('disconnecting image %s' % name) as (
                cluster, ioctx):
            try:
                with rbd.Image(ioctx, name, read_only=True) as image:
                    watchers = list(image.watchers_list())
            except rbd.ImageNotFound:
                return
            own = cluster.get_instance_id()
            watchers = [w for w in watchers if w['id'] != own]
            if not watchers:
                return
            if host and self._per_host():
                fenced = self._watchers_of(cluster, watchers,
                                           self.identity(host))
            elif host and volume.get('multiattach') and \
                    (connector or {}).get('ip'):
                ip = connector['ip']
                fenced = [w for w in watchers
                          if w['addr'].rpartition(':')[0].strip('[]') == ip]
            else:
                fenced = watchers
            if fenced:
                self._blocklist(cluster, name, host, fenced)

    def _watchers_of(self, cluster, watchers, entity):
        """The watchers whose cephx entity is ``entity`` (see the module
        docstring: the monitors' sessions)."""
        by_id, by_addr = {}, {}
        monmap = self._command(cluster, 'mon dump', prefix='mon dump')
        for mon in monmap['mons']:
            try:
                sessions = self._command(
                    cluster, 'listing the sessions of mon.%s' % mon['name'],
                    target=mon['name'], prefix='sessions')
            except (CephError, rados.Error) as e:
                LOG.warning('Cannot list the sessions of mon.%s: %s',
                            mon['name'], e)
                continue
            for session in sessions or []:
                who = session.get('entity_name')
                if session.get('global_id'):
                    by_id[session['global_id']] = who
                for addr in session.get('addrs', {}).get('addrvec', []):
                    by_addr[_addr_key(addr['addr'], addr['nonce'])] = who
        result = []
        for watcher in watchers:
            who = by_id.get(watcher['id']) or by_addr.get(watcher['addr'])
            if who is None:
                LOG.warning('Image watcher %s (client.%s) has no monitor '
                            'session: not blocklisted', watcher['addr'],
                            watcher['id'])
            elif who == entity:
                result.append(watcher)
        return result

    def _blocklist(self, cluster, name, host, watchers):
        expire = float(self.backend_conf.rbd_blocklist_expire)
        for watcher in watchers:
            self._command(cluster, 'blocklisting %s' % watcher['addr'],
                          prefix='osd blocklist', blocklistop='add',
                          addr=watcher['addr'], expire=expire)
            LOG.warning('Blocklisted client %s (client.%s) of image %s: '
                        'host %s disconnected', watcher['addr'],
                        watcher['id'], name, host or '(every host)')
        self._wait_osds(cluster)

    def _wait_osds(self, cluster):
        """Wait until every up OSD has the current OSD map (the
        blocklist's): from then on the blocklisted clients' writes
        fail."""
        epoch = self._command(cluster, 'osd stat', prefix='osd stat')[
            'epoch']
        osds = [o['osd'] for o in self._command(
            cluster, 'osd dump', prefix='osd dump')['osds'] if o['up']]
        timeout = self.backend_conf.rados_connect_timeout
        deadline = time.monotonic() + (timeout if timeout > 0 else 60)
        for osd in osds:
            while self._command(cluster, 'status of osd.%s' % osd,
                                osd=osd, prefix='status')[
                    'newest_map'] < epoch:
                if time.monotonic() > deadline:
                    raise CephError(data='%s: osd.%s did not take OSD map '
                                         '%s (the blocklist) in time' % (
                                             self._where(), osd, epoch))
                time.sleep(0.05)


class RBDVolumeFile(base.VolumeFile):
    """An image opened for reading (``r``) or writing (``w``), as a file
    (``base.VolumeFile``) with a connection of its own, closed with it;
    ``extents()`` are the image's allocated parts (``rbd diff``)."""

    def __init__(self, driver, name, mode):
        self._driver = driver
        self._writing = mode != 'r'
        self.name = name
        self._pos = 0
        self._cluster, self._ioctx = driver._connect()
        try:
            with driver._errors('opening image %s' % name):
                self._image = rbd.Image(self._ioctx, name,
                                        read_only=not self._writing)
                self.size = self._image.size()
        except Exception:
            self._ioctx.close()
            self._cluster.shutdown()
            raise

    def seek(self, offset, whence=io.SEEK_SET):
        start = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos,
                 io.SEEK_END: self.size}[whence]
        self._pos = start + offset
        return self._pos

    def tell(self):
        return self._pos

    def read(self, size=-1):
        if size is None or size < 0:
            size = self.size - self._pos
        size = max(0, min(size, self.size - self._pos))
        with self._driver._errors('reading image %s' % self.name):
            data = self._image.read(self._pos, size) if size else b''
        self._pos += len(data)
        return data

    def write(self, data):
        with self._driver._errors('writing image %s' % self.name):
            written = self._image.write(bytes(data), self._pos)
        self._pos += written
        return written

    def extents(self):
        found = []

        def collect(offset, length, exists):
            if exists:
                found.append((offset, length))
            return 0
        with self._driver._errors('listing the data of image %s' %
                                  self.name):
            self._image.diff_iterate(0, self.size, None, collect)
        return found

    def close(self):
        if self.closed:
            return
        try:
            if self._writing:
                with self._driver._errors('flushing image %s' % self.name):
                    self._image.flush()
        finally:
            try:
                self._image.close()
            finally:
                self._ioctx.close()
                self._cluster.shutdown()
                super().close()
