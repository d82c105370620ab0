"""The driver interface every block-storage backend implements.

A driver is small on purpose: make, grow and remove a volume's storage,
make and break a host's connection to it, and say what it can do.
Everything else (the status machine, attachments, policy, whether a host
connection is still shared) is the service layer's
(``nova_lite.volume.api`` and ``nova_lite.volume.attachment_api``).

Drivers are used from every process that runs that service layer (the API
for ``/v3``, compute and conductor through the ``local`` client), so a
driver keeps no state that another process would need: whatever it must
remember about a volume it returns from ``create_volume`` as model updates
(stored in the ``volumes`` row) or derives from the volume itself.

Volumes are passed as plain dicts: ``id``, ``name_id`` (the id that names
the volume's storage: the volume's own id, or after a migration the id of
the temporary volume whose storage it took, Cinder's ``name_id``; drivers
name and find storage and connection records by it, never by ``id``),
``size`` (GiB), ``host`` (the backend name, as the volume's row keeps it;
``host_name`` is the ``host@backend#pool`` clients see),
``provider_location``, ``multiattach``.

A volume made from another volume (``create_cloned_volume``): by
default ``create_volume`` and a copy of the data, each volume opened as a
file (``open_volume``); ``file`` and ``iscsi`` use it, ``rbd`` clones the
image in Ceph.

Host connections: ``initialize_connection`` is called once per attachment,
so twice for two attachments of one multiattach volume on one compute host;
``terminate_connection`` is called only when the last attachment of the
volume on that host goes (``volume/attachment_api.py`` decides, from the
database), and it disconnects the host. ``connections(volume)`` says which
hosts a backend holds connected; ``fake`` and ``file`` record them so that
tests and operators can check it, ``iscsi`` reads them from its target
daemon.

A backend whose exports live outside the database (a target daemon's
memory) makes them agree with it in ``ensure_exports``: what a restarted
daemon lost is exported again, what a dead process left is unexported.
Block storage's settling calls it periodically, in the processes that
serve block storage (``nova_lite.volume_service.periodic``).
"""

import abc
import io
import os
import time

from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import timeutils

from nova_lite import utils

LOG = logging.getLogger(__name__)

ACCESS_MODES = ('ro', 'rw')


class VolumeDriver(abc.ABC):
    """One backend: ``conf`` is the whole ConfigOpts, ``backend_conf``
    the backend's own group (e.g. ``[fake1]``)."""

    #: Options of this driver, registered in each backend group using it.
    OPTS = []
    #: Reported in the capabilities.
    VERSION = '1.0.0'
    STORAGE_PROTOCOL = None
    #: Reported as ``vendor_name``: what Cinder's own open-source drivers
    #: (LVM, NFS) report, and what tempest expects of a reference backend
    #: (its ``[volume] vendor_name`` default).
    VENDOR_NAME = 'Open Source'

    def __init__(self, conf, backend_name):
        self.conf = conf
        self.backend_name = backend_name
        self._reported = None    # (monotonic time, capabilities)

    @property
    def backend_conf(self):
        return self.conf[self.backend_name]

    @abc.abstractmethod
    def create_volume(self, volume):
        """Make the volume's storage. Returns a dict of column updates for
        the volume row (``provider_location``), possibly empty."""

    def create_cloned_volume(self, volume, src_volume, progress=None):
        """Make ``volume``'s storage (``volume['size']`` GiB, at least the
        size of ``src_volume``, a volume of this backend) holding the data
        ``src_volume`` holds now (Cinder's ``create_cloned_volume``).
        Returns column updates, as ``create_volume``. ``progress()`` is
        called while data is copied (the clone's heartbeat; it may raise
        to stop the copy).

        The default is generic: ``create_volume`` (a volume of the size
        asked, so one larger than its source needs no extend), then the
        source's data copied into it, each opened as a file
        (``open_volume``, ``utils.copy_file_data``: only the parts
        holding data). When the copy fails the new storage is deleted. A
        backend that keeps no data (``open_volume`` None: ``fake``) only
        creates."""
        updates = self.create_volume(volume) or {}
        made = dict(volume, **updates)
        try:
            source_file = self.open_volume(src_volume, 'r')
            if source_file is not None:
                with source_file, self.open_volume(made, 'w') as dest:
                    utils.copy_file_data(source_file, dest,
                                         progress=progress)
        except Exception:
            with excutils.save_and_reraise_exception():
                try:
                    self.delete_volume(made)
                except Exception:
                    LOG.exception('Could not delete the storage of '
                                  'volume %s after its clone failed',
                                  volume['id'])
        return updates

    @abc.abstractmethod
    def delete_volume(self, volume):
        """Remove the volume's storage; a volume already gone is not an
        error."""

    @abc.abstractmethod
    def extend_volume(self, volume, new_size):
        """Grow the volume's storage to ``new_size`` GiB (``volume['size']``
        is the size it had). Growing a volume already that large is not an
        error: a settling process may ask again."""

    def volume_size(self, volume):
        """The size in GiB the backend holds for ``volume``, or None when
        it cannot tell (no such storage, or a backend that keeps no sizes).
        Settling an interrupted extend asks it."""
        return None

    @abc.abstractmethod
    def initialize_connection(self, volume, connector):
        """Connect the connector's ``host`` (again: one call per
        attachment). ``connector['mode']`` (``ro``/``rw``) is the access
        mode to grant. Returns ``{'driver_volume_type': ..., 'data':
        {...}}`` with ``data`` including ``access_mode``."""

    @abc.abstractmethod
    def terminate_connection(self, volume, connector):
        """Disconnect the connector's host (``connector`` as given when
        connecting). An empty connector (not known) disconnects every
        host. Disconnecting a host that is not connected is not an
        error."""

    def connections(self, volume):
        """``{host: {'mode': ..., 'connector': {...}, 'initialized': n}}``:
        the hosts this backend holds connected to ``volume`` (``mode`` and
        ``connector`` of the latest ``initialize_connection``, ``n`` the
        number of calls since the host was connected). A backend that keeps
        no such record returns ``{}``."""
        return {}

    def export_check_interval(self):
        """Seconds between two looks at whether the backend's target
        daemon lost its exports (``ensure_exports`` with no
        ``stalled_before``, run by ``volume_service.periodic`` apart from block
        storage's settling); 0: no such look."""
        return 0

    def ensure_exports(self, connected, stalled_before=None, owned=None):
        """Make the backend's exports agree with the database: export
        again what it lost (its target daemon was restarted) and, with
        ``stalled_before`` (naive UTC), unexport what a process that died
        mid-connection left to a host no connected attachment needs, once
        older than that. ``connected(volume_id=None, detaching=True)``
        reads the database: ``{volume id: (volume, [connector, ...])}``,
        the volumes of this backend with live connected attachments, each
        with the attachments' connectors (call it only when needed); only
        ``volume_id``'s when given, and without the attachments whose
        detach has begun unless ``detaching`` (a detach marks its
        attachment before it calls ``terminate_connection``: read so
        under the lock ``terminate_connection`` takes, what is exported
        again is never a host being disconnected). Returns ``[(volume id,
        'exported' or 'unexported')]``. ``owned(storage_ids)``, when
        given, says which storage ids are this backend's volumes' (what
        the backend may unexport; None: every target it names as its
        own). A backend that exports nothing does nothing."""
        return []

    def local_path(self, volume):
        """A path, on this machine, of a file or block device holding the
        volume's data (what a migration copies with no host using the
        volume: Cinder's ``local_path``), or None when the backend keeps
        no data (``fake``) or cannot give one."""
        return None

    def open_volume(self, volume, mode='r'):
        """The volume's data as a file (a ``VolumeFile``: ``read``,
        ``write``, ``seek``, ``tell``, ``extents``, ``close``; a context
        manager), opened for reading (``r``) or for writing too (``w``;
        the storage exists, nothing is truncated), or None when the
        backend keeps no data (``fake``). What a migration copies with no
        host using the volume. The default opens ``local_path``."""
        path = self.local_path(volume)
        if path is None:
            return None
        return LocalVolumeFile(path, mode)

    def get_capabilities(self):
        """What the backend can do, as Cinder reports pool capabilities;
        ``multiattach`` decides whether multiattach volumes may be placed
        here."""
        return {
            'volume_backend_name': self.volume_backend_name,
            'pool_name': self.pool_name,
            'driver': self.__class__.__name__,
            'vendor_name': self.VENDOR_NAME,
            'driver_version': self.VERSION,
            'storage_protocol': self.STORAGE_PROTOCOL,
            'multiattach': False,
        }

    def reported_capabilities(self, max_age):
        """The capabilities as last reported, asked again when older than
        ``max_age`` seconds (0: every time); ``updated`` says when."""
        now = time.monotonic()
        reported = self._reported
        if reported is None or max_age <= 0 or now - reported[0] > max_age:
            caps = dict(self.get_capabilities())
            caps['updated'] = timeutils.utcnow().strftime(
                '%Y-%m-%dT%H:%M:%S.%f')
            reported = (now, caps)
            self._reported = reported
        return reported[1]

    @property
    def pool_name(self):
        """The backend's one pool: a backend is a pool in nova_lite, named
        like the backend."""
        return self.backend_name

    @property
    def host_name(self):
        """Cinder's ``host@backend#pool`` of this backend's pool."""
        host = self.backend_conf.backend_host or self.conf.host
        return '%s@%s#%s' % (host, self.backend_name, self.pool_name)

    @property
    def volume_backend_name(self):
        return self.backend_conf.volume_backend_name or self.backend_name

    @staticmethod
    def access_mode(connector):
        mode = (connector or {}).get('mode') or 'rw'
        return mode if mode in ACCESS_MODES else 'rw'

    @staticmethod
    def storage_id(volume):
        """The id naming the volume's storage (``name_id``, else ``id``)."""
        return volume.get('name_id') or volume['id']

    @staticmethod
    def connection_host(connector):
        """The host a connector names (``''`` when it names none)."""
        return str((connector or {}).get('host') or '')


class VolumeFile(object):
    """A volume's data opened as a file (``VolumeDriver.open_volume``):
    ``size`` bytes; ``read(n)``, ``write(data)`` at the position ``seek``
    and ``tell`` move; ``extents()``: ``(offset, length)`` of the parts
    that hold data (all of it unless a subclass can tell); ``close()``
    flushes what was written. A context manager."""

    size = 0
    closed = False

    def extents(self):
        return [(0, self.size)] if self.size else []

    def close(self):
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class LocalVolumeFile(VolumeFile):
    """A file (or block device) of this machine; its holes are not
    data."""

    def __init__(self, path, mode='r'):
        self.name = path
        self._file = open(path, 'rb' if mode == 'r' else 'r+b')
        self._writing = mode != 'r'
        self.size = self._file.seek(0, io.SEEK_END)
        self._file.seek(0)

    def read(self, size=-1):
        return self._file.read(size)

    def write(self, data):
        return self._file.write(data)

    def seek(self, offset, whence=io.SEEK_SET):
        return self._file.seek(offset, whence)

    def tell(self):
        return self._file.tell()

    def extents(self):
        return list(utils.data_extents(self._file.fileno(), self.size))

    def close(self):
        if self.closed:
            return
        try:
            if self._writing:
                self._file.flush()
                os.fsync(self._file.fileno())
        finally:
            self._file.close()
            super().close()
