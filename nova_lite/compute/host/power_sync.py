"""The hypervisor's truth: a server's states in the database aligned with
what the hypervisor says of its guest (Nova's ``_sync_power_states`` and
``_sync_instance_power_state``).

The compute manager calls ``sync`` for each server of its host every
``[DEFAULT] sync_power_state_interval`` seconds, and for one server when
the driver reports a lifecycle event of its guest, each time under the
server's instance lock. The rules are Nova's:

* a server placed on another host, or with a task in progress, is left
  alone (its task decides its states; the next sync looks again);
* ``power_state`` always becomes the hypervisor's (``NOSTATE`` when it has
  no such guest), a compare-and-swap on the idle task;
* the vm_state is then reconciled with the guest:

  ============================ ============================ ==============
  vm_state                     guest                        the sync
  ============================ ============================ ==============
  ``active``                   shut down (or crashed)       stops it
  ``active``                   paused, or not found         logs only
  ``stopped``                  running or paused            stops the guest
  ``paused``                   shut down (or crashed)       stops it
  ``soft-delete``/``deleted``  running or paused            logs only
  ``building``, ``error``,     anything                     nothing
  shelved and the others
  ============================ ============================ ==============

  "Stops it" is the server's stop as the API makes it (Nova calls its
  stop API): the idle server is taken to ``powering-off`` (a
  compare-and-swap on the idle task, so a server whose task began
  meanwhile is skipped) with a ``stop`` action in its history, then the
  host's stop runs (the driver's power-off, idempotent on a guest that is
  off already, then ``stopped``: ``SHUTOFF``). The sync never starts a
  guest: ``os-start`` does, on what the hypervisor says.
"""

from oslo_log import log as logging

from nova_lite import exception
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite import states

LOG = logging.getLogger(__name__)

# The outcomes of ``sync``.
SKIPPED = 'skipped'
IN_SYNC = 'in sync'
STOP = 'stop'

# vm_states the sync leaves as they are, whatever the guest (Nova's).
_IGNORED_VM_STATES = (states.BUILDING, states.RESCUED, states.RESIZED,
                      states.SUSPENDED, states.ERROR)
_OFF = (states.NOSTATE, states.SHUTDOWN)


def guest_power_state(driver, instance):
    """The hypervisor's power state of the server's guest: ``NOSTATE``
    when it has none; None when the driver cannot tell."""
    try:
        return driver.get_info(instance)['power_state']
    except exception.InstanceNotFound:
        return states.NOSTATE
    except NotImplementedError:
        return None


def sync(context, driver, host, instance_uuid):
    """Align server ``instance_uuid`` (read here, with ``context``, a
    request of its own) with its guest. Returns ``(outcome, instance)``:
    ``SKIPPED``, ``IN_SYNC`` or ``STOP`` (the server was taken to
    ``powering-off`` with a ``stop`` action of ``context``'s request: the
    caller runs the host's stop, out of the instance lock it holds).
    ``InstanceNotFound`` if the server is gone."""
    instance = instance_obj.Instance.get_by_uuid(context, instance_uuid)
    return _sync(context, driver, host, instance), instance


def _sync(context, driver, host, instance):
    if instance.host != host:
        LOG.info('Power-state sync: server %s is on host %s now, not on '
                 '%s; skipped', instance.uuid, instance.host, host)
        return SKIPPED
    if instance.task_state is not None:
        LOG.info('Power-state sync: server %s has a task in progress '
                 '(%s); skipped', instance.uuid, instance.task_state)
        return SKIPPED
    vm_power_state = guest_power_state(driver, instance)
    if vm_power_state is None:
        return SKIPPED
    db_power_state = instance.power_state
    if vm_power_state != db_power_state:
        LOG.info('Power-state sync: the power state of server %s is %s in '
                 'the database and %s on the hypervisor; the database '
                 'takes the hypervisor\'s', instance.uuid, db_power_state,
                 vm_power_state)
        instance.power_state = vm_power_state
        try:
            instance.save(expected_task_state=[None])
        except exception.UnexpectedTaskStateError:
            LOG.info('Power-state sync: server %s took a task meanwhile; '
                     'skipped', instance.uuid)
            return SKIPPED
    return _reconcile(context, instance, vm_power_state, db_power_state)


def _reconcile(context, instance, vm_power_state, db_power_state):
    vm_state = instance.vm_state
    if vm_state in _IGNORED_VM_STATES:
        return IN_SYNC
    if vm_state == states.ACTIVE:
        if vm_power_state == states.SHUTDOWN:
            LOG.warning('Server %s shut down by itself (database power '
                        'state %s, hypervisor %s): stopping it',
                        instance.uuid, db_power_state, vm_power_state)
            return _begin_stop(context, instance)
        if vm_power_state == states.POWER_PAUSED:
            LOG.warning('Server %s is paused unexpectedly; ignored',
                        instance.uuid)
        elif vm_power_state == states.NOSTATE:
            LOG.warning('The guest of server %s is unexpectedly not found; '
                        'ignored', instance.uuid)
    elif vm_state == states.STOPPED:
        if vm_power_state not in _OFF:
            LOG.warning('Server %s is stopped but its guest is not (power '
                        'state %s): stopping the guest', instance.uuid,
                        vm_power_state)
            return _begin_stop(context, instance)
    elif vm_state == states.PAUSED:
        if vm_power_state == states.SHUTDOWN:
            LOG.warning('Paused server %s shut down by itself: stopping it',
                        instance.uuid)
            return _begin_stop(context, instance)
    elif vm_state in (states.SOFT_DELETED, states.DELETED):
        if vm_power_state not in _OFF:
            LOG.warning('Server %s is %s but its guest runs', instance.uuid,
                        vm_state)
    return IN_SYNC


def _begin_stop(context, instance):
    """The API's stop, forced (a stopped server is stopped again): the
    idle server to ``powering-off`` and a ``stop`` action."""
    try:
        states.move(instance, 'begin', to_task=states.POWERING_OFF)
    except exception.UnexpectedTaskStateError:
        LOG.info('Power-state sync: server %s took a task meanwhile; '
                 'skipped', instance.uuid)
        return SKIPPED
    instance_action.InstanceAction.action_start(context, instance.uuid,
                                                instance_action.STOP)
    return STOP
