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
  process died before sending it), a detach or a swap no host took (the
  swap's new attachment is deleted, the old volume ``in-use`` again).

What it finishes instead (``compute.release``): a local detach (no host
could detach: offloaded server or host down) that its API process had
decided (``local_detaching``), by deleting the attachment and the mapping;
a shelved-offloaded server's swap whose mapping already names the new
volume (``swapped``), by deleting the old attachment; and a server
deleted without a host (``deleting``, owned by an API process or a
conductor) whose task stalled, by releasing its volumes and marking it
deleted.

Work a compute host owns is its host's to settle (``compute.recovery``):
only the host knows whether the guest has the disk.

Block storage's own operations that a dead process left behind (a volume
``extending`` that stopped moving for ``stalled_after`` seconds) are
settled here too, by ``nova_lite.volume.api``'s ``settle_stalled``, and
so are the exports a restarted target daemon lost (``iscsi``): the
conductor is the one service that always runs a periodic task. It settles
the volumes of the backends its configuration enables.

Each item is taken over first (compare-and-swap on its last move), so
two conductors running this at once never settle one item twice, and an
item its owner moved on meanwhile is left alone.
"""

import datetime

from oslo_log import log as logging

from nova_lite.compute import notifications
from nova_lite.compute import release
from nova_lite.compute import states
from nova_lite.compute import tasks
from nova_lite import exception
from nova_lite.objects import base as obj_base
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite.volume import api as volume_service
from nova_lite.volume import client as block_storage

LOG = logging.getLogger(__name__)

ROLLED_BACK = 'rolled back'
FINISHED = 'finished'

ATTACH_EVENT = 'conductor_attach_volume'
DETACH_EVENT = 'compute_detach_volume'
SWAP_EVENT = 'compute_swap_volume'


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
    if binary in (tasks.API_BINARY, tasks.MANAGE_BINARY):
        return stalled
    return False


def settle(context, conf, volume_client, notifier, host, at_start=False):
    """Settle what this conductor (on ``host``) is due to (see the module
    docstring). Returns ``[(mapping, outcome)]``."""
    me = service_obj.owner_name(service_obj.CONDUCTOR_BINARY, host)
    stalled_before = obj_base.utcnow().replace(tzinfo=None) - \
        datetime.timedelta(seconds=conf.recovery.stalled_after)
    down = service_obj.down_owners(context, conf)
    bdms = [b for b in bdm_obj.BlockDeviceMapping.get_with_tasks(context)
            if _due(b, me, down, stalled_before, at_start)]
    settled = tasks.settle_each(
        bdms, me, lambda bdm, previous_owner: _settle(
            context, volume_client, notifier, host, bdm, previous_owner))
    return (settled +
            _finish_local_deletes(context, volume_client, me, stalled_before) +
            _settle_volumes(context, conf, stalled_before))


class VolumeOperation(dict):
    """A block-storage operation settled: ``volume``, ``operation``."""


def _settle_volumes(context, conf, stalled_before):
    try:
        settled = volume_service.API(conf).settle_stalled(
            context.elevated(), stalled_before)
    except Exception:
        LOG.exception('Could not settle stalled volume operations')
        return []
    return [(VolumeOperation(volume=volume_id, operation=operation), outcome)
            for volume_id, operation, outcome in settled]


def _finish_local_deletes(context, volume_client, me, stalled_before):
    """Servers an API process (or a conductor, retrying) began to delete
    without a host and that stopped moving: taken over, then deleted."""
    finished = []
    for instance in instance_obj.Instance.get_stalled_tasks(
            context, states.DELETING,
            [tasks.API_BINARY, service_obj.CONDUCTOR_BINARY],
            stalled_before):
        previous_owner = instance.task_owner
        try:
            instance.take_over_task(me)
        except exception.InstanceTaskOwnerChanged:
            continue
        try:
            deleted = release.delete_locally(context.elevated(), volume_client,
                                             instance)
        except Exception:
            LOG.exception('Could not finish the delete of server %s',
                          instance.uuid)
            continue
        if deleted:
            LOG.warning('Finished the interrupted delete of server %s '
                        '(owner %s)', instance.uuid, previous_owner)
            finished.append((instance, FINISHED))
    return finished


_OPERATION = {tasks.ATTACHING: 'attach', tasks.DETACHING: 'detach',
              tasks.SWAPPING: 'swap'}


def unlock_refreshed(instance):
    """Unlock a server that a refresh locked (its lock reason says so)."""
    if instance.locked and \
            instance.locked_reason == tasks.REFRESH_LOCK_REASON:
        instance.locked = False
        instance.locked_by = None
        instance.locked_reason = None
        instance.save()


def finish_refresh(context, volume_client, bdm):
    """The last steps of ``nova-lite-manage volume_attachment refresh``,
    once the mapping has the new attachment (step ``refreshed``): the new
    attachment completed, the old one deleted, the task ended, the server
    unlocked. Each is idempotent."""
    svc = block_storage.service_context(context)
    data = bdm.get_task_data()
    volume_client.attachment_complete(svc, bdm.attachment_id)
    if data.get('old_attachment_id'):
        _delete_attachments(svc, volume_client, [data['old_attachment_id']])
    bdm.end_task()
    unlock_refreshed(instance_obj.Instance.get_by_uuid(
        context, bdm.instance_uuid))


def _settle_refresh(context, volume_client, bdm):
    """A refresh whose nova-lite-manage died: finished once the mapping
    has the new attachment, else rolled back (the new attachment, recorded
    or found by server and volume, deleted); the server unlocked."""
    if bdm.task_step == tasks.REFRESHED:
        finish_refresh(context, volume_client, bdm)
        return FINISHED
    svc = block_storage.service_context(context)
    new_id = bdm.get_task_data().get('new_attachment_id')
    _delete_attachments(svc, volume_client, [new_id] if new_id else [
        a for a in _unrecorded_attachments(svc, volume_client, bdm)
        if a != bdm.attachment_id])
    bdm.end_task()
    unlock_refreshed(instance_obj.Instance.get_by_uuid(
        context, bdm.instance_uuid))
    return ROLLED_BACK


def _settle(context, volume_client, notifier, host, bdm, previous_owner):
    if bdm.task == tasks.REFRESHING:
        return _settle_refresh(context.elevated(), volume_client, bdm)
    if bdm.task == tasks.DETACHING and \
            bdm.task_step == tasks.LOCAL_DETACHING:
        release.finish_local_detach(tasks.request_context(context, bdm),
                                    volume_client, bdm)
        return FINISHED
    if bdm.task == tasks.SWAPPING and bdm.task_step == tasks.SWAPPED:
        # Only a shelved-offloaded server's swap, which the API runs
        # without a host, reaches here at this step (a host's is the
        # host's to settle).
        release.finish_offloaded_swap(tasks.request_context(context, bdm),
                                      volume_client, bdm)
        return FINISHED
    return _roll_back(context, volume_client, notifier, host, bdm,
                      previous_owner)


def _unrecorded_attachments(svc, volume_client, bdm, volume_id=None):
    """The attachments of the mapping's volume (or of ``volume_id``, a
    swap's new volume) to its server that are not ``attached``: made by
    block storage for an attach or swap whose owner died before it
    recorded the id (a server maps a volume once, so they are this
    operation's)."""
    return [a['id'] for a in volume_client.attachment_get_all(
        svc, instance_id=bdm.instance_uuid,
        volume_id=volume_id or bdm.volume_id)
        if a['status'] != 'attached']


def _delete_attachments(svc, volume_client, attachment_ids):
    for attachment_id in attachment_ids:
        try:
            volume_client.attachment_delete(svc, attachment_id)
        except exception.VolumeAttachmentNotFound:
            pass


def _roll_detaching(svc, volume_client, volume_id):
    try:
        volume_client.roll_detaching(svc, volume_id)
    except (exception.InvalidVolume, exception.VolumeNotFound):
        # Not marked detaching (a multiattach volume), or gone.
        pass


def _roll_back(context, volume_client, notifier, host, bdm, previous_owner):
    ctxt = tasks.request_context(context, bdm)
    svc = block_storage.service_context(ctxt)
    exc = exception.OperationInterrupted(
        task=_OPERATION.get(bdm.task, bdm.task), volume_id=bdm.volume_id,
        reason='%s stopped before the compute host took it over' %
        previous_owner)
    if bdm.task == tasks.ATTACHING:
        attachment_id = bdm.attachment_id or \
            bdm.get_task_data().get('attachment_id')
        _delete_attachments(
            svc, volume_client, [attachment_id] if attachment_id
            else _unrecorded_attachments(svc, volume_client, bdm))
        bdm.destroy()
        event = ATTACH_EVENT
    elif bdm.task == tasks.DETACHING:
        _roll_detaching(svc, volume_client, bdm.volume_id)
        bdm.end_task()
        event = DETACH_EVENT
    elif bdm.task == tasks.SWAPPING:
        data = bdm.get_task_data()
        new_volume_id = data.get('new_volume_id')
        if data.get('new_attachment_id'):
            _delete_attachments(svc, volume_client, [
                                data['new_attachment_id']])
        elif new_volume_id:
            _delete_attachments(svc, volume_client, _unrecorded_attachments(
                svc, volume_client, bdm, volume_id=new_volume_id))
        _roll_detaching(svc, volume_client, bdm.volume_id)
        bdm.end_task()
        event = SWAP_EVENT
    else:
        LOG.warning('No settling rule for task %s of volume %s of %s',
                    bdm.task, bdm.volume_id, bdm.instance_uuid)
        return None
    instance_action.settle_events(ctxt, bdm.instance_uuid, event, exc=exc,
                                  host=host)
    instance_fault.InstanceFault.record(
        ctxt, bdm.instance_uuid, exc, host=host)
    if bdm.task == tasks.ATTACHING and notifier is not None:
        try:
            instance = instance_obj.Instance.get_by_uuid(
                ctxt, bdm.instance_uuid, read_deleted=True)
        except exception.InstanceNotFound:
            instance = None
        if instance is not None:
            notifier.notify_volume(ctxt, instance,
                                   notifications.VOLUME_ATTACH,
                                   notifications.ERROR, bdm.volume_id,
                                   exc=exc, bdm=bdm)
    return ROLLED_BACK
