"""The conductor's RPC service, as ``nova-lite-conductor`` and the
embedded system run it."""

from nova_lite.conductor import manager
from nova_lite.conductor import rpcapi
from nova_lite.objects import service as service_obj
from nova_lite import service


def create(conf, host=None):
    """The conductor service of ``host`` (``[DEFAULT] host`` when None),
    not started."""
    return service.create(conf, host, service_obj.CONDUCTOR_BINARY,
                          rpcapi.TOPIC, manager.ConductorManager)
