"""Giving volumes back without a compute host: the release steps the API
and the conductor share (the host's own, which also disconnect the host,
are in ``volume_ops``).

A local detach is what the API does when no host can detach the volume:
the server is shelved-offloaded (Nova's local cleanup: no host has the
disk), or an administrator forced its host down (fenced,
``compute.fencing``: the host removes the disk from its guest when it
comes back). A host that is only ``down`` is not detached without: the
detach answers 409, as Nova's. It is a task on the mapping, like a detach
a host runs:

1. the API starts it (``DETACHING``, step ``ACCEPTED``, owned by the
   API process, ``local`` in its data): a detach of the same volume
   meanwhile answers 409;
2. the API moves it to ``LOCAL_DETACHING`` (compare-and-swap), stepping
   the mapping aside (``step_aside``: the row no longer names the
   volume): from here on it is finished, never rolled back;
3. the attachment is deleted (block storage recomputes the volume's
   status: ``available`` only now that the server no longer maps it),
   the volume too when the mapping says ``delete_on_termination`` and
   the server is shelved-offloaded (Nova's rule; a fenced host's detach
   keeps it, as a detach through the host does);
4. the mapping is destroyed.

A server that has a host (fenced: its guest may still have the disk)
has the disk recorded as a stale disk of that host
(``objects.stale_disk``) before the volume is freed (step 3, and before
a local delete releases its volumes): the host removes it when it comes
back, and cannot be let go until then.

If the API process dies after 1, the conductor finds the task stalled and
finishes it (``finish_local_detach``: 2 to 4, each harmless when done
already): the detach was accepted.

A local delete (a server with no host, or on a fenced one) is a task on
the server: the API moves it to ``deleting`` owned by the API process
(one compare-and-swap with the host check), releases every volume, then
marks the server deleted (``delete_locally``). A server left ``deleting``
by an API process that stopped, or whose release failed, is deleted the
same way by the conductor once the task stalled; a server whose delete
waits for a host that an administrator then forces down, at once.
"""

from oslo_log import log as logging

from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import stale_disk
from nova_lite import states
from nova_lite import tasks
from nova_lite import utils
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)


def step_aside(bdm, step=tasks.RELEASING):
    """Move a detach whose guest no longer has the disk to ``step``
    (``releasing``; ``local_detaching`` for a detach without a host):
    the row keeps its task but no longer names the volume, its device or
    its attachment (they move to the task's data), so the server's
    mapping is gone for every reader (the attachment list, the duplicate
    guard of a new attach) *before* block storage makes the volume
    ``available``: a client that waited for ``available`` may attach it
    again at once. Returns ``(volume_id, attachment_id, connection_info,
    device_name)`` as they were."""
    released = (bdm.volume_id, bdm.attachment_id, bdm.get_connection_info(),
                bdm.device_name)
    bdm.move_task(step, data=dict(
        bdm.get_task_data(), volume_id=released[0],
        attachment_id=released[1], connection_info=released[2],
        device_name=released[3]),
        volume_id=None, attachment_id=None, device_name=None,
        connection_info=None)
    return released


def released(bdm):
    """What ``step_aside`` moved to the task's data (or the row's own
    values, before it): ``(volume_id, attachment_id, connection_info,
    device_name)``."""
    data = bdm.get_task_data()
    if bdm.volume_id is None and 'volume_id' in data:
        return (data.get('volume_id'), data.get('attachment_id'),
                data.get('connection_info'), data.get('device_name'))
    return (bdm.volume_id, bdm.attachment_id, bdm.get_connection_info(),
            bdm.device_name)


def _record_stale_disks(context, instance_uuid, disks, instance=None):
    """Record (``objects.stale_disk``) that the host of the server still
    has the disks ``[(device, volume id)]`` its guest had, freed now
    without the host: it removes them when it comes back, and cannot be
    let go before. Nothing for a server with no host (shelved-offloaded:
    no guest has the disk). Before the volumes are freed: a record never
    comes after the volume is someone else's."""
    if instance is None:
        try:
            instance = instance_obj.Instance.get_by_uuid(
                context, instance_uuid, read_deleted=True)
        except exception.InstanceNotFound:
            return
    if not instance.host or instance.vm_state == states.SHELVED_OFFLOADED:
        return
    for device, volume_id in disks:
        if device and volume_id:
            stale_disk.record(context, instance.host, instance_uuid, device,
                              volume_id)


def delete_volume(context, volume_client, volume_id):
    """Delete a ``delete_on_termination`` volume; one already gone is
    fine."""
    try:
        volume_client.delete(block_storage.service_context(context), volume_id)
    except exception.VolumeNotFound:
        pass


def release_mapping(context, volume_client, bdm, keep_volume=False):
    """Steps 3 and 4 of the module docstring for one mapping (the volume
    is never deleted with ``keep_volume``). Raises what block storage
    raises (the mapping then stays, for a retry)."""
    if bdm.attachment_id:
        block_storage.delete_attachment(context, volume_client,
                                        bdm.attachment_id)
    if bdm.delete_on_termination and bdm.volume_id and not keep_volume:
        delete_volume(context, volume_client, bdm.volume_id)
    bdm.destroy()


def detach_locally(context, volume_client, bdm):
    """Steps 2 to 4 for ``bdm``, whose local detach task the caller
    started (step 1). ``TaskOwnerChanged`` if someone else moved it."""
    step_aside(bdm, tasks.LOCAL_DETACHING)
    crashpoint.hit(crashpoint.API_LOCAL_DETACH_AFTER_DECIDE)
    finish_local_detach(context, volume_client, bdm)


def finish_local_detach(context, volume_client, bdm):
    """Steps 2 (unless done) to 4 of a local detach: the conductor's part
    when the API process stopped (and the release command's)."""
    if bdm.task_step != tasks.LOCAL_DETACHING:
        step_aside(bdm, tasks.LOCAL_DETACHING)
    volume_id, attachment_id, _info, device = released(bdm)
    data = bdm.get_task_data()
    _record_stale_disks(context, bdm.instance_uuid, [(device, volume_id)])
    if attachment_id:
        block_storage.delete_attachment(context, volume_client, attachment_id)
    if bdm.delete_on_termination and volume_id and \
            not data.get('keep_volume'):
        delete_volume(context, volume_client, volume_id)
    bdm.destroy()


def complete_migration(context, volume_client, bdm):
    """The end of a volume migration's swap (the mapping has the new
    attachment, complete, and the old one is deleted): block storage
    finishes the migration, the volume keeping its id with the new
    storage (Cinder's ``os-migrate_volume_completion``, whose
    ``save_volume_id`` is the mapping's volume id). Nothing for a swap
    that is not a migration's; harmless when done already."""
    data = bdm.get_task_data()
    if not data.get('migration'):
        return
    result = volume_client.migrate_volume_completion(
        block_storage.service_context(context), bdm.volume_id,
        data['new_volume_id'])
    if result['save_volume_id'] != bdm.volume_id:
        LOG.warning('Block storage keeps volume %s for the migration of %s '
                    'of server %s', result['save_volume_id'], bdm.volume_id,
                    bdm.instance_uuid)


def finish_offloaded_swap(context, volume_client, bdm):
    """The end of a shelved-offloaded server's swap once the mapping is
    the new volume's (step ``swapped``): the old attachment deleted (the
    old volume ``available``; a migration's volume keeps its id and is
    completed: ``complete_migration``), the task ended. The API runs it;
    the conductor runs it again for an API process that stopped.
    Harmless when done already."""
    old_attachment_id = bdm.get_task_data().get('old_attachment_id')
    if old_attachment_id:
        block_storage.delete_attachment(context, volume_client,
                                        old_attachment_id)
    complete_migration(context, volume_client, bdm)
    try:
        bdm.end_task()
    except exception.TaskOwnerChanged:
        LOG.info('The swap of %s was finished meanwhile', bdm.instance_uuid)


def release_unbuilt(context, volume_client, bdms):
    """Give back the volumes of a server no host ever built: each
    mapping's attachment is deleted and the mapping destroyed (never the
    volume: no host was involved, nothing to disconnect). One whose
    release fails is logged and kept, for the server's delete to try
    again; the next one goes on."""
    for bdm in bdms:
        if not (bdm.is_volume and bdm.volume_id):
            continue
        try:
            release_mapping(context, volume_client, bdm, keep_volume=True)
        except Exception:
            LOG.exception('Could not release attachment %s of volume %s',
                          bdm.attachment_id, bdm.volume_id)


def release_for_delete(context, volume_client, bdms):
    """The volumes of a server deleted without a host: each mapping's
    attachment is deleted (and its volume when ``delete_on_termination``)
    and the mapping destroyed. A failure is logged and the next one goes
    on, as in Nova; a mapping that failed stays, for the settling to try
    again. Returns the number that failed."""
    failed = 0
    for bdm in bdms:
        if not (bdm.is_volume and bdm.volume_id):
            bdm.destroy()
            continue
        try:
            release_mapping(context, volume_client, bdm)
        except Exception:
            failed += 1
            LOG.exception('Could not release volume %s of deleted server %s',
                          bdm.volume_id, bdm.instance_uuid)
    return failed


def delete_locally(context, volume_client, instance):
    """Release the volumes of ``instance`` (``deleting``, its task owned
    by the caller) and mark it deleted. False, leaving it ``deleting`` for
    the settling to try again, when a volume could not be released."""
    bdms = bdm_obj.BlockDeviceMapping.get_all_by_instance(context,
                                                          instance.uuid)
    _record_stale_disks(context, instance.uuid,
                        [(b.device_name, b.volume_id) for b in bdms
                         if b.is_volume], instance=instance)
    if release_for_delete(context, volume_client, bdms):
        return False
    states.move(instance, 'deleted_locally', task_owner=None,
                task_updated_at=None, terminated_at=utils.utcnow())
    return True
