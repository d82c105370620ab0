"""Host-side volume steps, run by the compute manager under the instance
lock. Every step undoes what it did when a later one fails.

* ``reserve_device_name``: check the driver can do it, pick a free device
  name and write it on the mapping the API created (or create the mapping,
  for an older caller); the unique constraints settle races with other
  processes: a lost race picks another name;
* ``attach``: connector -> ``attachment_update`` (volume ``attaching``) ->
  driver attach -> ``attachment_complete`` (``in-use``); on failure the
  guest device, the attachment and the mapping are removed (when block
  storage cannot delete the attachment of a connect that failed, the
  mapping keeps its task at ``connecting`` for the host's settling,
  ``compute.host.recovery``, to roll back once it answers). A disk the
  guest has already at the mapping's device is not the attach's and is
  never adopted (``DevicePathInUse``); a reservation never gives a name
  the guest still uses;
* ``detach``: driver detach -> the mapping out of the server's way
  (``releasing``: no volume on the row, so the volume never reads
  ``available`` while its server still maps it) -> ``attachment_delete``
  -> host disconnect, only if block storage says no other attachment of
  the volume on this host still uses the connection (multiattach: two
  servers of one host share it) -> mapping destroyed; on a driver failure
  the volume goes back to ``in-use``;
* ``swap``: connect the new volume, swap in the guest, complete the new
  attachment and delete the old one;
* ``connect_for_spawn``/``complete_for_spawn``/``cleanup_for_delete``: the
  volumes of a server being built or deleted;
* ``release_for_failed_build``: what a server whose build failed held
  (guest, attachments, host connections, volume mappings).

Block storage is reached only through the ``VolumeClient`` given in, with a
service context (these calls act on the server's behalf).
"""

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import excutils
import tenacity

from nova_lite.compute import notifications
from nova_lite.compute import release
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from nova_lite import tasks
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)

# Attempts at a device name when other processes keep taking them.
_RESERVE_ATTEMPTS = 10


def _svc(context):
    return block_storage.service_context(context)


def connect(context, driver, volume_client, instance, bdm, attachment_id=None,
            mode=None, volume_id=None):
    """The host-side connect step of every workflow that gives a guest a
    volume (attach, swap, spawn, unshelve): this host's connector, carrying
    the mode asked (``mode``, else the mapping's ``attach_mode``) so that
    block storage records it on the attachment, and the attachment's
    update (the volume ``attaching``).

    ``attachment_id``, ``volume_id``: the attachment to connect and its
    volume (the mapping's unless a swap connects its new volume's).
    Returns ``(connection_info, guest mode)``: the connection_info carries
    the volume id as ``serial`` (as Nova sets it: the guest's disk serial,
    how the guest and settling find the disk) and, for a multiattach
    volume, ``multiattach: True`` (as Nova sets it: a hypervisor shares
    such a disk between its guests); the mode is the one block storage
    granted (the attachment's, e.g. ``ro`` for a read-only volume), else
    the one asked, else ``rw``."""
    svc = _svc(context)
    volume_id = volume_id or bdm.volume_id
    multiattach = volume_client.get(svc, volume_id).get('multiattach')
    connector = driver.get_volume_connector(instance)
    asked = mode or bdm.attach_mode
    if asked:
        connector['mode'] = asked
    attachment = volume_client.attachment_update(
        svc, attachment_id or bdm.attachment_id, connector,
        mountpoint=bdm.device_name)
    granted = attachment.get('attach_mode')
    info = dict(attachment.get('connection_info') or {})
    info['serial'] = volume_id
    if multiattach:
        info['multiattach'] = True
    return (info,
            granted if granted in ('ro', 'rw') else asked or 'rw')


def reserve_device_name(context, conf, driver, instance, volume_id,
                        device=None, tag=None, multiattach=False,
                        delete_on_termination=False, bdm=None):
    """Give the volume's mapping a free device name (the caller holds the
    instance lock). ``bdm``, when given, is the mapping the API created
    without a device name; otherwise the mapping is created here. Returns
    the BlockDeviceMapping."""
    if bdm is not None:
        tag = bdm.tag
    caps = driver.capabilities
    if tag and not caps.get('supports_tagged_attach_volume'):
        raise exception.VolumeTaggedAttachNotSupported()
    if multiattach and not caps.get('supports_multiattach'):
        raise exception.MultiattachNotSupportedByVirtDriver(
            volume_id=volume_id)
    requested = {'device': device}

    # Another process may take the name between the read and the write
    # (DevicePathInUse): the names are read again and another is chosen.
    @tenacity.retry(
        retry=tenacity.retry_if_exception_type(exception.DevicePathInUse),
        stop=tenacity.stop_after_attempt(_RESERVE_ATTEMPTS), reraise=True)
    def take_a_name():
        bdms = bdm_obj.BlockDeviceMapping.get_all_by_instance(
            context, instance.uuid)
        others = [b for b in bdms if bdm is None or b.id != bdm.id]
        if bdm is None and any(b.volume_id == volume_id for b in others):
            raise exception.InvalidVolume(
                reason='volume %s already attached' % volume_id)
        maximum = conf.compute.max_disk_devices_to_attach
        if maximum >= 0 and len(others) + 1 > maximum:
            raise exception.TooManyDiskDevices(maximum=maximum)
        # A disk the guest still has that no mapping names (one this
        # host could not remove) keeps its name too.
        used = {b.device_name for b in others if b.device_name}
        used.update(driver.volume_devices(instance))
        name = driver.get_device_name_for_instance(
            instance, sorted(used), requested=requested['device'])
        try:
            if bdm is None:
                created = bdm_obj.BlockDeviceMapping.new_volume(
                    context, instance.uuid, volume_id, device_name=name,
                    tag=tag, delete_on_termination=delete_on_termination)
                created.create()
                return created
            bdm.device_name = name
            bdm.save()
            return bdm
        except exception.DevicePathInUse:
            LOG.info('Device %s of %s was taken meanwhile; retrying',
                     name, instance.uuid)
            if bdm is not None:
                bdm.device_name = None
                bdm.obj_reset_changes(['device_name'])
            requested['device'] = None
            raise
    return take_a_name()


def _delete_attachment(context, volume_client, attachment_id):
    block_storage.delete_attachment(context, volume_client, attachment_id,
                                    log_errors=True)


def _still_used_on_host(context, driver, volume_client, volume_id, result):
    """Whether another attachment of the volume on this host still uses
    the host's connection, after one was deleted. Block storage answers
    it (``shared_connections`` of the delete, decided under the volume's
    lock); a real Cinder does not, and then the volume's remaining
    attachments on this host are counted, as Nova does."""
    shared = (result or {}).get('shared_connections')
    if shared is not None:
        return bool(shared)
    try:
        volume = volume_client.get(_svc(context), volume_id)
    except exception.VolumeNotFound:
        return False
    return any(a.get('host_name') == driver.host
               for a in volume.get('attachments') or [])


def release_connection(context, driver, volume_client, volume_id,
                       attachment_id, connection_info):
    """Delete the attachment (the guest device is gone already) and
    disconnect this host from the volume unless another attachment on the
    host still uses the connection. Raises what the delete raises (but
    an attachment already gone, which still ends in the host check).
    Giving volumes back without a host is ``compute.release``'s."""
    result = None
    if attachment_id:
        result = block_storage.delete_attachment(context, volume_client,
                                                 attachment_id)
    if connection_info and not _still_used_on_host(
            context, driver, volume_client, volume_id, result):
        driver.disconnect_volume(connection_info)
    elif connection_info:
        LOG.info('Host %s stays connected to volume %s: other attachments '
                 'on this host use the connection', driver.host, volume_id)


def release_connection_logged(context, driver, volume_client, volume_id,
                              attachment_id, connection_info):
    """``release_connection`` for cleanups that go on after a failure:
    the error is logged; returns False if the release failed."""
    try:
        release_connection(context, driver, volume_client, volume_id,
                           attachment_id, connection_info)
    except Exception:
        LOG.exception('Could not release attachment %s of volume %s',
                      attachment_id, volume_id)
        return False
    return True


def _tracked(bdm):
    """Whether the mapping a message carried (an attach's) carries its
    operation's task (a conductor older than task ownership sends
    mappings without)."""
    return bdm.obj_attr_is_set('task') and bdm.task is not None


def _settles_later(bdm):
    """Whether the host's settling can finish the roll back of this
    failed attach (a tracked task still at ``connecting``, which it rolls
    back); the mapping of any other is destroyed at once."""
    return _tracked(bdm) and bdm.task_step == tasks.CONNECTING


def take_over(bdm, owner, step):
    """The host takes over the task handed to it (the conductor's attach)
    or left for it (the API's detach), recording ``step``: a
    compare-and-swap on the step the message carries, so of two
    deliveries of one message exactly one goes on. False when the task is
    not there to take (done, settled, or taken by the other delivery)."""
    if not _tracked(bdm):
        return True
    try:
        bdm.move_task(step, owner=owner)
    except exception.TaskOwnerChanged:
        return False
    return True


def attach(context, driver, volume_client, notifier, instance, bdm):
    """Connect and attach the reserved mapping ``bdm``; on any failure
    leave nothing behind (no guest device, attachment or mapping). A
    delivery of an attach this host no longer has to do (done, settled,
    or being done by another delivery) does nothing."""
    owner = service_obj.owner_name(service_obj.COMPUTE_BINARY, driver.host)
    if not take_over(bdm, owner, tasks.CONNECTING):
        LOG.info('The attach of volume %s to %s is not pending on this '
                 'host; nothing to do', bdm.volume_id, instance.uuid)
        return
    crashpoint.hit(crashpoint.COMPUTE_ATTACH_AFTER_TAKE)
    notifier.notify_volume(context, instance, notifications.VOLUME_ATTACH,
                           notifications.START, bdm.volume_id, bdm=bdm)
    svc = _svc(context)
    guest_attached = False
    try:
        info, mode = connect(context, driver, volume_client, instance, bdm)
        if _tracked(bdm):
            bdm.move_task(tasks.CONNECTED,
                          connection_info=jsonutils.dumps(info))
        else:
            bdm.set_connection_info(info)
            bdm.save()
        crashpoint.hit(crashpoint.COMPUTE_ATTACH_AFTER_CONNECT)
        if _tracked(bdm) and driver.has_volume(instance, bdm.device_name):
            # This attach took its task over just now: a disk the guest
            # has at its name is not its own (a volume's this host did
            # not remove), and is never adopted.
            raise exception.DevicePathInUse(path=bdm.device_name)
        driver.attach_volume(context, info, instance, bdm.device_name,
                             mode=mode)
        guest_attached = True
        crashpoint.hit(crashpoint.COMPUTE_ATTACH_AFTER_GUEST_ATTACH)
        volume_client.attachment_complete(svc, bdm.attachment_id)
        if _tracked(bdm):
            try:
                bdm.end_task()
            except exception.TaskOwnerChanged:
                # Complete: a detach took the task over (the volume was
                # in-use for the server); it is that detach's now.
                LOG.info('A detach of volume %s from %s took over its '
                         'completed attach', bdm.volume_id, instance.uuid)
    except Exception as exc:
        with excutils.save_and_reraise_exception():
            LOG.warning('Attaching volume %s to %s failed: %s; rolling '
                        'back', bdm.volume_id, instance.uuid, exc)
            if guest_attached:
                try:
                    driver.detach_volume(context, info, instance,
                                         bdm.device_name)
                except Exception:
                    LOG.exception('Could not undo the guest attach')
            released = release_connection_logged(
                context, driver, volume_client, bdm.volume_id,
                bdm.attachment_id, bdm.get_connection_info())
            if released or not _settles_later(bdm):
                bdm.destroy()
            else:
                # Block storage did not take its attachment back (it
                # could not be reached, or failed the delete): the
                # mapping keeps its task at ``connecting`` (rolled back
                # on a crash), and this host's settling of stalled work
                # rolls it back once block storage answers, so that
                # nothing is left reserved or attaching there.
                LOG.warning('Attachment %s of volume %s is left to this '
                            'host\'s settling: block storage did not '
                            'delete it', bdm.attachment_id, bdm.volume_id)
            notifier.notify_volume(
                context, instance, notifications.VOLUME_ATTACH,
                notifications.ERROR, bdm.volume_id, exc=exc, bdm=bdm)
    notifier.notify_volume(context, instance, notifications.VOLUME_ATTACH,
                           notifications.END, bdm.volume_id, bdm=bdm)


def detach(context, driver, volume_client, notifier, instance, bdm,
           event=None, tracked=None):
    """Detach ``bdm`` from the guest, delete its attachment and mapping.
    A driver failure puts the volume back to ``in-use`` (mapping kept).
    With ``event`` (the step's ``EventReporter``), the mapping's delete
    and the event's end share a transaction.

    ``tracked``: the message acts for the detach task on the mapping
    (decided by the caller from the message; None: from ``bdm``, which
    the caller read and compared). The host takes the task over from the
    step the mapping is at; a detach no longer pending is dropped."""
    owner = service_obj.owner_name(service_obj.COMPUTE_BINARY, driver.host)
    if tracked is None:
        tracked = _tracked(bdm)
    if tracked and (bdm.task != tasks.DETACHING or
                    not take_over(bdm, owner, tasks.GUEST_DETACHING)):
        LOG.info('The detach of volume %s from %s is not pending on this '
                 'host; nothing to do', bdm.volume_id, instance.uuid)
        return
    crashpoint.hit(crashpoint.COMPUTE_DETACH_AFTER_TAKE)
    shown = bdm.obj_clone()
    volume_id = bdm.volume_id
    notifier.notify_volume(context, instance, notifications.VOLUME_DETACH,
                           notifications.START, volume_id, bdm=shown)
    svc = _svc(context)
    try:
        if bdm.device_name:
            driver.detach_volume(context, bdm.get_connection_info(),
                                 instance, bdm.device_name)
        if tracked:
            bdm.move_task(tasks.GUEST_DETACHED)
    except Exception:
        with excutils.save_and_reraise_exception():
            block_storage.roll_detaching(svc, volume_client, volume_id,
                                         log_errors=True)
            if tracked:
                bdm.end_task()
    crashpoint.hit(crashpoint.COMPUTE_DETACH_AFTER_GUEST_DETACH)
    if tracked:
        # From here on the detach is finished, never rolled back: a
        # failure below leaves the task for this host's settling.
        volume_id, attachment_id, info, _device = release.step_aside(bdm)
        crashpoint.hit(crashpoint.COMPUTE_DETACH_AFTER_STEP_ASIDE)
        release_connection(context, driver, volume_client, volume_id,
                           attachment_id, info)
    else:
        try:
            release_connection(context, driver, volume_client, volume_id,
                               bdm.attachment_id, bdm.get_connection_info())
        except Exception:
            with excutils.save_and_reraise_exception():
                block_storage.roll_detaching(svc, volume_client, volume_id,
                                             log_errors=True)
    with instance_action.transaction(context):
        bdm.destroy()
        if event is not None:
            event.finish()
    notifier.notify_volume(context, instance, notifications.VOLUME_DETACH,
                           notifications.END, volume_id, bdm=shown)


def release_swap(context, volume_client, old_volume_id, new_attachment_id):
    """Undo the API's part of a swap that cannot run: the new volume's
    attachment is deleted and the old volume is no longer detaching."""
    _delete_attachment(context, volume_client, new_attachment_id)
    block_storage.roll_detaching(_svc(context), volume_client, old_volume_id,
                                 log_errors=True)


def swap(context, driver, volume_client, instance, bdm, new_volume_id,
         new_attachment_id, tracked=None):
    """Move ``bdm`` (the old volume) to ``new_volume_id``; on failure the
    new attachment is deleted, the guest keeps the old volume and the old
    volume is ``in-use`` again. A delivery of a swap this host no longer
    has to do (done, settled, or being done by another delivery) does
    nothing.

    The steps, each recorded on the mapping's task before the next one
    (``compute.host.recovery`` settles a swap from the last one recorded): the
    host takes it over (``connecting``); the new volume is connected
    (``connected``, its connection_info in the task data); the guest is
    moved to it (``guest_swapped``); the new attachment is completed and
    the mapping becomes the new volume's (``swapped``, one statement); the
    old volume's attachment is deleted and the task ended.

    ``tracked``: as for ``detach``, decided by the caller from the
    message (None: from ``bdm``)."""
    owner = service_obj.owner_name(service_obj.COMPUTE_BINARY, driver.host)
    if tracked is None:
        tracked = _tracked(bdm)
    if tracked and (bdm.task != tasks.SWAPPING or
                    not take_over(bdm, owner, tasks.CONNECTING)):
        LOG.info('The swap of volume %s of %s is not pending on this host; '
                 'nothing to do', bdm.volume_id, instance.uuid)
        return
    svc = _svc(context)
    old_info = bdm.get_connection_info()
    migration = tracked and bdm.get_task_data().get('migration')
    guest_swapped = False
    try:
        new_info, _ = connect(context, driver, volume_client, instance, bdm,
                              attachment_id=new_attachment_id,
                              volume_id=new_volume_id)
        if migration:
            # The guest's disk keeps its serial: the migrated volume keeps
            # its id (and takes the new storage) when the migration ends.
            new_info['serial'] = bdm.volume_id
        if tracked:
            bdm.move_task(tasks.CONNECTED, data=dict(
                bdm.get_task_data(), new_connection_info=new_info))
        crashpoint.hit(crashpoint.COMPUTE_SWAP_AFTER_CONNECT)
        driver.swap_volume(context, old_info, new_info, instance,
                           bdm.device_name)
        guest_swapped = True
        if tracked:
            bdm.move_task(tasks.GUEST_SWAPPED)
        crashpoint.hit(crashpoint.COMPUTE_SWAP_AFTER_GUEST_SWAP)
        volume_client.attachment_complete(svc, new_attachment_id)
    except Exception:
        with excutils.save_and_reraise_exception():
            if guest_swapped:
                try:
                    driver.swap_volume(context, new_info, old_info, instance,
                                       bdm.device_name)
                except Exception:
                    LOG.exception('Could not give the guest of %s its old '
                                  'volume back', instance.uuid)
            release_swap(context, volume_client, bdm.volume_id,
                         new_attachment_id)
            if migration:
                _migration_failed(context, volume_client, bdm.volume_id,
                                  new_volume_id)
            if tracked:
                bdm.end_task()
    finish_swap(context, driver, volume_client, bdm, new_volume_id,
                new_attachment_id, new_info)


def _migration_failed(context, volume_client, volume_id, new_volume_id):
    """Tell block storage the migration's swap failed (it rolls the
    migration back). Its own settling does it too, later, if this fails."""
    try:
        volume_client.migrate_volume_completion(
            _svc(context), volume_id, new_volume_id, error=True)
    except Exception:
        LOG.exception('Could not tell block storage that the swap of '
                      'migrating volume %s failed', volume_id)


def finish_swap(context, driver, volume_client, bdm, new_volume_id,
                new_attachment_id, new_info):
    """The swap's last steps, once the new attachment is complete: the
    mapping becomes the new volume's (with the old one's ids in the task
    data, until it is released), then the old attachment is deleted and
    the host disconnects from the old volume unless shared."""
    old = {'old_volume_id': bdm.volume_id,
           'old_attachment_id': bdm.attachment_id,
           'old_connection_info': bdm.get_connection_info()}
    changes = {'volume_id': new_volume_id,
               'attachment_id': new_attachment_id,
               'connection_info': jsonutils.dumps(new_info)}
    if _tracked(bdm) and bdm.get_task_data().get('migration'):
        # The migrated volume keeps its id: the mapping too.
        del changes['volume_id']
    if _tracked(bdm):
        bdm.move_task(tasks.SWAPPED, data=dict(bdm.get_task_data(), **old),
                      **changes)
    else:
        bdm.volume_id = new_volume_id
        bdm.attachment_id = new_attachment_id
        bdm.set_connection_info(new_info)
        bdm.save()
    crashpoint.hit(crashpoint.COMPUTE_SWAP_AFTER_MOVE)
    release_old_volume(context, driver, volume_client, bdm, old)


def release_old_volume(context, driver, volume_client, bdm, old):
    """The swap's end: the old volume's attachment deleted (it is
    ``available``), the task ended. A migration's: the old attachment
    must go (a failure raises and leaves the task to settle again), then
    block storage completes the migration."""
    migration = _tracked(bdm) and bdm.get_task_data().get('migration')
    if old['old_attachment_id'] and migration:
        release_connection(
            context, driver, volume_client, old['old_volume_id'],
            old['old_attachment_id'], old['old_connection_info'])
        crashpoint.hit(crashpoint.COMPUTE_SWAP_AFTER_RELEASE)
    elif old['old_attachment_id']:
        release_connection_logged(
            context, driver, volume_client, old['old_volume_id'],
            old['old_attachment_id'], old['old_connection_info'])
    if migration:
        release.complete_migration(context, volume_client, bdm)
    if _tracked(bdm):
        bdm.end_task()


def connect_for_spawn(context, driver, volume_client, instance, bdms):
    """Connect the volumes of a server being built: the block device info
    the driver spawns with, each disk in its attachment's mode.

    The connector carries the mapping's ``attach_mode`` as ``mode``, so
    block storage records it on the attachment (an attachment reserved
    with a mode keeps it); the mode block storage grants (the
    attachment's, e.g. ``ro`` for a read-only volume) is the guest's."""
    disks = []
    for bdm in bdms:
        if not bdm.is_volume or not bdm.attachment_id:
            continue
        info, mode = connect(context, driver, volume_client, instance, bdm,
                             mode=bdm.effective_attach_mode)
        bdm.set_connection_info(info)
        bdm.save()
        disks.append({'mount_device': bdm.device_name,
                      'connection_info': info, 'mode': mode})
    return disks


def complete_for_spawn(context, volume_client, bdms):
    svc = _svc(context)
    for bdm in bdms:
        if bdm.is_volume and bdm.attachment_id:
            volume_client.attachment_complete(svc, bdm.attachment_id)


def cleanup_for_delete(context, volume_client, bdms, driver):
    """Delete the attachments of a deleted server's volumes (and the
    volumes marked ``delete_on_termination``) and the mappings; the host
    disconnects from volumes no other attachment on the host uses. Errors
    are logged and the cleanup goes on, as in Nova."""
    svc = _svc(context)
    for bdm in bdms:
        if bdm.is_volume and bdm.volume_id:
            release_connection_logged(context, driver, volume_client,
                                      bdm.volume_id, bdm.attachment_id,
                                      bdm.get_connection_info())
            if bdm.delete_on_termination:
                try:
                    volume_client.delete(svc, bdm.volume_id)
                except exception.VolumeNotFound:
                    pass
                except Exception:
                    LOG.exception('Could not delete volume %s of deleted '
                                  'server %s', bdm.volume_id,
                                  bdm.instance_uuid)
        bdm.destroy()


def release_for_failed_build(context, driver, volume_client, instance, bdms):
    """Give back what a server whose build failed held (the caller holds
    the instance lock), so nothing stays ``reserved`` or ``attaching``:

    * the guest is destroyed (whatever part of it the driver made);
    * each volume's attachment is deleted and this host disconnects from
      the volume unless another attachment on the host still uses the
      connection (``release_connection``). Block storage recomputes the
      volume's status: ``available``, or ``in-use`` while other servers
      (e.g. the rest of a multi-create sharing a multiattach volume) are
      attached;
    * the volume mappings are destroyed: the server (``ERROR``, its fault
      saying why) no longer claims the volumes, which are free to attach
      elsewhere at once, and its view lists none. The volumes themselves
      are never deleted here, ``delete_on_termination`` or not: a server
      that never ran gives its volumes back with their data. The image
      root disk's (local) mapping stays; deleting the server afterwards
      works as for any other (there is no volume left to release).

    A volume whose release fails (block storage unreachable, say) is
    logged and keeps its mapping, so that deleting the server tries again;
    the release goes on with the next volume.
    """
    try:
        driver.destroy(context, instance, None)
    except Exception:
        LOG.exception('Could not destroy the guest of %s', instance.uuid)
    release_volumes(context, driver, volume_client, bdms)


def release_volumes(context, driver, volume_client, bdms):
    """Release each volume mapping of ``bdms`` (attachment deleted, host
    connection closed unless shared) and destroy it; one whose release
    fails is logged and kept, for the server's delete to try again."""
    for bdm in bdms:
        if not (bdm.is_volume and bdm.volume_id):
            continue
        if not release_connection_logged(
                context, driver, volume_client, bdm.volume_id,
                bdm.attachment_id, bdm.get_connection_info()):
            continue
        bdm.destroy()
