"""The volume service (``nova-lite-volume``, Cinder's cinder-volume), as
its command and the embedded system run it: the drivers of the backends
``[volume] enabled_backends`` names, behind the RPC API of
``volume.rpcapi`` (``volume_service.manager``).

It consumes the queue of each of its backends (``Target(topic=TOPIC,
server=<backend>)``: several services enabling one backend share its
queue) and registers and beats one row per backend in ``services``, as
Cinder's cinder-volume does: binary ``cinder-volume``, host ``H@backend``
(``H`` the backend's ``backend_host``, else ``[DEFAULT] host``), what
``/v3/os-services`` lists (``volume.services``). At start
(``VolumeManager.init_host``, before it consumes) it exports again what
its backends' target daemons lost; then it runs block storage's settling
of its backends and the export check (``volume_service.periodic``).
"""

from oslo_log import log as logging

from nova_lite.objects import service as service_obj
from nova_lite import service
from nova_lite.volume import backends as backend_conf
from nova_lite.volume import rpcapi
from nova_lite.volume_service import manager as volume_manager
from nova_lite.volume_service import periodic

LOG = logging.getLogger(__name__)

BINARY = 'nova-lite-volume'


def service_host(conf, backend):
    """``H@backend``: the host of ``backend``'s ``cinder-volume`` row."""
    return backend_conf.volume_host(conf, backend).partition('#')[0]


class VolumeService(service.Service):
    """A ``Service`` that also runs block storage's settling of its
    backends (``periodic.PeriodicSettling``) once it serves."""

    def __init__(self, conf, host, manager):
        backends = list(manager.backends)
        super().__init__(
            conf, host, BINARY, rpcapi.TOPIC, manager, servers=backends,
            rows=[(service_host(conf, b), service_obj.VOLUME_BINARY)
                  for b in backends])
        self.settling = periodic.PeriodicSettling(conf)

    def start(self):
        super().start()
        self.settling.start()

    def stop(self):
        self.settling.stop()
        super().stop()

    def wait(self):
        self.settling.wait()
        super().wait()


def create(conf, host=None):
    """The volume service of ``host`` (``[DEFAULT] host`` when None), not
    started. Its backends' drivers are loaded here: a wrong configuration
    fails at once."""
    host = host or conf.host
    return VolumeService(conf, host,
                         volume_manager.VolumeManager(conf, host))
