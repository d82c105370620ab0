"""The block-storage service layer for volumes.

Cinder's ``volume/api.py`` and the parts of its volume manager that move
the rows, run by whichever process calls it: the API for ``/v3``, compute
and conductor through the ``local`` VolumeClient. The backends' drivers
run in the volume service (``nova-lite-volume``: ``volume_service.manager``),
reached over its RPC API (``volume.rpcapi``, ``API().backends``). Policy
is checked here, so every caller gets the same rules; a volume of another
project is "not found" (404) unless the caller is an administrator.

``API`` is volumes: create, show, list, update, delete, extend, retype,
migrate, the administrators' actions (force delete, force detach, reset
status) and Cinder's legacy (pre-3.27) per-volume attach actions. The
rest of block storage's service layer is reached from it:

* ``API().types``: volume types, their extra specs and encryption, and
  the backends' capabilities (``type_api.Types``);
* ``API().metadata``: a volume's metadata (``metadata_api.Metadata``);
* ``API().attachments``: Cinder's attachment API, and the detach the
  legacy actions here share (``attachment_api.Attachments``);
* ``API().migration``: a volume's migration to another backend
  (``migration.Migration``).

What a process that died left ``creating``, ``extending`` or
``deleting`` (and a stalled migration) is settled by the volume services
for their backends (``volume_service.settling``), with this layer given
the service's own manager as ``backends``.

Status moves follow ``nova_lite.volume.status`` and are made by
compare-and-swap in ``nova_lite.volume.db``; backend calls (the volume
service's, ``volume.rpcapi``) are made between transactions, never inside
one. When a backend call fails: creating a volume: the volume is
``error``; deleting: ``error_deleting``; extending: ``error_extending``,
with its former size (but an extend the volume service did not answer,
``MessagingTimeout``, stays ``extending`` for its settling: whether it
grew is not known); connecting and disconnecting: as ``attachment_api``
says (a call the service did not answer fails as the backend's own
failure).
"""

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_lite import context as nl_context
from nova_lite import crashpoint
from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import volumes as volume_policies
from nova_lite.volume import attachment_api
from nova_lite.volume import backends as backend_conf
from nova_lite.volume import cloning
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import types as type_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import instances
from nova_lite.volume import metadata_api
from nova_lite.volume import migration
from nova_lite.volume import placement
from nova_lite.volume import quotas
from nova_lite.volume import rpcapi as volume_rpcapi
from nova_lite.volume import servers
from nova_lite.volume import services as volume_services
from nova_lite.volume import status as st
from nova_lite.volume import type_api
from nova_lite.volume import views

LOG = logging.getLogger(__name__)

DELETABLE = st.VOLUME_MOVES['delete'][0]

is_multiattach_type = type_api.is_multiattach_type
_target = type_api.target


class API(object):
    """Volumes (this module); ``types``, ``metadata``, ``attachments``,
    ``migration`` and ``settling`` are the parts the module's docstring
    names, each given what it uses of this one."""

    def __init__(self, conf, backends=None):
        """``backends``: how the backends' drivers are reached: the
        volume service's RPC API (``volume.rpcapi.VolumeAPI``, the
        default), or the volume service's manager itself for its
        settling (the same methods, called in-process)."""
        self.conf = conf
        # A request answers 503 in seconds when the broker is away
        # (``[DEFAULT] rpc_send_retries``), as the API's other clients.
        self.backends = backends or volume_rpcapi.VolumeAPI(
            conf, retry=conf.rpc_send_retries)
        self.types = type_api.Types(conf)
        self.metadata = metadata_api.Metadata(self.get)
        self.attachments = attachment_api.Attachments(conf, self.backends)
        self.migration = migration.Migration(conf, self.attachments,
                                             self.backends)

    @staticmethod
    def _project(ctxt):
        """The project a lookup is limited to (None: administrators see
        every project)."""
        return None if ctxt.is_admin else ctxt.project_id

    # -- volumes --------------------------------------------------------
    def get(self, ctxt, volume_id, with_metadata=False):
        """The volume; ``with_metadata``: with its metadata (what its
        detail view shows: whoever may see the volume sees it)."""
        volume = volume_db.volume_get(ctxt, volume_id, self._project(ctxt),
                                      with_metadata=with_metadata)
        ctxt.can(volume_policies.GET, target=_target(volume.project_id))
        return volume

    def get_all(self, ctxt, filters=None, all_tenants=False, marker=None,
                limit=None, offset=None, sort_key='created_at',
                sort_dir='desc', with_metadata=False):
        filters = dict(filters or {})
        project_id = filters.pop('project_id', None)
        ctxt.can(volume_policies.GET_ALL, target=_target(ctxt.project_id))
        if not (ctxt.is_admin and all_tenants):
            project_id = ctxt.project_id
        return volume_db.volume_get_all(
            ctxt, project_id=project_id, filters=filters, marker=marker,
            limit=limit, offset=offset, sort_key=sort_key, sort_dir=sort_dir,
            with_metadata=with_metadata)

    def count(self, ctxt, filters=None, all_tenants=False):
        """How many volumes ``get_all`` would list with these filters, all
        pages together (Cinder's ``with_count``, 3.45)."""
        filters = dict(filters or {})
        project_id = filters.pop('project_id', None)
        ctxt.can(volume_policies.GET_ALL, target=_target(ctxt.project_id))
        if not (ctxt.is_admin and all_tenants):
            project_id = ctxt.project_id
        return volume_db.volume_count(ctxt, project_id=project_id,
                                      filters=filters)

    def summary(self, ctxt, all_tenants=False):
        """Cinder's volume summary (3.12): how many volumes of the
        caller's project (of every project: an administrator's
        ``all_tenants``) and their total size."""
        ctxt.can(volume_policies.GET_ALL, target=_target(ctxt.project_id))
        project_id = None if (ctxt.is_admin and all_tenants) else \
            ctxt.project_id
        return volume_db.volume_summary(ctxt, project_id)

    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, availability_zone=None, image_ref=None,
               snapshot_id=None, source_volid=None, backup_id=None,
               metadata=None):
        ctxt.can(volume_policies.CREATE, target=_target(ctxt.project_id))
        if snapshot_id:
            raise exception.SnapshotNotFound(snapshot_id=snapshot_id)
        if backup_id:
            raise exception.BackupNotFound(backup_id=backup_id)
        # A clone (nova_lite.volume.cloning): its source is read first,
        # so an unknown one is 404.
        source = self.get(ctxt, source_volid) if source_volid else None
        if source is not None:
            size = cloning.check_source(source, size)
        if not isinstance(size, int) or size <= 0:
            raise exception.InvalidInput(
                reason=_("Volume size '%s' must be an integer and greater "
                         "than 0") % size)
        zone = views.DEFAULT_AVAILABILITY_ZONE
        if availability_zone and availability_zone != zone:
            raise exception.InvalidInput(
                reason=_("Availability zone '%s' is invalid.") %
                availability_zone)
        if volume_type:
            vtype = type_db.type_get_by_name_or_id(
                ctxt, volume_type, visible_to=type_api.visible_to(ctxt))
        elif source is not None and source.volume_type_id:
            vtype = type_db.type_get_by_name_or_id(ctxt,
                                                   source.volume_type_id)
        else:
            # Cinder's default type (``[volume] default_volume_type``).
            vtype = self.types.default(ctxt)
        specs = views.extra_specs_of(vtype)
        multiattach = is_multiattach_type(specs)
        if multiattach:
            ctxt.can(volume_policies.MULTIATTACH,
                     target=_target(ctxt.project_id))
        if self.types.is_encrypted(ctxt, vtype.id):
            if multiattach:
                raise exception.InvalidVolume(reason=_(
                    'Multiattach cannot be used with encrypted volumes.'))
            raise exception.EncryptedVolumesNotSupported()
        if source is not None:
            backend = cloning.backend_for(ctxt, self.conf, source, vtype,
                                          specs, multiattach)
        else:
            backend = placement.choose_backend(
                self.conf, specs, multiattach,
                exclude=volume_services.unschedulable_backends(ctxt,
                                                               self.conf))
        if backend is None and multiattach:
            # The multi-attach spec's fast feedback: the cached
            # capabilities say no backend can, so no volume is made.
            raise exception.InvalidInput(reason=_(
                'No enabled backend can host a multiattach volume of '
                'type %s: none reports the multiattach capability%s.') % (
                    vtype.name, _(' under the requested '
                                  'volume_backend_name')
                    if specs.get('volume_backend_name') else ''))
        quota_check = quotas.creation_check(
            ctxt, self.conf, size, vtype.name)
        volume = volume_db.volume_create(ctxt, {
            'project_id': ctxt.project_id,
            'user_id': ctxt.user_id,
            'display_name': name,
            'display_description': description,
            'size': size,
            'multiattach': multiattach,
            'bootable': bool(image_ref or source and source.bootable),
            'volume_type_id': vtype.id,
            'host': backend,
            'availability_zone': zone,
            'source_volid': source_volid,
        }, quota_check=quota_check, metadata=metadata)
        if backend is None:
            LOG.error('No enabled backend can host volume %s (type %s)',
                      volume.id, volume_type)
            volume_db.volume_move(ctxt, volume.id, 'create_failed')
        elif source is not None:
            cloning.clone_on_backend(ctxt, self.conf, volume,
                                     self.backends)
        else:
            self._create_on_backend(ctxt, volume)
        return volume_db.volume_get(ctxt, volume.id, with_metadata=True)

    def _create_on_backend(self, ctxt, volume):
        try:
            updates = self.backends.create_volume(
                ctxt, volume.host,
                volume=backend_conf.volume_dict(volume)) or {}
        except Exception:
            LOG.exception('Creating volume %s on backend %s failed',
                          volume.id, volume.host)
            volume_db.volume_move(ctxt, volume.id, 'create_failed')
            return
        volume_db.volume_move(ctxt, volume.id, 'create_done', values=updates)

    def update(self, ctxt, volume_id, values, metadata=None):
        """Change the volume's name, description or bootable flag and,
        with ``metadata``, replace its whole metadata (Cinder's volume
        update: keys not given are removed). Refused in maintenance, as
        Cinder refuses it. Returns the volume, with its metadata."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.UPDATE, target=_target(volume.project_id))
        if not volume_db.volume_update(ctxt, volume_id, values,
                                       metadata=metadata,
                                       frozen=st.UPDATE_FROZEN):
            raise exception.InvalidVolume(reason=_(
                'The volume cannot be updated during maintenance.'))
        return volume_db.volume_get(ctxt, volume_id, with_metadata=True)

    def delete(self, ctxt, volume_id):
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.DELETE, target=_target(volume.project_id))
        if not volume_db.volume_delete_start(ctxt, volume_id):
            raise exception.InvalidVolume(reason=_(
                'Volume status must be %s and must not be migrating, '
                'attached, belong to a group, have snapshots, awaiting a '
                'transfer, or be disassociated from snapshots after volume '
                'transfer.') % st.or_str(DELETABLE))
        self._finish_delete(ctxt, volume)

    def force_delete(self, ctxt, volume_id):
        """Cinder's admin ``os-force_delete``: delete the volume whatever
        its status (a volume stuck ``creating``, ``attaching``,
        ``deleting``...), unless an attachment is ``attached`` or it is
        migrating (400, as Cinder). Its other attachments (reserved,
        connecting, failed) go with it, and the backend's delete drops
        their connections."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.FORCE_DELETE,
                 target=_target(volume.project_id))
        ctxt.can(volume_policies.DELETE, target=_target(volume.project_id))
        if not volume_db.volume_force_delete_start(ctxt, volume_id):
            raise exception.InvalidVolume(reason=_(
                'Volume must not be migrating, attached, belong to a group, '
                'have snapshots, awaiting a transfer, or be disassociated '
                'from snapshots after volume transfer.'))
        LOG.warning('Volume %s (status %s) force-deleted by %s', volume_id,
                    volume.status, ctxt.user_id)
        self._finish_delete(ctxt, volume)

    def _finish_delete(self, ctxt, volume):
        """The backend's delete, then the row's, of a ``deleting`` volume;
        a backend failure leaves it ``error_deleting`` (500), a backend
        that refuses because the storage is in use (``VolumeIsBusy``)
        ``available`` (409), as Cinder's volume manager."""
        crashpoint.hit(crashpoint.VOLUME_DELETE_AFTER_START)
        if volume.host and volume.host in placement.enabled(self.conf):
            try:
                self.backends.delete_volume(
                    ctxt, volume.host, volume=backend_conf.volume_dict(volume))
            except exception.VolumeIsBusy as e:
                LOG.warning('Volume %s is busy, not deleted: %s', volume.id,
                            e)
                volume_db.volume_move(ctxt, volume.id, 'delete_busy')
                raise
            except Exception as e:
                volume_db.volume_move(ctxt, volume.id, 'delete_failed')
                raise exception.VolumeBackendAPIException(
                    data=_('deleting volume %(id)s failed: %(err)s') % {
                        'id': volume.id, 'err': e})
        volume_db.volume_destroy(ctxt, volume.id)

    def extend(self, ctxt, volume_id, new_size, in_use=False):
        """Grow an ``available`` volume, or with ``in_use`` (Cinder's
        3.42) an ``in-use`` one too, to ``new_size`` GiB (Cinder's
        ``os-extend``): ``extending`` with the new size (the quota counts
        it from then on), the backend grows it, then ``available`` or
        ``in-use`` again (its attachments say which). A backend failure
        leaves it ``error_extending`` with its former size, as Cinder's
        volume manager does; the caller has its 202 either way. An in-use
        volume that grew is announced to the compute service, as Cinder
        does (``volume-extended`` for each server it is attached to:
        their hosts resize the guests' disks; ``volume.servers``)."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.EXTEND, target=_target(volume.project_id))
        if new_size <= volume.size:
            raise exception.InvalidInput(reason=_(
                'New size for extend must be greater than current size. '
                '(current: %(size)s, extended: %(new_size)s).') % {
                    'size': volume.size, 'new_size': new_size})
        expected = st.VOLUME_MOVES['extend'][0]
        if not in_use:
            expected = tuple(s for s in expected if s != st.IN_USE)
        if volume.status not in expected or st.is_migrating(
                volume.migration_status):
            raise self._not_extendable(volume, expected)
        vtype = volume.volume_type
        quota_check = quotas.extend_check(
            ctxt, self.conf, volume.project_id, new_size,
            new_size - volume.size,
            vtype.name if vtype is not None else None)
        if not volume_db.volume_extend_start(ctxt, volume_id, volume.size,
                                             new_size,
                                             quota_check=quota_check,
                                             statuses=expected):
            raise self._not_extendable(volume_db.volume_get(ctxt, volume_id),
                                       expected)
        crashpoint.hit(crashpoint.VOLUME_EXTEND_AFTER_START)
        try:
            self.backends.extend_volume(
                ctxt, volume.host, volume=backend_conf.volume_dict(volume),
                new_size=new_size)
        except messaging.MessagingTimeout:
            # The volume service did not answer (it died, or is cut
            # off): whether the backend grew the volume is not known. It
            # stays extending; the service's settling, once it runs again
            # and the volume stalled, reads the size the backend holds.
            LOG.warning('The volume service of backend %s did not answer '
                        'the extend of volume %s: left extending for its '
                        'settling', volume.host, volume_id)
            return
        except Exception:
            LOG.exception('Extending volume %s to %sG on backend %s failed',
                          volume_id, new_size, volume.host)
            volume_db.volume_move(ctxt, volume_id, 'extend_failed',
                                  values={'size': volume.size})
            return
        crashpoint.hit(crashpoint.VOLUME_EXTEND_AFTER_BACKEND)
        status = volume_db.volume_extend_end(ctxt, volume_id, 'extend_done')
        if status is None:
            # Settled meanwhile (this process was slower than [recovery]
            # stalled_after) or reset by an administrator: theirs stands.
            LOG.warning('Volume %s was grown to %sG but is no longer '
                        'extending: left as it is', volume_id, new_size)
            return
        LOG.info('Volume %s extended from %sG to %sG (%s)', volume_id,
                 volume.size, new_size, status)
        if status == st.IN_USE:
            servers.volume_extended(
                self.conf, nl_context.service_context(ctxt.elevated()),
                volume_id)

    @staticmethod
    def _not_extendable(volume, expected):
        return exception.InvalidVolume(reason=_(
            "Volume %(id)s status must be '%(expected)s' and it must not be "
            "migrating to extend, currently %(status)s.") % {
                'id': volume.id, 'expected': st.or_str(expected),
                'status': volume.status})

    def begin_detaching(self, ctxt, volume_id):
        # The read and the checks in the move's transaction (one, not two).
        with db_api.context_manager.writer.using(ctxt):
            volume = self.get(ctxt, volume_id)
            ctxt.can(volume_policies.BEGIN_DETACHING,
                     target=_target(volume.project_id))
            moved = volume_db.volume_begin_detaching(ctxt, volume_id)
        if not moved and volume.migration_status in st.MIGRATING:
            # As Cinder: a migration's swap detaches the old volume
            # without the user seeing it detaching. Only the compute
            # service swaps; a user's detach waits for the migration.
            if nl_context.is_service_request(ctxt):
                return
            raise exception.InvalidVolume(reason=_(
                'Unable to detach volume %s: it is migrating.') % volume_id)
        if not moved:
            raise exception.InvalidVolume(reason=_(
                "Unable to detach volume. Volume status must be 'in-use' "
                "and attach_status must be 'attached' to detach."))

    def roll_detaching(self, ctxt, volume_id):
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.ROLL_DETACHING,
                 target=_target(volume.project_id))
        # As in Cinder: nothing to roll back is not an error.
        volume_db.volume_move(ctxt, volume_id, 'roll_detaching')

    # -- Cinder's legacy (pre-3.27) attach actions ----------------------
    def reserve_volume(self, ctxt, volume_id):
        """``os-reserve``: available (a multiattach volume also in-use) ->
        attaching, one compare-and-swap."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.RESERVE, target=_target(volume.project_id))
        if not volume_db.volume_legacy_reserve(ctxt, volume_id):
            current = volume_db.volume_get(ctxt, volume_id)
            raise exception.InvalidVolume(reason=_(
                'Volume status must be %(expected)s to reserve, but the '
                'status is %(current)s.') % {
                    'expected': st.or_str(st.legacy_reserve_from(
                        current.multiattach)),
                    'current': current.status})

    def unreserve_volume(self, ctxt, volume_id):
        """``os-unreserve``: attaching -> in-use if the volume has an
        attached attachment, else available (one transaction); a volume
        that is not attaching is left alone, as in Cinder."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.UNRESERVE,
                 target=_target(volume.project_id))
        if volume_db.volume_unreserve(ctxt, volume_id) is None:
            LOG.debug('Volume %s is not attaching: nothing to unreserve',
                      volume_id)

    def attach(self, ctxt, volume_id, instance_uuid, host_name, mountpoint,
               mode):
        """``os-attach``: record that the caller attached the volume to an
        instance or a host (it connected the host itself): one transaction
        (``attachment_db.volume_legacy_attach``) makes an ``attached``
        attachment and the volume ``in-use``. Returns the attachment."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.ATTACH, target=_target(volume.project_id))
        if volume.status == st.MAINTENANCE:
            raise exception.InvalidVolume(reason=_(
                'The volume cannot be attached in maintenance mode.'))
        return attachment_db.volume_legacy_attach(
            ctxt, volume_id, instance_uuid, host_name, mountpoint, mode)

    def detach(self, ctxt, volume_id, attachment_id=None):
        """``os-detach``: delete the given attachment of the volume (the
        only one when none is given) and recompute the volume's status,
        as an attachment delete does (a connected attachment's host
        connection is closed first). The OSSA-2023-003 rule applies: an
        attachment a server's block device mapping holds is detached by
        the compute service, not by its user (409)."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.DETACH, target=_target(volume.project_id))
        if volume.status == st.MAINTENANCE:
            raise exception.InvalidVolume(reason=_(
                'The volume cannot be detached in maintenance mode.'))
        if attachment_id:
            try:
                attachment = attachment_db.attachment_get(ctxt, attachment_id)
            except exception.VolumeAttachmentNotFound:
                # As Cinder: nothing to detach, the volume is settled.
                volume_db.volume_recompute(ctxt, volume_id)
                return
            if attachment.volume_id != volume_id:
                raise exception.InvalidInput(
                    reason=_('Mismatched volume and attachment'))
        elif len(volume.attachments) > 1:
            raise exception.InvalidVolume(reason=_(
                'Detach volume failed: More than one attachment, but no '
                'attachment_id provided.'))
        elif not volume.attachments:
            volume_db.volume_recompute(ctxt, volume_id)
            return
        else:
            attachment = attachment_db.attachment_get(
                ctxt, volume.attachments[0].id)
        self.attachments.check_deletion_allowed(ctxt, attachment)
        self.attachments.remove(ctxt, attachment, with_remaining=False)

    def update_readonly_flag(self, ctxt, volume_id, readonly):
        """``os-update_readonly_flag``: the ``readonly`` admin metadata
        ('True'/'False'), written only while the volume is available (one
        transaction under its row lock)."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.UPDATE_READONLY_FLAG,
                 target=_target(volume.project_id))
        current = volume_db.volume_update_readonly(ctxt, volume_id, readonly)
        if current is not None:
            raise exception.InvalidVolume(reason=_(
                'Volume %(vol_id)s status must be available to update '
                'readonly flag, but current status is: %(vol_status)s.') % {
                    'vol_id': volume_id, 'vol_status': current})

    def retype(self, ctxt, volume_id, new_type, migration_policy=None):
        """Give a volume another type (Cinder's ``os-retype``).

        When the volume's own backend fits the new type, only the type
        changes. Otherwise, with ``migration_policy`` ``on-demand``, the
        volume migrates to the first enabled backend that fits it and
        gets the type when the migration ends (``migration``); with
        ``never`` (the default) it is 400, as Cinder's scheduler finds no
        valid host. The multi-attach spec's rules apply: a retype changing
        ``multiattach`` needs an ``available`` volume (and
        ``volume:multiattach`` to turn it on), and multiattach never goes
        with encryption."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.RETYPE, target=_target(volume.project_id))
        vtype = type_db.type_get_by_name_or_id(
            ctxt, new_type, visible_to=type_api.visible_to(ctxt))
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
        encrypted = self.types.is_encrypted(ctxt, vtype.id)
        if multiattach and encrypted:
            raise exception.InvalidInput(reason=_(
                'Retype requested both encryption and multi-attach, which '
                'is not supported.'))
        if encrypted != bool(volume.encrypted):
            raise exception.EncryptionChangeNotSupported()
        caps = None
        if volume.host in placement.enabled(self.conf):
            caps = placement.capability(self.conf, volume.host)
        if caps is None or not backend_conf.fits(caps, specs, multiattach):
            self._retype_with_migration(ctxt, volume, vtype, specs,
                                        multiattach, migration_policy)
            return
        statuses = (st.RETYPE_MULTIATTACH_FROM
                    if bool(volume.multiattach) != multiattach
                    else st.RETYPE_FROM)
        quota_check = quotas.retype_check(ctxt, self.conf, volume.project_id,
                                          volume.size, vtype.name)
        if not volume_db.volume_retype(ctxt, volume_id, vtype.id, multiattach,
                                       statuses, quota_check=quota_check):
            raise exception.InvalidVolume(reason=_(
                'Retype needs volume to be in available or in-use state, '
                'not be part of an active migration or a consistency group, '
                'requested type has to be different that the one from the '
                'volume, and for in-use volumes front-end qos specs cannot '
                'change.'))
        LOG.info('Volume %s retyped to %s', volume_id, vtype.id)

    def _retype_with_migration(self, ctxt, volume, vtype, specs, multiattach,
                               migration_policy):
        """The retype of a volume whose backend does not fit the new type:
        a migration to one that does (``on-demand``), the type given when
        it ends; 400 otherwise."""
        if migration_policy != 'on-demand':
            raise exception.InvalidInput(reason=_(
                "The backend of volume %(id)s cannot host volume type "
                "%(type)s: retype it with migration_policy on-demand to "
                "migrate it to one that can (migration_policy "
                "%(policy)s).") % {'id': volume.id, 'type': vtype.name,
                                   'policy': migration_policy or 'never'})
        backend = placement.choose_backend(
            self.conf, specs, multiattach,
            exclude=volume_services.unschedulable_backends(
                ctxt, self.conf) | {volume.host})
        if backend is None:
            raise exception.InvalidInput(reason=_(
                'No valid backend was found for volume %(id)s of type '
                '%(type)s: no enabled backend fits the type.') % {
                    'id': volume.id, 'type': vtype.name})
        if volume.volume_type_id == vtype.id:
            raise exception.InvalidVolume(reason=_(
                'Retype needs volume to be in available or in-use state, '
                'not be part of an active migration or a consistency '
                'group, requested type has to be different that the one '
                'from the volume, and for in-use volumes front-end qos '
                'specs cannot change.'))
        quota_check = quotas.retype_check(ctxt, self.conf, volume.project_id,
                                          volume.size, vtype.name)
        LOG.info('Retyping volume %s to %s with a migration to %s',
                 volume.id, vtype.id, backend)
        self.migration.run(ctxt, volume, backend, volume_type=vtype,
                           quota_check=quota_check)

    # -- migration (nova_lite/volume/migration.py) ------------------------
    def migrate(self, ctxt, volume_id, host, force_host_copy=False,
                lock_volume=False):
        """Cinder's admin ``os-migrate_volume`` to backend ``host`` (its
        name, or Cinder's ``host@backend[#pool]``), enabled here and not
        disabled. ``force_host_copy`` and ``lock_volume`` are accepted:
        nova_lite's only migration is the generic one (Cinder's host
        copy), and a migrating volume is always locked against attach,
        detach, extend, retype, delete and another migration."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.MIGRATE, target=_target(volume.project_id))
        backend = backend_conf.backend_of(host)
        if backend not in placement.enabled(self.conf) or \
                backend in volume_services.unschedulable_backends(
                    ctxt, self.conf):
            raise exception.InvalidHost(reason=_(
                "No available service named '%s'") % host)
        LOG.info('Migrating volume %s from %s to %s (force_host_copy %s, '
                 'lock_volume %s)', volume_id, volume.host, backend,
                 force_host_copy, lock_volume)
        self.migration.run(ctxt, volume, backend)

    def migrate_volume_completion(self, ctxt, volume_id, new_volume_id,
                                  error=False):
        """Cinder's ``os-migrate_volume_completion``: the compute side's
        swap of the migrating volume is done (or failed, ``error``).
        Returns the id the server's mapping keeps."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.MIGRATE_COMPLETION,
                 target=_target(volume.project_id))
        return self.migration.complete(ctxt, volume_id, new_volume_id,
                                       error)

    # -- administrators' actions ----------------------------------------
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
                attachment = attachment_db.attachment_get(ctxt, attachment_id)
            except exception.VolumeAttachmentNotFound:
                # Nothing to detach: only the volume is cleaned up.
                volume_db.volume_recompute(ctxt, volume_id)
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
                volume_db.volume_recompute(ctxt, volume_id)
                return
            attachment = attachment_db.attachment_get(
                ctxt, volume.attachments[0].id)
        self.attachments.check_deletion_allowed(ctxt, attachment)
        self.attachments.remove(ctxt, attachment, connector if isinstance(
            connector, dict) and connector else None)

    def reset_status(self, ctxt, volume_id, status=None, attach_status=None,
                     migration_status=None):
        """Cinder's admin ``os-reset_status``: write the volume's status
        (and migration status) as given, whatever the moves allow; the way
        out of a state nothing else settles. ``attach_status='detached'``
        first detaches every attachment of the volume as ``os-force_detach``
        does (backend connections closed), so no attachment or connection
        outlives the reset; 'attached' is refused for a volume with no
        attachment.

        A reset that would make the volume read free (``available``, or
        ``detached``) while a server still maps it is refused (409),
        naming the command that frees it with its mapping (``nova-lite-
        manage volume_attachment release``): the mapping would be left
        behind, and an attach elsewhere refused as "already attached"."""
        volume = self.get(ctxt, volume_id)
        ctxt.can(volume_policies.RESET_STATUS,
                 target=_target(volume.project_id))
        if attach_status == st.ATTACHED and not volume.attachments:
            raise exception.InvalidInput(reason=_(
                'Volume %s has no attachment: its attach_status cannot be '
                'attached.') % volume_id)
        if status == st.AVAILABLE or attach_status == st.DETACHED:
            servers = instances.servers_mapping(ctxt, volume_id)
            if servers:
                raise exception.VolumeMappedByCompute(reason=_(
                    'volume %(vol)s is attached to server %(srv)s through '
                    'the Compute API, and a reset would leave that mapping '
                    'behind. Detach it through the Compute API, or free it '
                    'with "nova-lite-manage volume_attachment release '
                    '%(srv)s %(vol)s" (with --force-down if its host is '
                    'down for good).') % {'vol': volume_id,
                                          'srv': servers[0]})
        if attach_status == st.DETACHED:
            for row in attachment_db.attachments_of_volume(ctxt, volume_id):
                try:
                    attachment = attachment_db.attachment_get(ctxt, row.id)
                except exception.VolumeAttachmentNotFound:
                    continue
                self.attachments.remove(ctxt, attachment, with_remaining=False)
        values = {}
        if status:
            values['status'] = status
        if migration_status:
            values['migration_status'] = (None if migration_status == 'none'
                                          else migration_status)
        if values:
            volume_db.volume_update(ctxt, volume_id, values)
        LOG.warning('Volume %s reset by %s: %s', volume_id, ctxt.user_id,
                    dict(values, attach_status=attach_status))
