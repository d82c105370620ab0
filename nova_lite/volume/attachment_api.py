"""The block-storage service layer for attachments: Cinder's attachment
API (3.27 and later), and the detach its legacy per-volume actions share.

``Attachments`` is ``nova_lite.volume.api.API().attachments``; the same
rules as there: policy checked here (an attachment of another project's
volume is "not found", 404, unless the caller is an administrator), moves
made by compare-and-swap in ``nova_lite.volume.db.attachments``, backend
calls (``initialize_connection``, ``terminate_connection``) made between
transactions, never inside one. When a backend call fails:

* connecting (``update``): the attachment goes to ``error_attaching``,
  the volume's status is recomputed, and the caller gets a 500 that says
  why; the caller deletes the attachment;
* connecting within a ``create``: the reservation is undone (the
  attachment deleted, the volume recomputed), since the caller never
  learns the attachment's id;
* disconnecting (``delete``, ``remove``): nothing changes and the caller
  is told why.

A host's connection of a volume is shared by the attachments of that
volume on that host: it is made by the first one connected and
terminated when the last one goes (``remove``).

The OSSA-2023-003 rule (``nova_lite.volume.instances``): an attachment a
server's block device mapping holds is connected and deleted by the
compute service, not by its user (409).

``API``'s legacy per-volume actions (``os-detach``, ``os-force_detach``,
``os-reset_status`` to detached) detach through ``remove`` and
``check_deletion_allowed``, as does a migration
(``nova_lite.volume.migration``) for the attachments it leaves over.
"""

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import excutils

from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import attachments as attachment_policies
from nova_lite import utils
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import instances
from nova_lite.volume import status as st
from nova_lite.volume import type_api

LOG = logging.getLogger(__name__)

_target = type_api.target


def _project(ctxt):
    """The project a lookup is limited to (None: administrators see
    every project)."""
    return None if ctxt.is_admin else ctxt.project_id


class Attachments(object):
    """``volume.api.API().attachments``: ``conf`` gives the backends."""

    def __init__(self, conf, backends):
        """``backends``: the volume service's RPC API (``volume.api``)."""
        self.conf = conf
        self.backends = backends

    def get(self, ctxt, attachment_id):
        """The attachment and the ids of the other attachments sharing its
        host connection."""
        attachment = attachment_db.attachment_get(ctxt, attachment_id,
                                                  _project(ctxt))
        return attachment, self._shared_connections(ctxt, attachment)

    def get_all(self, ctxt, filters=None, all_tenants=False, marker=None,
                limit=None, offset=None, sort_dir='asc'):
        project_id = (None if (ctxt.is_admin and all_tenants)
                      else ctxt.project_id)
        return attachment_db.attachment_get_all(ctxt, project_id=project_id,
                                                filters=filters, marker=marker,
                                                limit=limit, offset=offset,
                                                sort_dir=sort_dir)

    @staticmethod
    def _shared_connections(ctxt, attachment):
        """Other live attachments of the same volume connected to the same
        host (the add-new-attach-apis spec's shared connections)."""
        return attachment_db.connection_users(ctxt, attachment.volume_id,
                                              attachment.attached_host,
                                              exclude_id=attachment.id)

    def create(self, ctxt, volume_id, instance_uuid, connector=None,
               mode=None):
        volume = volume_db.volume_get(ctxt, volume_id, _project(ctxt))
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
        # A second attachment of an in-use volume for the instance it is
        # attached to exists for a move of that instance (Cinder's live
        # migration), which is the compute service's: a user's would stay
        # reserved, and the Compute API's detach refuse the volume, until
        # the user deleted it.
        service = nl_context.is_service_request(ctxt)
        attachment = attachment_db.attachment_reserve(
            ctxt, volume_id, instance_uuid, mode or 'null',
            same_instance_allowed=service, service=service)
        if attachment is None:
            current = volume_db.volume_get(ctxt, volume_id)
            if st.is_migrating(current.migration_status):
                raise exception.InvalidVolume(reason=_(
                    'Volume %(id)s is migrating (migration_status '
                    '%(migration)s): it cannot be attached until the '
                    'migration ends.') % {
                        'id': volume_id,
                        'migration': current.migration_status})
            if not service and not current.multiattach and any(
                    a.instance_uuid == instance_uuid and instance_uuid
                    for a in current.attachments):
                raise exception.InvalidVolume(reason=_(
                    'Volume %(id)s is already attached to instance '
                    '%(instance)s and is not multiattach: only the '
                    'compute service may attach it to that instance '
                    'again.') % {'id': volume_id, 'instance': instance_uuid})
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
                    attachment_db.attachment_destroy(ctxt, attachment.id,
                                                     volume_id)
        # Loaded by attachment_reserve in its own transaction.
        return attachment

    def update(self, ctxt, attachment_id, connector):
        # Both reads in one transaction.
        with db_api.context_manager.reader.using(ctxt):
            attachment = attachment_db.attachment_get(ctxt, attachment_id,
                                                      _project(ctxt))
            ctxt.can(attachment_policies.UPDATE,
                     target=_target(attachment.volume.project_id))
            volume = volume_db.volume_get(ctxt, attachment.volume_id)
        self._check_update_allowed(ctxt, attachment)
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
        returns the connected attachment, read in the move's transaction.

        An attachment already connected (connected again with a new
        connector) gives its former host's connection up once the new one
        is recorded on another host, or whatever the host when connecting
        fails (the attachment is then ``error_attaching`` and no longer
        counts), unless another attachment on that host still uses it: no
        connection outlives the attachments using it."""
        mode = attachment.attach_mode
        if mode in (None, 'null'):
            mode = connector.get('mode') or 'rw'
        connector = dict(connector, mode=mode)
        previous = self._previous_connection(attachment)
        try:
            info = self.backends.initialize_connection(
                ctxt, volume.host, volume=backend_conf.volume_dict(volume),
                connector=connector)
        except Exception as e:
            LOG.warning('Connecting attachment %s of volume %s failed: %s',
                        attachment.id, volume.id, e)
            attachment_db.attachment_connect_failed(ctxt, attachment.id,
                                                    volume.id)
            self._give_up_connection(ctxt, volume, attachment.id, previous)
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
            'attach_time': utils.utcnow(),
        }
        try:
            connected = attachment_db.attachment_connect(
                ctxt, attachment.id, volume.id, values, connector)
        except Exception:
            with excutils.save_and_reraise_exception():
                # Undo the connection just made, unless another attachment
                # on that host uses it.
                if not self._connection_shared(ctxt, volume, attachment.id,
                                               connector.get('host')):
                    self._terminate(volume, connector, quiet=True)
        if previous is not None and previous['host'] != connector.get(
                'host'):
            self._give_up_connection(ctxt, volume, attachment.id, previous)
        return connected

    @staticmethod
    def _previous_connection(attachment):
        """The connector of the host ``attachment`` is connected to (None
        when it holds no connection)."""
        if not attachment.connection_info or not attachment.attached_host:
            return None
        previous = attachment_db.connector_of(attachment)
        previous['host'] = attachment.attached_host
        return previous

    def _give_up_connection(self, ctxt, volume, attachment_id, previous):
        """Terminate the connection an attachment held before it was
        connected again (``_previous_connection``), unless another
        attachment on that host uses it."""
        if previous is None:
            return
        if self._connection_shared(ctxt, volume, attachment_id,
                                   previous['host']):
            return
        LOG.info('Attachment %s of volume %s moved off host %s: its '
                 'connection there is terminated', attachment_id, volume.id,
                 previous['host'])
        self._terminate(volume, previous, quiet=True)

    @staticmethod
    def _connection_shared(ctxt, volume, attachment_id, host):
        """Whether another attachment uses ``host``'s connection of
        ``volume``. Asked when recording a connection failed: if the
        database cannot answer either, the attachments read with the
        volume before connecting answer (the connection is not left
        behind because the database is down)."""
        try:
            return bool(attachment_db.connection_users(
                ctxt, volume.id, host, exclude_id=attachment_id))
        except Exception:
            LOG.exception('Could not read the users of the connection of '
                          'volume %s to host %s', volume.id, host)
            return any(a.id != attachment_id and a.attached_host == host and
                       a.connection_info and
                       a.attach_status in st.LIVE_ATTACHMENT
                       for a in volume.attachments)

    def _terminate(self, volume, connector, quiet=False):
        try:
            self.backends.terminate_connection(
                nl_context.get_admin_context(), volume.host,
                volume=backend_conf.volume_dict(volume), connector=connector)
        except Exception as e:
            if quiet:
                LOG.exception('Terminating the connection of volume %s '
                              'failed', volume.id)
                return
            raise exception.VolumeBackendAPIException(data=_(
                'Unable to delete the attachment: the backend could not '
                'disconnect volume %(vol)s (the attachment is unchanged): '
                '%(err)s') % {'vol': volume.id, 'err': e})

    def complete(self, ctxt, attachment_id):
        # Not in the move's transaction: on MariaDB (REPEATABLE READ) a
        # plain read before the volume's row lock would fix the snapshot
        # the move then reads the attachments from. Two columns, though,
        # not the whole attachment.
        volume_id, project_id = attachment_db.attachment_volume(
            ctxt, attachment_id, _project(ctxt))
        ctxt.can(attachment_policies.COMPLETE, target=_target(project_id))
        attachment_db.attachment_complete(ctxt, attachment_id, volume_id)

    def _check_update_allowed(self, ctxt, attachment):
        """The OSSA-2023-003 rule, for connecting: the compute service
        connects the attachments a server's block device mapping holds
        (connected or not yet); a user's connector would move the
        server's disk to the user's host (409)."""
        if nl_context.is_service_request(ctxt):
            return
        if not attachment.instance_uuid:
            return
        if not instances.server_holds_attachment(
                ctxt, attachment.instance_uuid, attachment.id):
            return
        raise exception.ConflictNovaOwnsAttachment(
            attachment_id=attachment.id,
            instance_id=attachment.instance_uuid)

    def check_deletion_allowed(self, ctxt, attachment):
        """The OSSA-2023-003 rule (see ``nova_lite.volume.instances``)."""
        if nl_context.is_service_request(ctxt):
            return
        if not attachment.instance_uuid or not attachment.connection_info:
            return
        if not instances.server_holds_attachment(
                ctxt, attachment.instance_uuid, attachment.id):
            return
        raise exception.ConflictNovaUsingAttachment(
            instance_id=attachment.instance_uuid)

    def delete(self, ctxt, attachment_id, with_remaining=True):
        """Returns ``(remaining attachments of the volume, ids of the
        attachments still using this one's host connection)``; without
        ``with_remaining``, the remaining attachments are not read (None).
        """
        # Not in the transaction that begins the detach: on MariaDB
        # (REPEATABLE READ) a plain read before the volume's row lock would
        # fix the snapshot that decides who still shares the connection.
        attachment = attachment_db.attachment_get(ctxt, attachment_id,
                                                  _project(ctxt))
        ctxt.can(attachment_policies.DELETE,
                 target=_target(attachment.volume.project_id))
        self.check_deletion_allowed(ctxt, attachment)
        return self.remove(ctxt, attachment, with_remaining=with_remaining)

    def remove(self, ctxt, attachment, connector=None, with_remaining=True):
        """Disconnect (unless the host connection is shared) and delete
        ``attachment`` (an ORM row, with its volume), as block storage
        itself: no policy, no OSSA-2023-003 rule (the callers check
        theirs); the volume's status is recomputed. A ``connector`` given
        (a force detach's) is the one the backend is told, with the
        attachment's own host.

        The backend's ``terminate_connection`` is called only when no other
        attachment of the volume on the same host still uses the
        connection; which ones do is decided under the volume's row lock
        (``attachment_db.attachment_begin_detach``). If the backend fails, the
        attachment is left as it was. Returns ``(remaining attachments,
        ids of the attachments sharing the connection)``."""
        if connector is None:
            connector = attachment_db.connector_of(attachment)
        else:
            connector = dict(connector)
        # The connection to tear down is the one the attachment holds,
        # whatever host a given connector names (a force detach's): the
        # backend would otherwise keep it.
        if attachment.attached_host:
            connector['host'] = attachment.attached_host
        host = connector.get('host')
        connected = (attachment.attach_status != st.RESERVED and
                     attachment.connection_info)
        # Never connected (only reserved): nothing to decide or tear down.
        shared = attachment_db.attachment_begin_detach(
            ctxt, attachment.id, attachment.volume_id, host) if (
                connected) else []
        if connected and not shared:
            try:
                self._terminate(attachment.volume, connector)
            except Exception:
                with excutils.save_and_reraise_exception():
                    attachment_db.attachment_abort_detach(ctxt, attachment.id)
        elif connected:
            LOG.info('Attachment %s: the connection of volume %s to host %s '
                     'stays, attachments %s still use it', attachment.id,
                     attachment.volume_id, host, ', '.join(shared))
        remaining = attachment_db.attachment_destroy(ctxt, attachment.id,
                                                     attachment.volume_id,
                                                     remaining=with_remaining)
        return remaining, shared
