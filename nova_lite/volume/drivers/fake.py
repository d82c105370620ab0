"""``fake``: a backend with no storage at all, for tests and benchmarks.

Volumes cost nothing to create; ``connection_info`` is derived from the
volume alone, so any process can connect a volume another process created.
The only state is configuration, read at each call, so a test can change
it while the system runs: ``connect_delay`` makes connection calls slow and
``fail_connect`` makes them fail::

    [volume]
    enabled_backends = fake1

    [fake1]
    volume_driver = fake
    connect_delay = 0.5
"""

import time

from oslo_config import cfg

from nova_lite import exception
from nova_lite.volume.drivers import base

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
        'multiattach',
        default=True,
        help="""
Whether the ``fake`` backend reports the ``multiattach`` capability, i.e.
whether volumes of a multiattach volume type may be placed on it.
"""),
]


class FakeDriver(base.VolumeDriver):
    OPTS = OPTS

    def _connection_call(self, what, volume):
        delay = self.backend_conf.connect_delay
        if delay:
            time.sleep(delay)
        if self.backend_conf.fail_connect:
            raise exception.VolumeBackendAPIException(
                data='%s of volume %s failed: the fake backend %s is set to '
                     'fail_connect' % (what, volume['id'], self.backend_name))

    def create_volume(self, volume):
        return {'provider_location': 'fake://%s/%s' % (
            self.backend_name, volume['id'])}

    def delete_volume(self, volume):
        pass

    def initialize_connection(self, volume, connector):
        self._connection_call('initialize_connection', volume)
        return {
            'driver_volume_type': 'fake',
            'data': {
                'volume_id': volume['id'],
                'target': volume.get('provider_location') or
                'fake://%s/%s' % (self.backend_name, volume['id']),
                'access_mode': self.access_mode(connector),
            },
        }

    def terminate_connection(self, volume, connector):
        self._connection_call('terminate_connection', volume)

    def get_capabilities(self):
        caps = super().get_capabilities()
        caps['multiattach'] = self.backend_conf.multiattach
        return caps
