"""Quotas: the rules the compute and block-storage quotas share.

A project's limit of a resource is, first found: the project's own row
(set by an administrator with ``os-quota-sets``), the quota class
``default`` (block storage's ``os-quota-class-sets``), the ``[quota]``
option. -1 is unlimited.

Usage is counted from the resources themselves (servers and their
flavors, volumes and their sizes) inside the transaction that creates new
ones, never kept as a counter: a process that dies leaves no usage behind,
and a usage figure is never out of date. Two creations in one project must
not both take the last unit, so a creation first locks its project's row
of a lock table (``SELECT ... FOR UPDATE``; SQLite's writers are already
serialized by ``BEGIN IMMEDIATE``), then counts and inserts in the same
transaction. The lock row is inserted, once per project, in a transaction
of its own before the creation's (``ensure_lock_row``): inserting it in the
creation's own transaction would make two first creations deadlock on
MariaDB's gap locks.

The compute quotas are ``nova_lite.compute.quotas``, the block-storage
quotas ``nova_lite.volume.quotas``.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite.i18n import _

UNLIMITED = -1
# The largest limit either API accepts (the database's INT).
MAX_LIMIT = 2 ** 31 - 1


def ensure_lock_row(ctxt, model, project_id):
    """The project's row of lock table ``model`` exists (in a transaction
    of its own, outside the caller's)."""
    with db_api.context_manager.reader.independent.using(ctxt) as session:
        if session.execute(sa.select(model.project_id).where(
                model.project_id == project_id)).first() is not None:
            return
    try:
        with db_api.context_manager.writer.independent.using(
                ctxt) as session:
            session.add(model(project_id=project_id))
    except db_exc.DBDuplicateEntry:
        pass    # another request of the project inserted it meanwhile


def lock(session, model, project_id):
    """Lock the project's row of ``model`` until the transaction ends.
    Must be the transaction's first statement (on MariaDB, a consistent
    read before it would fix the snapshot the usage is counted in)."""
    found = session.execute(sa.select(model.project_id).where(
        model.project_id == project_id).with_for_update()).first()
    if found is None:
        # ensure_lock_row was not called first: a programming error.
        raise RuntimeError('no quota lock row for project %s' % project_id)


def parse_limit(value, name):
    """A limit from a request body: an integer or a string of one (the
    schema checked the form), from -1 to ``MAX_LIMIT``; 400 otherwise."""
    limit = int(value)
    if not UNLIMITED <= limit <= MAX_LIMIT:
        raise exception.InvalidInput(reason=_(
            'Quota limit %(value)s for %(name)s must be in the range of -1 '
            'and %(max)d.') % {'value': value, 'name': name,
                               'max': MAX_LIMIT})
    return limit


def headroom(limit, used):
    """How much more of a resource fits (None: unlimited)."""
    if limit is None or limit < 0:
        return None
    return max(limit - used, 0)


def check_limit_update(resource, limit, in_use):
    """An administrator's new limit must not be below the usage (unless
    forced): Nova's and Cinder's validation of a quota update."""
    if limit >= 0 and limit < in_use:
        raise exception.QuotaBelowUsage(limit=limit, resource=resource,
                                        minimum=in_use)


def merge(defaults, *overrides):
    """``defaults`` updated with each mapping of ``overrides`` in turn,
    keeping only the resources ``defaults`` names."""
    limits = dict(defaults)
    for override in overrides:
        limits.update((k, v) for k, v in override.items() if k in limits)
    return limits
