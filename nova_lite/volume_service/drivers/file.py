"""``file``: each volume a sparse file, the embedded default.

A volume of N GiB is a file of N GiB under ``volumes_dir`` (by default
``$state_path/volumes``) that takes no disk space until written.
``connection_info`` is ``{'driver_volume_type': 'file', 'data': {'path':
..., 'access_mode': ...}}``; several processes (API, compute hosts) can use
one backend when they share ``state_path``. Several hosts may open one
file, so the backend reports ``multiattach``.

A read-only attachment gets the same path with ``access_mode: ro``: the
consumer (the compute host's virt driver) must open the file read-only;
a file cannot be made read-only for one opener only.

Host connections are recorded beside the volume file, one small JSON file
per connected host in ``connections/volume-<id>/``, so every process that
shares the directory sees the same record (``connections(volume)``). The
file is named after the host, percent-quoted, or (when that name would
pass the file system's 255 bytes) ``sha256-<digest of the host>``; the
record itself names its host. The
directory stays while the volume does (a disconnect removes only its
host's file), so that attaching and detaching again does not create and
remove it each time; deleting the volume removes it.
"""

import hashlib
import json
import os
import tempfile
import threading
from urllib import parse

from oslo_config import cfg

from nova_lite.conf import base as conf_base
from nova_lite import exception
from nova_lite.volume_service.drivers import base

# Serializes the connection records of this process (see _record_host).
_RECORD_LOCK = threading.Lock()

GiB = 1024 ** 3
# The longest file name most file systems take (NAME_MAX), in bytes.
NAME_MAX = 255

OPTS = [
    cfg.StrOpt(
        'volumes_dir',
        help="""
Directory of the ``file`` backend's volume files. Unset means
``$state_path/volumes``. Every process that serves the block-storage API or
attaches volumes must see the same directory.
"""),
]


def remove_file(path, what='remove'):
    """Delete the file ``path``; one already gone is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise exception.VolumeBackendAPIException(
            data='cannot %s %s: %s' % (what, path, e.strerror))


def remove_records(where, path=None):
    """Remove the record ``path`` or (None) every record in the directory
    ``where``."""
    if path is not None:
        paths = [path]
    else:
        try:
            paths = [os.path.join(where, n) for n in os.listdir(where)]
        except FileNotFoundError:
            return
    for each in paths:
        remove_file(each)


def read_records(where, key):
    """``{record[key] (or the file's name, unquoted): record}`` of the
    JSON records (``*.json``) in the directory ``where``; none when it is
    missing. A record removed or being written meanwhile is passed over."""
    try:
        names = sorted(os.listdir(where))
    except FileNotFoundError:
        return {}
    result = {}
    for name in names:
        if not name.endswith('.json'):
            continue
        try:
            with open(os.path.join(where, name)) as f:
                record = json.load(f)
        except (OSError, ValueError):
            continue
        result[record.get(key) or parse.unquote(name[:-5])] = record
    return result


class FileDriver(base.VolumeDriver):
    OPTS = OPTS
    STORAGE_PROTOCOL = 'file'

    def _dir(self):
        return (self.backend_conf.volumes_dir or
                conf_base.state_path(self.conf, 'volumes'))

    def _path(self, volume):
        return (volume.get('provider_location') or
                os.path.join(self._dir(),
                             'volume-%s' % self.storage_id(volume)))

    def _connections_dir(self, volume):
        return os.path.join(os.path.dirname(self._path(volume)),
                            'connections',
                            'volume-%s' % self.storage_id(volume))

    def local_path(self, volume):
        return self._path(volume)

    def create_volume(self, volume):
        path = os.path.join(self._dir(),
                            'volume-%s' % self.storage_id(volume))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'xb') as f:
                f.truncate(volume['size'] * GiB)
        except OSError as e:
            raise exception.VolumeBackendAPIException(
                data='cannot create %s: %s' % (path, e.strerror))
        return {'provider_location': path}

    def delete_volume(self, volume):
        remove_file(self._path(volume), 'delete')
        self._forget_hosts(volume, None)

    def extend_volume(self, volume, new_size):
        path = self._path(volume)
        try:
            with open(path, 'r+b') as f:
                # Only ever grow: a second call (settling) is a no-op.
                if os.fstat(f.fileno()).st_size < new_size * GiB:
                    f.truncate(new_size * GiB)
        except OSError as e:
            raise exception.VolumeBackendAPIException(
                data='cannot extend %s to %sG: %s' % (path, new_size,
                                                      e.strerror))

    def volume_size(self, volume):
        try:
            size = os.stat(self._path(volume)).st_size
        except OSError:
            return None
        return size // GiB

    def initialize_connection(self, volume, connector):
        path = self._path(volume)
        if not os.path.exists(path):
            raise exception.VolumeBackendAPIException(
                data='the file %s of volume %s does not exist' % (
                    path, volume['id']))
        mode = self.access_mode(connector)
        self._record_host(volume, connector, mode)
        return {
            'driver_volume_type': 'file',
            'data': {
                'path': path,
                'access_mode': mode,
            },
        }

    def terminate_connection(self, volume, connector):
        # Nothing is exported: only the record goes.
        self._forget_hosts(volume, self.connection_host(connector) or None)

    def connections(self, volume):
        return read_records(self._connections_dir(volume), 'host')

    # -- the connection record ------------------------------------------
    def _host_file(self, volume, host):
        name = parse.quote(host, safe='') + '.json'
        if len(name) > NAME_MAX:
            name = 'sha256-%s.json' % hashlib.sha256(
                host.encode('utf-8')).hexdigest()
        return os.path.join(self._connections_dir(volume), name)

    @staticmethod
    def _read_record(path):
        """One host's record, or {} when it has none (or an unreadable
        one, which the new record replaces)."""
        try:
            with open(path) as f:
                return json.load(f)
        except (FileNotFoundError, ValueError):
            return {}

    @staticmethod
    def _temp_beside(path):
        """A new temporary file in ``path``'s directory, made on the
        volume's first connection; returns ``(fd, name)``."""
        where = os.path.dirname(path)
        # Not named after ``path``: a record's name may be as long as a
        # file name can be.
        prefix = '.record-'
        try:
            return tempfile.mkstemp(dir=where, prefix=prefix, suffix='.tmp')
        except FileNotFoundError:
            os.makedirs(where, exist_ok=True)
            return tempfile.mkstemp(dir=where, prefix=prefix, suffix='.tmp')

    def _record_host(self, volume, connector, mode):
        host = self.connection_host(connector)
        path = self._host_file(volume, host)
        try:
            # Several servers of one host connect a multiattach volume at
            # once (a multi-create builds them in parallel): the count is
            # read and written under a lock, and each writer has a
            # temporary file of its own (one per process was shared by
            # the threads: one's rename left the next without a file).
            with _RECORD_LOCK:
                previous = self._read_record(path)
                record = {'host': host, 'mode': mode,
                          'connector': dict(connector or {}),
                          'initialized': previous.get('initialized', 0) + 1}
                fd, tmp = self._temp_beside(path)
                with os.fdopen(fd, 'w') as f:
                    json.dump(record, f, sort_keys=True)
                os.replace(tmp, path)
        except OSError as e:
            raise exception.VolumeBackendAPIException(
                data='cannot record the connection of host %s to volume '
                     '%s: %s' % (host, volume['id'], e.strerror))

    def _forget_hosts(self, volume, host):
        """Remove ``host``'s record, or (``host`` None: the volume is
        deleted) every record and the directory."""
        where = self._connections_dir(volume)
        remove_records(where, None if host is None
                       else self._host_file(volume, host))
        if host is None:
            try:
                os.rmdir(where)
            except OSError:
                pass    # a host connected meanwhile, or already gone

    def get_capabilities(self):
        caps = super().get_capabilities()
        caps['multiattach'] = True
        return caps
