"""Server side of the compute RPC API: one per host."""

import oslo_messaging as messaging

from nova_lite.compute import rpcapi
from nova_lite import manager

RPC_API_VERSION = rpcapi.RPC_API_VERSION


class ComputeManager(manager.Manager):
    target = messaging.Target(namespace=rpcapi.NAMESPACE,
                              version=RPC_API_VERSION)
