"""RPC methods every nova_lite service answers (namespace ``baseapi``).

``ping`` answers once a service consumes its queue: the integration tests
(and an operator's probe) call it to know that a service serves RPC.
Nova's services call it at start (``wait_until_ready``) to wait for the
conductor; nova_lite's do not: a cast waits in its queue for the
service.

API version history:

* 1.0 - Initial version: ``ping``.
"""

import oslo_messaging as messaging

from nova_lite import rpc

_NAMESPACE = 'baseapi'
RPC_API_VERSION = '1.0'


class BaseAPI(object):
    def __init__(self, conf, topic):
        target = messaging.Target(topic=topic, namespace=_NAMESPACE,
                                  version='1.0')
        self.client = rpc.get_client(conf, target)
        self.conf = conf

    def ping(self, context, arg, timeout=None):
        cctxt = self.client.prepare(timeout=timeout)
        return cctxt.call(context, 'ping', arg=arg)


class BaseRPCAPI(object):
    """Server side of the base RPC API."""

    target = messaging.Target(namespace=_NAMESPACE, version=RPC_API_VERSION)

    def __init__(self, service_name):
        self.service_name = service_name

    def ping(self, context, arg):
        return {'service': self.service_name, 'arg': arg}
