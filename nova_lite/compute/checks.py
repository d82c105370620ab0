"""The fast guards of the compute service layer (Nova's
``check_instance_lock``, ``check_instance_state`` and
``check_instance_host``), run in the API before anything is asked of a
compute host."""

import re

from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import service as service_obj

# The one availability zone of the compute hosts.
DEFAULT_AVAILABILITY_ZONE = 'nova'

# Nova's block_device.match_device.
_DEVICE_RE = re.compile(r'(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$')


def host_is_up(context, conf, host):
    """Whether the compute service of ``host`` is up (``[DEFAULT]
    service_down_time``); False for a host with no service."""
    try:
        svc = service_obj.Service.get_by_host_and_binary(
            context, host, service_obj.COMPUTE_BINARY)
    except exception.ServiceNotFound:
        return False
    return svc.is_up(conf.service_down_time)


def check_instance_host_is_up(context, conf, instance):
    """409 (``ComputeServiceUnavailable``) unless the server has a host
    whose compute service is up (Nova's
    ``check_instance_host(check_is_up=True)``)."""
    if not instance.host or not host_is_up(context, conf, instance.host):
        raise exception.ComputeServiceUnavailable(host=instance.host)


def check_instance_lock(context, instance):
    """409 when the server is locked and the caller is not an admin."""
    if instance.locked and not context.is_admin:
        raise exception.InstanceIsLocked(instance_uuid=instance.uuid)


def check_availability_zone(availability_zone):
    """400 unless ``availability_zone`` is unset or the hosts' zone."""
    if availability_zone not in (None, DEFAULT_AVAILABILITY_ZONE):
        raise exception.InvalidInput(
            message=_('The requested availability zone is not available'))


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


def check_attach_mode_supported(context, instance, attach_mode):
    """409 when a read-only attach is asked of a server whose compute host
    is older than the first service version that honours ``attach_mode``
    (its guest would get the volume read/write). A server without a host
    (shelved-offloaded, not scheduled yet) is checked at unshelve or build
    time by the minimum version over all hosts."""
    if attach_mode != 'ro':
        return
    if instance.host is None:
        check_computes_support_attach_mode(context, [attach_mode])
        return
    try:
        svc = service_obj.Service.get_by_host_and_binary(
            context, instance.host, service_obj.COMPUTE_BINARY)
    except exception.ServiceNotFound:
        return  # no such host: the host checks that follow say so
    if svc.version < service_obj.ATTACH_MODE_SERVICE_VERSION:
        raise exception.AttachModeNotSupportedByHost(
            host=instance.host, instance_uuid=instance.uuid)


def check_computes_support_attach_mode(context, attach_modes):
    """409 when any of ``attach_modes`` is ``ro`` and some compute host
    (one a new server may land on) is too old to honour it."""
    if 'ro' not in attach_modes:
        return
    minimum = service_obj.Service.get_minimum_version(
        context, service_obj.COMPUTE_BINARY)
    if minimum and minimum < service_obj.ATTACH_MODE_SERVICE_VERSION:
        raise exception.AttachModeNotSupportedByComputes()
