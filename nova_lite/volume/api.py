"""The block-storage service layer: volume types, volumes, attachments.

Cinder's ``volume/api.py`` and the parts of its volume manager nova_lite
needs, in one place, run by whichever process calls it: the API for
``/v3``, compute and conductor through the ``local`` VolumeClient. Policy is
checked here, so every caller gets the same rules; a volume of another
project is "not found" (404) unless the caller is an administrator.

Status moves follow ``nova_lite.volume.status`` and are made by
compare-and-swap in ``nova_lite.volume.db``; backend calls
(``nova_lite.volume.drivers``) are made between transactions, never inside
one. When a backend call fails:

* connecting (attachment update): the attachment goes to
  ``error_attaching``, the volume's status is recomputed, and the caller
  gets a 500 that says why; the caller deletes the attachment;
* connecting within an attachment create: the reservation is undone (the
  attachment deleted, the volume recomputed), since the caller never
  learns the attachment's id;
* disconnecting (attachment delete): nothing changes and the caller is told
  why;
* creating a volume: the volume is ``error``; deleting: ``error_deleting``.
"""

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import excutils
from oslo_utils import timeutils

from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import attachments as attachment_policies
from nova_lite.policies import volumes as volume_policies
from nova_lite.volume import db
from nova_lite.volume import drivers
from nova_lite.volume import instances
from nova_lite.volume import status as st
from nova_lite.volume import type_api
from nova_lite.volume import views

LOG = logging.getLogger(__name__)

DELETABLE = st.VOLUME_MOVES['delete'][0]

is_service_request = views.is_service_request
is_multiattach_type = type_api.is_multiattach_type
_target = type_api.target


def _volume_dict(volume):
    """What a driver is given about a volume."""
    return {
        'id': volume.id,
        'size': volume.size,
        'host': volume.host,
        'provider_location': volume.provider_location,
        'multiattach': bool(volume.multiattach),
    }


class API(type_api.TypeOperations):
    """Volumes and attachments (this module), volume types, their extra
    specs and encryption, and the backends' capabilities
    (``type_api.TypeOperations``)."""

    def __init__(self, conf):
        self.conf = conf

    @staticmethod
    def _project(ctxt):
        """The project a lookup is limited to (None: administrators see
        every project)."""
        return None if ctxt.is_admin else ctxt.project_id

    # -- volumes --------------------------------------------------------
    def get(self, ctxt, volume_id):
        volume = db.volume_get(ctxt, volume_id, self._project(ctxt))
        ctxt.can(volume_policies.GET, target=_target(volume.project_id))
        return volume

    def get_all(self, ctxt, filters=None, all_tenants=False, marker=None,
                limit=None, offset=None, sort_key='created_at',
                sort_dir='desc'):
        filters = dict(filters or {})
        project_id = filters.pop('project_id', None)
        ctxt.can(volume_policies.GET_ALL, target=_target(ctxt.project_id))
        if not (ctxt.is_admin and all_tenants):
            project_id = ctxt.project_id
        return db.volume_get_all(ctxt, project_id=project_id,
                                 filters=filters, marker=marker, limit=limit,
                                 offset=offset, sort_key=sort_key,
                                 sort_dir=sort_dir)

    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, availability_zone=None, image_ref=None,
               snapshot_id=None, source_volid=None, backup_id=None,
               metadata=None):
        ctxt.can(volume_policies.CREATE, target=_target(ctxt.project_id))
        if snapshot_id:
            raise exception.SnapshotNotFound(snapshot_id=snapshot_id)
        if backup_id:
            raise exception.BackupNotFound(backup_id=backup_id)
        if source_volid:
            self.get(ctxt, source_volid)
            raise exception.InvalidInput(
                reason=_('creating a volume from another volume is not '
                         'supported by nova_lite.'))
        if metadata:
            raise exception.InvalidInput(
                reason=_('volume metadata is not supported by nova_lite.'))
        if not isinstance(size, int) or size <= 0:
            raise exception.InvalidInput(
                reason=_("Volume size '%s' must be an integer and greater "
                         "than 0") % size)
        zone = views.DEFAULT_AVAILABILITY_ZONE
        if availability_zone and availability_zone != zone:
            raise exception.InvalidInput(
                reason=_("Availability zone '%s' is invalid.") %
                availability_zone)
        vtype, specs = None, {}
        if volume_type:
            vtype = db.type_get_by_name_or_id(
                ctxt, volume_type, include_private=ctxt.is_admin)
            specs = views.extra_specs_of(vtype)
        multiattach = is_multiattach_type(specs)
        if multiattach:
            ctxt.can(volume_policies.MULTIATTACH,
                     target=_target(ctxt.project_id))
        if vtype is not None and self.is_encrypted(ctxt, vtype.id):
            if multiattach:
                raise exception.InvalidVolume(reason=_(
                    'Multiattach cannot be used with encrypted volumes.'))
            raise exception.EncryptedVolumesNotSupported()
        backend = drivers.choose_backend(self.conf, specs, multiattach)
        if backend is None and multiattach:
            # The multi-attach spec's fast feedback: the cached
            # capabilities say no backend can, so no volume is made.
            raise exception.InvalidInput(reason=_(
                'No enabled backend can host a multiattach volume of '
                'type %s: none reports the multiattach capability%s.') % (
                    vtype.name, _(' under the requested '
                                  'volume_backend_name')
                    if specs.get('volume_backend_name') else ''))
        volume = db.volume_create(ctxt, {
            'project_id': ctxt.project_id,
            'user_id': ctxt.user_id,
            'display_name': name,
            'display_description': description,
            'size': size,
            'multiattach': multiattach,
            'bootable': bool(image_ref),
            'volume_type_id': vtype.id if vtype is not None else None,
            'host': backend,
            'availability_zone': zone,
        })
        if backend is None:
            LOG.error('No enabled backend can host volume %s (type %s)',
                      volume.id, volume_type)
            db.volume_move(ctxt, volume.id, 'create_failed')
        else:
            self._create_on_backend(ctxt, volume)
        return db.volume_get(ctxt, volume.id)

    def _create_on_backend(self, ctxt, volume):
        try:
            driver = drivers.get_driver(self.conf, volume.host)
            updates = driver.create_volume(_volume_dict(volume)) or {}
        except Exception:
            LOG.exception('Creating volume %s on backend %s failed',
                          volume.id, volume.host)
            db.volume_move(ctxt, volume.id, 'create_failed')
            return
        db.volume_move(ctxt, volume.id, 'create_done', values=updates)

    def update(self, ctxt, volume_id, values):
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.UPDATE, target=_target(volume.project_id))
        db.volume_update(ctxt, volume_id, values)
        return db.volume_get(ctxt, volume_id)

    def delete(self, ctxt, volume_id):
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.DELETE, target=_target(volume.project_id))
        if not db.volume_delete_start(ctxt, volume_id):
            raise exception.InvalidVolume(reason=_(
                'Volume status must be %s and must not be migrating, '
                'attached, belong to a group, have snapshots, awaiting a '
                'transfer, or be disassociated from snapshots after volume '
                'transfer.') % st.or_str(DELETABLE))
        if volume.host and volume.host in drivers.get_backends(self.conf):
            try:
                drivers.get_driver(self.conf, volume.host).delete_volume(
                    _volume_dict(volume))
            except Exception as e:
                db.volume_move(ctxt, volume_id, 'delete_failed')
                raise exception.VolumeBackendAPIException(
                    data=_('deleting volume %(id)s failed: %(err)s') % {
                        'id': volume_id, 'err': e})
        db.volume_destroy(ctxt, volume_id)

    def begin_detaching(self, ctxt, volume_id):
        # The read and the checks in the move's transaction (one, not two).
        with db_api.context_manager.writer.connection.using(ctxt):
            volume = self.get(ctxt, volume_id)
            ctxt.can(volume_policies.BEGIN_DETACHING,
                     target=_target(volume.project_id))
            moved = db.volume_begin_detaching(ctxt, volume_id)
        if not moved:
            raise exception.InvalidVolume(reason=_(
                "Unable to detach volume. Volume status must be 'in-use' "
                "and attach_status must be 'attached' to detach."))

    def roll_detaching(self, ctxt, volume_id):
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.ROLL_DETACHING,
                 target=_target(volume.project_id))
        # As in Cinder: nothing to roll back is not an error.
        db.volume_move(ctxt, volume_id, 'roll_detaching')

    def retype(self, ctxt, volume_id, new_type, migration_policy=None):
        """Give a volume another type (Cinder's ``os-retype``).

        nova_lite never migrates a volume between backends, so the
        volume's own backend must fit the new type; the multi-attach
        spec's rules apply: a retype changing ``multiattach`` needs an
        ``available`` volume (and ``volume:multiattach`` to turn it on),
        and multiattach never goes with encryption."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.RETYPE, target=_target(volume.project_id))
        vtype = db.type_get_by_name_or_id(ctxt, new_type,
                                          include_private=ctxt.is_admin)
        specs = views.extra_specs_of(vtype)
        multiattach = is_multiattach_type(specs)
        if bool(volume.multiattach) != multiattach:
            if volume.status != st.AVAILABLE:
                raise exception.InvalidInput(reason=_(
                    'Invalid volume_type passed, retypes affecting '
                    'multiattach are only allowed on available volumes, the '
                    'specified volume however currently has a status of: '
                    '%s.') % volume.status)
            if multiattach:
                ctxt.can(volume_policies.MULTIATTACH,
                         target=_target(volume.project_id))
        encrypted = self.is_encrypted(ctxt, vtype.id)
        if multiattach and encrypted:
            raise exception.InvalidInput(reason=_(
                'Retype requested both encryption and multi-attach, which '
                'is not supported.'))
        if encrypted != bool(volume.encrypted):
            raise exception.EncryptionChangeNotSupported()
        caps = drivers.capabilities(self.conf).get(volume.host)
        if caps is None or not drivers.fits(caps, specs, multiattach):
            raise exception.InvalidInput(reason=_(
                "The backend of volume %(id)s cannot host volume type "
                "%(type)s, and nova_lite does not migrate volumes between "
                "backends (migration_policy %(policy)s).") % {
                    'id': volume_id, 'type': vtype.name,
                    'policy': migration_policy or 'never'})
        statuses = (st.RETYPE_MULTIATTACH_FROM
                    if bool(volume.multiattach) != multiattach
                    else st.RETYPE_FROM)
        if not db.volume_retype(ctxt, volume_id, vtype.id, multiattach,
                                statuses):
            raise exception.InvalidVolume(reason=_(
                'Retype needs volume to be in available or in-use state, '
                'not be part of an active migration or a consistency group, '
                'requested type has to be different that the one from the '
                'volume, and for in-use volumes front-end qos specs cannot '
                'change.'))
        LOG.info('Volume %s retyped to %s', volume_id, vtype.id)

    def force_detach(self, ctxt, volume_id, attachment_id=None,
                     connector=None):
        """Cinder's admin ``os-force_detach``: tear down one attachment
        whatever its state (its host connection, unless another
        attachment on that host still uses it), then recompute the
        volume's status. The OSSA-2023-003 rule applies."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.FORCE_DETACH,
                 target=_target(volume.project_id))
        if volume.status == st.MAINTENANCE:
            raise exception.InvalidVolume(reason=_(
                'Volume %s is locked for maintenance.') % volume_id)
        if attachment_id:
            try:
                attachment = db.attachment_get(ctxt, attachment_id)
            except exception.VolumeAttachmentNotFound:
                # Nothing to detach: only the volume is cleaned up.
                db.volume_recompute(ctxt, volume_id)
                return
            if attachment.volume_id != volume_id:
                raise exception.InvalidInput(
                    reason=_('Mismatched volumes on attachment'))
        else:
            if len(volume.attachments) > 1:
                raise exception.InvalidVolume(reason=_(
                    'Detach volume failed: More than one attachment, but no '
                    'attachment_id provided.'))
            if not volume.attachments:
                db.volume_recompute(ctxt, volume_id)
                return
            attachment = db.attachment_get(ctxt, volume.attachments[0].id)
        self._check_deletion_allowed(ctxt, attachment)
        self._detach(ctxt, attachment, connector if isinstance(
            connector, dict) and connector else None)

    # -- attachments ----------------------------------------------------
    def attachment_get(self, ctxt, attachment_id):
        """The attachment and the ids of the other attachments sharing its
        host connection."""
        attachment = db.attachment_get(ctxt, attachment_id,
                                       self._project(ctxt))
        return attachment, self._shared_connections(ctxt, attachment)

    def attachment_get_all(self, ctxt, filters=None, all_tenants=False,
                           marker=None, limit=None, offset=None,
                           sort_dir='asc'):
        project_id = (None if (ctxt.is_admin and all_tenants)
                      else ctxt.project_id)
        return db.attachment_get_all(ctxt, project_id=project_id,
                                     filters=filters, marker=marker,
                                     limit=limit, offset=offset,
                                     sort_dir=sort_dir)

    @staticmethod
    def _shared_connections(ctxt, attachment):
        """Other live attachments of the same volume connected to the same
        host (the add-new-attach-apis spec's shared connections)."""
        return db.connection_users(ctxt, attachment.volume_id,
                                   attachment.attached_host,
                                   exclude_id=attachment.id)

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mode=None):
        volume = db.volume_get(ctxt, volume_id, self._project(ctxt))
        ctxt.can(attachment_policies.CREATE,
                 target=_target(volume.project_id))
        if 'error' in volume.status:
            raise exception.InvalidVolume(reason=_(
                'Volume attachments can not be created if the volume is in '
                'an error state. The Volume %(id)s currently has a status '
                'of: %(status)s ') % {'id': volume.id,
                                      'status': volume.status})
        if (volume.multiattach and volume.status == st.IN_USE and
                volume.bootable):
            ctxt.can(attachment_policies.MULTIATTACH_BOOTABLE_VOLUME,
                     target=_target(volume.project_id))
        attachment = db.attachment_reserve(ctxt, volume_id, instance_uuid,
                                           mode or 'null')
        if attachment is None:
            current = db.volume_get(ctxt, volume_id)
            raise exception.InvalidVolume(reason=_(
                'Volume %(id)s status must be %(statuses)s to reserve, but '
                'the current status is %(current)s.') % {
                    'id': volume_id,
                    'statuses': st.or_str(st.reserve_from(
                        current.multiattach)),
                    'current': current.status})
        if connector:
            try:
                return self._connect(ctxt, attachment, volume, connector)
            except Exception:
                with excutils.save_and_reraise_exception():
                    db.attachment_destroy(ctxt, attachment.id, volume_id)
        # Loaded by attachment_reserve in its own transaction.
        return attachment

    def attachment_update(self, ctxt, attachment_id, connector):
        # Both reads in one transaction.
        with db_api.context_manager.reader.connection.using(ctxt):
            attachment = db.attachment_get(ctxt, attachment_id,
                                           self._project(ctxt))
            ctxt.can(attachment_policies.UPDATE,
                     target=_target(attachment.volume.project_id))
            volume = db.volume_get(ctxt, attachment.volume_id)
        if 'error' in volume.status or volume.status in (st.DELETING,):
            raise exception.ResourceConflict(reason=_(
                'Volume attachments can not be updated if the volume is in '
                'an error state or being deleted. The Volume %(id)s '
                'currently has a status of: %(status)s') % {
                    'id': volume.id, 'status': volume.status})
        if attachment.attach_status not in st.LIVE_ATTACHMENT:
            raise exception.InvalidVolume(reason=_(
                'attachment %(id)s is %(status)s: delete it and create a new '
                'one') % {'id': attachment_id,
                          'status': attachment.attach_status})
        # A non-multiattach volume may have two attachments only while an
        # instance moves (live migration), and then on two different
        # hosts: a second connection to the same host is a duplicate.
        others = [a for a in volume.attachments
                  if a.id != attachment.id and a.connection_info and
                  a.attach_status in st.LIVE_ATTACHMENT]
        if not volume.multiattach and any(
                a.attached_host == connector.get('host') for a in others):
            raise exception.ResourceConflict(reason=_(
                'duplicate connectors detected on volume %s') % volume.id)
        return self._connect(ctxt, attachment, volume, connector)

    def _connect(self, ctxt, attachment, volume, connector):
        """Initialize the connection and record it (the connect move);
        returns the connected attachment, read in the move's transaction."""
        mode = attachment.attach_mode
        if mode in (None, 'null'):
            mode = connector.get('mode') or 'rw'
        connector = dict(connector, mode=mode)
        try:
            driver = drivers.get_driver(self.conf, volume.host)
            info = driver.initialize_connection(_volume_dict(volume),
                                                connector)
        except Exception as e:
            LOG.warning('Connecting attachment %s of volume %s failed: %s',
                        attachment.id, volume.id, e)
            db.attachment_connect_failed(ctxt, attachment.id, volume.id)
            raise exception.VolumeBackendAPIException(data=_(
                'Unable to update the attachment %(att)s: the backend '
                'could not connect volume %(vol)s: %(err)s') % {
                    'att': attachment.id, 'vol': volume.id,
                    'err': e.format_message() if isinstance(
                        e, exception.NovaLiteException) else e})
        connection_info = dict(info.get('data') or {})
        connection_info['driver_volume_type'] = info['driver_volume_type']
        connection_info['attachment_id'] = attachment.id
        connection_info.setdefault('access_mode', mode)
        values = {
            'connection_info': jsonutils.dumps(connection_info),
            'attached_host': connector.get('host'),
            'mountpoint': connector.get('mountpoint'),
            'attach_mode': mode,
            'attach_time': timeutils.utcnow(),
        }
        try:
            connected = db.attachment_connect(ctxt, attachment.id, volume.id,
                                              values, connector)
        except Exception:
            with excutils.save_and_reraise_exception():
                # Undo the connection just made, unless another attachment
                # on that host uses it.
                if not db.connection_users(ctxt, volume.id,
                                           connector.get('host'),
                                           exclude_id=attachment.id):
                    self._terminate(volume, connector, quiet=True)
        return connected

    def _terminate(self, volume, connector, quiet=False):
        try:
            drivers.get_driver(self.conf, volume.host).terminate_connection(
                _volume_dict(volume), connector)
        except Exception as e:
            if quiet:
                LOG.exception('Terminating the connection of volume %s '
                              'failed', volume.id)
                return
            raise exception.VolumeBackendAPIException(data=_(
                'Unable to delete the attachment: the backend could not '
                'disconnect volume %(vol)s (the attachment is unchanged): '
                '%(err)s') % {'vol': volume.id, 'err': e})

    def attachment_complete(self, ctxt, attachment_id):
        # Not in the move's transaction: on MariaDB (REPEATABLE READ) a
        # plain read before the volume's row lock would fix the snapshot
        # the move then reads the attachments from. Two columns, though,
        # not the whole attachment.
        volume_id, project_id = db.attachment_volume(
            ctxt, attachment_id, self._project(ctxt))
        ctxt.can(attachment_policies.COMPLETE, target=_target(project_id))
        db.attachment_complete(ctxt, attachment_id, volume_id)

    def _check_deletion_allowed(self, ctxt, attachment):
        """The OSSA-2023-003 rule (see ``nova_lite.volume.instances``)."""
        if is_service_request(ctxt):
            return
        if not attachment.instance_uuid or not attachment.connection_info:
            return
        if not instances.server_holds_attachment(
                ctxt, attachment.instance_uuid, attachment.id):
            return
        raise exception.ConflictNovaUsingAttachment(
            instance_id=attachment.instance_uuid)

    def attachment_delete(self, ctxt, attachment_id, with_remaining=True):
        """Returns ``(remaining attachments of the volume, ids of the
        attachments still using this one's host connection)``; without
        ``with_remaining``, the remaining attachments are not read (None).
        """
        # Not in the transaction that begins the detach: on MariaDB
        # (REPEATABLE READ) a plain read before the volume's row lock would
        # fix the snapshot that decides who still shares the connection.
        attachment = db.attachment_get(ctxt, attachment_id,
                                       self._project(ctxt))
        ctxt.can(attachment_policies.DELETE,
                 target=_target(attachment.volume.project_id))
        self._check_deletion_allowed(ctxt, attachment)
        return self._detach(ctxt, attachment, with_remaining=with_remaining)

    def _detach(self, ctxt, attachment, connector=None, with_remaining=True):
        """Disconnect (unless the host connection is shared) and delete
        ``attachment``; the volume's status is recomputed.

        The backend's ``terminate_connection`` is called only when no other
        attachment of the volume on the same host still uses the
        connection; which ones do is decided under the volume's row lock
        (``db.attachment_begin_detach``). If the backend fails, the
        attachment is left as it was. Returns ``(remaining attachments,
        ids of the attachments sharing the connection)``."""
        if connector is None:
            connector = db.connector_of(attachment)
        else:
            connector = dict(connector)
            connector.setdefault('host', attachment.attached_host)
        host = connector.get('host') or attachment.attached_host
        connected = (attachment.attach_status != st.RESERVED and
                     attachment.connection_info)
        # Never connected (only reserved): nothing to decide or tear down.
        shared = db.attachment_begin_detach(
            ctxt, attachment.id, attachment.volume_id, host) if (
                connected) else []
        if connected and not shared:
            try:
                self._terminate(attachment.volume, connector)
            except Exception:
                with excutils.save_and_reraise_exception():
                    db.attachment_abort_detach(ctxt, attachment.id)
        elif connected:
            LOG.info('Attachment %s: the connection of volume %s to host %s '
                     'stays, attachments %s still use it', attachment.id,
                     attachment.volume_id, host, ', '.join(shared))
        remaining = db.attachment_destroy(ctxt, attachment.id,
                                          attachment.volume_id,
                                          remaining=with_remaining)
        return remaining, shared
