"""``fake``: a backend with no storage at all, for tests and benchmarks.

Volumes cost nothing to create; ``connection_info`` is derived from the
volume alone, so any process can connect a volume another process created.
The only state is configuration, read at each call, so a test can change
it while the system runs: ``connect_delay`` makes connection calls slow,
``fail_connect`` makes them fail, ``fail_extend`` makes extends fail and
``connection_secrets`` adds credentials to ``connection_info``::

    [volume]
    enabled_backends = fake1

    [fake1]
    volume_driver = fake
    connect_delay = 0.5

Host connections are recorded in memory, per process, keyed by backend
and volume (``connections(volume)``: which hosts are connected and with
which access mode), so that a test running the whole system in one
process can check that a host stays connected while another attachment
on it still needs the connection. Processes do not share the record: in a
multi-process deployment each sees only the calls it made itself. The sizes
of the volumes it created or extended are kept the same way
(``volume_size``): a process that did not make them cannot tell. A
clone (``create_cloned_volume``) is a create: there is no data to copy.
"""

import copy
import hashlib
import threading
import time

from oslo_config import cfg

from nova_lite import exception
from nova_lite.volume_service.drivers import base

OPTS = [
    cfg.FloatOpt(
        'connect_delay',
        default=0.0,
        min=0.0,
        help="""
Seconds the ``fake`` driver waits in each initialize and terminate
connection call, to imitate a slow storage backend in tests and benchmarks.
"""),
    cfg.BoolOpt(
        'fail_connect',
        default=False,
        help="""
Make every initialize and terminate connection call of the ``fake`` driver
fail, to test that failures are rolled back and reported.
"""),
    cfg.BoolOpt(
        'fail_extend',
        default=False,
        help="""
Make every extend call of the ``fake`` driver fail, to test that a failed
extend leaves the volume ``error_extending`` with its former size.
"""),
    cfg.BoolOpt(
        'connection_secrets',
        default=False,
        help="""
Whether the ``fake`` driver's ``connection_info`` carries credentials as
those of ``iscsi`` and ``rbd`` do (``auth_password``,
``discovery_auth_password``, ``keyring``; made from the backend, the
volume and the host), to test who is shown them and how they are stored.
"""),
    cfg.BoolOpt(
        'multiattach',
        default=True,
        help="""
Whether the ``fake`` backend reports the ``multiattach`` capability, i.e.
whether volumes of a multiattach volume type may be placed on it. The
block storage caches capabilities for ``[volume] capabilities_cache_time``
seconds, so a change is seen after at most that long.
"""),
]

_LOCK = threading.Lock()
# (backend name, volume id) -> {host: connection record}
_CONNECTIONS = {}
# (backend name, volume id) -> size in GiB
_SIZES = {}


class FakeDriver(base.VolumeDriver):
    OPTS = OPTS
    STORAGE_PROTOCOL = 'fake'

    def _connection_call(self, what, volume):
        delay = self.backend_conf.connect_delay
        if delay:
            time.sleep(delay)
        if self.backend_conf.fail_connect:
            raise exception.VolumeBackendAPIException(
                data='%s of volume %s failed: the fake backend %s is set to '
                     'fail_connect' % (what, volume['id'], self.backend_name))

    def _key(self, volume):
        return (self.backend_name, self.storage_id(volume))

    def create_volume(self, volume):
        with _LOCK:
            _SIZES[self._key(volume)] = volume['size']
        return {'provider_location': 'fake://%s/%s' % (
            self.backend_name, self.storage_id(volume))}

    def delete_volume(self, volume):
        with _LOCK:
            _CONNECTIONS.pop(self._key(volume), None)
            _SIZES.pop(self._key(volume), None)

    def extend_volume(self, volume, new_size):
        if self.backend_conf.fail_extend:
            raise exception.VolumeBackendAPIException(
                data='extend of volume %s failed: the fake backend %s is set '
                     'to fail_extend' % (volume['id'], self.backend_name))
        with _LOCK:
            key = self._key(volume)
            _SIZES[key] = max(_SIZES.get(key, 0), new_size)

    def volume_size(self, volume):
        with _LOCK:
            return _SIZES.get(self._key(volume))

    def initialize_connection(self, volume, connector):
        self._connection_call('initialize_connection', volume)
        mode = self.access_mode(connector)
        host = self.connection_host(connector)
        with _LOCK:
            hosts = _CONNECTIONS.setdefault(self._key(volume), {})
            previous = hosts.get(host, {})
            hosts[host] = {
                'mode': mode,
                'connector': copy.deepcopy(dict(connector or {})),
                'initialized': previous.get('initialized', 0) + 1,
            }
        data = {
            'volume_id': volume['id'],
            'target': volume.get('provider_location') or
            'fake://%s/%s' % (self.backend_name, self.storage_id(volume)),
            'access_mode': mode,
        }
        if self.backend_conf.connection_secrets:
            data.update(self._secrets(volume, host))
        return {'driver_volume_type': 'fake', 'data': data}

    def _secrets(self, volume, host):
        seed = '%s/%s/%s' % (self.backend_name, self.storage_id(volume),
                             host)
        return {key: 'fake-%s-%s' % (key, hashlib.sha256(
            (key + seed).encode('utf-8')).hexdigest()[:16])
            for key in ('auth_password', 'discovery_auth_password',
                        'keyring')}

    def terminate_connection(self, volume, connector):
        self._connection_call('terminate_connection', volume)
        host = self.connection_host(connector)
        with _LOCK:
            hosts = _CONNECTIONS.get(self._key(volume), {})
            if host:
                hosts.pop(host, None)
            else:
                hosts.clear()
            if not hosts:
                _CONNECTIONS.pop(self._key(volume), None)

    def connections(self, volume):
        with _LOCK:
            return copy.deepcopy(_CONNECTIONS.get(self._key(volume), {}))

    def get_capabilities(self):
        caps = super().get_capabilities()
        caps['multiattach'] = self.backend_conf.multiattach
        return caps
