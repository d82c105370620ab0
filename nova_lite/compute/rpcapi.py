"""Client side of the compute RPC API (namespace ``compute``; every message
goes to one host: topic ``compute``, server = the host name).

API version history (bump the minor version for every change, pin each
method to the lowest version that carries its arguments, and keep
``manager.RPC_API_VERSION`` in step; ``tests/unit/test_rpcapi.py`` checks):

* 1.0 - Initial version.
"""

import oslo_messaging as messaging

from nova_lite import rpc

TOPIC = 'compute'
NAMESPACE = 'compute'
RPC_API_VERSION = '1.0'


class ComputeAPI(object):
    def __init__(self, conf):
        self.conf = conf
        target = messaging.Target(topic=TOPIC, namespace=NAMESPACE,
                                  version=RPC_API_VERSION)
        self.client = rpc.get_client(
            conf, target, version_cap=conf.upgrade_levels.compute)

    def _prepare(self, host, version, **kwargs):
        return self.client.prepare(server=host, version=version, **kwargs)
