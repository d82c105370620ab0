"""Server side of the conductor RPC API: a doorway to the workflows
(``build.py``, ``attach.py``, ``unshelve.py``)."""

import oslo_messaging as messaging

from nova_lite.compute import notifications
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import attach
from nova_lite.conductor import build
from nova_lite.conductor import recovery
from nova_lite.conductor import rpcapi
from nova_lite.conductor import unshelve
from nova_lite import exception
from nova_lite import manager
from nova_lite import policy
from nova_lite import tasks
from nova_lite import volume_client as block_storage

RPC_API_VERSION = rpcapi.RPC_API_VERSION


class ConductorManager(manager.Manager):
    target = messaging.Target(namespace=rpcapi.NAMESPACE,
                              version=RPC_API_VERSION)

    def __init__(self, conf, host):
        super().__init__(conf, host)
        self.compute_rpcapi = compute_rpcapi.ComputeAPI(conf)
        self.notifier = notifications.Notifier(
            conf, host, binary='nova-lite-conductor')
        self.conductor_rpcapi = rpcapi.ConductorAPI(conf)
        self._volume_client = None
        # The mappings whose attach a thread of this process is running:
        # the periodic settling leaves them alone (conductor.recovery).
        self.in_hand = tasks.InHand()

    def init_host(self, context):
        # A conductor that would settle live work refuses to start.
        tasks.check_stalled_after(self.conf)
        # Block storage reached in-process (``[volume] client = local``)
        # checks its policies with the enforcer of this configuration.
        policy.init(self.conf)
        # What this conductor was running when it stopped: rolled back.
        self._settle(context, at_start=True)

    def _settle(self, context, at_start=False):
        return recovery.settle(
            context, self.conf, self.volume_client, self.notifier, self.host,
            at_start=at_start, in_hand=self.in_hand.uuids(),
            compute_api=self.compute_rpcapi,
            conductor_api=self.conductor_rpcapi)

    @property
    def periodic_interval(self):
        """Stalled work is settled every ``[recovery] settle_interval``
        seconds (0: never)."""
        return self.conf.recovery.settle_interval or None

    def periodic_tasks(self, context):
        return self._settle(context)

    @property
    def volume_client(self):
        if self._volume_client is None:
            self._volume_client = block_storage.get_client(self.conf)
        return self._volume_client

    def build_instances(self, context, instances):
        build.build_instances(context, self.conf, self.compute_rpcapi,
                              instances, volume_client=self.volume_client)

    def unshelve_instance(self, context, instance, host=None):
        unshelve.unshelve_instance(context, self.conf, self.compute_rpcapi,
                                   instance, host=host)

    @messaging.expected_exceptions(exception.NovaLiteException)
    def attach_volume(self, context, instance, volume_id, device, tag,
                      delete_on_termination, multiattach, bdm=None):
        return attach.attach_volume(
            context, self.compute_rpcapi, self.volume_client, instance,
            volume_id, device=device, tag=tag,
            delete_on_termination=delete_on_termination,
            multiattach=multiattach, bdm=bdm, host=self.host,
            notifier=self.notifier,
            reserve_timeout=self.conf.compute.multiattach_reserve_timeout,
            conf=self.conf, in_hand=self.in_hand)
