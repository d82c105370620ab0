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

Every function runs in session mode (``@db_api.context_manager.reader``
/ ``.writer``, statements run with ``ctxt.session.execute``): one mode for
all block-storage data access. The status moves and the single-object
reads run several times in every attach and detach, so they are Core
statements on the tables, built once at import with bound parameters:
building a statement each call costs about as much as running it on
SQLite. ``volume_get`` and ``attachment_get`` return read-only records
(``VolumeRecord``, ``AttachmentRecord``: named tuples, filled from
labelled columns) with what the views and ``volume/api.py`` use; list
functions and the volume type functions return ORM rows with what the
views need already loaded (relationships are ``lazy='raise'``): a list is
a fixed number of queries.
"""

import collections
import operator

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.volume import metadata as vmeta
from nova_lite.volume import status as st

Volume = models.Volume
VolumeType = models.VolumeType
ExtraSpec = models.VolumeTypeExtraSpec
Encryption = models.VolumeTypeEncryption
TypeProject = models.VolumeTypeProject
Attachment = models.VolumeAttachment
AttachmentSpec = models.AttachmentSpec
Metadata = models.VolumeMetadata
AdminMetadata = models.VolumeAdminMetadata

_VOLUME_LOAD = (
    orm.selectinload(Volume.attachments),
    orm.selectinload(Volume.admin_metadata),
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
_M = Metadata.__table__
_AM = AdminMetadata.__table__

_VOLUME_COLUMNS = tuple(c.name for c in _V.c)
_TYPE_COLUMNS = tuple(c.name for c in _VT.c)
_ATTACHMENT_COLUMNS = tuple(c.name for c in _A.c)

# Read-only records of volume_get and attachment_get (named tuples, their
# fields read from a result row by column label; attributes as the ORM rows
# had).
#: A volume row, with its ``volume_type`` (a ``VolumeTypeRow`` or None;
#: without extra specs: ``type_get`` has them), its live ``attachments``
#: (``AttachmentRow``s, by id), the ``admin_metadata`` users see
#: (``AdminMetadataRow``s: ``status.VISIBLE_ADMIN_METADATA``) and, when
#: read ``with_metadata``, its ``volume_metadata`` (``MetadataRow``s, by
#: key; None otherwise).
VolumeRecord = collections.namedtuple(
    'VolumeRecord', _VOLUME_COLUMNS + ('volume_type', 'attachments',
                                       'admin_metadata', 'volume_metadata'))
MetadataRow = collections.namedtuple('MetadataRow', ('key', 'value'))
AdminMetadataRow = collections.namedtuple('AdminMetadataRow',
                                          ('key', 'value'))
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
#
# Their columns are labelled ``<prefix><column name>`` (``volume_``,
# ``type_``, ``attachment_``, ``admin_<key>``, ``spec_``) and a record is
# built from the row's attributes of those labels: the order of the
# SELECT's columns does not matter.


def _labelled(table, prefix):
    """The columns of ``table``, each labelled ``prefix`` + its name."""
    return [column.label(prefix + column.name) for column in table.c]


def _values_of(prefix, names):
    """A function that gives a row's values of the columns labelled
    ``prefix`` + each of ``names``, as a tuple in the order of ``names``
    (``operator.attrgetter``: read by label, at C speed)."""
    get = operator.attrgetter(*(prefix + name for name in names))
    if len(names) == 1:
        return lambda row: (get(row),)
    return get


def _in(column, values):
    """``column IN (<values>)`` for a fixed list, as one bound parameter
    per value: ``in_(<list>)`` would make an expanding parameter, whose
    SQL is re-rendered at every execution of the cached statement."""
    return column.in_([sa.literal(value, column.type) for value in values])


def _not_in(column, values):
    return column.not_in(
        [sa.literal(value, column.type) for value in values])


def _admin_metadata_value(key):
    """The volume's admin metadata ``key`` as a correlated scalar
    subquery: one column of the volume's row (labelled ``admin_<key>``),
    not one row more per key."""
    return sa.select(_AM.c.value).where(
        _AM.c.volume_id == _V.c.id, _AM.c.key == key
    ).correlate(_V).scalar_subquery().label('admin_' + key)


def _volume_get_statement(in_project):
    query = sa.select(
        *_labelled(_V, 'volume_'), *_labelled(_VT, 'type_'),
        *(_admin_metadata_value(key) for key in st.VISIBLE_ADMIN_METADATA),
        *_labelled(_A, 'attachment_')).select_from(
        _V.outerjoin(_VT, _VT.c.id == _V.c.volume_type_id).outerjoin(
            _A, sa.and_(_A.c.volume_id == _V.c.id, _A.c.deleted.is_(False)))
    ).where(_V.c.deleted.is_(False), _V.c.id == sa.bindparam('volume_id')
            ).order_by(_A.c.id)
    if in_project:
        query = query.where(_V.c.project_id == sa.bindparam('project_id'))
    return query


def _attachment_get_statement(in_project):
    query = sa.select(
        *_labelled(_A, 'attachment_'), *_labelled(_V, 'volume_'),
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


_VOLUME_GET = {False: _volume_get_statement(False),
               True: _volume_get_statement(True)}
_ATTACHMENT_GET = {False: _attachment_get_statement(False),
                   True: _attachment_get_statement(True)}

_volume_values = _values_of('volume_', _VOLUME_COLUMNS)
_type_values = _values_of('type_', _TYPE_COLUMNS)
_attachment_values = _values_of('attachment_', _ATTACHMENT_COLUMNS)


def _volume_record(rows):
    """The ``VolumeRecord`` of ``_VOLUME_GET``'s rows (one per attachment,
    or one with NULL attachment columns)."""
    first = rows[0]
    vtype = (VolumeTypeRow._make(_type_values(first))
             if first.type_id is not None else None)
    attachments = [AttachmentRow._make(_attachment_values(row))
                   for row in rows if row.attachment_id is not None]
    admin_metadata = []
    for key in st.VISIBLE_ADMIN_METADATA:
        value = getattr(first, 'admin_' + key)
        if value is not None:
            admin_metadata.append(AdminMetadataRow(key, value))
    return VolumeRecord._make(_volume_values(first) + (
        vtype, attachments, admin_metadata, None))


def _attachment_record(rows):
    """The ``AttachmentRecord`` of ``_ATTACHMENT_GET``'s rows (one per
    spec, or one with NULL spec columns)."""
    first = rows[0]
    specs = [AttachmentSpecRow(row.spec_key, row.spec_value)
             for row in rows if row.spec_key is not None]
    return AttachmentRecord._make(_attachment_values(first) + (
        VolumeRow._make(_volume_values(first)), specs))


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
#
# A private type (is_public false) is visible only to administrators and to
# the projects in its volume_type_projects rows. Reads take ``visible_to``:
# None (administrators, internal callers) sees every type; a project id
# sees public types and the private ones that project may use.

def _visible_to(project_id):
    return sa.or_(VolumeType.is_public.is_(True), sa.exists().where(
        TypeProject.volume_type_id == VolumeType.id,
        TypeProject.project_id == project_id))


def _type_query(visible_to):
    query = sa.select(VolumeType).options(
        orm.selectinload(VolumeType.extra_specs))
    if visible_to is not None:
        query = query.where(_visible_to(visible_to))
    return query


@db_api.context_manager.reader
def type_get(ctxt, type_id, visible_to=None):
    query = _type_query(visible_to).where(VolumeType.id == type_id)
    vtype = ctxt.session.execute(query).scalar_one_or_none()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    return vtype


@db_api.context_manager.reader
def type_get_by_name_or_id(ctxt, name_or_id, visible_to=None):
    query = _type_query(visible_to).where(
        sa.or_(VolumeType.id == name_or_id, VolumeType.name == name_or_id))
    vtype = ctxt.session.execute(query).scalars().first()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=name_or_id)
    return vtype


@db_api.context_manager.reader
def type_get_all(ctxt, is_public=None, visible_to=None):
    """Types by name. ``is_public``, Cinder's filter: True, the public
    types and (with ``visible_to``) the private ones that project may use;
    False, only private types; None, all."""
    query = _type_query(None).order_by(VolumeType.name, VolumeType.id)
    if is_public and visible_to is not None:
        query = query.where(_visible_to(visible_to))
    elif is_public is not None:
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
    session.execute(sa.delete(TypeProject).where(
        TypeProject.volume_type_id == type_id))
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


# -- volume type access -------------------------------------------------------
#
# Only private types have an access list; the type row is taken FOR SHARE so
# that the type cannot go (or become public) while a row is added.

_PUBLIC_TYPE_ACCESS = ('Type access modification is not applicable to '
                       'public volume type.')


def _private_type(session, type_id):
    vtype = _lock_type(session, type_id, read=True)
    if vtype.is_public:
        raise exception.InvalidVolumeType(reason=_PUBLIC_TYPE_ACCESS)
    return vtype


@db_api.context_manager.reader
def type_access_get_all(ctxt, type_id):
    """The ids of the projects that may use the private type, in the order
    they were given access; a public type has no list (404)."""
    session = ctxt.session
    vtype = session.get(VolumeType, type_id)
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    if vtype.is_public:
        raise exception.VolumeTypeAccessNotFound(
            message='Access list not available for public volume types.')
    return session.execute(sa.select(TypeProject.project_id).where(
        TypeProject.volume_type_id == type_id).order_by(TypeProject.id)
    ).scalars().all()


@db_api.context_manager.writer
def type_access_add(ctxt, type_id, project_id):
    session = ctxt.session
    _private_type(session, type_id)
    session.add(TypeProject(volume_type_id=type_id, project_id=project_id))
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.VolumeTypeAccessExists(volume_type_id=type_id,
                                               project_id=project_id)


@db_api.context_manager.writer
def type_access_remove(ctxt, type_id, project_id):
    session = ctxt.session
    _private_type(session, type_id)
    result = session.execute(sa.delete(TypeProject).where(
        TypeProject.volume_type_id == type_id,
        TypeProject.project_id == project_id))
    if result.rowcount != 1:
        raise exception.VolumeTypeAccessNotFound(volume_type_id=type_id,
                                                 project_id=project_id)


# -- volumes ------------------------------------------------------------------

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


@db_api.context_manager.reader
def volume_get_all(ctxt, project_id=None, filters=None, marker=None,
                   limit=None, offset=None, sort_key='created_at',
                   sort_dir='desc', with_metadata=False):
    """A page of live volumes (ORM rows with their type and attachments
    loaded, and their ``volume_metadata`` ``with_metadata``). ``filters``:
    ``name``, ``status``, ``bootable``, and ``metadata``, ``{key: value}``
    pairs a volume must all have."""
    query = _volume_query(project_id)
    if with_metadata:
        query = query.options(orm.selectinload(Volume.volume_metadata))
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
    Its type (if any) must exist and be unencrypted at this moment (see the
    encryption functions above). ``quota_check(session)``
    (``nova_lite.volume.quotas``) runs first in the transaction: it locks
    the project's quota row and counts."""
    if quota_check is not None:
        quota_check(ctxt.session)
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
    if metadata:
        _metadata_insert(ctxt.session, volume.id, metadata)
    return volume


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
    volume = _lock_volume(session, volume_id)
    if volume.status in frozen:
        return False
    if values:
        session.execute(sa.update(_V).where(
            _V.c.id == volume_id, _V.c.deleted.is_(False)).values(**values))
    if metadata is not None:
        _metadata_change(session, volume_id, metadata, replace=True)
    return True


# volume_move's statements by (move, the keys of its values), built on
# first use (the keys are a few fixed sets).
_VOLUME_MOVE = {}


def _volume_move_statement(move, keys, extra=()):
    expected, target = st.VOLUME_MOVES[move]
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        _in(_V.c.status, expected), *extra).values(
        status=target, **{key: sa.bindparam('v_' + key) for key in keys})


@db_api.context_manager.writer
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
    return ctxt.session.execute(query, params).rowcount == 1


_BEGIN_DETACHING = _volume_move_statement(
    'begin_detaching', (), extra=(_V.c.attach_status == st.ATTACHED,
                                  _V.c.migration_status.is_(None)))


@db_api.context_manager.writer
def volume_begin_detaching(ctxt, volume_id):
    """The begin_detaching move, only while the volume is ``attached`` and
    not migrating; True if this caller won."""
    return ctxt.session.execute(
        _BEGIN_DETACHING, {'b_volume_id': volume_id}).rowcount == 1


# -- Cinder's legacy attach actions (os-reserve, os-attach, ...) -----------

def _legacy_reserve_statement():
    target = st.VOLUME_MOVES['legacy_reserve'][1]
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        sa.or_(sa.and_(_V.c.multiattach.is_(False),
                       _in(_V.c.status, st.legacy_reserve_from(False))),
               sa.and_(_V.c.multiattach.is_(True),
                       _in(_V.c.status, st.legacy_reserve_from(True))))
    ).values(status=target)


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
    locked = _lock_volume(session, volume_id)
    if locked.status not in st.UNRESERVE_FROM:
        return None
    return _recompute(session, volume_id, locked=locked)


_LOCK_VOLUME_FOR_ATTACH = sa.select(
    _V.c.id, _V.c.status, _V.c.multiattach).where(
    _V.c.id == sa.bindparam('volume_id'),
    _V.c.deleted.is_(False)).with_for_update()
_ADMIN_METADATA = sa.select(_AM.c.id, _AM.c.value).where(
    _AM.c.volume_id == sa.bindparam('b_volume_id'),
    _AM.c.key == sa.bindparam('b_key'))
_INSERT_ADMIN_METADATA = sa.insert(_AM)
_UPDATE_ADMIN_METADATA = sa.update(_AM).where(
    _AM.c.id == sa.bindparam('b_id')).values(
    value=sa.bindparam('v_value'), updated_at=sa.bindparam('v_now'))


def _legacy_attach_statement():
    target = st.VOLUME_MOVES['legacy_attach'][1]
    return sa.update(_V).where(
        _V.c.id == sa.bindparam('b_volume_id'), _V.c.deleted.is_(False),
        sa.or_(sa.and_(_V.c.multiattach.is_(False),
                       _in(_V.c.status, st.legacy_attach_from(False))),
               sa.and_(_V.c.multiattach.is_(True),
                       _in(_V.c.status, st.legacy_attach_from(True))))
    ).values(status=target, attach_status=st.ATTACHED)


_LEGACY_ATTACH = _legacy_attach_statement()


def _admin_metadata_get(session, volume_id, key):
    """``(row id, value)`` of the volume's admin metadata ``key``, or
    None."""
    return session.execute(_ADMIN_METADATA, {
        'b_volume_id': volume_id, 'b_key': key}).first()


def _admin_metadata_set(session, volume_id, key, value, update=True):
    """Write admin metadata ``key`` (only if absent without ``update``),
    under the volume's row lock taken by the caller."""
    row = _admin_metadata_get(session, volume_id, key)
    if row is None:
        session.execute(_INSERT_ADMIN_METADATA, {
            'volume_id': volume_id, 'key': key, 'value': value,
            'created_at': _now()})
    elif update and row.value != value:
        session.execute(_UPDATE_ADMIN_METADATA, {
            'b_id': row.id, 'v_value': value, 'v_now': _now()})


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
    readonly = _admin_metadata_get(session, volume_id, st.READONLY)
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
    _admin_metadata_set(session, volume_id, st.READONLY,
                        st.readonly_value(False), update=False)
    attachment_id = uuidutils.generate_uuid()
    session.execute(_INSERT_ATTACHMENT, {
        'id': attachment_id, 'volume_id': volume_id,
        'instance_uuid': instance_uuid, 'attached_host': host_name,
        'mountpoint': mountpoint, 'attach_mode': mode,
        'attach_time': _now(), 'attach_status': st.ATTACHED,
        'connection_info': None})
    return attachment_get(ctxt, attachment_id)


@db_api.context_manager.writer
def volume_update_readonly(ctxt, volume_id, readonly):
    """``os-update_readonly_flag``: write the ``readonly`` admin metadata
    while the volume is ``available``, under its row lock (one
    transaction). Returns None if written, else the volume's status
    (nothing changed)."""
    session = ctxt.session
    locked = _lock_volume(session, volume_id)
    if locked.status not in st.READONLY_UPDATE_FROM:
        return locked.status
    _admin_metadata_set(session, volume_id, st.READONLY,
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


@db_api.context_manager.writer
def volume_extend_start(ctxt, volume_id, size, new_size, quota_check=None):
    """The extend move: ``available`` -> ``extending`` with ``new_size``
    written at once (so that the quota counts it from now on, as Cinder's
    reservation does), only while the volume is not migrating and still
    ``size`` GiB (the size the caller checked). True if this caller won.
    ``quota_check(session)`` (``nova_lite.volume.quotas``) runs first in
    the transaction: it locks the project's quota row and counts."""
    if quota_check is not None:
        quota_check(ctxt.session)
    expected, target = st.VOLUME_MOVES['extend']
    result = ctxt.session.execute(_update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.status.in_(expected), Volume.size == size,
        Volume.migration_status.is_(None)).values(
        status=target, size=new_size))
    return result.rowcount == 1


@db_api.context_manager.reader
def volumes_stalled(ctxt, status, before):
    """Live volumes in ``status`` that have not moved since ``before``
    (naive UTC), oldest first: the work a dead process left."""
    return ctxt.session.execute(
        sa.select(Volume).where(
            Volume.deleted.is_(False), Volume.status == status,
            sa.or_(Volume.updated_at.is_(None), Volume.updated_at < before))
        .order_by(Volume.updated_at)).scalars().all()


@db_api.context_manager.writer
def volume_settle(ctxt, volume, move, values=None):
    """``move`` of a stalled ``volume`` (a row ``volumes_stalled`` read),
    only if it has not moved since it was read: a process that was only
    slow and moved it on meanwhile wins. True if this caller won."""
    return volume_move(ctxt, volume.id, move, values=values, extra=(
        _V.c.updated_at.is_(None) if volume.updated_at is None
        else _V.c.updated_at == volume.updated_at,))


@db_api.context_manager.writer
def volume_recompute(ctxt, volume_id):
    """Recompute the status of a volume whose status is about attachments
    (force detach cleaning up); other statuses are left alone."""
    session = ctxt.session
    volume = _lock_volume(session, volume_id)
    if volume.status in st.ATTACHMENT_DRIVEN:
        return _recompute(session, volume_id, locked=volume)
    return volume.status


def _live_attachment_exists(volume_id):
    return sa.exists().where(
        Attachment.volume_id == volume_id, Attachment.deleted.is_(False),
        Attachment.attach_status.in_(st.LIVE_ATTACHMENT))


@db_api.context_manager.writer
def volume_delete_start(ctxt, volume_id):
    """available/error... -> deleting, only with no live attachment."""
    return volume_move(ctxt, volume_id, 'delete',
                       extra=(~_live_attachment_exists(volume_id),
                              Volume.migration_status.is_(None)))


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
            _V.c.migration_status.is_(None), ~attached).values(
            status=st.DELETING)).rowcount == 1


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
    volume = _lock_volume(session, volume_id)
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
    volume = _lock_volume(session, volume_id)
    rows = _metadata_rows(session, volume_id)
    found = [row.id for row in rows if row.key == key]
    if not found:
        raise exception.VolumeMetadataNotFound(volume_id=volume_id,
                                               metadata_key=key)
    if check is not None:
        check(volume.status, {row.key: row.value for row in rows})
    session.execute(_DELETE_METADATA_IDS, {'b_ids': found})


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


def _lock_volume(session, volume_id):
    """Lock the live volume's row; returns its ``id``, ``status`` and
    ``migration_status`` (a row of three columns: a whole volume is not
    needed to hold a lock)."""
    volume = session.execute(
        _LOCK_VOLUME, {'volume_id': volume_id}).one_or_none()
    if volume is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return volume


def _live_attachments(session, volume_id):
    """The volume's live attachments (rows of their columns), by id."""
    return session.execute(
        _LIVE_ATTACHMENTS, {'b_volume_id': volume_id}).all()


def _live_statuses(session, volume_id):
    """The attach statuses of the volume's live attachments (one column
    query: the status moves need nothing else)."""
    return session.execute(
        _LIVE_STATUSES, {'b_volume_id': volume_id}).scalars().all()


def _recompute(session, volume_id, locked=None):
    """Set the volume's status and attach_status from its attachments,
    as a CAS on the status just read (repeated if it moved meanwhile).
    ``locked``: the row ``_lock_volume`` returned in this transaction, so
    the first attempt need not read the status again."""
    for _attempt in range(5):
        volume = locked or session.execute(
            _VOLUME_STATUS, {'volume_id': volume_id}).one()
        locked = None
        statuses = _live_statuses(session, volume_id)
        new_status, attach_status = st.recompute(
            volume.status, volume.migration_status, statuses)
        result = session.execute(_RECOMPUTE, {
            'b_volume_id': volume_id, 'b_status': volume.status,
            'v_status': new_status, 'v_attach_status': attach_status})
        if result.rowcount == 1:
            return new_status
    raise exception.ResourceConflict(
        reason='volume %s kept changing status' % volume_id)


def _attach_status(session, volume_id):
    """The volume's ``attach_status`` from its live attachments."""
    statuses = [status for status in _live_statuses(session, volume_id)
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
        _in(_A.c.attach_status, st.LIVE_ATTACHMENT),
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


_SET_DETACH_TIME = sa.update(_A).where(
    _A.c.id == sa.bindparam('b_attachment_id'),
    _A.c.deleted.is_(False)).values(detach_time=sa.bindparam('v_now'))


@db_api.context_manager.writer
def attachment_begin_detach(ctxt, attachment_id, volume_id, host):
    """Mark the attachment's detach as begun (its ``detach_time``) and
    return the other attachments still using the connection to ``host``.

    Done under the volume row's lock, so two attachments on one host being
    deleted at once cannot both see the other as still using the
    connection (and both leave it): the second one sees the first as
    going and tears the connection down."""
    session = ctxt.session
    _lock_volume(session, volume_id)
    result = session.execute(_SET_DETACH_TIME, {
        'b_attachment_id': attachment_id, 'v_now': _now()})
    if result.rowcount != 1:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    return _connection_users(session, volume_id, host, attachment_id)


@db_api.context_manager.writer
def attachment_abort_detach(ctxt, attachment_id):
    """Undo ``attachment_begin_detach`` (the backend failed to
    disconnect: the attachment is unchanged)."""
    ctxt.session.execute(_SET_DETACH_TIME, {
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


@db_api.context_manager.writer
def attachment_reserve(ctxt, volume_id, instance_uuid, attach_mode):
    """The reserve move: a new ``reserved`` attachment, the volume
    ``reserved``. Returns the attachment (as ``attachment_get``), or None
    if the volume's status does not allow a reservation (nothing
    changed)."""
    session = ctxt.session
    _lock_volume(session, volume_id)
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
    same_instance = bool(instance_uuid) and any(
        row.instance_uuid == instance_uuid and
        row.attach_status == st.ATTACHED for row in live)
    attach_status = st.attach_status_of(
        [row.attach_status for row in live
         if not row.attach_status.startswith('error')] + [st.RESERVED])
    result = session.execute(_RESERVE[same_instance], {
        'b_volume_id': volume_id, 'v_attach_status': attach_status})
    if result.rowcount != 1:
        return None
    if attach_mode in (None, 'null'):
        # A volume flagged read-only (os-update_readonly_flag) is attached
        # 'ro' when the caller gives no mode, as Cinder's admin metadata
        # override (Cinder takes any value; nova_lite only 'True').
        readonly = _admin_metadata_get(session, volume_id, st.READONLY)
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


@db_api.context_manager.writer
def attachment_connect(ctxt, attachment_id, volume_id, values, connector):
    """The connect move: attachment and volume ``attaching``, the
    connection saved, the connector stored as ``attachment_specs`` rows.
    Raises (and changes nothing) if either has moved meanwhile. Returns the
    attachment as ``attachment_get`` loads it, read in this transaction."""
    session = ctxt.session
    _lock_volume(session, volume_id)
    keys = tuple(values)
    query = _CONNECT.get(keys)
    if query is None:
        query = _CONNECT[keys] = _connect_statement(keys)
    params = {'v_' + key: value for key, value in values.items()}
    params['b_attachment_id'] = attachment_id
    result = session.execute(query, params)
    if result.rowcount != 1:
        raise exception.ResourceConflict(
            reason='attachment %s was deleted or changed status while it '
                   'was being connected' % attachment_id)
    # The status move and the attach_status it implies, in one UPDATE
    # (the attachment's own move above is already in the statuses read).
    if not volume_move(ctxt, volume_id, 'connect', values={
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


@db_api.context_manager.writer
def attachment_connect_failed(ctxt, attachment_id, volume_id):
    """A failed connect: attachment ``error_attaching``, volume status
    recomputed (error attachments do not count)."""
    session = ctxt.session
    locked = _lock_volume(session, volume_id)
    result = session.execute(
        _CONNECT_FAILED, {'b_attachment_id': attachment_id})
    if result.rowcount == 1:
        _recompute(session, volume_id, locked=locked)
    return result.rowcount == 1


@db_api.context_manager.writer
def attachment_complete(ctxt, attachment_id, volume_id):
    session = ctxt.session
    _lock_volume(session, volume_id)
    result = session.execute(
        _COMPLETE, {'b_attachment_id': attachment_id})
    if result.rowcount != 1:
        current = session.execute(
            _ATTACHMENT_STATUS, {'b_attachment_id': attachment_id}).scalar()
        if current is None:
            raise exception.VolumeAttachmentNotFound(
                attachment_id=attachment_id)
        raise exception.InvalidVolume(
            reason='attachment %s is %s and cannot be completed' % (
                attachment_id, current))
    result = session.execute(_COMPLETE_VOLUME, {
        'b_volume_id': volume_id,
        'v_attach_status': _attach_status(session, volume_id)})
    if result.rowcount != 1:
        raise exception.InvalidVolume(
            reason='volume %s is being deleted' % volume_id)


_DESTROY = sa.update(_A).where(
    _A.c.id == sa.bindparam('b_attachment_id'),
    _A.c.deleted.is_(False)).values(
    attach_status=st.DETACHED, deleted=True,
    deleted_at=sa.bindparam('v_now'), detach_time=sa.bindparam('v_now'))


@db_api.context_manager.writer
def attachment_destroy(ctxt, attachment_id, volume_id, remaining=True):
    """The delete move: soft-delete the attachment, recompute the volume.
    Returns the volume's remaining attachments (rows of their columns; None
    without ``remaining``: they are not read)."""
    session = ctxt.session
    locked = _lock_volume(session, volume_id)
    result = session.execute(_DESTROY, {
        'b_attachment_id': attachment_id, 'v_now': _now()})
    if result.rowcount != 1:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    _recompute(session, volume_id, locked=locked)
    return _live_attachments(session, volume_id) if remaining else None


def connector_of(attachment):
    """The host connector stored with ``attachment`` (its loaded specs)."""
    return {spec.key: jsonutils.loads(spec.value)
            for spec in attachment.specs}
