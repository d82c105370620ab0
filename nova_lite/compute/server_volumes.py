"""Volume operations of the compute service layer: attach, detach, swap
and update, with every fast guard of API-CONTRACT.md 2.5 to 2.7.

``ServerVolumes`` is ``compute.api.API().volumes``; it reaches block
storage, the conductor and the compute hosts through that ``API``
(``volume_client``, ``conductor_rpcapi``, ``compute_rpcapi``). The guards
run at every microversion, in the API process, with no RPC to a compute
host; the attach itself is the
conductor's workflow (``conductor/attach.py``), called below 2.101 or cast
from 2.101, for every server state (a shelved-offloaded server included).
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils
from oslo_utils import strutils

from nova_lite.compute import checks
from nova_lite.compute import fencing
from nova_lite.compute import release
from nova_lite import context as nl_context
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import base as obj_base
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from nova_lite import states
from nova_lite import tasks
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)

# A migration's temporary volume's migration_status (block storage's
# status.migration_target, which compute does not import).
_MIGRATION_TARGET = 'target:%s'


def owner(conf):
    """The API process of ``conf`` as the owner of work in flight."""
    return service_obj.owner_name(tasks.API_BINARY, conf.host)


class ServerVolumes(object):
    def __init__(self, conf, volume_client, compute_rpcapi, conductor_rpcapi):
        self.conf = conf
        self.volume_client = volume_client
        self.compute_rpcapi = compute_rpcapi
        self.conductor_rpcapi = conductor_rpcapi

    def _owner(self):
        return owner(self.conf)

    def _check_not_attached(self, context, volume, instance):
        """Nova's duplicate guard (400): a non-multiattach volume mapped to
        any server, or a multiattach one already mapped to this one.

        A mapping with an operation in flight (an attach accepted whose
        work is pending, a detach not finished) answers 409 naming it
        instead: the volume may well read ``available`` meanwhile (an
        attach not reserved yet), and the attach can be asked again once
        the operation is over."""
        bdms = bdm_obj.BlockDeviceMapping.get_all_by_volume(context,
                                                            volume['id'])
        if volume['multiattach']:
            bdms = [b for b in bdms if b.instance_uuid == instance.uuid]
        if not bdms:
            return
        for bdm in bdms:
            if bdm.task is not None:
                raise exception.VolumeTaskInProgress(
                    volume_id=volume['id'], instance_uuid=bdm.instance_uuid,
                    task=bdm.task)
        if not volume['multiattach']:
            raise exception.InvalidVolume(
                reason=_('volume %(vol)s is already attached to instances: '
                         '%(uuids)s') % {
                    'vol': volume['id'],
                    'uuids': ','.join(b.instance_uuid for b in bdms)})
        raise exception.InvalidVolume(
            reason=_('volume %s already attached') % volume['id'])

    # -- attach ------------------------------------------------------------
    def _check_host_answers(self, context, instance, do_cast):
        """Below 2.101, 409 ``HostServiceDown`` ("Service is unavailable
        at this time.", as the detach) unless the server's compute host is
        up: a host that is down (silent) or forced down would not name the
        device, and the request would hold its API thread only to fail.
        Nova has no such guard (its attach fails when the reservation call
        times out, 500).

        From 2.101 (``do_cast``) nothing waits in the API: the attach is
        accepted, as any work cast to a silent host is, and the conductor
        undoes it once the host did not answer its reservation call within
        ``rpc_response_timeout`` (``HostDidNotAnswer``, recorded on the
        action), or at once when the host is forced down meanwhile
        (``conductor.recovery``). A shelved-offloaded server has no host
        and needs none."""
        if do_cast or instance.vm_state == states.SHELVED_OFFLOADED:
            return
        if not instance.host or not checks.host_is_up(
                context, self.conf, instance.host):
            LOG.warning('Host %s of server %s is not up: the attach of a '
                        'volume answers 409', instance.host, instance.uuid)
            raise exception.HostServiceDown()

    def attach(self, context, instance, volume_id, device=None,
               tag=None, delete_on_termination=False,
               supports_multiattach=False, do_cast=False,
               attach_mode='rw'):
        """Attach: the fast guards, then the mapping (no device name yet)
        and the instance action are written here, so the attach is visible
        at once, and the conductor's workflow is called (returns the device
        name; None for a shelved-offloaded server) or, with ``do_cast``,
        cast (returns None at once; nothing waits on a host or storage).
        ``attach_mode`` (2.105) travels on the mapping: the attachment is
        reserved in it and the host connects in it."""
        checks.check_instance_lock(context, instance)
        checks.check_instance_state(instance, 'attach_volume',
                                    states.ATTACH_VOLUME_VM_STATES)
        if device and not checks.match_device(device):
            raise exception.InvalidDevicePath(path=device)
        volume = self.volume_client.get(context, volume_id)
        bdm = bdm_obj.BlockDeviceMapping.new_volume(
            context, instance.uuid, volume_id, tag=tag,
            delete_on_termination=delete_on_termination,
            attach_mode=attach_mode)
        # Created owned by this API process (doc/source/contributor/
        # crash-safety.rst): if the conductor never takes it over, the
        # conductor's periodic task rolls it back.
        bdm.set_task(tasks.ATTACHING, self._owner(), tasks.ACCEPTED,
                     tasks.task_data(context))
        # The checks from the duplicate guard on (in the contract's order;
        # no call leaves the process), the mapping and the action: one
        # writer transaction. The unique (server, volume) constraint
        # settles concurrent requests for the same pair: the loser is 400
        # "already attached".
        with instance_action.transaction(context):
            self._check_not_attached(context, volume, instance)
            if volume['multiattach'] and not supports_multiattach:
                raise exception.MultiattachNotSupportedOldMicroversion()
            if instance.vm_state == states.SHELVED_OFFLOADED:
                if tag:
                    raise exception.VolumeTaggedAttachToShelvedNotSupported()
                if volume['multiattach']:
                    raise exception.MultiattachToShelvedNotSupported()
            checks.check_attach_mode_supported(context, instance,
                                               attach_mode)
            self._check_host_answers(context, instance, do_cast)
            # ServiceTooOld (503) if the conductor cannot take an attach
            # with its mapping (RPC 1.2).
            self.conductor_rpcapi.check_version('1.2')
            bdm.create()
            instance_action.InstanceAction.action_start(
                context, instance.uuid, instance_action.ATTACH_VOLUME)
        crashpoint.hit(crashpoint.API_ATTACH_AFTER_ACCEPT)
        try:
            if do_cast:
                return self.conductor_rpcapi.attach_volume(
                    context, instance, volume_id, device, tag,
                    delete_on_termination, volume['multiattach'], bdm=bdm,
                    do_cast=True)
            # The call waits until the conductor is done: the attach is
            # kept alive until a conductor takes it (then it is its).
            with tasks.keep_alive(self.conf, bdm):
                return self.conductor_rpcapi.attach_volume(
                    context, instance, volume_id, device, tag,
                    delete_on_termination, volume['multiattach'], bdm=bdm)
        except messaging.MessagingTimeout:
            # The conductor may still be working on it: the mapping is its
            # to complete or remove.
            raise
        except Exception:
            with excutils.save_and_reraise_exception():
                # Either the conductor failed and removed it already, or
                # the request never reached it.
                bdm.destroy()

    # -- detach ------------------------------------------------------------
    def detach(self, context, instance, volume_id):
        """Checks in the order of API-CONTRACT.md 2.7 (after policy).

        The server's host must answer: a host that is only ``down``
        (silent: its guest may still use the disk) answers 409, as Nova's
        ``check_instance_host(check_is_up=True)`` does. A host an
        administrator forced down (fenced, ``compute.fencing``) is
        detached without, as a shelved-offloaded server is.

        A multiattach volume is not marked ``detaching`` (Cinder's legacy
        ``begin_detaching``): its status only sums up its attachments, and
        the mark would make the detach of its other servers fail (400)
        until this one is done. The attachment being deleted is the guard.
        """
        volume = self.volume_client.get(context, volume_id)
        offloaded = instance.vm_state == states.SHELVED_OFFLOADED
        # The mapping and the host's service: one read transaction. The
        # service is looked at only after the checks before it passed.
        with obj_base.reads(context):
            bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                context, volume_id, instance.uuid)
            has_host = bool(not offloaded and instance.host)
            host_up = has_host and checks.host_is_up(
                context, self.conf, instance.host)
            fenced = has_host and not host_up and fencing.is_fenced(
                context, instance.host)
        if bdm.is_root:
            raise exception.RootVolumeDetach()
        checks.check_instance_lock(context, instance)
        checks.check_instance_state(instance, 'detach_volume',
                                    states.DETACH_VOLUME_VM_STATES)
        if bdm.attach_pending:
            if self._cancel_pending_attach(context, instance, bdm):
                return
            # Block storage reserved the volume meanwhile.
            bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                context, volume_id, instance.uuid)
        if offloaded or fenced:
            self._detach_volume_locally(context, instance, bdm, volume,
                                        offloaded)
            return
        if not host_up:
            LOG.warning('Host %s of server %s is down but not forced down: '
                        'the detach of volume %s waits for it (409)',
                        instance.host, instance.uuid, volume_id)
            raise exception.HostServiceDown()
        # Owned by this API process until the host takes it over. If the
        # host never takes it (the cast is lost), the conductor rolls it
        # back.
        if not self._start_detach_task(context, bdm, volume):
            return
        mark = not volume['multiattach']
        try:
            if mark:
                self.volume_client.begin_detaching(context, volume_id)
            instance_action.InstanceAction.action_start(
                context, instance.uuid, instance_action.DETACH_VOLUME)
            crashpoint.hit(crashpoint.API_DETACH_AFTER_BEGIN)
            self.compute_rpcapi.detach_volume(
                context, instance, volume_id, bdm.attachment_id,
                task_ref=bdm.task_ref())
        except Exception:
            with excutils.save_and_reraise_exception():
                if mark:
                    block_storage.roll_detaching(
                        context, self.volume_client, volume_id,
                        log_errors=True)
                bdm.end_task()

    def _start_detach_task(self, context, bdm, volume, local=False):
        """The detach's task on the mapping, owned by this process; False
        if a detach of it is already in flight.

        The same detach again (a client retrying, or tempest's cleanup of
        a multiattach volume still in use for others) is accepted, as Nova
        does: the detach in flight does the work. Another operation on the
        mapping is 409 (``VolumeTaskInProgress``).

        An attach whose attachment block storage already completed (the
        volume is ``in-use`` for this server: what a client waits for
        before it detaches) has only the clearing of its task left, which
        its host does right after: a detach through the host takes the
        task over from it rather than answer 409 in that instant (the host
        then finds its task moved and leaves it)."""
        data = tasks.task_data(context, local=True,
                               keep_volume=local == 'fenced') if local \
            else tasks.task_data(context)
        completed = any(a.get('attachment_id') == bdm.attachment_id
                        for a in volume.get('attachments') or [])
        try:
            if (not local and bdm.task == tasks.ATTACHING and
                    bdm.attachment_id and completed):
                try:
                    bdm.hand_over_task(tasks.DETACHING, self._owner(),
                                       tasks.ACCEPTED, data)
                    return True
                except exception.TaskOwnerChanged:
                    pass    # the host cleared it meanwhile
            bdm.start_task(tasks.DETACHING, self._owner(), tasks.ACCEPTED,
                           data)
        except exception.VolumeTaskInProgress as e:
            if e.kwargs['task'] != tasks.DETACHING:
                raise
            LOG.info('Volume %s of server %s is already being detached',
                     bdm.volume_id, bdm.instance_uuid)
            return False
        return True

    def _cancel_pending_attach(self, context, instance, bdm):
        """Detach of an attach still in progress (or lost: a conductor that
        died with the message): remove its mapping, which tells the
        workflow to undo its part. False if block storage reserved the
        volume meanwhile (then it is an ordinary detach)."""
        if not bdm.destroy_if_pending():
            return False
        LOG.info('Cancelled the pending attach of volume %s to %s',
                 bdm.volume_id, instance.uuid)
        instance_action.InstanceAction.action_start(
            context, instance.uuid, instance_action.DETACH_VOLUME)
        return True

    def _detach_volume_locally(self, context, instance, bdm, volume,
                               offloaded):
        """No host can detach: the server is shelved-offloaded (no host
        has the disk: Nova's local cleanup), or an administrator forced
        its host down (fenced: its guests are stopped, and the host
        removes the disk when it comes back, ``compute.host.recovery.reap``).
        The attachment is deleted here and the mapping destroyed, as a
        task the conductor finishes if this process dies
        (``compute.release``)."""
        if not offloaded:
            LOG.warning('Host %s of server %s is forced down: detaching '
                        'volume %s without it', instance.host,
                        instance.uuid, bdm.volume_id)
        if not self._start_detach_task(
                context, bdm, volume,
                local='offloaded' if offloaded else 'fenced'):
            return
        try:
            instance_action.InstanceAction.action_start(
                context, instance.uuid, instance_action.DETACH_VOLUME)
        except Exception:
            with excutils.save_and_reraise_exception():
                bdm.end_task()
        crashpoint.hit(crashpoint.API_LOCAL_DETACH_AFTER_ACCEPT)
        release.detach_locally(context, self.volume_client, bdm)

    def update(self, context, instance, volume_id,
               attachment):
        """Microversion 2.85: only ``delete_on_termination`` may change;
        the other fields, if sent, must match (400)."""
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            context, volume_id, instance.uuid)
        immutable = (('id', volume_id), ('serverId', instance.uuid),
                     ('device', bdm.device_name), ('tag', bdm.tag))
        for field, current in immutable:
            if field in attachment and attachment[field] != current:
                raise exception.AttachmentFieldNotMutable(field=field)
        if 'delete_on_termination' in attachment:
            value = attachment['delete_on_termination']
            if not isinstance(value, bool):
                value = strutils.bool_from_string(value, strict=True)
            bdm.delete_on_termination = value
            bdm.save()
        return bdm

    def _check_swap_volumes(self, instance, old_volume, new_volume):
        if not any(a.get('server_id') == instance.uuid
                   for a in old_volume.get('attachments') or []):
            raise exception.InvalidVolume(
                reason=_('Old volume is attached to a different instance.'))
        if new_volume.get('attach_status') == 'attached':
            raise exception.InvalidVolume(
                reason=_('New volume must be detached in order to swap.'))
        if int(new_volume['size']) < int(old_volume['size']):
            raise exception.InvalidVolume(
                reason=_('New volume must be the same size or larger.'))

    def _count_rw_attachments(self, context, volume):
        count = 0
        for att in volume.get('attachments') or []:
            try:
                mode = self.volume_client.attachment_get(
                    context, att['attachment_id']).get('attach_mode')
            except exception.VolumeAttachmentNotFound:
                continue
            if mode != 'ro':
                count += 1
        return count

    def swap(self, context, instance, old_volume_id, new_volume_id):
        """Swap the attached ``old_volume_id`` for ``new_volume_id``
        (API-CONTRACT.md 2.6), in active, paused and resized servers as
        Nova, and in shelved ones (volume-ops-when-shelved).

        Only a volume migration's swap, as Nova 32 and later (bug
        2112187: a swap a user drives leaves the guest and the records
        apart, and can expose one guest's disk to another): the old
        volume must be migrating (409, Nova's words), and then only block
        storage, acting as the service, swaps it, for that migration's
        temporary volume (409). The swap's task says it is a migration's:
        once done, the host (or, offloaded, this process) tells block
        storage (``os-migrate_volume_completion``), and the mapping keeps
        the old volume's id, which takes the new storage."""
        old_volume = self.volume_client.get(context, old_volume_id)
        if not old_volume.get('migration_status'):
            raise exception.SwapVolumeNotMigrating(volume_id=old_volume_id)
        try:
            new_volume = self.volume_client.get(context, new_volume_id)
        except exception.VolumeNotFound as exc:
            # An unknown id in the body is a bad request, not a 404.
            raise exception.InvalidInput(message=exc.format_message())
        if (not nl_context.is_service_request(context) or
                new_volume.get('migration_status') !=
                _MIGRATION_TARGET % old_volume_id):
            raise exception.SwapVolumeNotMigrationTarget(
                volume_id=old_volume_id, target=new_volume_id)
        checks.check_instance_lock(context, instance)
        checks.check_instance_state(instance, 'swap_volume',
                                    states.SWAP_VOLUME_VM_STATES)
        self._check_swap_volumes(instance, old_volume, new_volume)
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            context, old_volume_id, instance.uuid)
        if instance.vm_state == states.SHELVED_OFFLOADED:
            self._swap_volume_shelved_offloaded(context, instance, bdm,
                                                old_volume, new_volume_id)
            return
        checks.check_instance_host_is_up(context, self.conf, instance)
        # Owned by this API process until the host takes it over (409 if
        # another operation holds the mapping); the conductor rolls it back
        # if the host never does (doc/source/contributor/crash-safety.rst).
        data = tasks.task_data(context, new_volume_id=new_volume_id,
                               migration=True)
        bdm.start_task(tasks.SWAPPING, self._owner(), tasks.ACCEPTED, data)
        attachment = None
        try:
            self.volume_client.begin_detaching(context, old_volume_id)
            try:
                self._check_swap_multiattach(context, old_volume)
                attachment = self.volume_client.attachment_create(
                    context, new_volume_id, instance.uuid,
                    mode=bdm.attach_mode)
            except Exception:
                with excutils.save_and_reraise_exception():
                    block_storage.roll_detaching(
                        context, self.volume_client, old_volume_id,
                        log_errors=True)
            bdm.move_task(tasks.RESERVED, data=dict(
                data, new_attachment_id=attachment['id']))
            instance_action.InstanceAction.action_start(
                context, instance.uuid, instance_action.SWAP_VOLUME)
            crashpoint.hit(crashpoint.API_SWAP_AFTER_RESERVE)
            self.compute_rpcapi.swap_volume(
                context, instance, bdm.volume_id, new_volume_id,
                attachment['id'], task_ref=bdm.task_ref())
        except Exception:
            with excutils.save_and_reraise_exception():
                if attachment is not None:
                    self.release_new_attachment(context, attachment['id'])
                    block_storage.roll_detaching(
                        context, self.volume_client, old_volume_id,
                        log_errors=True)
                try:
                    bdm.end_task()
                except exception.TaskOwnerChanged:
                    LOG.warning('The swap of volume %s of %s was settled '
                                'meanwhile', old_volume_id, instance.uuid)

    def _check_swap_multiattach(self, context, old_volume):
        if (old_volume['multiattach'] and
                self._count_rw_attachments(context, old_volume) > 1):
            raise exception.MultiattachSwapVolumeNotSupported()

    def release_new_attachment(self, context, attachment_id):
        block_storage.delete_attachment(context, self.volume_client,
                                        attachment_id, log_errors=True)

    def _swap_volume_shelved_offloaded(self, context, instance, bdm,
                                       old_volume, new_volume_id):
        """No host: the mapping moves to the new volume (its device name,
        tag, ``attach_mode`` and ``delete_on_termination`` kept) with an
        attachment reserved and completed without a connector, and the old
        volume's attachment is deleted (``available``).

        A swap task owned by this API process, like a swap through a host:
        until the mapping is the new volume's (step ``swapped``) the
        conductor rolls a stalled one back (the new attachment deleted);
        from there it finishes it (``release.finish_offloaded_swap``)."""
        self._check_swap_multiattach(context, old_volume)
        client = self.volume_client
        data = tasks.task_data(context, new_volume_id=new_volume_id,
                               migration=True)
        bdm.start_task(tasks.SWAPPING, self._owner(), tasks.ACCEPTED, data)
        attachment = None
        try:
            attachment = client.attachment_create(
                context, new_volume_id, instance.uuid, mode=bdm.attach_mode)
            data['new_attachment_id'] = attachment['id']
            bdm.move_task(tasks.RESERVED, data=data)
            instance_action.InstanceAction.action_start(
                context, instance.uuid, instance_action.SWAP_VOLUME)
            crashpoint.hit(crashpoint.API_SWAP_OFFLOADED_AFTER_RESERVE)
            client.attachment_complete(block_storage.service_context(context),
                                       attachment['id'])
            crashpoint.hit(crashpoint.API_SWAP_OFFLOADED_AFTER_COMPLETE)
            # A migration's mapping keeps the old volume's id (it takes
            # the new storage when block storage completes it).
            bdm.move_task(tasks.SWAPPED, data=dict(
                data, old_volume_id=bdm.volume_id,
                old_attachment_id=bdm.attachment_id),
                volume_id=bdm.volume_id if data.get('migration')
                else new_volume_id,
                attachment_id=attachment['id'], connection_info=None)
        except Exception:
            with excutils.save_and_reraise_exception():
                if attachment is not None:
                    self.release_new_attachment(context, attachment['id'])
                try:
                    bdm.end_task()
                except exception.TaskOwnerChanged:
                    LOG.warning('The swap of volume %s of %s was settled '
                                'meanwhile', old_volume['id'], instance.uuid)
        crashpoint.hit(crashpoint.API_SWAP_OFFLOADED_AFTER_MOVE)
        release.finish_offloaded_swap(context, client, bdm)
