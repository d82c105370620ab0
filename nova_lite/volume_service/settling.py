"""Block storage's own settling: what a process that died left of block
storage's operations (a create, an extend, a delete, a migration), and
the backends' exports made to agree with the database. Run by the volume
services (``nova-lite-volume``, the one of ``nova-lite-all``) every
``[recovery] settle_interval`` seconds (``volume_service.periodic``),
never by the API processes nor the conductor: it calls the drivers of
its service (``VolumeManager.settling``), and a migration's settling
through block storage's service layer given that manager as its
``backends``. Each decision is a compare-and-swap on the volume's last
move, so several services running it at once settle one volume once.
Only the backends the service's configuration enables are settled.
"""

from oslo_log import log as logging

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import servers
from nova_lite.volume import status as st

LOG = logging.getLogger(__name__)


def connected_reader(ctxt, backend):
    """The ``connected`` reader ``VolumeDriver.ensure_exports`` is given
    for ``backend``: ``connected(volume_id=None, detaching=True)`` reads
    ``{volume id: (volume, [connector, ...])}`` of the volumes with
    live connected attachments (only ``volume_id``'s when given;
    without the attachments whose detach has begun unless
    ``detaching``), each connector with its attachment's host."""
    def connected(volume_id=None, detaching=True):
        result = {}
        for attachment in attachment_db.connected_on_backend(
                ctxt, backend, volume_id, detaching):
            entry = result.setdefault(attachment.volume_id, (
                backend_conf.volume_dict(attachment.volume), []))
            connector = attachment_db.connector_of(attachment)
            connector.setdefault('host', attachment.attached_host)
            entry[1].append(connector)
        return result
    return connected


def owned_reader(ctxt, backend):
    """The ``owned`` reader ``VolumeDriver.ensure_exports`` is given for
    ``backend``: ``owned(storage_ids)`` is the set of those ids that
    name the storage of a volume of ``backend`` in this deployment's
    database."""
    def owned(storage_ids):
        return volume_db.storage_on_backend(ctxt, backend, storage_ids)
    return owned


class Settling(object):
    """``VolumeManager.settling``: ``drivers`` the service's
    ``{backend name: driver}``; ``migration`` block storage's
    ``migration.Migration`` (a stalled migration is settled with the
    rest)."""

    def __init__(self, conf, drivers, migration):
        self.conf = conf
        self.drivers = drivers
        self.migration = migration

    def settle_stalled(self, ctxt, stalled_before):
        """Settle the volumes a process left ``creating``, ``extending``
        or ``deleting`` (no move since ``stalled_before``, naive UTC): a
        create (a clone's too: ``volume.cloning``) ends ``error``, as
        Cinder's volume service finds it at its start (the user deletes
        it; the backend's delete takes whatever storage it had); an
        extend ends ``available`` with the size the backend holds (the
        new one if it grew, the former one if not: the user may extend
        again), or ``error_extending`` when the backend cannot tell; a
        delete (plain or forced) is finished: the backend's delete may be
        asked again.
        A volume whose backend is not enabled in this process is left to
        one where it is. The backends' exports are made to agree with the
        connected attachments (``ensure_exports``). Returns ``[(volume id,
        operation, outcome)]``."""
        settled = [(volume_id, 'export', outcome) for volume_id, outcome
                   in self.ensure_exports(ctxt, stalled_before)]
        for volume in volume_db.volumes_stalled(ctxt, st.EXTENDING,
                                                stalled_before):
            outcome = self._settle_extend(ctxt, volume)
            if outcome:
                settled.append((volume.id, 'extend', outcome))
        for volume in volume_db.volumes_stalled(ctxt, st.CREATING,
                                                stalled_before):
            outcome = self._settle_create(ctxt, volume)
            if outcome:
                settled.append((volume.id, 'create', outcome))
        for volume in volume_db.volumes_stalled(ctxt, st.DELETING,
                                                stalled_before):
            outcome = self._settle_delete(ctxt, volume)
            if outcome:
                settled.append((volume.id, 'delete', outcome))
        settled += self.migration.settle(ctxt, stalled_before,
                                         set(self.drivers))
        return settled

    def ensure_exports(self, ctxt, stalled_before=None):
        """Each enabled backend makes its exports agree with its connected
        attachments: exports again what it lost (a restarted target
        daemon) and unexports what no connected attachment needs and
        stalled before ``stalled_before`` (``VolumeDriver.ensure_exports``;
        the attachments are read only when a backend asks). Returns
        ``[(volume id, 'exported' or 'unexported')]``."""
        exported = []
        for backend, driver in self.drivers.items():
            connected = connected_reader(ctxt, backend)
            try:
                exported.extend(driver.ensure_exports(
                    connected, stalled_before,
                    owned=owned_reader(ctxt, backend)))
            except Exception:
                LOG.exception('Could not ensure the exports of backend %s',
                              backend)
        return exported

    def _settle_extend(self, ctxt, volume):
        if volume.host not in self.drivers:
            return None
        try:
            size = self.drivers[volume.host].volume_size(
                backend_conf.volume_dict(volume))
        except Exception:
            LOG.exception('Could not read the size of volume %s', volume.id)
            size = None
        if size:
            # Available, or in-use again when attached (and then its
            # servers are told, as at the end of the extend).
            outcome = volume_db.volume_extend_end(
                ctxt, volume.id, 'extend_settled', values={'size': size},
                expected={'updated_at': volume.updated_at})
            moved = outcome is not None
            if outcome == st.IN_USE:
                servers.volume_extended(
                    self.conf, nl_context.service_context(ctxt.elevated()),
                    volume.id)
        else:
            # Left with the size asked for: the quota keeps counting it
            # until an administrator looks (os-reset_status).
            moved = volume_db.volume_settle(ctxt, volume, 'extend_unsettled')
            outcome = st.ERROR_EXTENDING
        if not moved:
            return None
        LOG.warning('Settled the interrupted extend of volume %s: %s, '
                    '%sG', volume.id, outcome, size or volume.size)
        return outcome

    def _settle_create(self, ctxt, volume):
        if st.is_migrating(volume.migration_status) or volume.host and \
                volume.host not in self.drivers:
            # A migration's temporary volume is the migration's to settle.
            return None
        if not volume_db.volume_settle(ctxt, volume, 'create_settled'):
            return None
        LOG.warning('Settled the interrupted create of volume %s%s: error',
                    volume.id, ' (a clone of %s)' % volume.source_volid
                    if volume.source_volid else '')
        return st.ERROR

    def _settle_delete(self, ctxt, volume):
        if volume.host and volume.host not in self.drivers:
            return None
        if volume.host:
            try:
                self.drivers[volume.host].delete_volume(
                    backend_conf.volume_dict(volume))
            except exception.VolumeIsBusy as e:
                LOG.warning('Volume %s is busy, not deleted: %s', volume.id,
                            e)
                volume_db.volume_settle(ctxt, volume, 'delete_busy')
                return st.AVAILABLE
            except Exception:
                LOG.exception('Finishing the delete of volume %s failed',
                              volume.id)
                volume_db.volume_settle(ctxt, volume, 'delete_failed')
                return st.ERROR_DELETING
        if not volume_db.volume_destroy(ctxt, volume.id):
            return None
        LOG.warning('Finished the interrupted delete of volume %s',
                    volume.id)
        return st.DELETED
