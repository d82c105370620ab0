"""Settling, in the conductor, volume operations whose owner died before
they reached a compute host (doc/source/contributor/crash-safety.rst).

What the conductor settles, always rolling back (nothing was connected
yet, so giving the volume back is safe and the user may simply retry):

* work it owned itself when it stopped (``settle(..., at_start=True)``
  from ``init_host``): an attach it had taken from the API, up to the
  hand-over to the host;
* work another conductor owned, when that conductor is down (no
  heartbeat for ``service_down_time``) or its work stopped moving for
  ``[recovery] stalled_after`` seconds;
* work an API process owned that stopped moving for ``stalled_after``
  seconds: an attach no conductor took (its message was lost, or the API
  process died before sending it), a detach no host took.

Work a compute host owns is its host's to settle (``compute.recovery``):
only the host knows whether the guest has the disk.

Each item is taken over first (compare-and-swap on its last move), so
two conductors running this at once never settle one item twice, and an
item its owner moved on meanwhile is left alone.
"""

import datetime

from oslo_log import log as logging

from nova_lite.compute import notifications
from nova_lite.compute import tasks
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import base as obj_base
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from nova_lite.volume import client as volume_client

LOG = logging.getLogger(__name__)

ROLLED_BACK = 'rolled back'

ATTACH_EVENT = 'conductor_attach_volume'
DETACH_EVENT = 'compute_detach_volume'


def _due(bdm, me, down, stalled_before, at_start):
    """Whether this conductor (``me``) settles ``bdm``'s task now."""
    owner = bdm.task_owner or ''
    binary = tasks.binary_of(owner)
    moved = bdm.task_updated_at
    if moved is not None:
        moved = moved.replace(tzinfo=None)
    stalled = moved is None or moved < stalled_before
    if owner == me:
        return at_start or stalled
    if binary == service_obj.CONDUCTOR_BINARY:
        return owner in down or stalled
    if binary == tasks.API_BINARY:
        return stalled
    return False


def settle(context, conf, volume_api, notifier, host, at_start=False):
    """Settle what this conductor (on ``host``) is due to (see the module
    docstring). Returns ``[(mapping, outcome)]``."""
    me = service_obj.owner_name(service_obj.CONDUCTOR_BINARY, host)
    stalled_before = obj_base.utcnow().replace(tzinfo=None) - \
        datetime.timedelta(seconds=conf.recovery.stalled_after)
    down = service_obj.down_owners(context, conf)
    bdms = [b for b in objects.BlockDeviceMapping.get_with_tasks(context)
            if _due(b, me, down, stalled_before, at_start)]
    return tasks.settle_each(
        bdms, me, lambda bdm, previous_owner: _roll_back(
            context, volume_api, notifier, host, bdm, previous_owner))


_OPERATION = {tasks.ATTACHING: 'attach', tasks.DETACHING: 'detach'}


def _roll_back(context, volume_api, notifier, host, bdm, previous_owner):
    ctxt = tasks.request_context(context, bdm)
    svc = volume_client.service_context(ctxt)
    exc = exception.OperationInterrupted(
        task=_OPERATION.get(bdm.task, bdm.task), volume_id=bdm.volume_id,
        reason='%s stopped before the compute host took it over' %
        previous_owner)
    if bdm.task == tasks.ATTACHING:
        attachment_id = bdm.attachment_id or \
            bdm.get_task_data().get('attachment_id')
        if attachment_id:
            try:
                volume_api.attachment_delete(svc, attachment_id)
            except exception.VolumeAttachmentNotFound:
                pass
        bdm.destroy()
        event = ATTACH_EVENT
    elif bdm.task == tasks.DETACHING:
        try:
            volume_api.roll_detaching(svc, bdm.volume_id)
        except (exception.InvalidVolume, exception.VolumeNotFound):
            # Not marked detaching (a multiattach volume), or gone.
            pass
        bdm.end_task()
        event = DETACH_EVENT
    else:
        LOG.warning('No settling rule for task %s of volume %s of %s',
                    bdm.task, bdm.volume_id, bdm.instance_uuid)
        return None
    instance_action.settle_events(ctxt, bdm.instance_uuid, event, exc=exc,
                                  host=host)
    objects.InstanceFault.record(ctxt, bdm.instance_uuid, exc, host=host)
    if bdm.task == tasks.ATTACHING and notifier is not None:
        try:
            instance = objects.Instance.get_by_uuid(ctxt, bdm.instance_uuid,
                                                    read_deleted=True)
        except exception.InstanceNotFound:
            instance = None
        if instance is not None:
            notifier.notify_volume(ctxt, instance,
                                   notifications.VOLUME_ATTACH,
                                   notifications.ERROR, bdm.volume_id,
                                   exc=exc, bdm=bdm)
    return ROLLED_BACK
