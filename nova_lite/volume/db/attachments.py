"""Attachments: their reads and lists, the attachment moves (reserve,
connect, complete, the detach and the delete, each with the volume's move
or recomputed status in the same transaction), the stored host connector
(``attachment_specs``), and Cinder's legacy ``os-attach``, which makes an
attachment.

``attachment_get`` returns a read-only ``AttachmentRecord``;
``attachment_get_all`` returns ORM rows with their volume and specs
loaded.
"""

import collections

from oslo_serialization import jsonutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite import utils
from nova_lite.volume.db import common
from nova_lite.volume.db import volumes
from nova_lite.volume import status as st

Volume = models.Volume
Attachment = models.VolumeAttachment

_ATTACHMENT_LOAD = (
    orm.joinedload(Attachment.volume),
    orm.selectinload(Attachment.specs),
)

# The tables, for the Core statements of the hot paths.
_V = Volume.__table__
_A = Attachment.__table__
_S = models.AttachmentSpec.__table__

# attachment_get's read-only record (named tuples, their fields read from
# a result row by column label; attributes as the ORM rows have).
#: An attachment row, with its ``volume`` (a ``VolumeRow``) and its
#: ``specs`` (``AttachmentSpecRow``s: the stored connector, by id).
AttachmentRecord = collections.namedtuple(
    'AttachmentRecord', common.ATTACHMENT_COLUMNS + ('volume', 'specs'))
AttachmentSpecRow = collections.namedtuple('AttachmentSpecRow',
                                           ('key', 'value'))

# attachment_get runs several times in every attach and detach (and for
# every GET of one attachment). It is one statement, an outer join rather
# than a second SELECT for the specs, built once with bound parameters.
# Lists keep _attachment_query (ORM rows; select-in loads go with LIMIT).
#
# Its columns are labelled ``<prefix><column name>`` (``attachment_``,
# ``volume_``) and ``spec_key``/``spec_value``, and the record is built
# from the row's attributes of those labels: the order of the SELECT's
# columns does not matter.


def _attachment_get_statement(in_project):
    query = sa.select(
        *common.labelled(_A, 'attachment_'), *common.labelled(_V, 'volume_'),
        _S.c.key.label('spec_key'), _S.c.value.label('spec_value')
    ).select_from(
        _A.join(_V, _V.c.id == _A.c.volume_id).outerjoin(
            _S, _S.c.attachment_id == _A.c.id)
    ).where(_A.c.deleted.is_(False),
            _A.c.id == sa.bindparam('attachment_id')
            ).order_by(_S.c.id)
    if in_project:
        query = query.where(_V.c.project_id == sa.bindparam('project_id'))
    return query


_ATTACHMENT_GET = {False: _attachment_get_statement(False),
                   True: _attachment_get_statement(True)}


def _attachment_record(rows):
    """The ``AttachmentRecord`` of ``_ATTACHMENT_GET``'s rows (one per
    spec, or one with NULL spec columns)."""
    first = rows[0]
    specs = [AttachmentSpecRow(row.spec_key, row.spec_value)
             for row in rows if row.spec_key is not None]
    return AttachmentRecord._make(common.attachment_values(first) + (
        common.VolumeRow._make(common.volume_values(first)), specs))


# The statements every status move runs, built once (bound parameters; in
# statements on volume_attachment, ``b_`` names the WHERE parameters and
# ``v_`` the SET ones, apart from the columns' own names). The volume row
# lock and the status recompute are ``common``'s.
_LIVE_ATTACHMENTS = sa.select(*_A.c).where(
    _A.c.volume_id == sa.bindparam('b_volume_id'),
    _A.c.deleted.is_(False)).order_by(_A.c.id)


def _live_attachments(session, volume_id):
    """The volume's live attachments (rows of their columns), by id."""
    return session.execute(
        _LIVE_ATTACHMENTS, {'b_volume_id': volume_id}).all()


def _attach_status(session, volume_id):
    """The volume's ``attach_status`` from its live attachments."""
    statuses = [status for status in common.live_statuses(session, volume_id)
                if not status.startswith('error')]
    return st.attach_status_of(statuses)


def _attachment_query(project_id=None):
    query = sa.select(Attachment).options(*_ATTACHMENT_LOAD).where(
        Attachment.deleted.is_(False))
    if project_id is not None:
        query = query.join(Attachment.volume).where(
            Volume.project_id == project_id)
    return query


@db_api.context_manager.reader
def attachment_get(ctxt, attachment_id, project_id=None):
    """The live attachment (only in ``project_id`` if given), as an
    ``AttachmentRecord``."""
    params = {'attachment_id': attachment_id}
    if project_id is not None:
        params['project_id'] = project_id
    rows = ctxt.session.execute(
        _ATTACHMENT_GET[project_id is not None], params).all()
    if not rows:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    return _attachment_record(rows)


def _attachment_volume_statement(in_project):
    query = sa.select(_A.c.volume_id, _V.c.project_id).select_from(
        _A.join(_V, _V.c.id == _A.c.volume_id)).where(
        _A.c.id == sa.bindparam('b_attachment_id'), _A.c.deleted.is_(False))
    if in_project:
        query = query.where(_V.c.project_id == sa.bindparam('b_project_id'))
    return query


_ATTACHMENT_VOLUME = {False: _attachment_volume_statement(False),
                      True: _attachment_volume_statement(True)}


@db_api.context_manager.reader
def attachment_volume(ctxt, attachment_id, project_id=None):
    """``(volume id, volume project id)`` of the live attachment (only in
    ``project_id`` if given): two columns, for a move's checks."""
    params = {'b_attachment_id': attachment_id}
    if project_id is not None:
        params['b_project_id'] = project_id
    row = ctxt.session.execute(
        _ATTACHMENT_VOLUME[project_id is not None], params).first()
    if row is None:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    return row.volume_id, row.project_id


@db_api.context_manager.reader
def attachment_get_all(ctxt, project_id=None, filters=None, marker=None,
                       limit=None, offset=None, sort_dir='asc'):
    query = _attachment_query(project_id)
    filters = filters or {}
    if 'volume_id' in filters:
        query = query.where(Attachment.volume_id == filters['volume_id'])
    if 'instance_uuid' in filters:
        query = query.where(
            Attachment.instance_uuid == filters['instance_uuid'])
    if 'attach_status' in filters:
        query = query.where(
            Attachment.attach_status == filters['attach_status'])
    desc = sort_dir == 'desc'
    if marker is not None:
        query = query.where(Attachment.id < marker if desc
                            else Attachment.id > marker)
    query = query.order_by(Attachment.id.desc() if desc
                           else Attachment.id.asc())
    if offset:
        query = query.offset(offset)
    if limit is not None:
        query = query.limit(limit)
    return ctxt.session.execute(query).unique().scalars().all()


@db_api.context_manager.reader
def connected_on_backend(ctxt, backend, volume_id=None, detaching=True):
    """The live attachments of ``backend``'s volumes that hold a host
    connection (connected; a detach begun still holds it until the
    backend disconnects, unless ``detaching`` is false), ORM rows with
    their volume and specs loaded, by volume; only ``volume_id``'s when
    given."""
    query = _attachment_query().join(Attachment.volume).where(
        Volume.host == backend, Volume.deleted.is_(False),
        Attachment.attach_status.in_(st.LIVE_ATTACHMENT),
        Attachment.connection_info.is_not(None)).order_by(
            Attachment.volume_id, Attachment.id)
    if volume_id is not None:
        query = query.where(Attachment.volume_id == volume_id)
    if not detaching:
        query = query.where(Attachment.detach_time.is_(None))
    return ctxt.session.execute(query).unique().scalars().all()


@db_api.context_manager.reader
def attachments_of_volume(ctxt, volume_id):
    """The volume's live attachments (rows of their columns), by id."""
    return _live_attachments(ctxt.session, volume_id)


def _connection_users_statement(exclude):
    return sa.select(_A.c.id).where(
        _A.c.volume_id == sa.bindparam('b_volume_id'),
        _A.c.deleted.is_(False),
        # With no attachment to leave out, as ``id != NULL`` was:
        # ``id IS NOT NULL``.
        _A.c.id != sa.bindparam('b_exclude_id') if exclude
        else _A.c.id.is_not(None),
        _A.c.attached_host == sa.bindparam('b_host'),
        common.in_(_A.c.attach_status, st.LIVE_ATTACHMENT),
        _A.c.connection_info.is_not(None),
        _A.c.detach_time.is_(None)).order_by(_A.c.id)


_CONNECTION_USERS = {False: _connection_users_statement(False),
                     True: _connection_users_statement(True)}


def _connection_users(session, volume_id, host, exclude_id):
    """Ids of the live attachments of the volume connected to ``host``
    (other than ``exclude_id``) whose detach has not begun."""
    if not host:
        return []
    return session.execute(
        _CONNECTION_USERS[exclude_id is not None],
        {'b_volume_id': volume_id, 'b_host': host,
         'b_exclude_id': exclude_id}).scalars().all()


@db_api.context_manager.reader
def connection_users(ctxt, volume_id, host, exclude_id=None):
    """The attachments still using the volume's connection to ``host``
    (the add-new-attach-apis spec's shared connections)."""
    return _connection_users(ctxt.session, volume_id, host, exclude_id)


def _set_detach_time(ctxt, attachment_id, when):
    return db_api.conditional_update(
        ctxt, Attachment, {'detach_time': when},
        {'id': attachment_id, 'deleted': False})


@db_api.context_manager.writer
def attachment_begin_detach(ctxt, attachment_id, volume_id, host):
    """Mark the attachment's detach as begun (its ``detach_time``) and
    return the other attachments still using the connection to ``host``.

    Done under the volume row's lock, so two attachments on one host being
    deleted at once cannot both see the other as still using the
    connection (and both leave it): the second one sees the first as
    going and tears the connection down."""
    session = ctxt.session
    common.lock_volume(session, volume_id)
    if not _set_detach_time(ctxt, attachment_id, utils.utcnow()):
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    return _connection_users(session, volume_id, host, attachment_id)


@db_api.context_manager.writer
def attachment_abort_detach(ctxt, attachment_id):
    """Undo ``attachment_begin_detach`` (the backend failed to
    disconnect: the attachment is unchanged)."""
    _set_detach_time(ctxt, attachment_id, None)


_LIVE_INSTANCES = sa.select(_A.c.instance_uuid, _A.c.attach_status).where(
    _A.c.volume_id == sa.bindparam('b_volume_id'), _A.c.deleted.is_(False))


def _reserve_statement(same_instance, migration_target):
    allowed = sa.or_(
        sa.and_(_V.c.multiattach.is_(False),
                common.in_(_V.c.status, st.reserve_from(False))),
        sa.and_(_V.c.multiattach.is_(True),
                common.in_(_V.c.status, st.reserve_from(True))),
        common.in_(_V.c.status, st.VOLUME_MOVES['reserve_same_instance'][0])
        if same_instance else sa.false())
    # Not while a migration holds the volume; a migration's target only
    # for its swap (the compute service's).
    migration = common.not_migrating(_V.c.migration_status)
    if migration_target:
        migration = sa.or_(migration, _V.c.migration_status.startswith(
            st.TARGET_PREFIX, autoescape=True))
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        allowed, migration).values(
            status=st.VOLUME_MOVES['reserve'][1],
            attach_status=sa.bindparam('v_attach_status'))


_RESERVE = {(same, target): _reserve_statement(same, target)
            for same in (False, True) for target in (False, True)}
_INSERT_ATTACHMENT = sa.insert(_A)


@db_api.context_manager.writer
def attachment_reserve(ctxt, volume_id, instance_uuid, attach_mode,
                       same_instance_allowed=True, service=True):
    """The reserve move: a new ``reserved`` attachment, the volume
    ``reserved``. Returns the attachment (as ``attachment_get``), or None
    if the volume's status does not allow a reservation (nothing
    changed), or a migration holds it. ``same_instance_allowed``: whether
    an ``in-use`` non-multiattach volume may be reserved again for the
    instance it is attached to (a move of that instance: the compute
    service's); ``service``: whether a migration's target volume may be
    reserved (its swap: the compute service's)."""
    session = ctxt.session
    common.lock_volume(session, volume_id)
    # A plain read, not a subquery of the UPDATE below: on MariaDB that
    # subquery takes shared next-key locks on volume_attachment, and two
    # reservations of different volumes then deadlock on the INSERT. The
    # volume row lock already keeps this volume's attachments still.
    # One read of the live attachments answers both questions below: may
    # the same instance reserve an in-use volume again, and what the
    # volume's attach_status becomes with one more reserved attachment
    # (set by the compare-and-swap itself, not by a second UPDATE).
    live = session.execute(
        _LIVE_INSTANCES, {'b_volume_id': volume_id}).all()
    same_instance = same_instance_allowed and bool(instance_uuid) and any(
        row.instance_uuid == instance_uuid and
        row.attach_status == st.ATTACHED for row in live)
    attach_status = st.attach_status_of(
        [row.attach_status for row in live
         if not row.attach_status.startswith('error')] + [st.RESERVED])
    result = session.execute(_RESERVE[same_instance, service], {
        'b_volume_id': volume_id, 'v_attach_status': attach_status})
    if result.rowcount != 1:
        return None
    if attach_mode in (None, 'null'):
        # A volume flagged read-only (os-update_readonly_flag) is attached
        # 'ro' when the caller gives no mode, as Cinder's admin metadata
        # override (Cinder takes any value; nova_lite only 'True').
        readonly = common.admin_metadata_get(session, volume_id, st.READONLY)
        if readonly is not None and not st.attach_mode_allowed(
                readonly.value, 'rw'):
            attach_mode = 'ro'
    attachment_id = uuidutils.generate_uuid()
    session.execute(_INSERT_ATTACHMENT, {
        'id': attachment_id, 'volume_id': volume_id,
        'instance_uuid': instance_uuid, 'attach_status': st.RESERVED,
        'attach_mode': attach_mode, 'connection_info': None})
    # As attachment_get loads it, in this transaction (no second one).
    return attachment_get(ctxt, attachment_id)


def _attachment_move(ctxt, attachment_id, move, values=None):
    """CAS ``move`` of ``status.ATTACHMENT_MOVES`` (with ``values``) of
    the live attachment; True if this caller won."""
    statuses, target = st.ATTACHMENT_MOVES[move]
    return db_api.conditional_update(
        ctxt, Attachment, dict(values or {}, attach_status=target),
        {'id': attachment_id, 'deleted': False,
         'attach_status': list(statuses)})


_STALE_SPECS = sa.select(_S.c.id).where(
    _S.c.attachment_id == sa.bindparam('b_attachment_id'))
_DELETE_SPECS = sa.delete(_S).where(
    _S.c.id.in_(sa.bindparam('b_ids', expanding=True)))
_INSERT_SPEC = sa.insert(_S)
_CURRENT_VOLUME_STATUS = sa.select(_V.c.status).where(
    _V.c.id == sa.bindparam('volume_id'))


@db_api.context_manager.writer
def attachment_connect(ctxt, attachment_id, volume_id, values, connector):
    """The connect move: attachment and volume ``attaching``, the
    connection saved, the connector stored as ``attachment_specs`` rows.
    Raises (and changes nothing) if either has moved meanwhile. Returns the
    attachment as ``attachment_get`` loads it, read in this transaction."""
    session = ctxt.session
    common.lock_volume(session, volume_id)
    if not _attachment_move(ctxt, attachment_id, 'connect', values):
        raise exception.ResourceConflict(
            reason='attachment %s was deleted or changed status while it '
                   'was being connected' % attachment_id)
    # The status move and the attach_status it implies, in one UPDATE
    # (the attachment's own move above is already in the statuses read).
    if not volumes.volume_move(ctxt, volume_id, 'connect', values={
            'attach_status': _attach_status(session, volume_id)}):
        current = session.execute(
            _CURRENT_VOLUME_STATUS, {'volume_id': volume_id}).scalar()
        raise exception.ResourceConflict(
            reason='volume %s is %s: it cannot be connected' % (
                volume_id, current))
    # Delete by primary key what a plain read finds: a DELETE by
    # attachment_id that matches nothing (the usual case) takes a gap lock
    # on MariaDB, and two connects then deadlock on their INSERTs.
    stale = session.execute(
        _STALE_SPECS, {'b_attachment_id': attachment_id}).scalars().all()
    if stale:
        session.execute(_DELETE_SPECS, {'b_ids': stale})
    if connector:
        # One executemany, not one INSERT per connector key.
        session.execute(_INSERT_SPEC, [
            {'attachment_id': attachment_id, 'key': key,
             'value': jsonutils.dumps(value)}
            for key, value in connector.items()])
    return attachment_get(ctxt, attachment_id)


_ATTACHMENT_STATUS = sa.select(_A.c.attach_status).where(
    _A.c.id == sa.bindparam('b_attachment_id'), _A.c.deleted.is_(False))


@db_api.context_manager.writer
def attachment_connect_failed(ctxt, attachment_id, volume_id):
    """A failed connect: attachment ``error_attaching``, volume status
    recomputed (error attachments do not count)."""
    session = ctxt.session
    locked = common.lock_volume(session, volume_id)
    moved = _attachment_move(ctxt, attachment_id, 'connect_failed')
    if moved:
        common.recompute(session, volume_id, locked=locked)
    return moved


@db_api.context_manager.writer
def attachment_complete(ctxt, attachment_id, volume_id):
    session = ctxt.session
    common.lock_volume(session, volume_id)
    if not _attachment_move(ctxt, attachment_id, 'complete'):
        current = session.execute(
            _ATTACHMENT_STATUS, {'b_attachment_id': attachment_id}).scalar()
        if current is None:
            raise exception.VolumeAttachmentNotFound(
                attachment_id=attachment_id)
        raise exception.InvalidVolume(
            reason='attachment %s is %s and cannot be completed' % (
                attachment_id, current))
    # Any status but those a completion cannot move (a volume being
    # deleted).
    if not db_api.conditional_update(
            ctxt, Volume, {'status': st.VOLUME_MOVES['complete'][1],
                           'attach_status': _attach_status(session,
                                                           volume_id)},
            {'id': volume_id, 'deleted': False,
             'status': db_api.Not(list(st.NOT_COMPLETABLE))}):
        raise exception.InvalidVolume(
            reason='volume %s is being deleted' % volume_id)


@db_api.context_manager.writer
def attachment_destroy(ctxt, attachment_id, volume_id, remaining=True):
    """The delete move: soft-delete the attachment, recompute the volume.
    Returns the volume's remaining attachments (rows of their columns; None
    without ``remaining``: they are not read)."""
    session = ctxt.session
    locked = common.lock_volume(session, volume_id)
    now = utils.utcnow()
    if not db_api.conditional_update(
            ctxt, Attachment, {'attach_status': st.DETACHED, 'deleted': True,
                               'deleted_at': now, 'detach_time': now},
            {'id': attachment_id, 'deleted': False}):
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    common.recompute(session, volume_id, locked=locked)
    return _live_attachments(session, volume_id) if remaining else None


def connector_of(attachment):
    """The host connector stored with ``attachment`` (its loaded specs)."""
    return {spec.key: jsonutils.loads(spec.value)
            for spec in attachment.specs}


# -- Cinder's legacy os-attach ------------------------------------------------
#
# os-reserve, os-unreserve and os-update_readonly_flag are moves of the
# volume alone: ``volumes``.

_LOCK_VOLUME_FOR_ATTACH = sa.select(
    _V.c.id, _V.c.status, _V.c.multiattach).where(
    _V.c.id == sa.bindparam('volume_id'),
    _V.c.deleted.is_(False)).with_for_update()


def _legacy_attach_statement():
    target = st.VOLUME_MOVES['legacy_attach'][1]
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        sa.or_(sa.and_(_V.c.multiattach.is_(False),
                       common.in_(_V.c.status, st.legacy_attach_from(False))),
               sa.and_(_V.c.multiattach.is_(True),
                       common.in_(_V.c.status, st.legacy_attach_from(True))),
               ),
        common.not_migrating(_V.c.migration_status)).values(
            status=target, attach_status=st.ATTACHED)


_LEGACY_ATTACH = _legacy_attach_statement()


def _same_target(row, instance_uuid, host_name):
    if instance_uuid:
        return row.instance_uuid == instance_uuid
    return not row.instance_uuid and row.attached_host == host_name


@db_api.context_manager.writer
def volume_legacy_attach(ctxt, volume_id, instance_uuid, host_name,
                         mountpoint, mode):
    """``os-attach``, one transaction under the volume's row lock: the
    legacy_attach move and a new ``attached`` attachment (no connection:
    the caller connected the host itself). An instance (or host) that
    already holds an attached attachment of the volume gets that one back,
    as in Cinder, and nothing changes. Raises ``InvalidVolumeAttachMode``
    for a read-write attach of a read-only volume and ``InvalidVolume``
    when the volume's status or its other attachments do not allow it;
    then nothing changes."""
    session = ctxt.session
    volume = session.execute(
        _LOCK_VOLUME_FOR_ATTACH, {'volume_id': volume_id}).one_or_none()
    if volume is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    live = [row for row in _live_attachments(session, volume_id)
            if not row.attach_status.startswith('error')]
    for row in live:
        if row.attach_status == st.ATTACHED and _same_target(
                row, instance_uuid, host_name):
            return attachment_get(ctxt, row.id)
    readonly = common.admin_metadata_get(session, volume_id, st.READONLY)
    if not st.attach_mode_allowed(readonly and readonly.value, mode):
        raise exception.InvalidVolumeAttachMode(mode=mode,
                                                volume_id=volume_id)
    if live and not volume.multiattach:
        raise exception.InvalidVolume(reason=(
            'volume is already attached and multiple attachments are not '
            'enabled'))
    result = session.execute(_LEGACY_ATTACH, {'b_volume_id': volume_id})
    if result.rowcount != 1:
        raise exception.InvalidVolume(reason=(
            'Volume %(id)s status must be %(statuses)s to attach, but the '
            'current status is %(current)s.') % {
                'id': volume_id,
                'statuses': st.or_str(
                    st.legacy_attach_from(volume.multiattach)),
                'current': volume.status})
    # As Cinder, the flag is recorded (unset: read-write) at first attach.
    common.admin_metadata_set(session, volume_id, st.READONLY,
                              st.readonly_value(False), update=False)
    attachment_id = uuidutils.generate_uuid()
    session.execute(_INSERT_ATTACHMENT, {
        'id': attachment_id, 'volume_id': volume_id,
        'instance_uuid': instance_uuid, 'attached_host': host_name,
        'mountpoint': mountpoint, 'attach_mode': mode,
        'attach_time': utils.utcnow(), 'attach_status': st.ATTACHED,
        'connection_info': None})
    return attachment_get(ctxt, attachment_id)
