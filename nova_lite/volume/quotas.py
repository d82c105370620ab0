"""Block-storage quotas: ``volumes`` and ``gigabytes`` per project and per
volume type, and the size of one volume.

As Cinder reports them: ``volumes``, ``snapshots``, ``gigabytes``,
``backups``, ``backup_gigabytes``, ``groups``, ``per_volume_gigabytes``,
and ``volumes_<type>``, ``gigabytes_<type>``, ``snapshots_<type>`` for
every volume type (unlimited unless set). Usage is counted from the
project's volumes that are not deleted, in the transaction that creates
one, under the project's lock row (see ``nova_lite.quota``). A limit is
the project's own, else the quota class ``default``'s, else the ``[quota]``
option. nova_lite keeps no snapshots, backups or groups: their usage is 0.
"""

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite import quota
from nova_lite.volume import status as st

BASE = ('volumes', 'snapshots', 'gigabytes', 'backups', 'backup_gigabytes',
        'groups', 'per_volume_gigabytes')
PER_TYPE = ('volumes', 'gigabytes', 'snapshots')
DEFAULT_CLASS = 'default'


@db_api.context_manager.reader
def _type_names(ctxt):
    return ctxt.session.execute(sa.select(models.VolumeType.name).order_by(
        models.VolumeType.name)).scalars().all()


@db_api.context_manager.reader
def _class_overrides(ctxt, class_name):
    table = models.VolumeQuotaClass
    return dict(ctxt.session.execute(
        sa.select(table.resource, table.hard_limit).where(
            table.class_name == class_name)).all())


@db_api.context_manager.reader
def _project_overrides(ctxt, project_id):
    table = models.VolumeQuota
    return dict(ctxt.session.execute(
        sa.select(table.resource, table.hard_limit).where(
            table.project_id == project_id)).all())


def _configured(ctxt, conf):
    values = {name: getattr(conf.quota, name) for name in BASE}
    for type_name in _type_names(ctxt):
        for prefix in PER_TYPE:
            values['%s_%s' % (prefix, type_name)] = quota.UNLIMITED
    return values


def class_limits(ctxt, conf, class_name=DEFAULT_CLASS):
    """A quota class's limits (the defaults, for any other class name,
    where it sets none)."""
    configured = _configured(ctxt, conf)
    return quota.merge(configured, _class_overrides(ctxt, DEFAULT_CLASS),
                       _class_overrides(ctxt, class_name))


def defaults(ctxt, conf):
    return class_limits(ctxt, conf)


def limits(ctxt, conf, project_id):
    return quota.merge(defaults(ctxt, conf),
                       _project_overrides(ctxt, project_id))


def _count(session, project_id):
    rows = session.execute(
        sa.select(models.VolumeType.name, sa.func.count(),
                  sa.func.coalesce(sa.func.sum(models.Volume.size), 0))
        .select_from(models.Volume)
        .outerjoin(models.VolumeType,
                   models.VolumeType.id == models.Volume.volume_type_id)
        .where(models.Volume.project_id == project_id,
               models.Volume.deleted.is_(False),
               # A migration's temporary volume uses no quota (Cinder's
               # use_quota=False).
               sa.or_(models.Volume.migration_status.is_(None),
                      ~models.Volume.migration_status.startswith(
                          st.TARGET_PREFIX, autoescape=True)))
        .group_by(models.VolumeType.name)).all()
    used = {'volumes': 0, 'gigabytes': 0}
    for type_name, count, size in rows:
        used['volumes'] += count
        used['gigabytes'] += int(size)
        if type_name is not None:
            used['volumes_%s' % type_name] = count
            used['gigabytes_%s' % type_name] = int(size)
    return used


@db_api.context_manager.reader
def usage(ctxt, project_id):
    """What the project's volumes use (resources not named: 0)."""
    return _count(ctxt.session, project_id)


def check_size(project_limits, size):
    """``per_volume_gigabytes`` (400)."""
    limit = project_limits['per_volume_gigabytes']
    if limit >= 0 and size > limit:
        raise exception.VolumeSizeExceedsLimit(size=size, limit=limit)


def creation_check(ctxt, conf, size, type_name=None):
    """Checks a new volume against the project's limits. Returns the
    function ``volume_create`` runs first in its transaction: it locks the
    project's row, counts, and raises 413 when the volume does not fit
    (None when every limit that applies is unlimited)."""
    project_limits = limits(ctxt, conf, ctxt.project_id)
    check_size(project_limits, size)
    wanted = [('volumes', 1), ('gigabytes', size)]
    if type_name is not None:
        wanted += [('volumes_%s' % type_name, 1),
                   ('gigabytes_%s' % type_name, size)]
    return _check(ctxt, ctxt.project_id, project_limits, wanted)


def extend_check(ctxt, conf, project_id, new_size, increase,
                 type_name=None):
    """Checks the extend of a volume of ``project_id`` by ``increase`` GiB
    to ``new_size``: ``per_volume_gigabytes`` at once (400), then returns
    the function ``volume_extend_start`` runs first in its transaction
    (``gigabytes`` and the type's, 413), or None."""
    project_limits = limits(ctxt, conf, project_id)
    check_size(project_limits, new_size)
    wanted = [('gigabytes', increase)]
    if type_name is not None:
        wanted.append(('gigabytes_%s' % type_name, increase))
    return _check(ctxt, project_id, project_limits, wanted)


def retype_check(ctxt, conf, project_id, size, type_name):
    """Checks a volume of ``project_id`` given type ``type_name``
    against that type's limits (Cinder reserves them at retype); the
    function ``volume_retype`` runs first in its transaction, or None."""
    return _check(ctxt, project_id, limits(ctxt, conf, project_id),
                  [('volumes_%s' % type_name, 1),
                   ('gigabytes_%s' % type_name, size)])


def _check(ctxt, project_id, project_limits, wanted):
    """The in-transaction check of ``wanted`` ((resource, amount), ...)."""
    if all(project_limits.get(resource, quota.UNLIMITED) < 0
           for resource, _amount in wanted):
        return None     # nothing to count against
    quota.ensure_lock_row(ctxt, models.VolumeQuotaLock, project_id)

    def check(session):
        quota.lock(session, models.VolumeQuotaLock, project_id)
        used = _count(session, project_id)
        for resource, amount in wanted:
            limit = project_limits.get(resource, quota.UNLIMITED)
            room = quota.headroom(limit, used.get(resource, 0))
            if room is None or amount <= room:
                continue
            if resource.startswith('volumes'):
                raise exception.VolumeLimitExceeded(allowed=limit,
                                                    name=resource)
            raise exception.VolumeSizeExceedsAvailableQuota(
                name=resource, requested=amount, quota=limit,
                consumed=used.get(resource, 0))
    return check


def resources(ctxt, conf):
    """The names a quota set may have (base and per existing type)."""
    return set(_configured(ctxt, conf))


def _write(session, model, owner_column, owner, values):
    table = model.__table__
    for resource, limit in values.items():
        changed = session.execute(
            sa.update(table).where(table.c[owner_column] == owner,
                                   table.c.resource == resource).values(
                hard_limit=limit)).rowcount
        if not changed:
            session.add(model(**{owner_column: owner, 'resource': resource,
                                 'hard_limit': limit}))


_retry_duplicate = oslo_db_api.wrap_db_retry(
    max_retries=3,
    exception_checker=lambda e: isinstance(e, db_exc.DBDuplicateEntry))


@_retry_duplicate
@db_api.context_manager.writer
def update(ctxt, project_id, values, validate=False):
    """Set the project's own limits; with ``validate`` (Cinder's
    ``skip_validation: false``) a limit may not go below the usage."""
    if validate:
        used = _count(ctxt.session, project_id)
        for resource, limit in values.items():
            quota.check_limit_update(resource, limit, used.get(resource, 0))
    _write(ctxt.session, models.VolumeQuota, 'project_id', project_id,
           values)


@db_api.context_manager.writer
def delete(ctxt, project_id):
    ctxt.session.execute(sa.delete(models.VolumeQuota).where(
        models.VolumeQuota.project_id == project_id))


@_retry_duplicate
@db_api.context_manager.writer
def class_update(ctxt, class_name, values):
    _write(ctxt.session, models.VolumeQuotaClass, 'class_name', class_name,
           values)
