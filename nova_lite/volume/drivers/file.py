"""``file``: each volume a sparse file, the embedded default.

A volume of N GiB is a file of N GiB under ``volumes_dir`` (by default
``$state_path/volumes``) that takes no disk space until written.
``connection_info`` is ``{'driver_volume_type': 'file', 'data': {'path':
..., 'access_mode': ...}}``; several processes (API, compute hosts) can use
one backend when they share ``state_path``. Several hosts may open one
file, so the backend reports ``multiattach``.
"""

import os

from oslo_config import cfg

from nova_lite.conf import base as conf_base
from nova_lite import exception
from nova_lite.volume.drivers import base

GiB = 1024 ** 3

OPTS = [
    cfg.StrOpt(
        'volumes_dir',
        help="""
Directory of the ``file`` backend's volume files. Unset means
``$state_path/volumes``. Every process that serves the block-storage API or
attaches volumes must see the same directory.
"""),
]


class FileDriver(base.VolumeDriver):
    OPTS = OPTS

    def _dir(self):
        return (self.backend_conf.volumes_dir or
                conf_base.state_path(self.conf, 'volumes'))

    def _path(self, volume):
        return os.path.join(self._dir(), 'volume-%s' % volume['id'])

    def create_volume(self, volume):
        path = self._path(volume)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'xb') as f:
                f.truncate(volume['size'] * GiB)
        except OSError as e:
            raise exception.VolumeBackendAPIException(
                data='cannot create %s: %s' % (path, e.strerror))
        return {'provider_location': path}

    def delete_volume(self, volume):
        path = volume.get('provider_location') or self._path(volume)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise exception.VolumeBackendAPIException(
                data='cannot delete %s: %s' % (path, e.strerror))

    def initialize_connection(self, volume, connector):
        path = volume.get('provider_location') or self._path(volume)
        if not os.path.exists(path):
            raise exception.VolumeBackendAPIException(
                data='the file %s of volume %s does not exist' % (
                    path, volume['id']))
        return {
            'driver_volume_type': 'file',
            'data': {
                'path': path,
                'access_mode': self.access_mode(connector),
            },
        }

    def terminate_connection(self, volume, connector):
        # Nothing is exported: a file needs no teardown.
        pass

    def get_capabilities(self):
        caps = super().get_capabilities()
        caps['multiattach'] = True
        return caps
