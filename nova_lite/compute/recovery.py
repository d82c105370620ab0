"""Settling, on a compute host, the volume operations it owned when it
stopped or that stopped moving (doc/source/contributor/crash-safety.rst).

The host owns an attach from the conductor's hand-over (step ``cast``)
and a detach from the moment it takes it from the API. Only the host can
settle them: it knows whether the guest has the disk. The manager calls
``settle`` at start (after its guests are restored from their mappings)
for everything it owns, and every ``[recovery] settle_interval`` seconds
for what it owns that has not moved for ``stalled_after`` seconds and is
not in hand (a message lost in a broker failover, for instance).

* **attach**: finished when the guest has the disk and block storage has
  the connection (the mapping has its ``connection_info``): the
  attachment is completed (volume ``in-use``) and the task ended; rolled
  back otherwise: the guest device (if any) and the attachment are
  removed, the host disconnects unless another attachment on the host
  uses the connection, the mapping is destroyed (volume ``available``),
  and the user sees why (the action's open events end with the error, an
  instance fault, an ``instance.volume_attach.error`` notification).
* **detach**: finished (it is what the user asked for; every step is
  idempotent): guest device, attachment and mapping removed.
* **swap**: finished once the guest has the new volume (step
  ``guest_swapped`` or later): the new attachment is completed, the
  mapping becomes the new volume's, the old attachment is deleted; rolled
  back before that (the guest still has the old volume): the new
  attachment is deleted (the host disconnects from the new volume unless
  shared), the old volume is ``in-use`` again, and the user sees why.

Each item is taken over first (compare-and-swap on its last move), so an
item another service settled meanwhile is skipped.
"""

from oslo_log import log as logging

from nova_lite.compute import notifications
from nova_lite.compute import tasks
from nova_lite.compute import volume_ops
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite.volume import client as block_storage

LOG = logging.getLogger(__name__)

FINISHED = 'finished'
ROLLED_BACK = 'rolled back'

ATTACH_EVENT = 'compute_attach_volume'
DETACH_EVENT = 'compute_detach_volume'
SWAP_EVENT = 'compute_swap_volume'


def settle(context, driver, volume_client, notifier, host, in_hand=(),
           stalled_before=None):
    """Settle the tasks ``host`` owns (all of them, or those that last
    moved before ``stalled_before``), except those ``in_hand``. Returns
    ``[(mapping, outcome)]``."""
    owner = service_obj.owner_name(service_obj.COMPUTE_BINARY, host)
    bdms = [b for b in bdm_obj.BlockDeviceMapping.get_with_tasks(
        context, owners=[owner], updated_before=stalled_before)
        if b.uuid not in in_hand]
    return tasks.settle_each(
        bdms, owner, lambda bdm, _previous: _settle_one(
            context, driver, volume_client, notifier, host, bdm))


def _settle_one(context, driver, volume_client, notifier, host, bdm):
    ctxt = tasks.request_context(context, bdm)
    try:
        instance = instance_obj.Instance.get_by_uuid(ctxt, bdm.instance_uuid,
                                                     read_deleted=True)
    except exception.InstanceNotFound:
        bdm.destroy()
        return ROLLED_BACK
    if bdm.task == tasks.ATTACHING:
        return _settle_attach(ctxt, driver, volume_client, notifier, host,
                              instance, bdm)
    if bdm.task == tasks.DETACHING:
        return _settle_detach(ctxt, driver, volume_client, host, instance,
                              bdm)
    if bdm.task == tasks.SWAPPING:
        return _settle_swap(ctxt, driver, volume_client, host, instance, bdm)
    LOG.warning('No settling rule for task %s of volume %s of %s',
                bdm.task, bdm.volume_id, bdm.instance_uuid)
    return None


def _attachment_id(bdm):
    return bdm.attachment_id or bdm.get_task_data().get('attachment_id')


def _settle_attach(ctxt, driver, volume_client, notifier, host, instance, bdm):
    svc = block_storage.service_context(ctxt)
    info = bdm.get_connection_info()
    has_disk = bool(bdm.device_name) and driver.has_volume(
        instance, bdm.device_name)
    attachment_id = _attachment_id(bdm)
    if has_disk and info and attachment_id:
        try:
            volume_client.attachment_complete(svc, attachment_id)
        except (exception.VolumeAttachmentNotFound,
                exception.VolumeNotFound):
            LOG.warning('Attachment %s of volume %s is gone; rolling back',
                        attachment_id, bdm.volume_id)
        else:
            bdm.end_task()
            instance_action.settle_events(ctxt, instance.uuid, ATTACH_EVENT,
                                          host=host)
            return FINISHED
    exc = exception.OperationInterrupted(
        task='attach', volume_id=bdm.volume_id,
        reason='the compute service on %s stopped' % host)
    if has_disk:
        driver.detach_volume(ctxt, info, instance, bdm.device_name)
    volume_ops.release_connection(ctxt, driver, volume_client, bdm.volume_id,
                                  attachment_id, info)
    bdm.destroy()
    instance_action.settle_events(ctxt, instance.uuid, ATTACH_EVENT, exc=exc,
                                  host=host)
    instance_fault.InstanceFault.record(ctxt, instance.uuid, exc, host=host)
    notifier.notify_volume(ctxt, instance, notifications.VOLUME_ATTACH,
                           notifications.ERROR, bdm.volume_id, exc=exc,
                           bdm=bdm)
    return ROLLED_BACK


def _settle_detach(ctxt, driver, volume_client, host, instance, bdm):
    info = bdm.get_connection_info()
    if bdm.device_name and driver.has_volume(instance, bdm.device_name):
        driver.detach_volume(ctxt, info, instance, bdm.device_name)
    volume_ops.release_connection(ctxt, driver, volume_client, bdm.volume_id,
                                  bdm.attachment_id, info)
    bdm.destroy()
    instance_action.settle_events(ctxt, instance.uuid, DETACH_EVENT,
                                  host=host)
    return FINISHED


def _settle_swap(ctxt, driver, volume_client, host, instance, bdm):
    data = bdm.get_task_data()
    new_volume_id = data.get('new_volume_id')
    new_attachment_id = data.get('new_attachment_id')
    new_info = data.get('new_connection_info') or {}
    if bdm.task_step == tasks.SWAPPED:
        volume_ops.release_old_volume(ctxt, driver, volume_client, bdm, data)
    elif bdm.task_step == tasks.GUEST_SWAPPED:
        # The guest has the new volume (a guest restored from the mapping
        # has the old one: the driver's swap is asked again, idempotent).
        svc = block_storage.service_context(ctxt)
        driver.swap_volume(ctxt, bdm.get_connection_info(), new_info,
                           instance, bdm.device_name)
        volume_client.attachment_complete(svc, new_attachment_id)
        volume_ops.finish_swap(ctxt, driver, volume_client, bdm, new_volume_id,
                               new_attachment_id, new_info)
    else:
        exc = exception.OperationInterrupted(
            task='swap', volume_id=bdm.volume_id,
            reason='the compute service on %s stopped' % host)
        if new_attachment_id:
            volume_ops.release_connection(ctxt, driver, volume_client,
                                          new_volume_id, new_attachment_id,
                                          new_info)
        try:
            volume_client.roll_detaching(block_storage.service_context(ctxt),
                                         bdm.volume_id)
        except (exception.InvalidVolume, exception.VolumeNotFound):
            pass    # not detaching (anymore), or gone
        bdm.end_task()
        instance_action.settle_events(ctxt, instance.uuid, SWAP_EVENT,
                                      exc=exc, host=host)
        instance_fault.InstanceFault.record(
            ctxt, instance.uuid, exc, host=host)
        return ROLLED_BACK
    instance_action.settle_events(ctxt, instance.uuid, SWAP_EVENT, host=host)
    return FINISHED
