"""What the modules of ``nova_lite.volume.db`` share; not used outside
the package.

Statement helpers (``in_``, ``not_in``, ``update``, ``labelled`` and
``values_of`` for the records), the columns of the ``VolumeRow`` and
``AttachmentRow`` records, and the steps that more than one aggregate's
transactions take: the volume row lock (``lock_volume``), the volume's
status recomputed from its attachments (``recompute``), the ``readonly``
admin metadata (``admin_metadata_get``/``_set``), and the type row lock
and encryption (``lock_type``, ``encryption_of``). Each takes the
session of the caller's transaction.
"""

import collections
import operator

import sqlalchemy as sa

from nova_lite.db import models
from nova_lite import exception
from nova_lite import utils
from nova_lite.volume import status as st

VolumeType = models.VolumeType
Encryption = models.VolumeTypeEncryption

_V = models.Volume.__table__
_A = models.VolumeAttachment.__table__
_AM = models.VolumeAdminMetadata.__table__

VOLUME_COLUMNS = tuple(c.name for c in _V.c)
ATTACHMENT_COLUMNS = tuple(c.name for c in _A.c)

#: A volume row (a ``VolumeRecord``'s ``attachments`` are ``AttachmentRow``s,
#: an ``AttachmentRecord``'s ``volume`` is a ``VolumeRow``): read-only, with
#: the attributes the ORM rows have.
VolumeRow = collections.namedtuple('VolumeRow', VOLUME_COLUMNS)
AttachmentRow = collections.namedtuple('AttachmentRow', ATTACHMENT_COLUMNS)


def update(model):
    """A conditional UPDATE of ``model`` rows (a status move). The
    session's ORM objects are not brought in step with it
    (``synchronize_session=False``): the functions of this package hold
    none that they read afterwards, and evaluating the condition in Python
    against the session's objects cost more than running the statement."""
    return sa.update(model).execution_options(synchronize_session=False)


def in_(column, values):
    """``column IN (<values>)`` for a fixed list, as one bound parameter
    per value: ``in_(<list>)`` would make an expanding parameter, whose
    SQL is re-rendered at every execution of the cached statement."""
    return column.in_([sa.literal(value, column.type) for value in values])


def not_in(column, values):
    return column.not_in(
        [sa.literal(value, column.type) for value in values])


def not_migrating(column):
    """``column`` (a volume's ``migration_status``) says no migration holds
    the volume (``status.NOT_MIGRATING``: none, or one that ended)."""
    return sa.or_(column.is_(None),
                  in_(column, [s for s in st.NOT_MIGRATING if s]))


def labelled(table, prefix):
    """The columns of ``table``, each labelled ``prefix`` + its name."""
    return [column.label(prefix + column.name) for column in table.c]


def values_of(prefix, names):
    """A function that gives a row's values of the columns labelled
    ``prefix`` + each of ``names``, as a tuple in the order of ``names``
    (``operator.attrgetter``: read by label, at C speed)."""
    get = operator.attrgetter(*(prefix + name for name in names))
    if len(names) == 1:
        return lambda row: (get(row),)
    return get


# Values of a volume's and an attachment's labelled columns (``volume_``,
# ``attachment_``), in the order of their row tuples.
volume_values = values_of('volume_', VOLUME_COLUMNS)
attachment_values = values_of('attachment_', ATTACHMENT_COLUMNS)


# -- the volume row lock and the status recompute -----------------------------
#
# Bound parameters: in statements on volume_attachment, ``b_`` names the
# WHERE parameters and ``v_`` the SET ones, apart from the columns' own
# names.

_LOCK_VOLUME = sa.select(_V.c.id, _V.c.status, _V.c.migration_status).where(
    _V.c.id == sa.bindparam('volume_id'),
    _V.c.deleted.is_(False)).with_for_update()
_VOLUME_STATUS = sa.select(_V.c.status, _V.c.migration_status).where(
    _V.c.id == sa.bindparam('volume_id'))
_LIVE_STATUSES = sa.select(_A.c.attach_status).where(
    _A.c.volume_id == sa.bindparam('b_volume_id'),
    _A.c.deleted.is_(False)).order_by(_A.c.id)
_RECOMPUTE = sa.update(_V).where(
    _V.c.id == sa.bindparam('b_volume_id'),
    _V.c.status == sa.bindparam('b_status')).values(
    status=sa.bindparam('v_status'),
    attach_status=sa.bindparam('v_attach_status'))


def lock_volume(session, volume_id):
    """Lock the live volume's row; returns its ``id``, ``status`` and
    ``migration_status`` (a row of three columns: a whole volume is not
    needed to hold a lock)."""
    volume = session.execute(
        _LOCK_VOLUME, {'volume_id': volume_id}).one_or_none()
    if volume is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return volume


def live_statuses(session, volume_id):
    """The attach statuses of the volume's live attachments (one column
    query: the status moves need nothing else)."""
    return session.execute(
        _LIVE_STATUSES, {'b_volume_id': volume_id}).scalars().all()


def recompute(session, volume_id, locked=None):
    """Set the volume's status and attach_status from its attachments,
    as a CAS on the status just read (repeated if it moved meanwhile).
    ``locked``: the row ``lock_volume`` returned in this transaction, so
    the first attempt need not read the status again."""
    for _attempt in range(5):
        volume = locked or session.execute(
            _VOLUME_STATUS, {'volume_id': volume_id}).one()
        locked = None
        statuses = live_statuses(session, volume_id)
        new_status, attach_status = st.recompute(
            volume.status, volume.migration_status, statuses)
        result = session.execute(_RECOMPUTE, {
            'b_volume_id': volume_id, 'b_status': volume.status,
            'v_status': new_status, 'v_attach_status': attach_status})
        if result.rowcount == 1:
            return new_status
    raise exception.ResourceConflict(
        reason='volume %s kept changing status' % volume_id)


# -- admin metadata (the readonly flag) ---------------------------------------

_ADMIN_METADATA = sa.select(_AM.c.id, _AM.c.value).where(
    _AM.c.volume_id == sa.bindparam('b_volume_id'),
    _AM.c.key == sa.bindparam('b_key'))
_INSERT_ADMIN_METADATA = sa.insert(_AM)
_UPDATE_ADMIN_METADATA = sa.update(_AM).where(
    _AM.c.id == sa.bindparam('b_id')).values(
    value=sa.bindparam('v_value'), updated_at=sa.bindparam('v_now'))


def admin_metadata_get(session, volume_id, key):
    """``(row id, value)`` of the volume's admin metadata ``key``, or
    None."""
    return session.execute(_ADMIN_METADATA, {
        'b_volume_id': volume_id, 'b_key': key}).first()


def admin_metadata_set(session, volume_id, key, value, update=True):
    """Write admin metadata ``key`` (only if absent without ``update``),
    under the volume's row lock taken by the caller."""
    row = admin_metadata_get(session, volume_id, key)
    if row is None:
        session.execute(_INSERT_ADMIN_METADATA, {
            'volume_id': volume_id, 'key': key, 'value': value,
            'created_at': utils.utcnow()})
    elif update and row.value != value:
        session.execute(_UPDATE_ADMIN_METADATA, {
            'b_id': row.id, 'v_value': value, 'v_now': utils.utcnow()})


# -- the type row lock and its encryption -------------------------------------
#
# A type's encryption may change only while no volume uses the type; the
# type row is the lock (see ``types``).

def lock_type(session, type_id, read=False):
    """Lock the type's row (``read``: FOR SHARE); returns the type."""
    vtype = session.execute(sa.select(VolumeType).where(
        VolumeType.id == type_id).with_for_update(read=read)
    ).scalar_one_or_none()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    return vtype


def encryption_of(session, type_id):
    """The type's encryption row, or None."""
    return session.execute(sa.select(Encryption).where(
        Encryption.volume_type_id == type_id)).scalar_one_or_none()
