"""Queries of the block-storage tables, used by ``nova_lite.volume.api``.

One ``@reader``/``@writer`` function is one transaction. Status moves are
compare-and-swaps: ``UPDATE ... WHERE <expected>``, rowcount checked; the
expected statuses come from ``nova_lite.volume.status``. A writer that
changes a volume or its attachments first takes the volume row with
``SELECT ... FOR UPDATE`` (a no-op on SQLite, whose writers are serialised
by ``BEGIN IMMEDIATE``), so that the volume's derived ``attach_status`` is
recomputed from a consistent set of attachments on MariaDB and PostgreSQL
too; the CAS conditions are what decide who wins. No backend call is made
inside a transaction: ``volume/api.py`` calls drivers between two.

The status moves and the single-object reads run several times in every
attach and detach, so they are Core statements on the tables, built once at
import with bound parameters and run in ``.reader.connection`` /
``.writer.connection`` transactions: the ORM Session and rebuilding a
statement each call cost far more than the SQL on SQLite. ``volume_get``
and ``attachment_get`` return read-only records (``VolumeRecord``,
``AttachmentRecord``: named tuples) with what the views and
``volume/api.py`` use; list functions and the volume type functions return
ORM rows with what the views need already loaded (relationships are
``lazy='raise'``): a list is a fixed number of queries.
"""

import collections

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.volume import status as st

Volume = models.Volume
VolumeType = models.VolumeType
ExtraSpec = models.VolumeTypeExtraSpec
Encryption = models.VolumeTypeEncryption
Attachment = models.VolumeAttachment
AttachmentSpec = models.AttachmentSpec

_VOLUME_LOAD = (
    orm.selectinload(Volume.attachments),
    orm.joinedload(Volume.volume_type).selectinload(VolumeType.extra_specs),
)
_ATTACHMENT_LOAD = (
    orm.joinedload(Attachment.volume),
    orm.selectinload(Attachment.specs),
)

# The tables, for the Core statements of the hot paths.
_V = Volume.__table__
_VT = VolumeType.__table__
_A = Attachment.__table__
_S = AttachmentSpec.__table__

_VOLUME_COLUMNS = tuple(c.name for c in _V.c)
_TYPE_COLUMNS = tuple(c.name for c in _VT.c)
_ATTACHMENT_COLUMNS = tuple(c.name for c in _A.c)

# Read-only records of volume_get and attachment_get (named tuples: built
# from a result row's slices at C speed, attributes as the ORM rows had).
#: A volume row, with its ``volume_type`` (a ``VolumeTypeRow`` or None;
#: without extra specs: ``type_get`` has them) and its live
#: ``attachments`` (``AttachmentRow``s, by id).
VolumeRecord = collections.namedtuple(
    'VolumeRecord', _VOLUME_COLUMNS + ('volume_type', 'attachments'))
VolumeRow = collections.namedtuple('VolumeRow', _VOLUME_COLUMNS)
VolumeTypeRow = collections.namedtuple('VolumeTypeRow', _TYPE_COLUMNS)
AttachmentRow = collections.namedtuple('AttachmentRow', _ATTACHMENT_COLUMNS)
#: An attachment row, with its ``volume`` (a ``VolumeRow``) and its
#: ``specs`` (``AttachmentSpecRow``s: the stored connector, by id).
AttachmentRecord = collections.namedtuple(
    'AttachmentRecord', _ATTACHMENT_COLUMNS + ('volume', 'specs'))
AttachmentSpecRow = collections.namedtuple('AttachmentSpecRow',
                                           ('key', 'value'))

# volume_get and attachment_get run several times in every attach and
# detach (and for every GET of one volume or attachment). Each is one
# statement, outer joins rather than a second SELECT per collection, built
# once with bound parameters. Lists keep _volume_query/_attachment_query
# (ORM rows; select-in loads go with LIMIT).


def _in(column, values):
    """``column IN (<values>)`` for a fixed list, as one bound parameter
    per value: ``in_(<list>)`` would make an expanding parameter, whose
    SQL is re-rendered at every execution of the cached statement."""
    return column.in_([sa.literal(value, column.type) for value in values])


def _not_in(column, values):
    return column.not_in(
        [sa.literal(value, column.type) for value in values])


def _volume_get_statement(in_project):
    query = sa.select(*_V.c, *_VT.c, *_A.c).select_from(
        _V.outerjoin(_VT, _VT.c.id == _V.c.volume_type_id).outerjoin(
            _A, sa.and_(_A.c.volume_id == _V.c.id, _A.c.deleted.is_(False)))
    ).where(_V.c.deleted.is_(False), _V.c.id == sa.bindparam('volume_id')
            ).order_by(_A.c.id).set_label_style(
        sa.LABEL_STYLE_TABLENAME_PLUS_COL)
    if in_project:
        query = query.where(_V.c.project_id == sa.bindparam('project_id'))
    return query


def _attachment_get_statement(in_project):
    query = sa.select(*_A.c, *_V.c, _S.c.key, _S.c.value).select_from(
        _A.join(_V, _V.c.id == _A.c.volume_id).outerjoin(
            _S, _S.c.attachment_id == _A.c.id)
    ).where(_A.c.deleted.is_(False),
            _A.c.id == sa.bindparam('attachment_id')
            ).order_by(_S.c.id).set_label_style(
        sa.LABEL_STYLE_TABLENAME_PLUS_COL)
    if in_project:
        query = query.where(_V.c.project_id == sa.bindparam('project_id'))
    return query


_VOLUME_GET = {False: _volume_get_statement(False),
               True: _volume_get_statement(True)}
_ATTACHMENT_GET = {False: _attachment_get_statement(False),
                   True: _attachment_get_statement(True)}

_NV = len(_VOLUME_COLUMNS)
_NT = _NV + len(_TYPE_COLUMNS)
_NA = len(_ATTACHMENT_COLUMNS)


def _volume_record(rows):
    """The ``VolumeRecord`` of ``_VOLUME_GET``'s rows (one per attachment,
    or one with NULL attachment columns)."""
    first = rows[0]
    vtype = (VolumeTypeRow._make(first[_NV:_NT])
             if first[_NV] is not None else None)
    attachments = [AttachmentRow._make(row[_NT:]) for row in rows
                   if row[_NT] is not None]
    return VolumeRecord._make(first[:_NV] + (vtype, attachments))


def _attachment_record(rows):
    """The ``AttachmentRecord`` of ``_ATTACHMENT_GET``'s rows (one per
    spec, or one with NULL spec columns)."""
    first = rows[0]
    specs = [AttachmentSpecRow(row[-2], row[-1]) for row in rows
             if row[-2] is not None]
    return AttachmentRecord._make(
        first[:_NA] + (VolumeRow._make(first[_NA:_NA + _NV]), specs))


SORT_KEYS = {
    'created_at': Volume.created_at,
    'updated_at': Volume.updated_at,
    'id': Volume.id,
    'name': Volume.display_name,
    'display_name': Volume.display_name,
    'status': Volume.status,
    'size': Volume.size,
}


def _now():
    return timeutils.utcnow()


def _update(model):
    """A conditional UPDATE of ``model`` rows (a status move). The
    session's ORM objects are not brought in step with it
    (``synchronize_session=False``): the functions here hold none that they
    read afterwards, and evaluating the condition in Python against the
    session's objects cost more than running the statement."""
    return sa.update(model).execution_options(synchronize_session=False)


# -- volume types -----------------------------------------------------------

@db_api.context_manager.reader
def type_get(ctxt, type_id, include_private=True):
    query = sa.select(VolumeType).options(
        orm.selectinload(VolumeType.extra_specs)).where(
        VolumeType.id == type_id)
    if not include_private:
        query = query.where(VolumeType.is_public.is_(True))
    vtype = ctxt.session.execute(query).scalar_one_or_none()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    return vtype


@db_api.context_manager.reader
def type_get_by_name_or_id(ctxt, name_or_id, include_private=True):
    query = sa.select(VolumeType).options(
        orm.selectinload(VolumeType.extra_specs)).where(
        sa.or_(VolumeType.id == name_or_id, VolumeType.name == name_or_id))
    if not include_private:
        query = query.where(VolumeType.is_public.is_(True))
    vtype = ctxt.session.execute(query).scalars().first()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=name_or_id)
    return vtype


@db_api.context_manager.reader
def type_get_all(ctxt, is_public=None):
    query = sa.select(VolumeType).options(
        orm.selectinload(VolumeType.extra_specs)).order_by(
        VolumeType.name, VolumeType.id)
    if is_public is not None:
        query = query.where(VolumeType.is_public.is_(is_public))
    return ctxt.session.execute(query).scalars().all()


@db_api.context_manager.writer
def type_create(ctxt, name, description, is_public, extra_specs):
    vtype = VolumeType(id=uuidutils.generate_uuid(), name=name,
                       description=description, is_public=is_public)
    vtype.extra_specs = [ExtraSpec(key=k, value=v)
                         for k, v in (extra_specs or {}).items()]
    ctxt.session.add(vtype)
    try:
        ctxt.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.VolumeTypeExists(id=name)
    return vtype


@db_api.context_manager.writer
def type_update(ctxt, type_id, values):
    vtype = ctxt.session.get(VolumeType, type_id)
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    for key, value in values.items():
        setattr(vtype, key, value)
    try:
        ctxt.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.VolumeTypeExists(id=values.get('name'))
    return type_get(ctxt, type_id)


@db_api.context_manager.writer
def type_destroy(ctxt, type_id):
    session = ctxt.session
    if session.get(VolumeType, type_id) is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    in_use = session.execute(
        sa.select(Volume.id).where(Volume.volume_type_id == type_id,
                                   Volume.deleted.is_(False)).limit(1)
    ).first()
    if in_use:
        raise exception.VolumeTypeInUse(volume_type_id=type_id)
    # Deleted volumes keep no reference to a type that goes away.
    session.execute(_update(Volume).where(
        Volume.volume_type_id == type_id, Volume.deleted.is_(True)).values(
        volume_type_id=None))
    session.execute(sa.delete(ExtraSpec).where(
        ExtraSpec.volume_type_id == type_id))
    session.execute(sa.delete(Encryption).where(
        Encryption.volume_type_id == type_id))
    session.execute(sa.delete(VolumeType).where(VolumeType.id == type_id))


@db_api.context_manager.writer
def type_extra_specs_update(ctxt, type_id, specs):
    """Set (create or replace) the given keys; returns all specs."""
    session = ctxt.session
    if session.get(VolumeType, type_id) is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    existing = {s.key: s for s in session.execute(
        sa.select(ExtraSpec).where(ExtraSpec.volume_type_id == type_id)
    ).scalars()}
    for key, value in specs.items():
        if key in existing:
            existing[key].value = value
        else:
            session.add(ExtraSpec(volume_type_id=type_id, key=key,
                                  value=value))
    session.flush()
    return type_get(ctxt, type_id)


@db_api.context_manager.writer
def type_extra_spec_delete(ctxt, type_id, key):
    result = ctxt.session.execute(sa.delete(ExtraSpec).where(
        ExtraSpec.volume_type_id == type_id, ExtraSpec.key == key))
    if result.rowcount != 1:
        raise exception.VolumeTypeExtraSpecsNotFound(
            volume_type_id=type_id, extra_specs_key=key)


# -- volume type encryption ---------------------------------------------------
#
# A type's encryption may change only while no volume uses the type. The
# type row is the lock: encryption writers take it FOR UPDATE, volume_create
# takes it FOR SHARE and checks the type is still unencrypted, so a volume
# and encryption cannot both be added to one type at once.

def _lock_type(session, type_id, read=False):
    vtype = session.execute(sa.select(VolumeType).where(
        VolumeType.id == type_id).with_for_update(read=read)
    ).scalar_one_or_none()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    return vtype


def _type_in_use(session, type_id):
    return session.execute(
        sa.select(Volume.id).where(Volume.volume_type_id == type_id,
                                   Volume.deleted.is_(False)).limit(1)
    ).first() is not None


def _encryption_of(session, type_id):
    return session.execute(sa.select(Encryption).where(
        Encryption.volume_type_id == type_id)).scalar_one_or_none()


@db_api.context_manager.reader
def type_encryption_get(ctxt, type_id):
    """The encryption row of the type, or None if it is not encrypted."""
    return _encryption_of(ctxt.session, type_id)


@db_api.context_manager.writer
def type_encryption_create(ctxt, type_id, values):
    session = ctxt.session
    _lock_type(session, type_id)
    if _type_in_use(session, type_id):
        raise exception.InvalidInput(
            reason='Cannot create encryption specs. Volume type in use.')
    if _encryption_of(session, type_id) is not None:
        raise exception.VolumeTypeEncryptionExists(type_id=type_id)
    row = Encryption(encryption_id=uuidutils.generate_uuid(),
                     volume_type_id=type_id, **values)
    session.add(row)
    session.flush()
    return row


@db_api.context_manager.writer
def type_encryption_update(ctxt, type_id, values):
    session = ctxt.session
    _lock_type(session, type_id)
    if _type_in_use(session, type_id):
        raise exception.InvalidInput(
            reason='Cannot update encryption specs. Volume type in use.')
    row = _encryption_of(session, type_id)
    if row is None:
        raise exception.VolumeTypeEncryptionNotFound(type_id=type_id)
    for key, value in values.items():
        setattr(row, key, value)
    session.flush()
    return row


@db_api.context_manager.writer
def type_encryption_delete(ctxt, type_id):
    session = ctxt.session
    _lock_type(session, type_id)
    if _type_in_use(session, type_id):
        raise exception.InvalidInput(
            reason='Cannot delete encryption specs. Volume type in use.')
    result = session.execute(sa.delete(Encryption).where(
        Encryption.volume_type_id == type_id))
    if result.rowcount != 1:
        raise exception.VolumeTypeEncryptionNotFound(type_id=type_id)


# -- volumes ------------------------------------------------------------------

def _volume_query(project_id=None):
    query = sa.select(Volume).options(*_VOLUME_LOAD).where(
        Volume.deleted.is_(False))
    if project_id is not None:
        query = query.where(Volume.project_id == project_id)
    return query


@db_api.context_manager.reader.connection
def volume_get(ctxt, volume_id, project_id=None):
    """The live volume ``volume_id`` (only in ``project_id`` if given), as
    a ``VolumeRecord``."""
    params = {'volume_id': volume_id}
    if project_id is not None:
        params['project_id'] = project_id
    rows = ctxt.connection.execute(
        _VOLUME_GET[project_id is not None], params).all()
    if not rows:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return _volume_record(rows)


@db_api.context_manager.reader
def volume_get_all(ctxt, project_id=None, filters=None, marker=None,
                   limit=None, offset=None, sort_key='created_at',
                   sort_dir='desc'):
    query = _volume_query(project_id)
    filters = filters or {}
    if 'name' in filters:
        query = query.where(Volume.display_name == filters['name'])
    if 'status' in filters:
        query = query.where(Volume.status == filters['status'])
    if 'bootable' in filters:
        query = query.where(Volume.bootable.is_(filters['bootable']))
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
def volume_create(ctxt, values):
    """A new ``creating`` volume. Its type (if any) must exist and be
    unencrypted at this moment (see the encryption functions above)."""
    if values.get('volume_type_id'):
        _lock_type(ctxt.session, values['volume_type_id'], read=True)
        if _encryption_of(ctxt.session, values['volume_type_id']):
            raise exception.EncryptedVolumesNotSupported()
    volume = Volume(id=uuidutils.generate_uuid(), status=st.CREATING,
                    attach_status=st.DETACHED, **values)
    ctxt.session.add(volume)
    try:
        ctxt.session.flush()
    except db_exc.DBReferenceError:
        raise exception.VolumeTypeNotFound(
            volume_type_id=values.get('volume_type_id'))
    return volume


@db_api.context_manager.writer
def volume_update(ctxt, volume_id, values):
    """Plain attribute changes (name, description, bootable): not moves."""
    result = ctxt.session.execute(_update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False)).values(**values))
    if result.rowcount != 1:
        raise exception.VolumeNotFound(volume_id=volume_id)


# volume_move's statements by (move, the keys of its values), built on
# first use (the keys are a few fixed sets).
_VOLUME_MOVE = {}


def _volume_move_statement(move, keys, extra=()):
    expected, target = st.VOLUME_MOVES[move]
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        _in(_V.c.status, expected), *extra).values(
        status=target, **{key: sa.bindparam('v_' + key) for key in keys})


@db_api.context_manager.writer.connection
def volume_move(ctxt, volume_id, move, values=None, extra=()):
    """CAS ``move`` of ``status.VOLUME_MOVES``; True if this caller won.
    ``extra``: more conditions (that statement is built for this call)."""
    values = values or {}
    keys = tuple(values)
    if extra:
        query = _volume_move_statement(move, keys, extra)
    else:
        query = _VOLUME_MOVE.get((move, keys))
        if query is None:
            query = _VOLUME_MOVE[move, keys] = _volume_move_statement(
                move, keys)
    params = {'v_' + key: value for key, value in values.items()}
    params['b_volume_id'] = volume_id
    return ctxt.connection.execute(query, params).rowcount == 1


_BEGIN_DETACHING = _volume_move_statement(
    'begin_detaching', (), extra=(_V.c.attach_status == st.ATTACHED,
                                  _V.c.migration_status.is_(None)))


@db_api.context_manager.writer.connection
def volume_begin_detaching(ctxt, volume_id):
    """The begin_detaching move, only while the volume is ``attached`` and
    not migrating; True if this caller won."""
    return ctxt.connection.execute(
        _BEGIN_DETACHING, {'b_volume_id': volume_id}).rowcount == 1


@db_api.context_manager.writer
def volume_retype(ctxt, volume_id, type_id, multiattach, statuses):
    """Give the volume another type (and the type's multiattach), as one
    compare-and-swap: only from ``statuses``, when it is not migrating and
    its type is not already ``type_id``. True if this caller won. The new
    type must still be unencrypted (nova_lite volumes never are)."""
    _lock_type(ctxt.session, type_id, read=True)
    if _encryption_of(ctxt.session, type_id):
        raise exception.EncryptionChangeNotSupported()
    result = ctxt.session.execute(_update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.status.in_(statuses), Volume.migration_status.is_(None),
        sa.or_(Volume.volume_type_id.is_(None),
               Volume.volume_type_id != type_id)).values(
        volume_type_id=type_id, multiattach=multiattach))
    return result.rowcount == 1


@db_api.context_manager.writer.connection
def volume_recompute(ctxt, volume_id):
    """Recompute the status of a volume whose status is about attachments
    (force detach cleaning up); other statuses are left alone."""
    connection = ctxt.connection
    volume = _lock_volume(connection, volume_id)
    if volume.status in st.ATTACHMENT_DRIVEN:
        return _recompute(connection, volume_id, locked=volume)
    return volume.status


def _live_attachment_exists(volume_id):
    return sa.exists().where(
        Attachment.volume_id == volume_id, Attachment.deleted.is_(False),
        Attachment.attach_status.in_(st.LIVE_ATTACHMENT))


@db_api.context_manager.writer.connection
def volume_delete_start(ctxt, volume_id):
    """available/error... -> deleting, only with no live attachment."""
    return volume_move(ctxt, volume_id, 'delete',
                       extra=(~_live_attachment_exists(volume_id),
                              Volume.migration_status.is_(None)))


@db_api.context_manager.writer
def volume_destroy(ctxt, volume_id):
    """deleting -> deleted (soft delete), with any error attachments."""
    now = _now()
    result = ctxt.session.execute(_update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.status == st.DELETING).values(
        status=st.DELETED, attach_status=st.DETACHED, deleted=True,
        deleted_at=now))
    ctxt.session.execute(_update(Attachment).where(
        Attachment.volume_id == volume_id,
        Attachment.deleted.is_(False)).values(
        deleted=True, deleted_at=now, attach_status=st.DETACHED,
        detach_time=now))
    return result.rowcount == 1


# -- attachments --------------------------------------------------------------

# The statements every status move runs, built once (bound parameters; in
# statements on volume_attachment, ``b_`` names the WHERE parameters and
# ``v_`` the SET ones, apart from the columns' own names).
_LOCK_VOLUME = sa.select(_V.c.id, _V.c.status, _V.c.migration_status).where(
    _V.c.id == sa.bindparam('volume_id'),
    _V.c.deleted.is_(False)).with_for_update()
_VOLUME_STATUS = sa.select(_V.c.status, _V.c.migration_status).where(
    _V.c.id == sa.bindparam('volume_id'))
_LIVE_STATUSES = sa.select(_A.c.attach_status).where(
    _A.c.volume_id == sa.bindparam('b_volume_id'),
    _A.c.deleted.is_(False)).order_by(_A.c.id)
_LIVE_ATTACHMENTS = sa.select(*_A.c).where(
    _A.c.volume_id == sa.bindparam('b_volume_id'),
    _A.c.deleted.is_(False)).order_by(_A.c.id)
_RECOMPUTE = sa.update(_V).where(
    _V.c.id == sa.bindparam('b_volume_id'),
    _V.c.status == sa.bindparam('b_status')).values(
    status=sa.bindparam('v_status'),
    attach_status=sa.bindparam('v_attach_status'))


def _lock_volume(connection, volume_id):
    """Lock the live volume's row; returns its ``id``, ``status`` and
    ``migration_status`` (a row of three columns: a whole volume is not
    needed to hold a lock)."""
    volume = connection.execute(
        _LOCK_VOLUME, {'volume_id': volume_id}).one_or_none()
    if volume is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return volume


def _live_attachments(connection, volume_id):
    """The volume's live attachments (rows of their columns), by id."""
    return connection.execute(
        _LIVE_ATTACHMENTS, {'b_volume_id': volume_id}).all()


def _live_statuses(connection, volume_id):
    """The attach statuses of the volume's live attachments (one column
    query: the status moves need nothing else)."""
    return connection.execute(
        _LIVE_STATUSES, {'b_volume_id': volume_id}).scalars().all()


def _recompute(connection, volume_id, locked=None):
    """Set the volume's status and attach_status from its attachments,
    as a CAS on the status just read (repeated if it moved meanwhile).
    ``locked``: the row ``_lock_volume`` returned in this transaction, so
    the first attempt need not read the status again."""
    for _attempt in range(5):
        volume = locked or connection.execute(
            _VOLUME_STATUS, {'volume_id': volume_id}).one()
        locked = None
        statuses = _live_statuses(connection, volume_id)
        new_status, attach_status = st.recompute(
            volume.status, volume.migration_status, statuses)
        result = connection.execute(_RECOMPUTE, {
            'b_volume_id': volume_id, 'b_status': volume.status,
            'v_status': new_status, 'v_attach_status': attach_status})
        if result.rowcount == 1:
            return new_status
    raise exception.ResourceConflict(
        reason='volume %s kept changing status' % volume_id)


def _attach_status(connection, volume_id):
    """The volume's ``attach_status`` from its live attachments."""
    statuses = [status for status in _live_statuses(connection, volume_id)
                if not status.startswith('error')]
    return st.attach_status_of(statuses)


def _attachment_query(project_id=None):
    query = sa.select(Attachment).options(*_ATTACHMENT_LOAD).where(
        Attachment.deleted.is_(False))
    if project_id is not None:
        query = query.join(Attachment.volume).where(
            Volume.project_id == project_id)
    return query


@db_api.context_manager.reader.connection
def attachment_get(ctxt, attachment_id, project_id=None):
    """The live attachment (only in ``project_id`` if given), as an
    ``AttachmentRecord``."""
    params = {'attachment_id': attachment_id}
    if project_id is not None:
        params['project_id'] = project_id
    rows = ctxt.connection.execute(
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


@db_api.context_manager.reader.connection
def attachment_volume(ctxt, attachment_id, project_id=None):
    """``(volume id, volume project id)`` of the live attachment (only in
    ``project_id`` if given): two columns, for a move's checks."""
    params = {'b_attachment_id': attachment_id}
    if project_id is not None:
        params['b_project_id'] = project_id
    row = ctxt.connection.execute(
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


@db_api.context_manager.reader.connection
def attachments_of_volume(ctxt, volume_id):
    """The volume's live attachments (rows of their columns), by id."""
    return _live_attachments(ctxt.connection, volume_id)


def _connection_users_statement(exclude):
    return sa.select(_A.c.id).where(
        _A.c.volume_id == sa.bindparam('b_volume_id'),
        _A.c.deleted.is_(False),
        # With no attachment to leave out, as ``id != NULL`` was:
        # ``id IS NOT NULL``.
        _A.c.id != sa.bindparam('b_exclude_id') if exclude
        else _A.c.id.is_not(None),
        _A.c.attached_host == sa.bindparam('b_host'),
        _in(_A.c.attach_status, st.LIVE_ATTACHMENT),
        _A.c.connection_info.is_not(None),
        _A.c.detach_time.is_(None)).order_by(_A.c.id)


_CONNECTION_USERS = {False: _connection_users_statement(False),
                     True: _connection_users_statement(True)}


def _connection_users(connection, volume_id, host, exclude_id):
    """Ids of the live attachments of the volume connected to ``host``
    (other than ``exclude_id``) whose detach has not begun."""
    if not host:
        return []
    return connection.execute(
        _CONNECTION_USERS[exclude_id is not None],
        {'b_volume_id': volume_id, 'b_host': host,
         'b_exclude_id': exclude_id}).scalars().all()


@db_api.context_manager.reader.connection
def connection_users(ctxt, volume_id, host, exclude_id=None):
    """The attachments still using the volume's connection to ``host``
    (the add-new-attach-apis spec's shared connections)."""
    return _connection_users(ctxt.connection, volume_id, host, exclude_id)


_SET_DETACH_TIME = sa.update(_A).where(
    _A.c.id == sa.bindparam('b_attachment_id'),
    _A.c.deleted.is_(False)).values(detach_time=sa.bindparam('v_now'))


@db_api.context_manager.writer.connection
def attachment_begin_detach(ctxt, attachment_id, volume_id, host):
    """Mark the attachment's detach as begun (its ``detach_time``) and
    return the other attachments still using the connection to ``host``.

    Done under the volume row's lock, so two attachments on one host being
    deleted at once cannot both see the other as still using the
    connection (and both leave it): the second one sees the first as
    going and tears the connection down."""
    connection = ctxt.connection
    _lock_volume(connection, volume_id)
    result = connection.execute(_SET_DETACH_TIME, {
        'b_attachment_id': attachment_id, 'v_now': _now()})
    if result.rowcount != 1:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    return _connection_users(connection, volume_id, host, attachment_id)


@db_api.context_manager.writer.connection
def attachment_abort_detach(ctxt, attachment_id):
    """Undo ``attachment_begin_detach`` (the backend failed to
    disconnect: the attachment is unchanged)."""
    ctxt.connection.execute(_SET_DETACH_TIME, {
        'b_attachment_id': attachment_id, 'v_now': None})


_LIVE_INSTANCES = sa.select(_A.c.instance_uuid, _A.c.attach_status).where(
    _A.c.volume_id == sa.bindparam('b_volume_id'), _A.c.deleted.is_(False))


def _reserve_statement(same_instance):
    allowed = sa.or_(
        sa.and_(_V.c.multiattach.is_(False),
                _in(_V.c.status, st.reserve_from(False))),
        sa.and_(_V.c.multiattach.is_(True),
                _in(_V.c.status, st.reserve_from(True))),
        _in(_V.c.status, st.VOLUME_MOVES['reserve_same_instance'][0])
        if same_instance else sa.false())
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        allowed).values(status=st.VOLUME_MOVES['reserve'][1],
                        attach_status=sa.bindparam('v_attach_status'))


_RESERVE = {False: _reserve_statement(False),
            True: _reserve_statement(True)}
_INSERT_ATTACHMENT = sa.insert(_A)


@db_api.context_manager.writer.connection
def attachment_reserve(ctxt, volume_id, instance_uuid, attach_mode):
    """The reserve move: a new ``reserved`` attachment, the volume
    ``reserved``. Returns the attachment (as ``attachment_get``), or None
    if the volume's status does not allow a reservation (nothing
    changed)."""
    connection = ctxt.connection
    _lock_volume(connection, volume_id)
    # A plain read, not a subquery of the UPDATE below: on MariaDB that
    # subquery takes shared next-key locks on volume_attachment, and two
    # reservations of different volumes then deadlock on the INSERT. The
    # volume row lock already keeps this volume's attachments still.
    # One read of the live attachments answers both questions below: may
    # the same instance reserve an in-use volume again, and what the
    # volume's attach_status becomes with one more reserved attachment
    # (set by the compare-and-swap itself, not by a second UPDATE).
    live = connection.execute(
        _LIVE_INSTANCES, {'b_volume_id': volume_id}).all()
    same_instance = bool(instance_uuid) and any(
        row.instance_uuid == instance_uuid and
        row.attach_status == st.ATTACHED for row in live)
    attach_status = st.attach_status_of(
        [row.attach_status for row in live
         if not row.attach_status.startswith('error')] + [st.RESERVED])
    result = connection.execute(_RESERVE[same_instance], {
        'b_volume_id': volume_id, 'v_attach_status': attach_status})
    if result.rowcount != 1:
        return None
    attachment_id = uuidutils.generate_uuid()
    connection.execute(_INSERT_ATTACHMENT, {
        'id': attachment_id, 'volume_id': volume_id,
        'instance_uuid': instance_uuid, 'attach_status': st.RESERVED,
        'attach_mode': attach_mode, 'connection_info': None})
    # As attachment_get loads it, in this transaction (no second one).
    return attachment_get(ctxt, attachment_id)


# attachment_connect's attachment UPDATE by the keys of its values (the
# API gives one fixed set), built on first use.
_CONNECT = {}


def _connect_statement(keys):
    expected, target = st.ATTACHMENT_MOVES['connect']
    return sa.update(_A).where(
        _A.c.id == sa.bindparam('b_attachment_id'), _A.c.deleted.is_(False),
        _in(_A.c.attach_status, expected)).values(
        attach_status=target,
        **{key: sa.bindparam('v_' + key) for key in keys})


_STALE_SPECS = sa.select(_S.c.id).where(
    _S.c.attachment_id == sa.bindparam('b_attachment_id'))
_DELETE_SPECS = sa.delete(_S).where(
    _S.c.id.in_(sa.bindparam('b_ids', expanding=True)))
_INSERT_SPEC = sa.insert(_S)
_CURRENT_VOLUME_STATUS = sa.select(_V.c.status).where(
    _V.c.id == sa.bindparam('volume_id'))


@db_api.context_manager.writer.connection
def attachment_connect(ctxt, attachment_id, volume_id, values, connector):
    """The connect move: attachment and volume ``attaching``, the
    connection saved, the connector stored as ``attachment_specs`` rows.
    Raises (and changes nothing) if either has moved meanwhile. Returns the
    attachment as ``attachment_get`` loads it, read in this transaction."""
    connection = ctxt.connection
    _lock_volume(connection, volume_id)
    keys = tuple(values)
    query = _CONNECT.get(keys)
    if query is None:
        query = _CONNECT[keys] = _connect_statement(keys)
    params = {'v_' + key: value for key, value in values.items()}
    params['b_attachment_id'] = attachment_id
    result = connection.execute(query, params)
    if result.rowcount != 1:
        raise exception.ResourceConflict(
            reason='attachment %s was deleted or changed status while it '
                   'was being connected' % attachment_id)
    # The status move and the attach_status it implies, in one UPDATE
    # (the attachment's own move above is already in the statuses read).
    if not volume_move(ctxt, volume_id, 'connect', values={
            'attach_status': _attach_status(connection, volume_id)}):
        current = connection.execute(
            _CURRENT_VOLUME_STATUS, {'volume_id': volume_id}).scalar()
        raise exception.ResourceConflict(
            reason='volume %s is %s: it cannot be connected' % (
                volume_id, current))
    # Delete by primary key what a plain read finds: a DELETE by
    # attachment_id that matches nothing (the usual case) takes a gap lock
    # on MariaDB, and two connects then deadlock on their INSERTs.
    stale = connection.execute(
        _STALE_SPECS, {'b_attachment_id': attachment_id}).scalars().all()
    if stale:
        connection.execute(_DELETE_SPECS, {'b_ids': stale})
    if connector:
        # One executemany, not one INSERT per connector key.
        connection.execute(_INSERT_SPEC, [
            {'attachment_id': attachment_id, 'key': key,
             'value': jsonutils.dumps(value)}
            for key, value in connector.items()])
    return attachment_get(ctxt, attachment_id)


def _attachment_move_statement(move):
    expected, target = st.ATTACHMENT_MOVES[move]
    return sa.update(_A).where(
        _A.c.id == sa.bindparam('b_attachment_id'), _A.c.deleted.is_(False),
        _in(_A.c.attach_status, expected)).values(attach_status=target)


_CONNECT_FAILED = _attachment_move_statement('connect_failed')
_COMPLETE = _attachment_move_statement('complete')
_ATTACHMENT_STATUS = sa.select(_A.c.attach_status).where(
    _A.c.id == sa.bindparam('b_attachment_id'), _A.c.deleted.is_(False))
_COMPLETE_VOLUME = sa.update(_V).where(
    _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
    _not_in(_V.c.status, st.NOT_COMPLETABLE)).values(
    status=st.VOLUME_MOVES['complete'][1],
    attach_status=sa.bindparam('v_attach_status'))


@db_api.context_manager.writer.connection
def attachment_connect_failed(ctxt, attachment_id, volume_id):
    """A failed connect: attachment ``error_attaching``, volume status
    recomputed (error attachments do not count)."""
    connection = ctxt.connection
    locked = _lock_volume(connection, volume_id)
    result = connection.execute(
        _CONNECT_FAILED, {'b_attachment_id': attachment_id})
    if result.rowcount == 1:
        _recompute(connection, volume_id, locked=locked)
    return result.rowcount == 1


@db_api.context_manager.writer.connection
def attachment_complete(ctxt, attachment_id, volume_id):
    connection = ctxt.connection
    _lock_volume(connection, volume_id)
    result = connection.execute(
        _COMPLETE, {'b_attachment_id': attachment_id})
    if result.rowcount != 1:
        current = connection.execute(
            _ATTACHMENT_STATUS, {'b_attachment_id': attachment_id}).scalar()
        if current is None:
            raise exception.VolumeAttachmentNotFound(
                attachment_id=attachment_id)
        raise exception.InvalidVolume(
            reason='attachment %s is %s and cannot be completed' % (
                attachment_id, current))
    result = connection.execute(_COMPLETE_VOLUME, {
        'b_volume_id': volume_id,
        'v_attach_status': _attach_status(connection, volume_id)})
    if result.rowcount != 1:
        raise exception.InvalidVolume(
            reason='volume %s is being deleted' % volume_id)


_DESTROY = sa.update(_A).where(
    _A.c.id == sa.bindparam('b_attachment_id'),
    _A.c.deleted.is_(False)).values(
    attach_status=st.DETACHED, deleted=True,
    deleted_at=sa.bindparam('v_now'), detach_time=sa.bindparam('v_now'))


@db_api.context_manager.writer.connection
def attachment_destroy(ctxt, attachment_id, volume_id, remaining=True):
    """The delete move: soft-delete the attachment, recompute the volume.
    Returns the volume's remaining attachments (rows of their columns; None
    without ``remaining``: they are not read)."""
    connection = ctxt.connection
    locked = _lock_volume(connection, volume_id)
    result = connection.execute(_DESTROY, {
        'b_attachment_id': attachment_id, 'v_now': _now()})
    if result.rowcount != 1:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    _recompute(connection, volume_id, locked=locked)
    return _live_attachments(connection, volume_id) if remaining else None


def connector_of(attachment):
    """The host connector stored with ``attachment`` (its loaded specs)."""
    return {spec.key: jsonutils.loads(spec.value)
            for spec in attachment.specs}
