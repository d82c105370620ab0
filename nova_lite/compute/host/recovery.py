"""Settling, on a compute host, the volume operations it owned when it
stopped or that stopped moving (doc/source/contributor/crash-safety.rst).

The host owns an attach from the conductor's hand-over (step ``cast``)
and a detach from the moment it takes it from the API. Only the host can
settle them: it knows whether the guest has the disk. The manager calls
``settle`` at start (after its guests are restored from their mappings)
for everything it owns, and every ``[recovery] settle_interval`` seconds
for what it owns that has not moved for ``stalled_after`` seconds and is
not in hand (a message lost in a broker failover, for instance).

* **attach**: finished when block storage has the connection (the
  mapping has its ``connection_info``): the guest gets the disk if it
  does not have it (a hypervisor keeps its guests across a service
  restart: the guest may still lack it), the attachment is completed
  (volume ``in-use``) and the task ended; rolled back otherwise (or when
  the guest cannot be given the disk): the guest device (if any) and the
  attachment are removed, the host disconnects unless another attachment
  on the host uses the connection, the mapping is destroyed (volume
  ``available``), and the user sees why (the action's open events end
  with the error, an instance fault, an ``instance.volume_attach.error``
  notification). An attach whose connect failed while block storage
  could not take its attachment back (unreachable) is left at
  ``connecting`` by the host (``volume_ops.attach``): this rolls it back
  once block storage answers.
* **detach**: finished (it is what the user asked for; every step is
  idempotent): guest device removed, the mapping out of the server's way
  (``releasing``), attachment and mapping removed.
* **swap**: finished once the guest has the new volume (step
  ``guest_swapped`` or later): the new attachment is completed, the
  mapping becomes the new volume's, the old attachment is deleted; rolled
  back before that (the guest still has the old volume): the new
  attachment is deleted (the host disconnects from the new volume unless
  shared), the old volume is ``in-use`` again, and the user sees why.

Each item is taken over first (compare-and-swap on its last move that
raises the task's generation), so an item another service settled
meanwhile is skipped, and a worker of this process still holding one
(not in hand: a thread that lost it) can no longer write it.

A host also removes what it no longer owns (``reap``): the guests of
servers deleted without it (once it was fenced; as ``[DEFAULT]
running_deleted_instance_action`` says, and never a guest whose server
the database does not know) and the volume disks of
its guests whose mapping is gone (a volume detached without it). It does
so at start, before it takes any message; then in every periodic run (a
host that was stopped while it was fenced, and let go, finds out no
other way); and the device-name reservation of an attach does it for its
server first, so that a name the guest still uses is never given again.
Each server's disks are removed under its instance lock, on mappings read
under it. A removal is bounded (one unplug request, then the persistent
definition): a guest that does not let go is powered off, its server
``SHUTOFF`` with a fault saying why. The host's records of stale disks
(``objects.stale_disk``) go once its guests no longer have them; until
then it cannot be let go.
"""

import contextlib

from oslo_log import log as logging

from nova_lite.compute.host import volume_ops
from nova_lite.compute import notifications
from nova_lite.compute import release
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite.objects import stale_disk
from nova_lite import states
from nova_lite import tasks
from nova_lite import utils
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)


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
        return tasks.ROLLED_BACK
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
    """Finished where the table says so (``tasks.on_crash``: at
    ``connected``) and the facts allow it (the connection and the
    attachment are there, and the guest has the disk or gets it now);
    rolled back otherwise."""
    svc = block_storage.service_context(ctxt)
    info = bdm.get_connection_info()
    has_disk = bool(bdm.device_name) and driver.has_volume(
        instance, bdm.device_name)
    attachment_id = _attachment_id(bdm)
    finish = tasks.on_crash(bdm.task, bdm.task_step) == tasks.FINISH
    if finish and not has_disk and info and attachment_id and \
            bdm.device_name:
        # Connected, and the guest does not have the disk: a hypervisor
        # keeps its guests across a service restart (a guest restored
        # from the mappings has it already). It gets the disk now.
        has_disk = _give_disk(ctxt, driver, instance, bdm, info)
    if finish and has_disk and info and attachment_id:
        try:
            volume_client.attachment_complete(svc, attachment_id)
        except (exception.VolumeAttachmentNotFound,
                exception.VolumeNotFound):
            LOG.warning('Attachment %s of volume %s is gone; rolling back',
                        attachment_id, bdm.volume_id)
        else:
            bdm.end_task()
            instance_action.settle_events(ctxt, instance.uuid,
                                          tasks.COMPUTE_ATTACH_EVENT,
                                          host=host)
            return tasks.FINISHED
    # At ``connecting``, also an attach whose connect failed while block
    # storage could not take its attachment back (volume_ops.attach): its
    # own event said why; this finishes its roll back.
    reason = 'the compute service on %s stopped' % host
    if bdm.task_step == tasks.CONNECTING:
        reason += (', or its connect failed and block storage could not '
                   'take the attachment back then')
    exc = exception.OperationInterrupted(
        task='attach', volume_id=bdm.volume_id, reason=reason)
    if has_disk:
        driver.detach_volume(ctxt, info, instance, bdm.device_name)
    volume_ops.release_connection(ctxt, driver, volume_client, bdm.volume_id,
                                  attachment_id, info)
    bdm.destroy()
    instance_action.settle_events(ctxt, instance.uuid,
                                  tasks.COMPUTE_ATTACH_EVENT, exc=exc,
                                  host=host)
    instance_fault.InstanceFault.record(ctxt, instance.uuid, exc, host=host)
    notifier.notify_volume(ctxt, instance, notifications.VOLUME_ATTACH,
                           notifications.ERROR, bdm.volume_id, exc=exc,
                           bdm=bdm)
    return tasks.ROLLED_BACK


def _give_disk(ctxt, driver, instance, bdm, info):
    """Attach the connected volume of ``bdm`` to the guest, in the mode
    block storage granted (the connection's ``access_mode``); False when
    the driver cannot (the attach is rolled back)."""
    mode = ((info.get('data') or {}).get('access_mode') or
            bdm.effective_attach_mode)
    try:
        driver.attach_volume(ctxt, info, instance, bdm.device_name,
                             mode=mode)
    except Exception:
        LOG.exception('Could not give the guest of %s its volume %s at %s; '
                      'rolling the attach back', instance.uuid,
                      bdm.volume_id, bdm.device_name)
        return False
    LOG.info('Gave the guest of %s its connected volume %s at %s',
             instance.uuid, bdm.volume_id, bdm.device_name)
    return True


def _settle_detach(ctxt, driver, volume_client, host, instance, bdm):
    """Finished: every step of a detach the host owns finishes
    (``tasks.STEPS``); the user was told the volume goes, and the guest
    lets go of the disk here."""
    if bdm.task_step == tasks.RELEASING:
        volume_id, attachment_id, info, _device = release.released(bdm)
    else:
        info = bdm.get_connection_info()
        if bdm.device_name and driver.has_volume(instance, bdm.device_name):
            driver.detach_volume(ctxt, info, instance, bdm.device_name)
        volume_id, attachment_id, info, _device = release.step_aside(bdm)
    volume_ops.release_connection(ctxt, driver, volume_client, volume_id,
                                  attachment_id, info)
    bdm.destroy()
    instance_action.settle_events(ctxt, instance.uuid,
                                  tasks.COMPUTE_DETACH_EVENT,
                                  host=host)
    return tasks.FINISHED


def _settle_swap(ctxt, driver, volume_client, host, instance, bdm):
    data = bdm.get_task_data()
    new_volume_id = data.get('new_volume_id')
    new_attachment_id = data.get('new_attachment_id')
    new_info = data.get('new_connection_info') or {}
    finish = tasks.on_crash(bdm.task, bdm.task_step) == tasks.FINISH
    if finish and bdm.task_step == tasks.SWAPPED:
        volume_ops.release_old_volume(ctxt, driver, volume_client, bdm, data)
    elif finish:
        # At ``guest_swapped``, the table's other finish: the guest has
        # the new volume (a guest restored from the mapping
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
        block_storage.roll_detaching(block_storage.service_context(ctxt),
                                     volume_client, bdm.volume_id)
        bdm.end_task()
        instance_action.settle_events(ctxt, instance.uuid,
                                      tasks.COMPUTE_SWAP_EVENT,
                                      exc=exc, host=host)
        instance_fault.InstanceFault.record(
            ctxt, instance.uuid, exc, host=host)
        return tasks.ROLLED_BACK
    instance_action.settle_events(ctxt, instance.uuid,
                                  tasks.COMPUTE_SWAP_EVENT, host=host)
    return tasks.FINISHED


# -- a host that comes back ---------------------------------------------------

def reap_guests(context, driver, host, instances=None):
    """Deal with the guests this hypervisor has (whose domain names this
    host) of servers the database says were deleted more than
    ``[DEFAULT] running_deleted_instance_timeout`` seconds ago (deleted
    without this host while it was fenced), as ``[DEFAULT]
    running_deleted_instance_action`` says (Nova's rule): ``reap``
    destroys them, ``shutdown`` powers them off, ``log`` logs them,
    ``noop`` leaves them. A guest whose server the database does not know
    at all (a guest of another deployment on the same hypervisor, or a
    database restored from a backup) is logged and left alone, and so is
    one whose server is on another host or being deleted (its delete is
    still to come). ``instances``: the servers of this host, if the
    caller read them. Returns the uuids of the guests destroyed or
    powered off."""
    action = driver.conf.running_deleted_instance_action
    if action == 'noop':
        return []
    if instances is None:
        instances = instance_obj.get_all(context, host=host)
    ours = {i.uuid for i in instances}
    reaped = []
    for uuid in sorted(set(driver.list_instance_uuids()) - ours):
        try:
            instance = instance_obj.Instance.get_by_uuid(context, uuid,
                                                         read_deleted=True)
        except exception.InstanceNotFound:
            LOG.warning('The hypervisor has a guest of server %s, which the '
                        'database does not know (another deployment\'s, or '
                        'a database restored from a backup?): left alone',
                        uuid)
            continue
        if instance.vm_state != states.DELETED:
            if instance.host != host:
                LOG.warning('The hypervisor has a guest of server %s, which '
                            'is on host %s, not on %s: left alone', uuid,
                            instance.host, host)
            continue    # on this host since the list was read
        if not _deleted_before(instance,
                               driver.conf.running_deleted_instance_timeout):
            continue
        if action == 'log':
            LOG.warning('The guest of server %s still exists on this host; '
                        'the server is deleted', uuid)
            continue
        if action == 'shutdown':
            LOG.warning('Powering off the guest of server %s: the server is '
                        'deleted', uuid)
            reap_fn = driver.power_off
        else:
            LOG.warning('Reaping the guest of server %s: the server is '
                        'deleted', uuid)

            def reap_fn(instance):
                driver.destroy(context, instance, None)
        try:
            reap_fn(instance)
        except Exception:
            LOG.exception('Could not %s the guest of server %s',
                          'power off' if action == 'shutdown' else 'reap',
                          uuid)
            continue
        reaped.append(uuid)
    return reaped


def _deleted_before(instance, seconds):
    """Whether the deleted server ``instance`` was deleted more than
    ``seconds`` ago (Nova's ``_deleted_old_enough``: a server with no
    time of deletion is)."""
    stamp = instance.terminated_at or instance.deleted_at
    if stamp is None or seconds <= 0:
        return True
    age = utils.utcnow() - stamp.replace(tzinfo=None)
    return age.total_seconds() > seconds


def _disks(driver, instance):
    try:
        return driver.volume_devices(instance)
    except Exception:
        LOG.exception('Could not list the disks of the guest of %s',
                      instance.uuid)
        return {}


def _remove_stale_disks(context, driver, instance, devices, bdms):
    """The volume disks of ``devices`` (the guest's, read before ``bdms``,
    the server's mappings; a volume's disk has the volume id as its
    serial, the others are never touched) that no mapping holds, or that
    a mapping with no operation in flight holds for another volume,
    removed from the guest (``driver.remove_stale_disk``: one unplug
    request with a bounded wait, then the persistent definition). A
    guest that does not let go is stopped (``_stop_holding_guest``).
    Returns ``([(mountpoint, volume id)] removed, [...] still held)``."""
    mapped = {b.device_name: b for b in bdms if b.device_name}
    removed, held = [], []
    for mountpoint, serial in sorted(devices.items()):
        if not serial:
            continue    # not a volume's disk (a root disk, a config drive)
        bdm = mapped.get(mountpoint)
        if bdm is not None and (bdm.task is not None or
                                not bdm.volume_id or
                                serial == bdm.volume_id):
            continue
        LOG.warning('Removing volume %s (%s) from the guest of server %s: '
                    'its mapping is gone (detached without this host)',
                    serial, mountpoint, instance.uuid)
        try:
            gone = driver.remove_stale_disk(instance, mountpoint)
        except Exception:
            LOG.exception('Could not remove %s from the guest of %s',
                          mountpoint, instance.uuid)
            gone = False
        (removed if gone else held).append((mountpoint, serial))
    if held and _stop_holding_guest(context, driver, instance, held):
        left = _disks(driver, instance)
        removed += [d for d in held if left.get(d[0]) != d[1]]
        held = [d for d in held if left.get(d[0]) == d[1]]
    return removed, held


def _stop_holding_guest(context, driver, instance, held):
    """Power the guest off at once: it still holds the disks ``held``
    (``[(mountpoint, volume id)]``), of volumes that may belong to
    another server by now. Stopped, not paused: a paused guest keeps its
    disks open in the hypervisor (and anyone may unpause it), a stopped
    one starts again from its definition, which no longer has them. The
    server becomes ``SHUTOFF`` (when it was active or paused and idle)
    and its fault says why. False when the guest could not be stopped."""
    exc = exception.GuestStoppedHoldingStaleDisk(
        host=driver.host, volume_id=', '.join(v for _m, v in held),
        device=', '.join(m for m, _v in held))
    LOG.error('Stopping the guest of server %s: %s', instance.uuid,
              exc.format_message())
    try:
        driver.power_off(instance, timeout=0)
    except Exception:
        LOG.exception('Could not stop the guest of %s, which still holds '
                      '%s', instance.uuid, held)
        return False
    if instance.vm_state in (states.ACTIVE, states.PAUSED):
        try:
            states.move(instance, 'begin', to_task=states.POWERING_OFF)
            states.move(instance, 'stopped', power_state=states.SHUTDOWN)
        except (exception.UnexpectedTaskStateError,
                exception.InstanceNotFound):
            LOG.info('Server %s moved meanwhile; its state is left to its '
                     'operation', instance.uuid)
    try:
        instance_fault.InstanceFault.record(context, instance.uuid, exc,
                                            host=driver.host)
    except Exception:
        LOG.exception('Could not record the fault of %s', instance.uuid)
    return True


def reap_devices(context, driver, instance):
    """Remove from the guest of ``instance`` the volume disks it has
    (``driver.volume_devices``) at a device name that none of the
    server's mappings holds, or that a mapping with no operation in
    flight holds for another volume: the volume was detached (or the
    server deleted) without this host while it was fenced, and may be
    attached elsewhere by now. A disk whose mapping has an operation in
    flight is the operation's. The caller holds the server's instance
    lock: the mappings are read under it, after the guest's disks (every
    workflow writes a mapping's device before the guest has the disk and
    removes the disk before the mapping lets the device go, so a disk
    read first always finds its mapping). A disk the guest does not let
    go of stops the guest (``_remove_stale_disks``); one that even that
    leaves is recorded (``objects.stale_disk``). Returns
    ``[(mountpoint, volume id)]`` removed."""
    devices = _disks(driver, instance)
    if not devices:
        return []
    removed, held = _remove_stale_disks(
        context, driver, instance, devices,
        bdm_obj.BlockDeviceMapping.get_all_by_instance(context,
                                                       instance.uuid))
    for mountpoint, volume_id in held:
        stale_disk.record(context, driver.host, instance.uuid, mountpoint,
                          volume_id)
    return removed


def _no_lock(_uuid):
    return contextlib.nullcontext()


def forget_removed(context, driver, host):
    """Delete the records of stale disks (``objects.stale_disk``) of
    ``host`` that its guests no longer have (the disk removed, the guest
    stopped or destroyed), or that a mapping of the server with no
    operation in flight holds again (the volume attached again once the
    stale disk was gone). Returns the records left."""
    records = stale_disk.get_by_host(context, host)
    if not records:
        return []
    uuids = sorted({r.instance_uuid for r in records})
    bdms = bdm_obj.BlockDeviceMapping.get_all_by_instances(context, uuids)
    disks = {uuid: _disks(driver, instance_obj.Instance(context, uuid=uuid,
                                                        host=host))
             for uuid in uuids}
    gone, left = [], []
    for record in records:
        mapped = any(b.device_name == record.device_name and
                     b.volume_id == record.volume_id and b.task is None
                     for b in bdms.get(record.instance_uuid, ()))
        has = (disks[record.instance_uuid].get(record.device_name) ==
               record.volume_id)
        (gone if mapped or not has else left).append(record)
    stale_disk.forget(context, [r.id for r in gone])
    return left


def reap(context, driver, host, lock=_no_lock, guests=True):
    """``reap_guests``, then ``reap_devices`` for every server of this
    host with no operation of its own in flight (its ``task_state``) and
    a volume disk, each under its instance lock (``lock(uuid)``, the
    manager's ``instance_lock``), then ``forget_removed``; ``guests``
    False leaves ``reap_guests`` out (not due yet). Returns
    ``(guests reaped, [(server, mountpoint, volume)] removed)``."""
    instances = instance_obj.get_all(context, host=host)
    guests = reap_guests(context, driver, host, instances) if guests else []
    removed = []
    for instance in instances:
        if instance.task_state is not None or \
                not any(_disks(driver, instance).values()):
            continue
        with lock(instance.uuid):
            removed += [(instance.uuid,) + r for r in reap_devices(
                context, driver, instance)]
    forget_removed(context, driver, host)
    return guests, removed
