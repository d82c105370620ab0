"""Server side of the conductor RPC API: a doorway to the workflows."""

import oslo_messaging as messaging

from nova_lite.conductor import rpcapi
from nova_lite import manager

RPC_API_VERSION = rpcapi.RPC_API_VERSION


class ConductorManager(manager.Manager):
    target = messaging.Target(namespace=rpcapi.NAMESPACE,
                              version=RPC_API_VERSION)
