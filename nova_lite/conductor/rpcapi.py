"""Client side of the conductor RPC API (namespace ``conductor``).

API version history (bump the minor version for every change, pin each
method to the lowest version that carries its arguments, and keep
``manager.RPC_API_VERSION`` in step; ``tests/unit/test_rpcapi.py`` checks):

* 1.0 - Initial version.
* 1.1 - build_instances (cast); attach_volume (call, or cast with
  ``do_cast``).
* 1.2 - attach_volume takes ``bdm``: the mapping the API created, which
  the workflow completes or removes.
* 1.3 - unshelve_instance (cast).
"""

import oslo_messaging as messaging

from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import rpc

TOPIC = 'conductor'
NAMESPACE = 'conductor'
RPC_API_VERSION = '1.3'


class ConductorAPI(object):
    def __init__(self, conf, retry=None):
        """``retry``: reconnections to an unreachable broker before a send
        fails (None: wait for it; ``nova_lite.rpc.get_client``)."""
        self.conf = conf
        target = messaging.Target(topic=TOPIC, namespace=NAMESPACE,
                                  version=RPC_API_VERSION)
        self.client = rpc.get_client(
            conf, target, version_cap=conf.upgrade_levels.conductor,
            retry=retry)

    def check_version(self, version):
        if not self.client.can_send_version(version):
            raise exception.ServiceTooOld(
                reason=_('nova-lite-conductor too old for RPC %s') %
                version)

    def build_instances(self, ctxt, instances):
        self.check_version('1.1')
        cctxt = self.client.prepare(version='1.1')
        cctxt.cast(ctxt, 'build_instances', instances=instances)

    def unshelve_instance(self, ctxt, instance, host=None):
        """Unshelve: back on its host, or (offloaded) scheduled again, on
        ``host`` if given."""
        self.check_version('1.3')
        self.client.prepare(version='1.3').cast(
            ctxt, 'unshelve_instance', instance=instance, host=host)

    def attach_volume(self, ctxt, instance, volume_id, device, tag,
                      delete_on_termination, multiattach, bdm=None,
                      do_cast=False):
        """Run the attach workflow. A call returns the device name (errors
        come back as themselves); a cast returns None at once.

        The call waits up to ``long_rpc_timeout`` for a conductor that
        works on it (heartbeats, ``call_monitor_timeout``) and fails with
        ``MessagingTimeout`` after ``rpc_response_timeout`` s without one:
        a silent conductor is not waited for."""
        version = '1.2' if bdm is not None else '1.1'
        self.check_version(version)
        kwargs = dict(instance=instance, volume_id=volume_id, device=device,
                      tag=tag, delete_on_termination=delete_on_termination,
                      multiattach=multiattach)
        if bdm is not None:
            kwargs['bdm'] = bdm
        if do_cast:
            self.client.prepare(version=version).cast(
                ctxt, 'attach_volume', **kwargs)
            return None
        cctxt = self.client.prepare(
            version=version, timeout=self.conf.long_rpc_timeout,
            call_monitor_timeout=self.conf.rpc_response_timeout)
        return cctxt.call(ctxt, 'attach_volume', **kwargs)
