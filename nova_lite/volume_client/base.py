"""The VolumeClient contract: the one door from compute and conductor to
the block storage.

Compute and conductor never import volume internals or touch volume tables:
they call a ``VolumeClient``, chosen by ``[volume] client``:

* ``local``: direct calls into ``nova_lite.volume.api`` (nova-lite-all and
  deployments sharing one database);
* ``cinder``: REST through python-cinderclient and keystoneauth1, at the
  microversions Nova uses, against nova_lite's own ``/v3`` or a real Cinder.

Both return the same plain dicts, shaped like Cinder's REST views, and raise
the same ``nova_lite.exception`` classes, so callers cannot tell them apart.

Contract (every method takes the request context first):

``get(ctxt, volume_id)``
    Volume dict: ``id``, ``status``, ``attach_status``, ``size``,
    ``name``, ``description``, ``created_at`` (Cinder's text,
    ``2026-11-21T20:36:50.000000``), ``snapshot_id``, ``metadata`` (a
    dict), ``multiattach`` (bool), ``bootable`` (bool),
    ``availability_zone``, ``migration_status``, ``volume_type`` (name or
    None), ``encrypted``, ``attachments`` (Cinder's volume-view list of
    attached attachments: ``attachment_id``, ``server_id``, ``host_name``,
    ``device``, ``attached_at``). ``VolumeNotFound`` (404) if unknown.
``get_all(ctxt, limit=None, offset=None)``
    The caller's project's volumes (an administrator's too: no
    ``all_tenants``, as Nova asks), as ``get`` dicts, newest first (Cinder's
    default order), the first ``offset`` skipped, at most ``limit``.
    Callers pass a ``limit`` (the compute API caps it at ``[api]
    max_limit``): without one, how many come back is the block storage's
    choice.
``create(ctxt, size, name=None, description=None, volume_type=None,
metadata=None, availability_zone=None, snapshot_id=None)``
    Create a volume as the caller; returns its ``get`` dict (nova_lite's
    block storage answers once the backend has made it: ``available``, or
    ``error``). ``SnapshotNotFound`` (404) for a snapshot that is not
    there (asked first, as Nova does), ``NotFound`` (404) for an unknown
    volume type, ``InvalidVolume``/``InvalidInput`` (400) for what block
    storage refuses (a size below 1, an unknown zone, metadata where it
    keeps none), ``OverQuota`` (Cinder's 413) over the project's quota.
    ``metadata`` is sent only when it has keys.
``attachment_create(ctxt, volume_id, instance_uuid, connector=None,
mode=None)``
    Reserve (no connector: volume ``reserved``) or reserve and connect.
    Returns the attachment dict: ``id``, ``status`` (attach status),
    ``instance``, ``volume_id``, ``attach_mode``, ``connection_info``.
    ``InvalidVolume`` (400) when the volume cannot be reserved: a
    non-multiattach volume that is not ``available``, or any volume that
    is ``reserved`` or ``attaching`` (a multiattach volume may be reserved
    while ``in-use``). ``Forbidden`` (403) for a second attachment of a
    bootable multiattach volume when ``volume:multiattach_bootable_volume``
    denies it. ``mode`` (``ro``/``rw``) is stored and wins over the
    connector's.
``attachment_update(ctxt, attachment_id, connector, mountpoint=None)``
    Connect: volume ``attaching``; returns the attachment dict with
    ``connection_info``. The connector's ``mode`` (ro/rw) is honoured when
    the attachment has none; ``connection_info['access_mode']`` is the
    mode granted: ``ro`` means the host must expose the device read-only
    (the backends cannot enforce it for one host only).
``attachment_complete(ctxt, attachment_id)``
    Volume ``in-use``, attachment ``attached``.
``attachment_get(ctxt, attachment_id)``
    The attachment dict plus ``shared_connections_by_attachment``: ids of
    the other live attachments of the same volume connected to the same
    host whose detach has not begun (``None``: not known, a real Cinder).
``attachment_get_all(ctxt, instance_id=None, volume_id=None)``
    The attachments (attachment dicts) of a server, of a volume, or of a
    server and a volume, in no promised order (Nova's
    ``attachment_get_all``, Cinder's 3.31 filters). Settling uses it to
    find an attachment block storage made but whose id its maker never
    recorded (it died between the two).
``attachment_delete(ctxt, attachment_id)``
    Terminate the backend's connection to the attachment's host, unless
    another attachment of the volume on that host still uses it, and
    delete; the volume's status is recomputed (detaching one of N
    attachments leaves it ``in-use``). Returns ``{'shared_connections':
    [ids of the attachments still using the host connection]}``
    (``None``: not known, a real Cinder).
``begin_detaching(ctxt, volume_id)`` / ``roll_detaching(ctxt, volume_id)``
    Cinder's legacy detach markers Nova uses: ``in-use`` <-> ``detaching``.
``migrate_volume_completion(ctxt, volume_id, new_volume_id, error=False)``
    Cinder's ``os-migrate_volume_completion``, which the compute side
    calls once the swap of a migrating volume is done (the guest has the
    new volume, the new attachment is complete and the old one deleted),
    or failed (``error``). Returns ``{'save_volume_id': ...}``: the id the
    server's mapping keeps (the migrated volume's own id: it now has the
    new storage), or the new volume's for a swap of two volumes that are
    not migrating. Service requests only (the policy).
``delete(ctxt, volume_id)``
    Delete a volume (``delete_on_termination``, and the compute API's
    ``os-volumes`` proxy). ``InvalidVolume`` (400) unless it may be
    deleted (e.g. ``in-use``).

Multiattach: shared host connections
------------------------------------

When servers on one compute host attach the same multiattach volume, the
host has one connection to the volume that all their attachments use.
The block storage never calls the backend's ``terminate_connection`` for a
host while another attachment of the volume on that host still uses it;
the compute host must likewise keep its host-side connection (the device
its virt driver connected, e.g. os-brick's) until the last one goes. How
to detach one attachment on a host:

1. Detach the device from this guest only.
2. ``result = attachment_delete(service_context(ctxt), attachment_id)``.
3. If ``result['shared_connections']`` is empty, this was the last
   attachment on the host: the backend connection is gone, disconnect the
   host side now. If it lists ids, other attachments (servers) on this
   host still use the connection: keep it.

The answer of step 2 is decided under the volume's row lock, so two
attachments on one host deleted at the same time get consistent answers
(exactly one of them gets the empty list). ``attachment_get``'s
``shared_connections_by_attachment`` is the same question asked before
deleting: use it only if the host must decide before step 2, and then
serialize the detaches of one volume on the host (a lock per volume id in
the compute process), since it can change as soon as it is read. When the
answer is ``None`` (``[volume] client = cinder`` against a real Cinder,
which does not report it), do as Nova does: count the volume's
``attachments`` (``get``) whose ``host_name`` is this host (service
requests see host names).

Calls made by nova_lite services on behalf of a server are service
requests (the OSSA-2023-003 rule lets only those delete an attachment that
belongs to a server): ``service_context(ctxt)`` marks a context so.

Details of the implementations (``local``, ``cinder``):

* The attachment dict is Cinder's detail view: ``id``, ``status``,
  ``instance``, ``volume_id``, ``attached_at``, ``detached_at`` (``""``
  when unset), ``attach_mode`` (``"null"`` until connected unless a mode
  was given), ``connection_info``.
* ``connection_info`` is Cinder's flat form (what ``/v3`` returns): the
  driver's keys plus ``driver_volume_type``, ``access_mode`` and
  ``attachment_id``; e.g. ``{'driver_volume_type': 'file', 'path': ...,
  'access_mode': 'rw', 'attachment_id': ...}``. It is ``{}`` while only
  reserved.
* Volume ``attachments`` host names are shown only to administrators and
  service requests. ``attach_status`` is ``attached`` when the volume has
  an attached attachment, else ``detached`` (derived from the view, as
  Nova does).
* Errors: ``VolumeNotFound``/``VolumeAttachmentNotFound`` (404),
  ``InvalidVolume`` (400: cannot reserve, bad state, bad input),
  ``ResourceConflict`` (409: volume in error or deleting, duplicate
  connection to one host), ``ConflictNovaUsingAttachment`` (409: user
  request deleting a server's attachment), ``Forbidden`` (403, policy),
  ``OverQuota`` (413: a create over the project's quota),
  ``VolumeBackendAPIException`` (500: the backend failed; the message
  says why). After a failed ``attachment_update`` the attachment is
  ``error_attaching``: delete it. ``mode`` needs a block-storage API at
  3.54 or later.
"""

import abc

from oslo_log import log as logging

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite.volume import status as st

LOG = logging.getLogger(__name__)


# -- the VolumeClient's dicts, from block storage's REST views ------------
def client_volume(view):
    """A volume REST view (a dict) as the VolumeClient returns it."""
    bootable = view.get('bootable')
    if isinstance(bootable, str):
        bootable = bootable.lower() == 'true'
    attachments = [{
        'attachment_id': a.get('attachment_id'),
        'server_id': a.get('server_id'),
        'host_name': a.get('host_name'),
        'device': a.get('device'),
        'attached_at': a.get('attached_at'),
    } for a in view.get('attachments') or []]
    return {
        'id': view['id'],
        'status': view['status'],
        'attach_status': st.ATTACHED if attachments else st.DETACHED,
        'size': view['size'],
        'name': view.get('name'),
        'description': view.get('description'),
        'created_at': view.get('created_at'),
        'snapshot_id': view.get('snapshot_id'),
        'metadata': dict(view.get('metadata') or {}),
        'multiattach': bool(view.get('multiattach')),
        'bootable': bool(bootable),
        'availability_zone': view.get('availability_zone'),
        'migration_status': view.get('migration_status'),
        'volume_type': view.get('volume_type'),
        'encrypted': bool(view.get('encrypted')),
        'attachments': attachments,
    }


_ATTACHMENT_KEYS = ('id', 'status', 'instance', 'volume_id', 'attached_at',
                    'detached_at', 'attach_mode', 'connection_info')


def client_attachment(view, shared=None):
    """An attachment REST view (a dict) as the VolumeClient returns it."""
    result = {key: view.get(key) for key in _ATTACHMENT_KEYS}
    result['connection_info'] = dict(result['connection_info'] or {})
    if shared is not None:
        result['shared_connections_by_attachment'] = list(shared)
    return result


class VolumeClient(abc.ABC):
    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def get(self, ctxt, volume_id):
        pass

    @abc.abstractmethod
    def get_all(self, ctxt, limit=None, offset=None):
        pass

    @abc.abstractmethod
    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None):
        pass

    @abc.abstractmethod
    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mode=None):
        pass

    @abc.abstractmethod
    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        pass

    @abc.abstractmethod
    def attachment_complete(self, ctxt, attachment_id):
        pass

    @abc.abstractmethod
    def attachment_get(self, ctxt, attachment_id):
        pass

    @abc.abstractmethod
    def attachment_get_all(self, ctxt, instance_id=None, volume_id=None):
        pass

    @abc.abstractmethod
    def attachment_delete(self, ctxt, attachment_id):
        pass

    @abc.abstractmethod
    def begin_detaching(self, ctxt, volume_id):
        pass

    @abc.abstractmethod
    def roll_detaching(self, ctxt, volume_id):
        pass

    @abc.abstractmethod
    def delete(self, ctxt, volume_id):
        pass

    @abc.abstractmethod
    def migrate_volume_completion(self, ctxt, volume_id, new_volume_id,
                                  error=False):
        pass


def delete_attachment(ctxt, client, attachment_id, log_errors=False):
    """Delete ``attachment_id`` as the compute service (the OSSA-2023-003
    guard lets the service delete what a server holds): the client's
    result, or None when it was already gone. ``log_errors``: any other
    failure is logged, not raised (a roll back that goes on without it:
    an attachment left over is found by the settling)."""
    try:
        return client.attachment_delete(nl_context.service_context(ctxt),
                                        attachment_id)
    except exception.VolumeAttachmentNotFound:
        return None
    except Exception:
        if not log_errors:
            raise
        LOG.exception('Could not delete attachment %s', attachment_id)
        return None


def roll_detaching(ctxt, client, volume_id, log_errors=False):
    """Give the volume back its ``in-use`` after a detach that did not
    happen. A volume not marked ``detaching`` (a multiattach volume, or
    one settled meanwhile) or gone is fine; ``log_errors``: any other
    failure is logged, not raised (inside a roll back that re-raises the
    error that caused it)."""
    try:
        client.roll_detaching(ctxt, volume_id)
    except (exception.InvalidVolume, exception.VolumeNotFound):
        pass
    except Exception:
        if not log_errors:
            raise
        LOG.exception('Could not roll back detaching of %s', volume_id)
