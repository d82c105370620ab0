"""Shelving in the compute service layer (API-CONTRACT.md 3).

``Shelving`` is ``compute.api.API().shelving``. Each action runs its
guards here (lock, state, 409), moves ``task_state`` with a
compare-and-swap, records the instance action and casts: to the server's
host (shelve, offload) or to the conductor (unshelve, which may have to
schedule). ``[DEFAULT] shelved_offload_time`` is read by the host and
here.
"""

from nova_lite.compute import actions
from nova_lite.compute import checks
from nova_lite import exception
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from nova_lite import states


class Shelving(object):
    def __init__(self, conf, compute_rpcapi, conductor_rpcapi):
        self.conf = conf
        self.compute_rpcapi = compute_rpcapi
        self.conductor_rpcapi = conductor_rpcapi

    # -- shelve ------------------------------------------------------------
    def shelve(self, context, instance):
        """Power off and keep the host; with ``shelved_offload_time = 0``
        the host offloads at once."""
        checks.check_instance_host_is_up(context, self.conf, instance)
        actions.run(context, instance, 'shelve', states.SHELVE_VM_STATES,
                    states.SHELVING, instance_action.SHELVE,
                    self.compute_rpcapi.shelve_instance, context, instance)

    def shelve_offload(self, context, instance):
        checks.check_instance_host_is_up(context, self.conf, instance)
        actions.run(context, instance, 'shelve_offload',
                    states.SHELVE_OFFLOAD_VM_STATES,
                    states.SHELVING_OFFLOADING, instance_action.SHELVE_OFFLOAD,
                    self.compute_rpcapi.shelve_offload_instance, context,
                    instance)

    def _check_unshelve_target(self, context, instance, availability_zone,
                               host):
        if instance.vm_state != states.SHELVED_OFFLOADED:
            raise exception.UnshelveInstanceInvalidState(
                instance_uuid=instance.uuid, status=instance.status)
        checks.check_availability_zone(availability_zone)
        if host is not None:
            # Unknown: 404 here; the handler makes it 400 (it is in the
            # body).
            try:
                service_obj.Service.get_by_host_and_binary(
                    context, host, service_obj.COMPUTE_BINARY)
            except exception.ServiceNotFound:
                raise exception.ComputeHostNotFound(host=host)

    def unshelve(self, context, instance, availability_zone=None,
                 host=None, target_given=False):
        """Back to a host: the one it is shelved on, or (offloaded) one
        the conductor chooses, ``host`` if given. ``target_given``: the
        request named an availability zone or a host (only an offloaded
        server can take one: 409 otherwise)."""
        checks.check_instance_lock(context, instance)
        checks.check_instance_state(instance, 'unshelve',
                                    states.UNSHELVE_VM_STATES)
        if target_given:
            self._check_unshelve_target(context, instance,
                                        availability_zone, host)
        if instance.vm_state == states.SHELVED:
            checks.check_instance_host_is_up(context, self.conf, instance)
        actions.run(context, instance, 'unshelve', states.UNSHELVE_VM_STATES,
                    states.UNSHELVING, instance_action.UNSHELVE,
                    self.conductor_rpcapi.unshelve_instance, context,
                    instance, host)
