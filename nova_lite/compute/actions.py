"""A server action's first and last steps in the compute service layer:
its guards, the compare-and-swap of ``task_state`` from idle and the
instance action (``start``); the cast, after which a message that could
not be sent leaves the server idle again (``cast_or_idle``); both in
order (``run``)."""

from nova_lite.compute import checks
from nova_lite import exception
from nova_lite.objects import instance_action
from nova_lite import states


def start(context, instance, method, vm_states, task_state, action):
    """Guards (lock, state: 409), the compare-and-swap of ``task_state``
    from idle, the instance action ``action``."""
    checks.check_instance_lock(context, instance)
    checks.check_instance_state(instance, method, vm_states)
    states.move(instance, 'begin', to_task=task_state)
    instance_action.InstanceAction.action_start(context, instance.uuid,
                                                action)


def cast_or_idle(instance, task_state, cast, *args):
    """Cast; if the message cannot be sent, the server is idle again."""
    try:
        cast(*args)
    except Exception:
        try:
            states.move(instance, 'abandon', from_task=task_state)
        except exception.NovaLiteException:
            pass
        raise


def run(context, instance, method, vm_states, task_state, action, cast,
        *args):
    """``start``, then ``cast_or_idle(instance, task_state, cast,
    *args)``."""
    start(context, instance, method, vm_states, task_state, action)
    cast_or_idle(instance, task_state, cast, *args)
