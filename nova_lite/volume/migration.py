"""Migrating a volume to another backend: Cinder's generic migration.

``os-migrate_volume`` (an administrator, to a backend by name) and
``os-retype`` with ``migration_policy: on-demand`` (to a backend that fits
the new type, when the volume's own does not) run it, in the process that
serves the request, as Cinder's volume manager runs
``_migrate_volume_generic``:

1. **start**: the volume's ``migration_status`` is ``starting`` (one
   compare-and-swap from available or in-use, no migration in progress,
   another backend, at most one attachment);
2. **target**: a temporary volume of the same size (of the new type, for a
   retype) is made on the target backend, its ``migration_status``
   ``target:<volume id>``; then the volume is ``migrating``;
3. **the data**: whoever has the volume's data path copies it. No host
   holds a connection (the volume is available, or attached to a
   shelved-offloaded server): block storage copies it itself, each
   backend's storage opened as a file (``VolumeDriver.open_volume``:
   files, iSCSI LUN files, RBD images alike), beating the
   volume's ``updated_at`` while it copies, then records ``completing``.
   A host holds one (the server is active, paused, stopped or shelved on
   its host): the compute service swaps the server's disk to the
   temporary volume (``PUT os-volume_attachments/{volume}``, called as
   the service through ``nova_lite.volume.servers``), its virt driver
   copying the data as libvirt's block copy does, and, once the guest has
   it, the new attachment is complete and the old one deleted, calls
   ``os-migrate_volume_completion`` (``complete``). A volume attached to
   a shelved-offloaded server gets the swap too (API-local, no host),
   after block storage copied the data;
4. **finish** (``migration_db.migration_finish``, one transaction): the
   volume keeps its id and takes the temporary volume's storage (Cinder's
   ``name_id``) and backend (and the new type), its ``migration_status``
   is ``success``; the swap's attachment becomes the volume's; the
   temporary volume, which now names the old storage, is ``deleting``,
   and the backend deletes it.

A failure rolls back: the temporary volume is deleted (once it has no
attachment) and the volume's ``migration_status`` is ``error``; the volume
keeps its storage and stays usable.

Who settles a migration whose process died (``settle``, run by block
storage's periodic settling in the API processes, ``volume_service.periodic``,
with the other stalled block-storage work, on a volume that has not
moved for ``[recovery] stalled_after`` seconds;
each decision a compare-and-swap on that last move, so a process that was
only slow and moves on wins):

* ``starting``: rolled back (the temporary volume, if made, deleted);
* ``migrating`` while a server's mapping of the volume holds a swap task:
  left alone: the swap is the compute side's, settled by its own rules;
* ``migrating`` otherwise: finished when the swap is done (a mapping
  holds the temporary volume's attachment), else rolled back (a copy cut
  short, or a swap rolled back): the temporary volume's attachments left
  over are deleted, then the temporary volume;
* ``completing``: finished;
* a temporary volume whose migration ended otherwise (the process died
  between the two rows' moves): deleted.
"""

from oslo_log import log as logging
from oslo_utils import excutils

from nova_lite import context as nl_context
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import migration as migration_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import instances
from nova_lite.volume import placement
from nova_lite.volume import servers
from nova_lite.volume import status as st
from nova_lite.volume import type_api
from nova_lite.volume import views

LOG = logging.getLogger(__name__)


class Migration(object):
    """``volume.api.API().migration``: ``conf`` gives the backends,
    ``attachments`` (``attachment_api.Attachments``) deletes the
    attachments a rolled-back swap leaves over."""

    def __init__(self, conf, attachments, backends):
        """``backends``: the volume service's RPC API (``volume.api``)."""
        self.conf = conf
        self.attachments = attachments
        self.backends = backends

    # -- the workflow -------------------------------------------------------
    def run(self, ctxt, volume, dest_backend, volume_type=None,
            quota_check=None):
        """Migrate ``volume`` (a record ``volume_get`` read, its policy
        checked) to ``dest_backend`` (enabled, fitting), giving it
        ``volume_type`` (an ORM type row; a retype's, whose quotas
        ``quota_check`` checks at the start) at the end. Returns once the
        migration is done (no host holds the volume) or the compute side
        swaps it (which completes it)."""
        if not migration_db.migration_start(ctxt, volume.id, dest_backend,
                                            quota_check=quota_check):
            raise exception.InvalidVolume(reason=_(
                'Volume %s status must be available or in-use, must not be '
                'migrating, have snapshots, be replicated, be part of a '
                'group and destination host/cluster must be different than '
                'the current one') % volume.id)
        crashpoint.hit(crashpoint.VOLUME_MIGRATE_AFTER_START)
        target = None
        try:
            target = self._make_target(ctxt, volume, dest_backend,
                                       volume_type)
            crashpoint.hit(crashpoint.VOLUME_MIGRATE_AFTER_TARGET)
            if not migration_db.migration_move(
                    ctxt, volume.id, st.MIGRATION_STARTING,
                    st.MIGRATION_MIGRATING):
                raise exception.VolumeMigrationFailed(reason=_(
                    'the migration of volume %s was settled meanwhile') %
                    volume.id)
            source = volume_db.volume_get(ctxt, volume.id)
            attachments = [a for a in source.attachments
                           if a.attach_status in st.LIVE_ATTACHMENT]
            if not any(a.connection_info for a in attachments):
                self._copy(ctxt, source, target)
            if attachments:
                # The compute side swaps and completes.
                self._swap(ctxt, source, target, attachments[0])
                return
            if not migration_db.migration_move(
                    ctxt, source.id, st.MIGRATION_MIGRATING,
                    st.MIGRATION_COMPLETING):
                raise exception.VolumeMigrationFailed(reason=_(
                    'the migration of volume %s was settled meanwhile') %
                    source.id)
            crashpoint.hit(crashpoint.VOLUME_MIGRATE_AFTER_COPY)
            self.finish(ctxt, source.id, target.id)
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.exception('Migrating volume %s to %s failed', volume.id,
                              dest_backend)
                if target is not None and (
                        instances.swap_in_flight(ctxt, volume.id) or
                        self._swapped(ctxt, target)):
                    # The compute side's swap went on (or through): its
                    # settling finishes it, and then this migration.
                    LOG.warning('The swap of migrating volume %s is the '
                                'compute side\'s to settle', volume.id)
                else:
                    self._roll_back(ctxt, volume.id, target)

    def _make_target(self, ctxt, volume, dest_backend, volume_type):
        if volume_type is None:
            type_id, multiattach = volume.volume_type_id, volume.multiattach
        else:
            type_id = volume_type.id
            multiattach = type_api.is_multiattach_type(
                views.extra_specs_of(volume_type))
        target = migration_db.target_create(ctxt, volume, dest_backend,
                                            type_id, multiattach)
        try:
            updates = self.backends.create_volume(
                ctxt, dest_backend,
                volume=backend_conf.volume_dict(target)) or {}
        except Exception:
            with excutils.save_and_reraise_exception():
                volume_db.volume_move(ctxt, target.id, 'create_failed')
        if not volume_db.volume_move(ctxt, target.id, 'create_done',
                                     values=updates):
            raise exception.VolumeMigrationFailed(reason=_(
                'the temporary volume %s was changed meanwhile') % target.id)
        return volume_db.volume_get(ctxt, target.id)

    def _copy(self, ctxt, source, target):
        """Block storage copies the data (no host uses the volume): the
        volume service of the source's backend, each backend's storage
        opened as a file (``VolumeDriver.open_volume``), beating the
        volume's ``updated_at``; it stops when the migration was settled
        meanwhile
        (``volume_service.manager.VolumeManager.copy_volume_data``)."""
        copied = self.backends.copy_volume_data(
            ctxt, source.host, source=backend_conf.volume_dict(source),
            target=backend_conf.volume_dict(target))
        LOG.info('Volume %s: %s bytes copied to %s', source.id, copied,
                 target.host)

    def _swap(self, ctxt, source, target, attachment):
        """The compute service swaps the server's disk to ``target`` (as
        the service, on the request's behalf)."""
        if not attachment.instance_uuid:
            raise exception.InvalidVolume(reason=_(
                'volume %s is attached to a host, not a server: nova_lite '
                'migrates it only detached') % source.id)
        svc = nl_context.service_context(ctxt.elevated())
        servers.swap(self.conf, svc, attachment.instance_uuid, source.id,
                     target.id)

    # -- the end ------------------------------------------------------------
    def finish(self, ctxt, source_id, target_id):
        """The volume takes the target's storage (one transaction), then
        the old storage goes. True if this call finished it."""
        if not migration_db.migration_finish(ctxt, source_id, target_id):
            return False
        LOG.info('Volume %s migrated (temporary volume %s)', source_id,
                 target_id)
        crashpoint.hit(crashpoint.VOLUME_MIGRATE_AFTER_FINISH)
        self._delete(ctxt, volume_db.volume_get(ctxt, target_id))
        return True

    def complete(self, ctxt, source_id, target_id, error):
        """Cinder's ``os-migrate_volume_completion`` (the compute side,
        once its swap is done or failed). Returns the id the server's
        mapping keeps. Called again for a migration it finished, it
        answers the same."""
        source = volume_db.volume_get(ctxt, source_id)
        try:
            target = volume_db.volume_get(ctxt, target_id)
        except exception.VolumeNotFound:
            if source.migration_status == st.MIGRATION_SUCCESS and not error:
                return source_id     # finished already
            raise
        if (not st.is_migrating(source.migration_status) and
                not st.is_migrating(target.migration_status)):
            # Cinder's: a swap of two volumes that are not migrating.
            return source_id if error else target_id
        if source.migration_status not in st.MIGRATING:
            raise exception.InvalidVolume(reason=_(
                'Source volume not mid-migration.'))
        expected = st.migration_target(source_id)
        if target.migration_status != expected:
            raise exception.InvalidVolume(reason=_(
                'Destination has migration_status %(stat)s, expected '
                '%(exp)s.') % {'stat': target.migration_status,
                               'exp': expected})
        if error:
            LOG.warning('The swap of migrating volume %s failed: the '
                        'migration is rolled back', source_id)
            self._roll_back(ctxt, source_id, target)
            return source_id
        if not self.finish(ctxt, source_id, target_id):
            raise exception.InvalidVolume(reason=_(
                'Volume %s is no longer migrating to %s') % (source_id,
                                                             target_id))
        return source_id

    def _roll_back(self, ctxt, source_id, target, expected=st.MIGRATING,
                   updated_at=False):
        """The temporary volume goes (once it has no attachment), then the
        volume's migration is ``error`` (from ``expected``; with
        ``updated_at``: only if it has not moved since). True if the
        volume's migration was moved to ``error`` here."""
        if target is not None:
            self._drop(ctxt, target)
        moved = migration_db.migration_move(
            ctxt, source_id, expected, st.MIGRATION_ERROR,
            updated_at=updated_at)
        if moved:
            LOG.warning('The migration of volume %s is rolled back '
                        '(migration_status error)', source_id)
        return moved

    def _drop(self, ctxt, target):
        """Delete a temporary volume that has no live attachment (one
        still attached stays for the settling to look at again)."""
        if not migration_db.target_drop_start(ctxt, target.id):
            LOG.info('Temporary volume %s is attached or going already: '
                     'left alone', target.id)
            return
        self._delete(ctxt, volume_db.volume_get(ctxt, target.id))

    def _delete(self, ctxt, volume):
        """The backend's delete, then the row's, of a ``deleting``
        volume; a backend failure leaves it ``error_deleting``."""
        if volume.host and volume.host in placement.enabled(self.conf):
            try:
                self.backends.delete_volume(
                    ctxt, volume.host, volume=backend_conf.volume_dict(volume))
            except Exception:
                LOG.exception('Deleting volume %s from backend %s failed',
                              volume.id, volume.host)
                volume_db.volume_move(ctxt, volume.id, 'delete_failed')
                return
        volume_db.volume_destroy(ctxt, volume.id)

    # -- settling -------------------------------------------------------------
    def settle(self, ctxt, stalled_before, enabled):
        """Settle the migrations whose process died (see the module
        docstring) whose backends are all in ``enabled`` (those the
        settling volume service drives). Returns ``[(volume id, 'migrate',
        outcome)]``."""
        settled = []
        for source in migration_db.migrations_stalled(ctxt, stalled_before):
            target = migration_db.target_of(ctxt, source.id)
            if source.host not in enabled or (
                    target is not None and target.host not in enabled):
                continue    # another process enables these backends
            try:
                outcome = self._settle_one(ctxt, source, target)
            except Exception:
                LOG.exception('Could not settle the migration of volume %s',
                              source.id)
                continue
            if outcome:
                LOG.warning('Settled the interrupted migration of volume '
                            '%s: %s', source.id, outcome)
                settled.append((source.id, 'migrate', outcome))
        for target in migration_db.orphan_targets(ctxt, stalled_before):
            if target.host in enabled:
                LOG.warning('Deleting temporary volume %s of an ended '
                            'migration', target.id)
                self._drop(ctxt, target)
        return settled

    def _settle_one(self, ctxt, source, target):
        status = source.migration_status
        if status == st.MIGRATION_MIGRATING and instances.swap_in_flight(
                ctxt, source.id):
            return None     # the compute side's swap: its own settling
        done = status == st.MIGRATION_COMPLETING or (
            status == st.MIGRATION_MIGRATING and target is not None and
            self._swapped(ctxt, target))
        if done and target is not None:
            if status == st.MIGRATION_MIGRATING and not \
                    migration_db.migration_move(
                        ctxt, source.id, status, st.MIGRATION_COMPLETING,
                        updated_at=source.updated_at):
                return None
            self.finish(ctxt, source.id, target.id)
            return st.MIGRATION_SUCCESS
        if target is not None:
            self._release_leftovers(ctxt, target)
        if not self._roll_back(ctxt, source.id, target, expected=status,
                               updated_at=source.updated_at):
            return None
        return st.MIGRATION_ERROR

    @staticmethod
    def _swapped(ctxt, target):
        """Whether the compute side's swap to ``target`` reached its end:
        a server's mapping holds the target's (complete) attachment."""
        for attachment_id in migration_db.target_attachments(ctxt,
                                                             target.id):
            attachment = attachment_db.attachment_get(ctxt, attachment_id)
            if attachment.attach_status == st.ATTACHED and \
                    attachment.instance_uuid and \
                    instances.server_holds_attachment(
                        ctxt, attachment.instance_uuid, attachment_id):
                return True
        return False

    def _release_leftovers(self, ctxt, target):
        """A swap rolled back without deleting its new attachment: delete
        it (no mapping holds it), so the temporary volume can go."""
        for attachment_id in migration_db.target_attachments(ctxt,
                                                             target.id):
            try:
                attachment = attachment_db.attachment_get(ctxt,
                                                          attachment_id)
                self.attachments.remove(ctxt, attachment,
                                        with_remaining=False)
            except exception.VolumeAttachmentNotFound:
                continue
