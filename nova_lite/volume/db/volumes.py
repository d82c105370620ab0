"""Volumes: their reads, lists and summaries, create, update, the status
moves that need no new attachment (including Cinder's legacy
``os-reserve``/``os-unreserve`` and the ``readonly`` flag), retype,
extend, delete, and the volume's metadata.

``volume_get`` returns a read-only ``VolumeRecord``; ``volume_get_all``
and ``volumes_stalled`` return ORM rows (``volume_get_all`` with what the
views need loaded).
"""

import collections

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite import utils
from nova_lite.volume.db import common
from nova_lite.volume import metadata as vmeta
from nova_lite.volume import status as st

Volume = models.Volume
VolumeType = models.VolumeType
Attachment = models.VolumeAttachment
Metadata = models.VolumeMetadata

_VOLUME_LOAD = (
    orm.selectinload(Volume.attachments),
    orm.selectinload(Volume.admin_metadata),
    orm.joinedload(Volume.volume_type).selectinload(VolumeType.extra_specs),
)

# The tables, for the Core statements of the hot paths.
_V = Volume.__table__
_VT = VolumeType.__table__
_A = Attachment.__table__
_M = Metadata.__table__
_AM = models.VolumeAdminMetadata.__table__

_TYPE_COLUMNS = tuple(c.name for c in _VT.c)

# volume_get's read-only record (named tuples, their fields read from a
# result row by column label; attributes as the ORM rows have).
#: A volume row, with its ``volume_type`` (a ``VolumeTypeRow`` or None;
#: without extra specs: ``types.type_get`` has them), its live
#: ``attachments`` (``AttachmentRow``s, by id), the ``admin_metadata``
#: users see (``AdminMetadataRow``s: ``status.VISIBLE_ADMIN_METADATA``)
#: and, when read ``with_metadata``, its ``volume_metadata``
#: (``MetadataRow``s, by key; None otherwise).
VolumeRecord = collections.namedtuple(
    'VolumeRecord', common.VOLUME_COLUMNS + (
        'volume_type', 'attachments', 'admin_metadata', 'volume_metadata'))
MetadataRow = collections.namedtuple('MetadataRow', ('key', 'value'))
AdminMetadataRow = collections.namedtuple('AdminMetadataRow',
                                          ('key', 'value'))
VolumeTypeRow = collections.namedtuple('VolumeTypeRow', _TYPE_COLUMNS)

# volume_get runs several times in every attach and detach (and for every
# GET of one volume). It is one statement, outer joins rather than a second
# SELECT per collection, built once with bound parameters. Lists keep
# _volume_query (ORM rows; select-in loads go with LIMIT).
#
# Its columns are labelled ``<prefix><column name>`` (``volume_``,
# ``type_``, ``attachment_``, and ``admin_<key>``) and the record is built
# from the row's attributes of those labels: the order of the SELECT's
# columns does not matter.


def _admin_metadata_value(key):
    """The volume's admin metadata ``key`` as a correlated scalar
    subquery: one column of the volume's row (labelled ``admin_<key>``),
    not one row more per key."""
    return sa.select(_AM.c.value).where(
        _AM.c.volume_id == _V.c.id, _AM.c.key == key
    ).correlate(_V).scalar_subquery().label('admin_' + key)


def _volume_get_statement(in_project):
    query = sa.select(
        *common.labelled(_V, 'volume_'), *common.labelled(_VT, 'type_'),
        *(_admin_metadata_value(key) for key in st.VISIBLE_ADMIN_METADATA),
        *common.labelled(_A, 'attachment_')).select_from(
        _V.outerjoin(_VT, _VT.c.id == _V.c.volume_type_id).outerjoin(
            _A, sa.and_(_A.c.volume_id == _V.c.id, _A.c.deleted.is_(False)))
    ).where(_V.c.deleted.is_(False), _V.c.id == sa.bindparam('volume_id')
            ).order_by(_A.c.id)
    if in_project:
        query = query.where(_V.c.project_id == sa.bindparam('project_id'))
    return query


_VOLUME_GET = {False: _volume_get_statement(False),
               True: _volume_get_statement(True)}

_type_values = common.values_of('type_', _TYPE_COLUMNS)


def _volume_record(rows):
    """The ``VolumeRecord`` of ``_VOLUME_GET``'s rows (one per attachment,
    or one with NULL attachment columns)."""
    first = rows[0]
    vtype = (VolumeTypeRow._make(_type_values(first))
             if first.type_id is not None else None)
    attachments = [common.AttachmentRow._make(common.attachment_values(row))
                   for row in rows if row.attachment_id is not None]
    admin_metadata = []
    for key in st.VISIBLE_ADMIN_METADATA:
        value = getattr(first, 'admin_' + key)
        if value is not None:
            admin_metadata.append(AdminMetadataRow(key, value))
    return VolumeRecord._make(common.volume_values(first) + (
        vtype, attachments, admin_metadata, None))


SORT_KEYS = {
    'created_at': Volume.created_at,
    'updated_at': Volume.updated_at,
    'id': Volume.id,
    'name': Volume.display_name,
    'display_name': Volume.display_name,
    'status': Volume.status,
    'size': Volume.size,
}


def _volume_query(project_id=None):
    query = sa.select(Volume).options(*_VOLUME_LOAD).where(
        Volume.deleted.is_(False))
    if project_id is not None:
        query = query.where(Volume.project_id == project_id)
    return query


@db_api.context_manager.reader
def volume_get(ctxt, volume_id, project_id=None, with_metadata=False):
    """The live volume ``volume_id`` (only in ``project_id`` if given), as
    a ``VolumeRecord``; ``with_metadata``: with its metadata, read in the
    same transaction (one more statement: the attach path does without)."""
    params = {'volume_id': volume_id}
    if project_id is not None:
        params['project_id'] = project_id
    rows = ctxt.session.execute(
        _VOLUME_GET[project_id is not None], params).all()
    if not rows:
        raise exception.VolumeNotFound(volume_id=volume_id)
    record = _volume_record(rows)
    if with_metadata:
        record = record._replace(volume_metadata=tuple(
            MetadataRow(row.key, row.value)
            for row in _metadata_rows(ctxt.session, volume_id)))
    return record


def _filtered(query, filters):
    """``query`` (of volumes) with ``volume_get_all``'s ``filters``."""
    filters = filters or {}
    if 'name' in filters:
        query = query.where(Volume.display_name == filters['name'])
    if 'status' in filters:
        query = query.where(Volume.status == filters['status'])
    if 'bootable' in filters:
        query = query.where(Volume.bootable.is_(filters['bootable']))
    for key, value in sorted((filters.get('metadata') or {}).items()):
        query = query.where(Volume.volume_metadata.any(
            sa.and_(Metadata.key == key, Metadata.value == value)))
    return query


@db_api.context_manager.reader
def volume_count(ctxt, project_id=None, filters=None):
    """How many live volumes (of ``project_id``, or of every project)
    ``volume_get_all`` would list with ``filters``, every page together
    (Cinder's ``with_count``)."""
    query = _filtered(sa.select(sa.func.count()).select_from(Volume).where(
        Volume.deleted.is_(False)), filters)
    if project_id is not None:
        query = query.where(Volume.project_id == project_id)
    return ctxt.session.execute(query).scalar()


@db_api.context_manager.reader
def volume_get_all(ctxt, project_id=None, filters=None, marker=None,
                   limit=None, offset=None, sort_key='created_at',
                   sort_dir='desc', with_metadata=False):
    """A page of live volumes (ORM rows with their type and attachments
    loaded, and their ``volume_metadata`` ``with_metadata``). ``filters``:
    ``name``, ``status``, ``bootable``, and ``metadata``, ``{key: value}``
    pairs a volume must all have."""
    query = _filtered(_volume_query(project_id), filters)
    if with_metadata:
        query = query.options(orm.selectinload(Volume.volume_metadata))
    column = SORT_KEYS.get(sort_key, Volume.created_at)
    desc = sort_dir == 'desc'
    if marker is not None:
        marker_row = ctxt.session.execute(
            _volume_query(project_id).where(Volume.id == marker)
        ).scalar_one_or_none()
        if marker_row is None:
            raise exception.VolumeNotFound(volume_id=marker)
        value = getattr(marker_row, column.key)
        after = (sa.tuple_(column, Volume.id) < (value, marker_row.id)
                 if desc else
                 sa.tuple_(column, Volume.id) > (value, marker_row.id))
        query = query.where(after)
    order = (column.desc(), Volume.id.desc()) if desc else (
        column.asc(), Volume.id.asc())
    query = query.order_by(*order)
    if offset:
        query = query.offset(offset)
    if limit is not None:
        query = query.limit(limit)
    return ctxt.session.execute(query).scalars().all()


@db_api.context_manager.writer
def volume_create(ctxt, values, quota_check=None, metadata=None):
    """A new ``creating`` volume, with its ``metadata`` (``{key: value}``).
    Its type (if any) must exist and be unencrypted at this moment (see
    ``types``' encryption functions). ``quota_check(session)``
    (``nova_lite.volume.quotas``) runs first in the transaction: it locks
    the project's quota row and counts. A clone (``source_volid``) is
    made only while its source, whose row it locks, is in
    ``status.CLONE_FROM`` and not migrating (``InvalidVolume``); from
    then on the source's delete waits for the clone's create to end
    (``volume_delete_start``)."""
    if quota_check is not None:
        quota_check(ctxt.session)
    if values.get('source_volid'):
        _check_clone_source(ctxt.session, values['source_volid'])
    if values.get('volume_type_id'):
        common.lock_type(ctxt.session, values['volume_type_id'], read=True)
        if common.encryption_of(ctxt.session, values['volume_type_id']):
            raise exception.EncryptedVolumesNotSupported()
    volume = Volume(id=uuidutils.generate_uuid(), status=st.CREATING,
                    attach_status=st.DETACHED, **values)
    ctxt.session.add(volume)
    try:
        ctxt.session.flush()
    except db_exc.DBReferenceError:
        raise exception.VolumeTypeNotFound(
            volume_type_id=values.get('volume_type_id'))
    if metadata:
        _metadata_insert(ctxt.session, volume.id, metadata)
    return volume


def _check_clone_source(session, source_id):
    source = common.lock_volume(session, source_id)
    if source.status not in st.CLONE_FROM:
        raise exception.InvalidVolume(reason=(
            "Originating source volume status must be one of '%s' values" %
            ', '.join(st.CLONE_FROM)))
    if st.is_migrating(source.migration_status):
        raise exception.InvalidVolume(reason=(
            'Originating source volume %s is migrating.' % source_id))


@db_api.context_manager.reader
def volume_summary(ctxt, project_id=None):
    """``(count, total size in GiB)`` of the live volumes (of
    ``project_id``, or of every project)."""
    query = sa.select(
        sa.func.count().label('volumes'),
        sa.func.coalesce(sa.func.sum(Volume.size), 0).label('gigabytes')
    ).where(Volume.deleted.is_(False))
    if project_id is not None:
        query = query.where(Volume.project_id == project_id)
    row = ctxt.session.execute(query).one()
    return row.volumes, int(row.gigabytes)


@db_api.context_manager.reader
def volume_metadata_summary(ctxt, project_id=None):
    """Cinder's summary of the metadata of the live volumes (of
    ``project_id``, or of every project): ``{key: [every value it has]}``,
    keys and values sorted."""
    query = sa.select(_M.c.key, _M.c.value).distinct().select_from(
        _M.join(_V, _V.c.id == _M.c.volume_id)).where(
        _V.c.deleted.is_(False))
    if project_id is not None:
        query = query.where(_V.c.project_id == project_id)
    summary = collections.defaultdict(list)
    for key, value in sorted((row.key, row.value)
                             for row in ctxt.session.execute(query)):
        summary[key].append(value)
    return dict(summary)


@db_api.context_manager.writer
def volume_update(ctxt, volume_id, values, metadata=None, frozen=()):
    """Plain attribute changes (name, description, bootable, an
    administrator's status reset): not moves. With ``metadata``, the
    volume's whole metadata is replaced by it in the same transaction.
    Under the volume's row lock; nothing changes while its status is in
    ``frozen`` (returns False)."""
    session = ctxt.session
    volume = common.lock_volume(session, volume_id)
    if volume.status in frozen:
        return False
    if values:
        session.execute(sa.update(_V).where(
            _V.c.id == volume_id, _V.c.deleted.is_(False)).values(**values))
    if metadata is not None:
        _metadata_change(session, volume_id, metadata, replace=True)
    return True


@db_api.context_manager.writer
def volume_move(ctxt, volume_id, move, values=None, expected=None,
                filters=()):
    """CAS ``move`` of ``status.VOLUME_MOVES`` (with ``values``), if the
    live volume still holds one of the move's statuses, the other
    ``expected`` values (``db_api.conditional_update``'s) and matches
    ``filters``; True if this caller won."""
    statuses, target = st.VOLUME_MOVES[move]
    return db_api.conditional_update(
        ctxt, Volume, dict(values or {}, status=target),
        dict(expected or {}, id=volume_id, deleted=False,
             status=list(statuses)), filters=filters)


@db_api.context_manager.writer
def volume_begin_detaching(ctxt, volume_id):
    """The begin_detaching move, only while the volume is ``attached`` and
    not migrating; True if this caller won."""
    return volume_move(ctxt, volume_id, 'begin_detaching', expected={
        'attach_status': st.ATTACHED,
        'migration_status': list(st.NOT_MIGRATING)})


# -- Cinder's legacy attach actions (os-reserve, os-unreserve, ...) ---------
#
# os-attach makes an attachment: ``attachments.volume_legacy_attach``.

def _legacy_reserve_statement():
    target = st.VOLUME_MOVES['legacy_reserve'][1]
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        sa.or_(sa.and_(_V.c.multiattach.is_(False),
                       common.in_(_V.c.status, st.legacy_reserve_from(False))),
               sa.and_(_V.c.multiattach.is_(True),
                       common.in_(_V.c.status, st.legacy_reserve_from(True))),
               ),
        common.not_migrating(_V.c.migration_status)).values(status=target)


_LEGACY_RESERVE = _legacy_reserve_statement()


@db_api.context_manager.writer
def volume_legacy_reserve(ctxt, volume_id):
    """The legacy_reserve move (``os-reserve``), one compare-and-swap;
    True if this caller won."""
    return ctxt.session.execute(
        _LEGACY_RESERVE, {'b_volume_id': volume_id}).rowcount == 1


@db_api.context_manager.writer
def volume_unreserve(ctxt, volume_id):
    """``os-unreserve``: an ``attaching`` volume gets the status its
    attachments give it (in-use or available), in one transaction under
    the volume's row lock. Returns the new status, or None if the volume
    was not ``attaching`` (nothing changed)."""
    session = ctxt.session
    locked = common.lock_volume(session, volume_id)
    if locked.status not in st.UNRESERVE_FROM:
        return None
    return common.recompute(session, volume_id, locked=locked)


@db_api.context_manager.writer
def volume_update_readonly(ctxt, volume_id, readonly):
    """``os-update_readonly_flag``: write the ``readonly`` admin metadata
    while the volume is ``available``, under its row lock (one
    transaction). Returns None if written, else the volume's status
    (nothing changed)."""
    session = ctxt.session
    locked = common.lock_volume(session, volume_id)
    if locked.status not in st.READONLY_UPDATE_FROM:
        return locked.status
    common.admin_metadata_set(session, volume_id, st.READONLY,
                              st.readonly_value(readonly))
    return None


@db_api.context_manager.writer
def volume_retype(ctxt, volume_id, type_id, multiattach, statuses,
                  quota_check=None):
    """Give the volume another type (and the type's multiattach), as one
    compare-and-swap: only from ``statuses``, when it is not migrating and
    its type is not already ``type_id``. True if this caller won. The new
    type must still be unencrypted (nova_lite volumes never are).
    ``quota_check(session)`` runs first (the new type's limits)."""
    if quota_check is not None:
        quota_check(ctxt.session)
    common.lock_type(ctxt.session, type_id, read=True)
    if common.encryption_of(ctxt.session, type_id):
        raise exception.EncryptionChangeNotSupported()
    result = ctxt.session.execute(common.update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.status.in_(statuses),
        common.not_migrating(Volume.migration_status),
        sa.or_(Volume.volume_type_id.is_(None),
               Volume.volume_type_id != type_id)).values(
        volume_type_id=type_id, multiattach=multiattach))
    return result.rowcount == 1


@db_api.context_manager.writer
def volume_extend_start(ctxt, volume_id, size, new_size, quota_check=None,
                        statuses=None):
    """The extend move: ``available`` (or ``in-use``) -> ``extending``
    with ``new_size`` written at once (so that the quota counts it from
    now on, as Cinder's reservation does), only while the volume is not
    migrating, still ``size`` GiB (the size the caller checked) and in one
    of ``statuses`` (default: the move's). True if this caller won.
    ``quota_check(session)`` (``nova_lite.volume.quotas``) runs first in
    the transaction: it locks the project's quota row and counts."""
    if quota_check is not None:
        quota_check(ctxt.session)
    expected, target = st.VOLUME_MOVES['extend']
    expected = statuses or expected
    result = ctxt.session.execute(common.update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.status.in_(expected), Volume.size == size,
        common.not_migrating(Volume.migration_status)).values(
        status=target, size=new_size))
    return result.rowcount == 1


@db_api.context_manager.writer
def volume_extend_end(ctxt, volume_id, move, values=None, expected=None):
    """``extend_done`` or ``extend_settled`` (with ``values`` and the
    other ``expected`` values, as ``volume_move``), then the status the
    volume's attachments give it (``in-use`` for a volume extended while
    attached), in one transaction. The new status if this caller won,
    else None."""
    if not volume_move(ctxt, volume_id, move, values=values,
                       expected=expected):
        return None
    return common.recompute(ctxt.session, volume_id)


@db_api.context_manager.reader
def volumes_stalled(ctxt, status, before):
    """Live volumes in ``status`` that have not moved since ``before``
    (naive UTC), oldest first: the work a dead process left."""
    last_move = sa.func.coalesce(Volume.updated_at, Volume.created_at)
    return ctxt.session.execute(
        sa.select(Volume).where(
            Volume.deleted.is_(False), Volume.status == status,
            sa.or_(last_move.is_(None), last_move < before))
        .order_by(last_move)).scalars().all()


@db_api.context_manager.reader
def storage_on_backend(ctxt, backend, storage_ids):
    """Which of ``storage_ids`` (the ids naming a volume's storage: its
    ``name_id``, or its id) name the storage of a volume of ``backend``,
    deleted or not: a backend's leftover sweep touches only those (a
    target of another backend, or of another deployment sharing the
    target daemon, is left alone)."""
    ids = sorted(set(storage_ids))
    if not ids:
        return set()
    storage = sa.func.coalesce(Volume.name_id, Volume.id)
    return set(ctxt.session.execute(
        sa.select(storage).where(Volume.host == backend,
                                 common.in_(storage, ids))).scalars())


@db_api.context_manager.writer
def volume_touch(ctxt, volume_id, status):
    """Record that the live volume, still in ``status``, moves on (its
    ``updated_at``: the heartbeat of a long backend step, such as a
    clone's copy). False when it is no longer in ``status`` (settled
    meanwhile)."""
    return ctxt.session.execute(common.update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.status == status).values(
        updated_at=utils.utcnow())).rowcount == 1


@db_api.context_manager.writer
def volume_settle(ctxt, volume, move, values=None):
    """``move`` of a stalled ``volume`` (a row ``volumes_stalled`` read),
    only if it has not moved since it was read: a process that was only
    slow and moved it on meanwhile wins. True if this caller won."""
    return volume_move(ctxt, volume.id, move, values=values,
                       expected={'updated_at': volume.updated_at})


@db_api.context_manager.writer
def volume_recompute(ctxt, volume_id):
    """Recompute the status of a volume whose status is about attachments
    (force detach cleaning up); other statuses are left alone."""
    session = ctxt.session
    volume = common.lock_volume(session, volume_id)
    if volume.status in st.ATTACHMENT_DRIVEN:
        return common.recompute(session, volume_id, locked=volume)
    return volume.status


def _live_attachment_exists(volume_id):
    return sa.exists().where(
        Attachment.volume_id == volume_id, Attachment.deleted.is_(False),
        Attachment.attach_status.in_(st.LIVE_ATTACHMENT))


def _clone_creating_exists(volume_id):
    clone = orm.aliased(Volume)
    return sa.exists().where(
        clone.source_volid == volume_id, clone.deleted.is_(False),
        clone.status == st.CREATING)


@db_api.context_manager.writer
def volume_delete_start(ctxt, volume_id):
    """available/error... -> deleting, only with no live attachment and
    no clone of it still creating. The volume's row is locked first, as
    a clone's create locks it before it adds its row: the two wait for
    each other in that order, never in a cycle (the check of the clones
    alone, first, deadlocked with them on MariaDB)."""
    common.lock_volume(ctxt.session, volume_id)
    return volume_move(ctxt, volume_id, 'delete', expected={
        'migration_status': list(st.NOT_MIGRATING)},
        filters=(~_live_attachment_exists(volume_id),
                 ~_clone_creating_exists(volume_id)))


@db_api.context_manager.writer
def volume_force_delete_start(ctxt, volume_id):
    """Any status -> deleting (Cinder's force delete), only while no
    attachment is ``attached`` and the volume is not migrating; True if
    this caller won. Its other attachments go with it
    (``volume_destroy``)."""
    attached = sa.exists().where(
        _A.c.volume_id == _V.c.id, _A.c.deleted.is_(False),
        _A.c.attach_status == st.ATTACHED)
    return ctxt.session.execute(
        sa.update(_V).where(
            _V.c.id == volume_id, _V.c.deleted.is_(False),
            common.not_migrating(_V.c.migration_status),
            ~attached).values(
            status=st.DELETING)).rowcount == 1


@db_api.context_manager.writer
def volume_destroy(ctxt, volume_id):
    """deleting -> deleted (soft delete), with any error attachments."""
    now = utils.utcnow()
    result = ctxt.session.execute(common.update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.status == st.DELETING).values(
        status=st.DELETED, attach_status=st.DETACHED, deleted=True,
        deleted_at=now))
    ctxt.session.execute(common.update(Attachment).where(
        Attachment.volume_id == volume_id,
        Attachment.deleted.is_(False)).values(
        deleted=True, deleted_at=now, attach_status=st.DETACHED,
        detach_time=now))
    if result.rowcount == 1:
        # The row stays (soft delete); its metadata goes.
        ctxt.session.execute(_DELETE_METADATA_OF, {'b_volume_id': volume_id})
    return result.rowcount == 1


# -- volume metadata ----------------------------------------------------------
#
# Writers take the volume's row lock first (as the attachment moves do), so
# the metadata they read, check (status, If-Match) and change is the
# metadata they replace: two writers of one volume never interleave. Rows
# are read and then changed by id, never by key: MariaDB compares strings
# ignoring trailing spaces, and an UPDATE or DELETE by key could touch
# another key there.

_METADATA_ROWS = sa.select(_M.c.id, _M.c.key, _M.c.value).where(
    _M.c.volume_id == sa.bindparam('b_volume_id'))
_DELETE_METADATA_OF = sa.delete(_M).where(
    _M.c.volume_id == sa.bindparam('b_volume_id'))
_DELETE_METADATA_IDS = sa.delete(_M).where(
    _M.c.id.in_(sa.bindparam('b_ids', expanding=True)))
_SET_METADATA_VALUE = sa.update(_M).where(
    _M.c.id == sa.bindparam('b_id')).values(value=sa.bindparam('v_value'))
_INSERT_METADATA = sa.insert(_M)


def _metadata_rows(session, volume_id):
    """The volume's metadata rows (``id``, ``key``, ``value``), by key."""
    return sorted(session.execute(
        _METADATA_ROWS, {'b_volume_id': volume_id}).all(),
        key=lambda row: row.key)


def _metadata_insert(session, volume_id, metadata):
    try:
        session.execute(_INSERT_METADATA, [
            {'volume_id': volume_id, 'key': key, 'value': value}
            for key, value in sorted(metadata.items())])
    except db_exc.DBDuplicateEntry:
        # Only where the database takes two keys as one (MariaDB: "a" and
        # "a "): the volume's row lock keeps other writers out.
        raise exception.InvalidVolumeMetadata(reason=(
            'the database holds two of these keys as the same key (they '
            'differ only in trailing spaces): %s') % ', '.join(
            repr(key) for key in sorted(metadata)))


def _metadata_change(session, volume_id, metadata, replace=False,
                     rows=None):
    """Apply ``vmeta.plan`` to the volume's rows; returns the metadata
    after."""
    if rows is None:
        rows = _metadata_rows(session, volume_id)
    ids = {row.key: row.id for row in rows}
    plan = vmeta.plan({row.key: row.value for row in rows}, metadata,
                      replace=replace)
    # Removals first: a key given again with other trailing spaces is then
    # free on MariaDB too.
    if plan.removed:
        session.execute(_DELETE_METADATA_IDS,
                        {'b_ids': [ids[key] for key in plan.removed]})
    for key, value in sorted(plan.changed.items()):
        session.execute(_SET_METADATA_VALUE,
                        {'b_id': ids[key], 'v_value': value})
    if plan.added:
        _metadata_insert(session, volume_id, plan.added)
    return plan.result


@db_api.context_manager.reader
def volume_metadata_get(ctxt, volume_id):
    """The volume's metadata, ``{key: value}`` by key."""
    return {row.key: row.value
            for row in _metadata_rows(ctxt.session, volume_id)}


@db_api.context_manager.writer
def volume_metadata_update(ctxt, volume_id, metadata, replace=False,
                           check=None):
    """Set the keys of ``metadata`` on the live volume (with ``replace``,
    remove its other keys); returns the metadata after. ``check(status,
    current metadata)`` runs first, under the volume's row lock, and may
    refuse by raising (status rules, If-Match): nothing has changed then."""
    session = ctxt.session
    volume = common.lock_volume(session, volume_id)
    rows = _metadata_rows(session, volume_id)
    if check is not None:
        check(volume.status, {row.key: row.value for row in rows})
    return _metadata_change(session, volume_id, metadata,
                            replace=replace, rows=rows)


@db_api.context_manager.writer
def volume_metadata_delete(ctxt, volume_id, key, check=None):
    """Remove ``key`` (exactly) from the live volume's metadata
    (``VolumeMetadataNotFound`` if it has no such key); ``check`` as for
    ``volume_metadata_update``."""
    session = ctxt.session
    volume = common.lock_volume(session, volume_id)
    rows = _metadata_rows(session, volume_id)
    found = [row.id for row in rows if row.key == key]
    if not found:
        raise exception.VolumeMetadataNotFound(volume_id=volume_id,
                                               metadata_key=key)
    if check is not None:
        check(volume.status, {row.key: row.value for row in rows})
    session.execute(_DELETE_METADATA_IDS, {'b_ids': found})
