"""Client side of the compute RPC API (namespace ``compute``; every message
goes to one host: topic ``compute``, server = the host name).

API version history (bump the minor version for every change, pin each
method to the lowest version that carries its arguments, and keep
``manager.RPC_API_VERSION`` in step; ``tests/unit/test_rpcapi.py`` checks):

* 1.0 - Initial version.
* 1.1 - Servers and their volumes: build_and_run_instance,
  terminate_instance, stop_instance, start_instance, pause_instance,
  unpause_instance (casts); reserve_block_device_name (call);
  attach_volume, detach_volume, swap_volume (casts).
* 1.2 - reserve_block_device_name takes ``bdm``: the mapping the API
  created (no device name yet) gets the name instead of a new mapping.
* 1.3 - Shelving and deferred delete: shelve_instance,
  shelve_offload_instance, unshelve_instance, soft_delete_instance,
  restore_instance (casts).
* 1.4 - detach_volume and swap_volume take ``task_ref``: the task the
  message acts for (task, owner, step, generation of the mapping, as
  ``BlockDeviceMapping.task_ref`` gives it). The host acts only if the
  mapping is still at that task (one rolled back, settled or taken over
  meanwhile is dropped); a message without it comes from a sender older
  than 1.4.
* 1.5 - external_instance_event (cast): other services' events about
  servers of the host (``volume-extended``...), as Nova's.
"""

import oslo_messaging as messaging

from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import rpc

TOPIC = 'compute'
NAMESPACE = 'compute'
RPC_API_VERSION = '1.5'


class ComputeAPI(object):
    def __init__(self, conf, retry=None):
        """``retry``: reconnections to an unreachable broker before a send
        fails (None: wait for it; ``nova_lite.rpc.get_client``)."""
        self.conf = conf
        target = messaging.Target(topic=TOPIC, namespace=NAMESPACE,
                                  version=RPC_API_VERSION)
        self.client = rpc.get_client(
            conf, target, version_cap=conf.upgrade_levels.compute, retry=retry)

    def _prepare(self, host, version, **kwargs):
        if not self.client.can_send_version(version):
            raise exception.ServiceTooOld(
                reason=_('nova-lite-compute too old for RPC %s') % version)
        return self.client.prepare(server=host, version=version, **kwargs)

    # -- servers (casts) ---------------------------------------------------
    def build_and_run_instance(self, ctxt, instance, host):
        self._prepare(host, '1.1').cast(
            ctxt, 'build_and_run_instance', instance=instance)

    def terminate_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.1').cast(
            ctxt, 'terminate_instance', instance=instance)

    def stop_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.1').cast(
            ctxt, 'stop_instance', instance=instance)

    def start_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.1').cast(
            ctxt, 'start_instance', instance=instance)

    def pause_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.1').cast(
            ctxt, 'pause_instance', instance=instance)

    def unpause_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.1').cast(
            ctxt, 'unpause_instance', instance=instance)

    # -- shelve and deferred delete (casts) -------------------------------
    def shelve_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.3').cast(
            ctxt, 'shelve_instance', instance=instance)

    def shelve_offload_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.3').cast(
            ctxt, 'shelve_offload_instance', instance=instance)

    def unshelve_instance(self, ctxt, instance):
        """To ``instance.host``: the host it is shelved on, or the one the
        conductor chose for an offloaded server."""
        self._prepare(instance.host, '1.3').cast(
            ctxt, 'unshelve_instance', instance=instance)

    def soft_delete_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.3').cast(
            ctxt, 'soft_delete_instance', instance=instance)

    def restore_instance(self, ctxt, instance):
        self._prepare(instance.host, '1.3').cast(
            ctxt, 'restore_instance', instance=instance)

    # -- volumes -------------------------------------------------------------
    def can_reserve_existing_bdm(self):
        """True if the compute hosts take ``bdm`` in
        reserve_block_device_name (1.2)."""
        return self.client.can_send_version('1.2')

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  tag=None, multiattach=False,
                                  delete_on_termination=False, bdm=None):
        """Call: under the instance lock on its host, give ``bdm`` a device
        name (1.2) or, without ``bdm``, create the volume's mapping with one
        (1.1); returns the BlockDeviceMapping.

        Waits up to ``long_rpc_timeout`` for a host that works on it (its
        RPC server heartbeats every ``rpc_response_timeout / 2`` s while the
        handler runs, e.g. waiting for the instance lock), and fails with
        ``MessagingTimeout`` after ``rpc_response_timeout`` s without a
        heartbeat: a silent host (stopped, partitioned) is not waited for
        (``call_monitor_timeout``, as Nova's)."""
        kwargs = dict(instance=instance, device=device, volume_id=volume_id,
                      tag=tag, multiattach=multiattach,
                      delete_on_termination=delete_on_termination)
        version = '1.1'
        if bdm is not None:
            version = '1.2'
            kwargs['bdm'] = bdm
        cctxt = self._prepare(
            instance.host, version, timeout=self.conf.long_rpc_timeout,
            call_monitor_timeout=self.conf.rpc_response_timeout)
        return cctxt.call(ctxt, 'reserve_block_device_name', **kwargs)

    def attach_volume(self, ctxt, instance, bdm):
        self._prepare(instance.host, '1.1').cast(
            ctxt, 'attach_volume', instance=instance, bdm=bdm)

    def _task_version(self, task_ref, kwargs):
        """1.4 with ``task_ref`` when the hosts take it; 1.1 without
        (hosts capped below 1.4 by ``[upgrade_levels] compute``)."""
        if task_ref is not None and self.client.can_send_version('1.4'):
            kwargs['task_ref'] = task_ref
            return '1.4'
        return '1.1'

    def detach_volume(self, ctxt, instance, volume_id, attachment_id,
                      task_ref=None):
        kwargs = dict(instance=instance, volume_id=volume_id,
                      attachment_id=attachment_id)
        version = self._task_version(task_ref, kwargs)
        self._prepare(instance.host, version).cast(
            ctxt, 'detach_volume', **kwargs)

    def swap_volume(self, ctxt, instance, old_volume_id, new_volume_id,
                    new_attachment_id, task_ref=None):
        kwargs = dict(instance=instance, old_volume_id=old_volume_id,
                      new_volume_id=new_volume_id,
                      new_attachment_id=new_attachment_id)
        version = self._task_version(task_ref, kwargs)
        self._prepare(instance.host, version).cast(
            ctxt, 'swap_volume', **kwargs)

    # -- events of other services (cast) ------------------------------------
    def can_send_external_events(self):
        """True if the compute hosts take external_instance_event
        (1.5)."""
        return self.client.can_send_version('1.5')

    def external_instance_event(self, ctxt, instances, events, host):
        """Cast ``host`` the ``events`` (dicts: ``server_uuid``, ``name``,
        ``tag``, ``status``) of its servers ``instances``. ``ServiceTooOld``
        (503) when the hosts are capped below 1.5."""
        self._prepare(host, '1.5').cast(
            ctxt, 'external_instance_event', instances=instances,
            events=events)
