"""Compute quotas: ``instances``, ``cores`` and ``ram`` per project.

Usage is counted from the project's servers that are not deleted (soft
deleted ones count until they are reclaimed) and their flavors. A server
create checks the whole count up front, as Nova does: a ``max_count`` that
does not fit is reduced to what does, and if ``min_count`` does not fit
the request is 403 and creates nothing. The check and the inserts are one
transaction under the project's lock row (see ``nova_lite.quota``).

The other resources of Nova's quota set (``metadata_items``,
``key_pairs``, ``server_groups``, ``server_group_members``, and below
2.57 / 2.36 the injected-file and network ones) are kept and reported so
that clients find them, but nova_lite has nothing they would limit.
"""

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_lite.compute import flavors
from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite import quota
from nova_lite import states

# Resources counted from the servers, in the order Nova reports them.
COUNTED = ('instances', 'cores', 'ram')
CURRENT = COUNTED + ('metadata_items', 'key_pairs', 'server_groups',
                     'server_group_members')
# Below 2.57 (Nova's defaults; nothing here uses them).
INJECTED = {'injected_files': 5, 'injected_file_content_bytes': 10240,
            'injected_file_path_bytes': 255}
# Below 2.36 (Nova's defaults; proxies of the network service).
NETWORK = {'fixed_ips': -1, 'floating_ips': 10, 'security_groups': 10,
           'security_group_rules': 20}
ALL = CURRENT + tuple(INJECTED) + tuple(NETWORK)


def defaults(conf):
    """The limits every project has unless an administrator set its own."""
    values = {name: getattr(conf.quota, name) for name in CURRENT}
    values.update(INJECTED)
    values.update(NETWORK)
    return values


@db_api.context_manager.reader
def _overrides(ctxt, project_id):
    return dict(ctxt.session.execute(
        sa.select(models.Quota.resource, models.Quota.hard_limit).where(
            models.Quota.project_id == project_id)).all())


def limits(ctxt, conf, project_id):
    """The project's limit of every resource."""
    return quota.merge(defaults(conf), _overrides(ctxt, project_id))


def _count(session, project_id):
    rows = session.execute(
        sa.select(models.Instance.flavor_id, sa.func.count()).where(
            models.Instance.project_id == project_id,
            models.Instance.vm_state != states.DELETED,
        ).group_by(models.Instance.flavor_id)).all()
    used = dict.fromkeys(COUNTED, 0)
    for flavor_id, count in rows:
        used['instances'] += count
        flavor = flavors.FLAVORS.get(flavor_id)
        if flavor is not None:
            used['cores'] += flavor.vcpus * count
            used['ram'] += flavor.memory_mb * count
    return used


@db_api.context_manager.reader
def usage(ctxt, project_id):
    """What the project's servers use of each counted resource."""
    return _count(ctxt.session, project_id)


def _fitting(limits, used, flavor, min_count, max_count):
    """How many servers of ``flavor`` fit, up to ``max_count``; 403 when
    not even ``min_count`` do."""
    per_server = {'instances': 1, 'cores': flavor.vcpus,
                  'ram': flavor.memory_mb}
    count = max_count
    overs = []
    for resource in COUNTED:
        room = quota.headroom(limits[resource], used[resource])
        if room is None:
            continue
        fits = room // per_server[resource] if per_server[resource] else (
            max_count)
        if fits < min_count:
            overs.append(resource)
        count = min(count, fits)
    if overs:
        first = overs[0]
        raise exception.TooManyInstances(
            overs=', '.join(overs),
            req=per_server[first] * min_count,
            used=used[first], allowed=limits[first])
    return count


def create_servers(ctxt, conf, flavor, min_count, max_count, create_one):
    """Create as many servers as fit (``create_one(index, count)`` inserts
    one), between ``min_count`` and ``max_count``, in one transaction
    under the project's quota lock. Returns what ``create_one`` returned,
    in order; raises ``TooManyInstances`` (403) and creates nothing when
    ``min_count`` does not fit."""
    project_limits = limits(ctxt, conf, ctxt.project_id)
    unlimited = all(project_limits[r] < 0 for r in COUNTED)
    if not unlimited:
        quota.ensure_lock_row(ctxt, models.QuotaLock, ctxt.project_id)
    with db_api.context_manager.writer.using(ctxt) as session:
        count = max_count
        if not unlimited:
            quota.lock(session, models.QuotaLock, ctxt.project_id)
            used = _count(session, ctxt.project_id)
            count = _fitting(project_limits, used, flavor, min_count,
                             max_count)
        return [create_one(index, count) for index in range(count)]


# Two administrators setting a new resource's limit at once: the second
# INSERT meets the first's row; it is retried as an UPDATE.
@oslo_db_api.wrap_db_retry(max_retries=3, exception_checker=lambda e:
                           isinstance(e, db_exc.DBDuplicateEntry))
@db_api.context_manager.writer
def update(ctxt, conf, project_id, values, force=False):
    """Set the project's own limits (``values``: resource -> limit).
    Unless ``force``, a counted resource's limit may not go below its
    usage (400)."""
    if not force:
        used = _count(ctxt.session, project_id)
        for resource, limit in values.items():
            if resource in used:
                quota.check_limit_update(resource, limit, used[resource])
    table = models.Quota.__table__
    for resource, limit in values.items():
        changed = ctxt.session.execute(
            sa.update(table).where(table.c.project_id == project_id,
                                   table.c.resource == resource).values(
                hard_limit=limit)).rowcount
        if not changed:
            ctxt.session.add(models.Quota(project_id=project_id,
                                          resource=resource,
                                          hard_limit=limit))


@db_api.context_manager.writer
def delete(ctxt, project_id):
    """Drop the project's own limits: the defaults apply again."""
    ctxt.session.execute(sa.delete(models.Quota).where(
        models.Quota.project_id == project_id))
