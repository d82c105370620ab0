"""Factories for nova_lite's RPC services, shared by the commands and the
embedded system."""

from nova_lite.compute import manager as compute_manager
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import manager as conductor_manager
from nova_lite.conductor import rpcapi as conductor_rpcapi
from nova_lite.objects import service as service_obj
from nova_lite import service
from nova_lite.volume import drivers as volume_drivers


def _check_volume_backends(conf):
    # With the local volume client this process drives the block-storage
    # backends itself: fail at start on a wrong backend configuration.
    if conf.volume.client == 'local':
        volume_drivers.get_backends(conf)


def conductor_service(conf, host=None):
    host = host or conf.host
    _check_volume_backends(conf)
    return service.Service(
        conf, host, service_obj.CONDUCTOR_BINARY, conductor_rpcapi.TOPIC,
        conductor_manager.ConductorManager(conf, host))


def compute_service(conf, host=None):
    host = host or conf.host
    _check_volume_backends(conf)
    return service.Service(
        conf, host, service_obj.COMPUTE_BINARY, compute_rpcapi.TOPIC,
        compute_manager.ComputeManager(conf, host))
