"""A volume's migration to another backend: the rows of
``nova_lite.volume.migration``'s steps.

The volume migrated (the *source*) carries the migration in its
``migration_status`` (``status.MIGRATING``, then ``success`` or
``error``); the temporary volume on the target backend (the *target*)
carries ``target:<source id>``. Every step is a compare-and-swap on the
source's ``migration_status`` (and, for the settling of a stalled one, on
its ``updated_at``: the last move); the end (``migration_finish``) is one
transaction that gives the source the target's storage and makes the
target, which then names the old storage, a volume being deleted.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite import utils
from nova_lite.volume.db import common
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import status as st

Volume = models.Volume
Attachment = models.VolumeAttachment
_V = Volume.__table__
_A = Attachment.__table__

# What a migration moves from the target to the source (and the source's
# to the target, whose storage is then deleted with it): the storage, the
# backend it is on, and the type (a retype's migration makes the target
# of the new type).
STORAGE_COLUMNS = ('host', 'provider_location', 'name_id',
                   'availability_zone', 'volume_type_id', 'multiattach')

_LIVE = sa.select(_A.c.id).where(
    _A.c.volume_id == sa.bindparam('b_volume_id'), _A.c.deleted.is_(False),
    common.in_(_A.c.attach_status, st.LIVE_ATTACHMENT))


def _live_attachments(session, volume_id):
    return session.execute(_LIVE, {'b_volume_id': volume_id}).scalars().all()


@db_api.context_manager.writer
def migration_start(ctxt, volume_id, dest_backend, quota_check=None):
    """The start: the source ``starting``, as one compare-and-swap from
    available or in-use, no migration holding it, on another backend than
    ``dest_backend``, and with at most one live attachment (counted under
    the volume's row lock: a volume attached to two servers is not
    migrated). True if this caller won; ``VolumeMigrationAttached`` for a
    volume attached more than once. ``quota_check(session)`` runs first
    (a retype's: the new type's limits)."""
    session = ctxt.session
    if quota_check is not None:
        quota_check(session)
    common.lock_volume(session, volume_id)
    if len(_live_attachments(session, volume_id)) > 1:
        raise exception.VolumeMigrationAttached(volume_id=volume_id)
    result = session.execute(common.update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        common.in_(Volume.status, st.MIGRATE_FROM),
        common.not_migrating(Volume.migration_status),
        sa.or_(Volume.host.is_(None), Volume.host != dest_backend)).values(
        migration_status=st.MIGRATION_STARTING))
    return result.rowcount == 1


def target_create(ctxt, source, dest_backend, volume_type_id, multiattach):
    """The temporary volume on ``dest_backend``: ``creating``, the
    source's name, size, project and user, the type it will have after
    the migration (``volume_type_id``, ``multiattach``), no quota (its
    ``migration_status`` leaves it out of the counts)."""
    return volume_db.volume_create(ctxt, {
        'project_id': source.project_id,
        'user_id': source.user_id,
        'display_name': source.display_name,
        'display_description': source.display_description,
        'size': source.size,
        'multiattach': multiattach,
        'bootable': source.bootable,
        'volume_type_id': volume_type_id,
        'host': dest_backend,
        'availability_zone': source.availability_zone,
        'migration_status': st.migration_target(source.id),
    })


@db_api.context_manager.writer
def migration_move(ctxt, volume_id, expected, new, updated_at=False):
    """The source's ``migration_status`` from ``expected`` (a value or a
    tuple of them) to ``new``; with ``updated_at`` (a datetime or None),
    only if the row has not moved since (the settling of a stalled
    migration). True if this caller won."""
    expected = expected if isinstance(expected, tuple) else (expected,)
    query = common.update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        common.in_(Volume.migration_status, expected))
    if updated_at is not False:
        query = query.where(Volume.updated_at.is_(None) if updated_at is None
                            else Volume.updated_at == updated_at)
    result = ctxt.session.execute(query.values(
        migration_status=new, updated_at=utils.utcnow()))
    return result.rowcount == 1


@db_api.context_manager.writer
def migration_touch(ctxt, volume_id):
    """The heartbeat of a migration copying its data: the source's last
    move is now. False if the migration is no longer ``migrating`` (its
    settling took it over): the copy stops."""
    result = ctxt.session.execute(common.update(Volume).where(
        Volume.id == volume_id, Volume.deleted.is_(False),
        Volume.migration_status == st.MIGRATION_MIGRATING).values(
        updated_at=utils.utcnow()))
    return result.rowcount == 1


@db_api.context_manager.reader
def target_of(ctxt, source_id):
    """The live target volume of ``source_id``'s migration (the ORM row),
    or None."""
    return ctxt.session.execute(sa.select(Volume).where(
        Volume.deleted.is_(False),
        Volume.migration_status == st.migration_target(source_id))
    ).scalars().first()


@db_api.context_manager.reader
def target_attachments(ctxt, target_id):
    """Ids of the target's live attachments."""
    return _live_attachments(ctxt.session, target_id)


@db_api.context_manager.reader
def migrations_stalled(ctxt, before):
    """Sources whose migration is in progress and that have not moved
    since ``before`` (naive UTC), oldest first."""
    return ctxt.session.execute(sa.select(Volume).where(
        Volume.deleted.is_(False),
        common.in_(Volume.migration_status, st.MIGRATING),
        sa.or_(Volume.updated_at.is_(None), Volume.updated_at < before))
        .order_by(Volume.updated_at)).scalars().all()


@db_api.context_manager.writer
def target_drop_start(ctxt, target_id):
    """Roll a target back: ``deleting`` (a volume like any other being
    deleted from then on), only while it has no live attachment and no
    one else is deleting it. True if this caller won."""
    live = sa.exists().where(
        _A.c.volume_id == _V.c.id, _A.c.deleted.is_(False),
        common.in_(_A.c.attach_status, st.LIVE_ATTACHMENT))
    result = ctxt.session.execute(sa.update(_V).where(
        _V.c.id == target_id, _V.c.deleted.is_(False),
        _V.c.migration_status.startswith(st.TARGET_PREFIX, autoescape=True),
        common.not_in(_V.c.status, (st.DELETING, st.DELETED)),
        ~live).values(status=st.DELETING, migration_status=None,
                      updated_at=utils.utcnow()))
    return result.rowcount == 1


@db_api.context_manager.writer
def migration_finish(ctxt, source_id, target_id):
    """The end of a migration, in one transaction: the source takes the
    target's storage (``STORAGE_COLUMNS``) and gives it its own, its
    ``migration_status`` is ``success``, the target's attachments (the
    swap's) become the source's, its status is recomputed from them; the
    target, now naming the old storage, is ``deleting``. Only while the
    source is ``migrating`` (or ``completing``) and the target is its
    target; True if this caller did it."""
    session = ctxt.session
    # Both rows, locked in id order (two finishes never wait on each
    # other crosswise).
    rows = {}
    for volume_id in sorted((source_id, target_id)):
        rows[volume_id] = session.execute(
            sa.select(*[_V.c[c] for c in ('id', 'migration_status') +
                        STORAGE_COLUMNS]).where(
                _V.c.id == volume_id, _V.c.deleted.is_(False))
            .with_for_update()).one_or_none()
    source, target = rows[source_id], rows[target_id]
    if source is None or target is None:
        return False
    if source.migration_status not in (st.MIGRATION_MIGRATING,
                                       st.MIGRATION_COMPLETING):
        return False
    if target.migration_status != st.migration_target(source_id):
        return False
    storage = {c: getattr(target, c) for c in STORAGE_COLUMNS}
    storage['name_id'] = target.name_id or target.id
    old = {c: getattr(source, c) for c in STORAGE_COLUMNS}
    old['name_id'] = source.name_id or source.id
    now = utils.utcnow()
    session.execute(sa.update(_V).where(_V.c.id == source_id).values(
        migration_status=st.MIGRATION_SUCCESS, updated_at=now, **storage))
    session.execute(sa.update(_V).where(_V.c.id == target_id).values(
        status=st.DELETING, migration_status=None, updated_at=now, **old))
    session.execute(sa.update(_A).where(
        _A.c.volume_id == target_id, _A.c.deleted.is_(False)).values(
        volume_id=source_id))
    common.recompute(session, source_id)
    return True


@db_api.context_manager.reader
def orphan_targets(ctxt, before):
    """Live temporary volumes whose migration is no longer in progress
    (it ended, or its volume is gone) and that have not moved since
    ``before``: what a process that died between rolling a migration
    back and deleting its temporary volume left."""
    source = orm.aliased(Volume)
    in_progress = sa.exists().where(
        Volume.migration_status == (
            sa.literal(st.TARGET_PREFIX, sa.String) + source.id),
        source.deleted.is_(False),
        common.in_(source.migration_status, st.MIGRATING))
    return ctxt.session.execute(sa.select(Volume).where(
        Volume.deleted.is_(False),
        Volume.migration_status.startswith(st.TARGET_PREFIX,
                                           autoescape=True),
        sa.or_(Volume.updated_at.is_(None), Volume.updated_at < before),
        ~in_progress)).scalars().all()
