"""The attach workflow (API-CONTRACT.md 2.5, steps behind 10b), the same
whether the API called it (below 2.101: the user waits for the device
name) or cast it (2.101: the user got 202 already).

0. The API has created the block device mapping (no device name, no
   attachment: the unique (server, volume) constraint settled duplicate
   requests) and recorded the ``attach_volume`` instance action, so the
   attach is visible from the start. An API older than conductor RPC 1.2
   did neither: they are done here.
1. The compute host gives the mapping a device name: an RPC *call* to the
   server's host, under its instance lock. A shelved-offloaded server has
   no host: this step is skipped (the name is chosen at unshelve).
2. Block storage reserves the volume: ``attachment_create`` without a
   connector (volume ``reserved``), in the mapping's ``attach_mode``; its
   id is stored on the mapping. Two attaches of one non-multiattach volume
   cannot both get here: the volume service's compare-and-swap lets one
   win. A multiattach volume busy with another server's attach or detach
   is waited for (``conductor.reservations``).
3. A *cast* to the compute host connects and attaches
   (``compute.host.volume_ops.attach``). For a shelved-offloaded server the
   attachment is completed at once without a connector instead (``in-use``;
   the connection is made at unshelve).

Who owns the attach is recorded on the mapping (``nova_lite.tasks``): the
API creates it owned by the API; the conductor takes it over first (a
message delivered twice, or an attach cancelled meanwhile, finds it taken
and does nothing), records the attachment id as soon as block storage
made it, and hands it over to the compute host in the transaction before
the cast. After a crash, whatever the conductor owned is rolled back by
``conductor.recovery``; what the host owns, the host settles
(``compute.host.recovery``). While it runs, the mapping is in this conductor's
hand (its own periodic settling leaves it alone), and the long waits (the
reservation call to the host, a busy multiattach volume) keep the task
alive (``tasks.keep_alive``). A task taken over meanwhile (its host
forced down, or the task stalled: the take-over raised its generation)
is no longer this workflow's: its next write fails, and it only deletes
the attachment it made itself, leaving the rest to the service that took
it.

Steps 1 to 3 are the instance action's event ``conductor_attach_volume``.
The mapping's attachment id and the event's end are written in one
transaction *before* the cast: the host's work then never waits for the
conductor's last write (on SQLite, for the write lock), and the conductor
answers its caller at once after the cast. A cast that fails after that
finishes the event again, with ``Error``.
Any failure undoes what came before it (the attachment is deleted, the
mapping destroyed) and is recorded where the user can see it without
having waited for it: the event's ``Error`` result with the message, an
instance fault and an ``instance.volume_attach.error`` notification. Then
it is re-raised (a caller that waits gets it; a cast drops it).
"""

import contextlib

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from nova_lite.compute import fencing
from nova_lite.compute import notifications
from nova_lite.conductor import reservations
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite import states
from nova_lite import tasks
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)


def _remove_orphan_bdm(context, instance, volume_id):
    """After a timed-out reservation by a host older than RPC 1.2, which
    creates the mapping itself: remove it if it was created after all."""
    try:
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            context, volume_id, instance.uuid)
    except exception.VolumeBDMNotFound:
        return
    if bdm.attachment_id is None:
        LOG.info('Removing the mapping of volume %s to %s left by a timed '
                 'out reservation', volume_id, instance.uuid)
        bdm.destroy()


def _keep_task(bdm, returned):
    """The mapping a host returned, with the task as this conductor holds
    it (a host older than objects 1.2 returns it without the task's
    generation)."""
    for name in ('task', 'task_owner', 'task_step', 'task_data',
                 'task_generation'):
        if bdm.obj_attr_is_set(name) and not returned.obj_attr_is_set(name):
            setattr(returned, name, getattr(bdm, name))
    returned.obj_reset_changes()
    return returned


def _reserve_device_name(context, compute_rpcapi, instance, bdm, device,
                         multiattach):
    """Step 1. A host that does not answer (``MessagingTimeout``: no reply
    and no heartbeat for ``rpc_response_timeout`` s) is
    ``HostDidNotAnswer``, which reaches the API as itself (409)."""
    try:
        return _reserve(context, compute_rpcapi, instance, bdm, device,
                        multiattach)
    except messaging.MessagingTimeout as exc:
        LOG.warning('Host %s did not answer the device name reservation '
                    'of volume %s for %s: %s', instance.host, bdm.volume_id,
                    instance.uuid, exc)
        raise exception.HostDidNotAnswer() from exc


def _reserve(context, compute_rpcapi, instance, bdm, device, multiattach):
    if compute_rpcapi.can_reserve_existing_bdm():
        return _keep_task(bdm, compute_rpcapi.reserve_block_device_name(
            context, instance, device, bdm.volume_id, multiattach=multiattach,
            bdm=bdm))
    # Hosts older than compute RPC 1.2 create the mapping themselves: it
    # carries the task from then on.
    bdm.destroy()
    created = compute_rpcapi.reserve_block_device_name(
        context, instance, device, bdm.volume_id, tag=bdm.tag,
        multiattach=multiattach,
        delete_on_termination=bdm.delete_on_termination)
    created.start_task(bdm.task, bdm.task_owner, bdm.task_step,
                       bdm.get_task_data())
    return created


def _roll_back(context, volume_client, notifier, instance, bdm, attachment_id,
               exc):
    LOG.info('Attaching volume %s to %s failed in the conductor: %s',
             bdm.volume_id, instance.uuid, exc)
    if attachment_id:
        block_storage.delete_attachment(context, volume_client,
                                        attachment_id, log_errors=True)
    bdm.destroy()
    if isinstance(exc, exception.HostDidNotAnswer):
        _remove_orphan_bdm(context, instance, bdm.volume_id)
    try:
        instance_fault.InstanceFault.record(context, instance.uuid, exc)
    except Exception:
        LOG.exception('Could not record the fault of %s', instance.uuid)
    if notifier is not None:
        notifier.notify_volume(context, instance, notifications.VOLUME_ATTACH,
                               notifications.ERROR, bdm.volume_id, exc=exc,
                               bdm=bdm)


def _new_bdm(context, instance, volume_id, tag, delete_on_termination,
             owner):
    """Steps the API does since conductor RPC 1.2."""
    bdm = bdm_obj.BlockDeviceMapping.new_volume(
        context, instance.uuid, volume_id, tag=tag,
        delete_on_termination=delete_on_termination)
    bdm.set_task(tasks.ATTACHING, owner, tasks.RESERVING,
                 tasks.task_data(context))
    bdm.create()
    instance_action.InstanceAction.action_start(
        context, instance.uuid, instance_action.ATTACH_VOLUME)
    return bdm


def _taken_over(context, bdm):
    """Whether ``bdm``'s task was taken over by another service since this
    workflow last wrote it (its generation moved)."""
    if not bdm.obj_attr_is_set('task_generation'):
        return False
    try:
        current = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            context, bdm.volume_id, bdm.instance_uuid)
    except exception.VolumeBDMNotFound:
        return False
    return current.uuid == bdm.uuid and \
        current.task_generation != bdm.task_generation


def _fenced(context, instance):
    """Whether the server's host was forced down: its work in flight is
    the conductor's settling's (conductor.recovery), which rolls it back
    naming why."""
    try:
        return bool(instance.host) and fencing.is_fenced(
            context, instance.host)
    except Exception:
        LOG.exception('Could not read the state of host %s', instance.host)
        return False


def _leave(context, volume_client, bdm, attachment_id, exc):
    """The task was taken from this workflow: only the attachment it made
    is deleted (the service that took the task may not know it yet)."""
    LOG.warning('The attach of volume %s to %s was taken over by another '
                'service (%s); leaving it to that service', bdm.volume_id,
                bdm.instance_uuid, exc)
    if attachment_id:
        block_storage.delete_attachment(context, volume_client,
                                        attachment_id, log_errors=True)


@contextlib.contextmanager
def _alive(conf, bdm):
    if conf is None:
        yield
        return
    with tasks.keep_alive(conf, bdm):
        yield


def _take(context, bdm, owner):
    """Take the attach over from the API that accepted it; False when it
    is no longer the API's (a message delivered twice, or an attach the
    user cancelled or the conductor's periodic task rolled back)."""
    if not bdm.obj_attr_is_set('task') or bdm.task is None:
        # From an API older than task ownership.
        try:
            bdm.start_task(tasks.ATTACHING, owner, tasks.RESERVING,
                           tasks.task_data(context))
        except (exception.VolumeTaskInProgress,
                exception.TaskOwnerChanged):
            return False
        return True
    try:
        bdm.move_task(tasks.RESERVING, owner=owner)
    except exception.TaskOwnerChanged:
        return False
    return True


def attach_volume(context, compute_rpcapi, volume_client, instance, volume_id,
                  device=None, tag=None, delete_on_termination=False,
                  multiattach=False, bdm=None, host=None, notifier=None,
                  reserve_timeout=0.0, conf=None, in_hand=None):
    """Reserve and cast (see the module docstring); returns the device
    name (None for a shelved-offloaded server, or when the attach was no
    longer this conductor's to run). ``in_hand`` (a ``tasks.InHand``)
    holds the mapping while the workflow runs; with ``conf``, the long
    waits keep the task alive."""
    owner = service_obj.owner_name(service_obj.CONDUCTOR_BINARY, host)
    if bdm is None:
        bdm = _new_bdm(context, instance, volume_id, tag,
                       delete_on_termination, owner)
    elif not _take(context, bdm, owner):
        LOG.info('The attach of volume %s to %s is no longer pending; '
                 'nothing to do', volume_id, instance.uuid)
        return None
    if in_hand is None:
        return _attach(context, compute_rpcapi, volume_client, instance,
                       volume_id, bdm, device, multiattach, host, notifier,
                       reserve_timeout, conf)
    with in_hand.holding(bdm.uuid):
        return _attach(context, compute_rpcapi, volume_client, instance,
                       volume_id, bdm, device, multiattach, host, notifier,
                       reserve_timeout, conf)


def _attach(context, compute_rpcapi, volume_client, instance, volume_id, bdm,
            device, multiattach, host, notifier, reserve_timeout, conf):
    crashpoint.hit(crashpoint.CONDUCTOR_ATTACH_AFTER_TAKE)
    attachment_id = None
    try:
        with instance_action.EventReporter(context,
                                           tasks.CONDUCTOR_ATTACH_EVENT, host,
                                           instance.uuid) as event:
            offloaded = instance.vm_state == states.SHELVED_OFFLOADED
            if not offloaded:
                with _alive(conf, bdm):
                    bdm = _reserve_device_name(context, compute_rpcapi,
                                               instance, bdm, device,
                                               multiattach)
                crashpoint.hit(
                    crashpoint.CONDUCTOR_ATTACH_AFTER_RESERVE_DEVICE)
            with _alive(conf, bdm):
                attachment = reservations.reserve(
                    context, volume_client, volume_id, instance.uuid,
                    mode=bdm.attach_mode,
                    timeout=reserve_timeout if multiattach else 0.0)
            attachment_id = attachment['id']
            crashpoint.hit(crashpoint.CONDUCTOR_ATTACH_AFTER_RESERVE)
            # Before anything else: what the roll back must delete (one
            # that dies before this line leaves it unrecorded: the
            # settling finds it, conductor.recovery).
            bdm.move_task(tasks.RESERVED, data=dict(
                bdm.get_task_data(), attachment_id=attachment_id))
            crashpoint.hit(crashpoint.CONDUCTOR_ATTACH_AFTER_ATTACHMENT_CREATE)
            if offloaded:
                bdm.move_task(tasks.RESERVED, attachment_id=attachment_id)
                volume_client.attachment_complete(
                    block_storage.service_context(context), attachment_id)
                bdm.end_task()
            else:
                # The mapping's attachment, the hand-over to the host and
                # the event's end: one transaction, before the cast.
                with instance_action.transaction(context):
                    bdm.move_task(tasks.CAST, owner=service_obj.owner_name(
                        service_obj.COMPUTE_BINARY, instance.host),
                        attachment_id=attachment_id)
                    event.finish()
                crashpoint.hit(crashpoint.CONDUCTOR_ATTACH_AFTER_HANDOVER)
                compute_rpcapi.attach_volume(context, instance, bdm)
    except Exception as exc:
        with excutils.save_and_reraise_exception():
            if (isinstance(exc, exception.TaskOwnerChanged) and
                    _taken_over(context, bdm)) or _fenced(context, instance):
                _leave(context, volume_client, bdm, attachment_id, exc)
            else:
                _roll_back(context, volume_client, notifier, instance, bdm,
                           attachment_id, exc)
    return bdm.device_name
