"""Shelving and deferred delete in the compute service layer
(API-CONTRACT.md 3).

Mixed into ``compute.api.API``. Each action runs its guards here (lock,
state, 409), moves ``task_state`` with a compare-and-swap, records the
instance action and casts: to the server's host (shelve, offload, soft
delete, restore) or to the conductor (unshelve, which may have to
schedule). ``[DEFAULT] shelved_offload_time`` and ``[DEFAULT]
reclaim_instance_interval`` are read by the host and here.
"""

from nova_lite.compute import checks
from nova_lite.compute import states
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import objects
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj

SHELVE = instance_action.SHELVE
SHELVE_OFFLOAD = instance_action.SHELVE_OFFLOAD
UNSHELVE = instance_action.UNSHELVE
RESTORE = 'restore'
FORCE_DELETE = 'forceDelete'

DEFAULT_AVAILABILITY_ZONE = 'nova'


class ShelveOperations(object):

    def _start(self, context, instance, method, vm_states, task_state,
               action):
        checks.check_instance_lock(context, instance)
        checks.check_instance_state(instance, method, vm_states)
        instance.task_state = task_state
        instance.save(expected_task_state=[None])
        instance_action.InstanceAction.action_start(context, instance.uuid,
                                                    action)

    @staticmethod
    def _cast(instance, task_state, cast, *args):
        """Cast; if the message cannot be sent, the server is idle again."""
        try:
            cast(*args)
        except Exception:
            instance.task_state = None
            try:
                instance.save(expected_task_state=[task_state])
            except exception.NovaLiteException:
                pass
            raise

    def _host_must_be_up(self, context, instance):
        if not instance.host or not self.host_is_up(context, instance.host):
            raise exception.ComputeServiceUnavailable(host=instance.host)

    # -- shelve ------------------------------------------------------------
    def shelve(self, context, instance):
        """Power off and keep the host; with ``shelved_offload_time = 0``
        the host offloads at once."""
        self._host_must_be_up(context, instance)
        self._start(context, instance, 'shelve', states.SHELVE_VM_STATES,
                    states.SHELVING, SHELVE)
        self._cast(instance, states.SHELVING,
                   self.compute_rpcapi.shelve_instance, context, instance)

    def shelve_offload(self, context, instance):
        self._host_must_be_up(context, instance)
        self._start(context, instance, 'shelve_offload',
                    states.SHELVE_OFFLOAD_VM_STATES,
                    states.SHELVING_OFFLOADING, SHELVE_OFFLOAD)
        self._cast(instance, states.SHELVING_OFFLOADING,
                   self.compute_rpcapi.shelve_offload_instance, context,
                   instance)

    def _check_unshelve_target(self, context, instance, availability_zone,
                               host):
        if instance.vm_state != states.SHELVED_OFFLOADED:
            raise exception.UnshelveInstanceInvalidState(
                instance_uuid=instance.uuid, status=instance.status)
        if availability_zone not in (None, DEFAULT_AVAILABILITY_ZONE):
            raise exception.InvalidInput(
                message=_('The requested availability zone is not '
                          'available'))
        if host is not None:
            # Unknown: 404 here; the handler makes it 400 (it is in the
            # body).
            try:
                objects.Service.get_by_host_and_binary(
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
            self._host_must_be_up(context, instance)
        self._start(context, instance, 'unshelve', states.UNSHELVE_VM_STATES,
                    states.UNSHELVING, UNSHELVE)
        self._cast(instance, states.UNSHELVING,
                   self.conductor_rpcapi.unshelve_instance, context, instance,
                   host)

    # -- deferred delete ---------------------------------------------------
    def can_soft_delete(self, context, instance):
        """Soft delete applies with ``reclaim_instance_interval`` to an idle,
        launched server on a host that is up (otherwise: deleted now)."""
        return (self.conf.reclaim_instance_interval > 0 and
                instance.vm_state != states.SOFT_DELETED and
                instance.task_state is None and
                instance.launched_at is not None and
                bool(instance.host) and
                self.host_is_up(context, instance.host))

    def soft_delete(self, context, instance):
        checks.check_instance_lock(context, instance)
        instance.task_state = states.SOFT_DELETING
        instance.save(expected_task_state=[None])
        instance_action.InstanceAction.action_start(
            context, instance.uuid, instance_action.DELETE)
        self._cast(instance, states.SOFT_DELETING,
                   self.compute_rpcapi.soft_delete_instance, context,
                   instance)

    def restore(self, context, instance):
        self._host_must_be_up(context, instance)
        self._start(context, instance, 'restore', states.RESTORE_VM_STATES,
                    states.RESTORING, RESTORE)
        self._cast(instance, states.RESTORING,
                   self.compute_rpcapi.restore_instance, context, instance)

    def force_delete(self, context, instance):
        checks.check_instance_lock(context, instance)
        checks.check_instance_state(instance, 'force_delete',
                                    states.FORCE_DELETE_VM_STATES,
                                    must_have_launched=False)
        self.delete(context, instance, soft=False)
