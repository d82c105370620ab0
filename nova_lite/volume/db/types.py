"""Volume types: the types, their extra specs, encryption and access
lists (private types). Reads return ORM rows: a ``VolumeType`` with its
``extra_specs`` loaded, a type's ``encryption`` row.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.volume.db import common

Volume = models.Volume
VolumeType = models.VolumeType
ExtraSpec = models.VolumeTypeExtraSpec
Encryption = models.VolumeTypeEncryption
TypeProject = models.VolumeTypeProject


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
def type_get_by_name(ctxt, name):
    """The type named ``name``, whoever may see it."""
    query = _type_query(None).where(VolumeType.name == name)
    vtype = ctxt.session.execute(query).scalar_one_or_none()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=name)
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
    if _type_in_use(session, type_id):
        raise exception.VolumeTypeInUse(volume_type_id=type_id)
    # Deleted volumes keep no reference to a type that goes away.
    session.execute(common.update(Volume).where(
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
# type row is the lock: encryption writers take it FOR UPDATE,
# ``volumes.volume_create`` takes it FOR SHARE and checks the type is still
# unencrypted, so a volume and encryption cannot both be added to one type
# at once.

def _type_in_use(session, type_id):
    return session.execute(
        sa.select(Volume.id).where(Volume.volume_type_id == type_id,
                                   Volume.deleted.is_(False)).limit(1)
    ).first() is not None


def _lock_unused_type(session, type_id, verb):
    """Lock the type's row; 400 if a volume uses the type (its encryption
    specs then cannot change)."""
    common.lock_type(session, type_id)
    if _type_in_use(session, type_id):
        raise exception.InvalidInput(
            reason='Cannot %s encryption specs. Volume type in use.' % verb)


@db_api.context_manager.reader
def type_encryption_get(ctxt, type_id):
    """The encryption row of the type, or None if it is not encrypted."""
    return common.encryption_of(ctxt.session, type_id)


@db_api.context_manager.writer
def type_encryption_create(ctxt, type_id, values):
    session = ctxt.session
    _lock_unused_type(session, type_id, 'create')
    if common.encryption_of(session, type_id) is not None:
        raise exception.VolumeTypeEncryptionExists(type_id=type_id)
    row = Encryption(encryption_id=uuidutils.generate_uuid(),
                     volume_type_id=type_id, **values)
    session.add(row)
    session.flush()
    return row


@db_api.context_manager.writer
def type_encryption_update(ctxt, type_id, values):
    session = ctxt.session
    _lock_unused_type(session, type_id, 'update')
    row = common.encryption_of(session, type_id)
    if row is None:
        raise exception.VolumeTypeEncryptionNotFound(type_id=type_id)
    for key, value in values.items():
        setattr(row, key, value)
    session.flush()
    return row


@db_api.context_manager.writer
def type_encryption_delete(ctxt, type_id):
    session = ctxt.session
    _lock_unused_type(session, type_id, 'delete')
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
    vtype = common.lock_type(session, type_id, read=True)
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
