"""A compute host's RPC service, as ``nova-lite-compute`` and the
embedded system run it."""

from nova_lite.compute.host import manager
from nova_lite.compute import rpcapi
from nova_lite.objects import service as service_obj
from nova_lite import service


def create(conf, host=None):
    """The compute service of ``host`` (``[DEFAULT] host`` when None), not
    started."""
    return service.create(conf, host, service_obj.COMPUTE_BINARY,
                          rpcapi.TOPIC, manager.ComputeManager)
