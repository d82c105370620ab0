"""The fast guards of the compute service layer (Nova's
``check_instance_lock``, ``check_instance_state`` and
``check_instance_host``), run in the API before anything is asked of a
compute host."""

import re

from nova_lite import exception

# Nova's block_device.match_device.
_DEVICE_RE = re.compile(r'(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$')


def check_instance_lock(context, instance):
    """409 when the server is locked and the caller is not an admin."""
    if instance.locked and not context.is_admin:
        raise exception.InstanceIsLocked(instance_uuid=instance.uuid)


def check_instance_state(instance, method, vm_states=None,
                         task_states=(None,), must_have_launched=True):
    """409 unless ``vm_state`` is one of ``vm_states`` (None: any),
    ``task_state`` one of ``task_states`` (None: any) and, when asked, the
    server has been launched. Checked in that order, as in Nova."""
    if vm_states is not None and instance.vm_state not in vm_states:
        raise exception.InstanceInvalidState(
            attr='vm_state', instance_uuid=instance.uuid,
            state=instance.vm_state, method=method)
    if task_states is not None and instance.task_state not in task_states:
        raise exception.InstanceInvalidState(
            attr='task_state', instance_uuid=instance.uuid,
            state=instance.task_state, method=method)
    if must_have_launched and not instance.launched_at:
        raise exception.InstanceInvalidState(
            attr='launched_at', instance_uuid=instance.uuid,
            state=instance.launched_at, method=method)


def check_instance_host(instance):
    """409 when the server has no compute host (not scheduled yet)."""
    if not instance.host:
        raise exception.InstanceNotReady(instance_id=instance.uuid)


def match_device(device):
    """True if ``device`` is a disk path Nova accepts (``/dev/vdb``)."""
    return bool(_DEVICE_RE.match(device or ''))
