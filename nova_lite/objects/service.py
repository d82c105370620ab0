"""The ``services`` table: every running conductor and compute, its
heartbeat, and whether it is up.

Liveness (doc/source/contributor/liveness.rst)
----------------------------------------------

A service is up when it is not forced down and its last heartbeat is less
than ``service_down_time`` old, Nova's rule, with two changes that make a
stall of the database itself count against nobody:

* time is the database's: a heartbeat writes the database server's clock
  (``db_api.utcnow()``), and a reader compares it with that clock. A
  heartbeat that waited on a stalled server is stamped when the server took
  it, and the clocks of the hosts do not matter;
* the database's silences are not counted. Every write of a heartbeat, and
  of the tick that API processes write (``tick``), also moves the one
  ``service_clock`` row: ``ticked_at`` is the last such write, and a gap
  since the previous one longer than ``max_gap_ms`` (``MAX_GAP_INTERVALS``
  report intervals, while every process writes once per interval) is a
  time in which the database took no write from anyone: its excess is
  added to ``excluded_ms``. A heartbeat records ``excluded_ms`` as it was
  then; a reader subtracts what was excluded since from the heartbeat's
  age, and counts a gap still open when it reads (no write for longer than
  ``max_gap_ms``) as excluded too.

So a service is judged by what it did while the database took writes from
others: one that stops beating while others beat goes down after
``service_down_time``; a stall of the database, however long, leaves every
service's age where it was when the stall began (plus at most
``max_gap_ms``) until it can beat again. A reader that cannot reach the
database judges nothing (its request fails). A service row without a
heartbeat since the clock exists (``excluded_ms`` NULL) is judged by
Nova's rule alone.

The table also keeps the administrator's status (enabled or disabled, and
why) of the block-storage services that ``/v3/os-services`` shows under
Cinder's names (``cinder-volume``, ``cinder-scheduler``; see
``nova_lite.volume.services``). Those status rows have no heartbeat of
their own and are not nova_lite processes: ``Service.list()`` without a
binary leaves them out.
"""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
from oslo_versionedobjects import fields
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.objects import base
from nova_lite import utils

# Bump when a compute or conductor gains something an older peer cannot do;
# the API checks the minimum over all services before using a new feature.
# History:
#   1: nova_lite's first service version.
#   2: compute hosts honour a mapping's ``attach_mode`` (the connector's
#      ``mode``, read-only guest devices): the API refuses ``ro`` for
#      servers on older hosts (409).
SERVICE_VERSION = 2

# The first compute service version that honours ``attach_mode``.
ATTACH_MODE_SERVICE_VERSION = 2

COMPUTE_BINARY = 'nova-lite-compute'
CONDUCTOR_BINARY = 'nova-lite-conductor'

# Cinder's names of the block-storage services (status rows only).
VOLUME_BINARY = 'cinder-volume'
SCHEDULER_BINARY = 'cinder-scheduler'
BLOCK_STORAGE_BINARIES = (VOLUME_BINARY, SCHEDULER_BINARY)


# The reads: Core statements on the table, built once; objects are loaded
# from the result rows by column name.
_SERVICES = models.Service.__table__
_BY_HOST_AND_BINARY = sa.select(_SERVICES).where(
    _SERVICES.c.host == sa.bindparam('host'),
    _SERVICES.c.binary == sa.bindparam('binary'))
_ALL = sa.select(_SERVICES).where(
    _SERVICES.c.binary.not_in(BLOCK_STORAGE_BINARIES)).order_by(
    _SERVICES.c.id)
_ALL_OF_BINARY = sa.select(_SERVICES).where(
    _SERVICES.c.binary == sa.bindparam('binary')).order_by(_SERVICES.c.id)
_BY_UUID = sa.select(_SERVICES).where(
    _SERVICES.c.uuid == sa.bindparam('uuid'),
    _SERVICES.c.binary.not_in(BLOCK_STORAGE_BINARIES))


# A gap between two writes to the clock longer than this many report
# intervals (every process writes once per interval) is a silence of the
# database (the module docstring).
MAX_GAP_INTERVALS = 2
_CLOCK = models.ServiceClock.__table__
_CLOCK_ID = 1
_CLOCK_NOW = sa.select(
    _CLOCK.c.ticked_at, _CLOCK.c.excluded_ms, _CLOCK.c.max_gap_ms,
    db_api.utcnow()).where(_CLOCK.c.id == _CLOCK_ID)
_CLOCK_FOR_TICK = _CLOCK_NOW.with_for_update()
_NOW = sa.select(db_api.utcnow())


def _excess_ms(gap, max_gap_ms):
    """How much of ``gap`` (a timedelta between two writes) is beyond
    ``max_gap_ms``: a time the database took no write."""
    return max(0, int(gap.total_seconds() * 1000) - max_gap_ms)


def _read_clock(session):
    """(the database's now, excluded_ms as of now) as a reader counts them
    (a gap still open beyond its max_gap_ms counts as excluded); None for
    excluded_ms when there is no clock yet."""
    row = session.execute(_CLOCK_NOW).first()
    if row is None:
        return session.execute(_NOW).scalar(), None
    ticked_at, excluded_ms, max_gap_ms, now = row
    return now, excluded_ms + _excess_ms(now - ticked_at, max_gap_ms)


class _NoClock(Exception):
    pass


def _tick_in(session, max_gap_ms):
    """Record a write in the clock (its row locked until the transaction
    ends); returns (the database's now, excluded_ms after the tick)."""
    row = session.execute(_CLOCK_FOR_TICK).first()
    if row is None:
        raise _NoClock()
    ticked_at, excluded_ms, _old_max_gap, now = row
    excluded_ms += _excess_ms(now - ticked_at, max_gap_ms)
    session.execute(
        sa.update(_CLOCK).where(_CLOCK.c.id == _CLOCK_ID).values(
            ticked_at=max(now, ticked_at), excluded_ms=excluded_ms,
            max_gap_ms=max_gap_ms))
    return now, excluded_ms


@db_api.context_manager.writer
def _create_clock(context, max_gap_ms):
    now = context.session.execute(_NOW).scalar()
    context.session.execute(sa.insert(_CLOCK).values(
        id=_CLOCK_ID, ticked_at=now, excluded_ms=0, max_gap_ms=max_gap_ms))


@db_api.context_manager.writer
def _tick(context, max_gap_ms):
    return _tick_in(context.session, max_gap_ms)


@db_api.context_manager.writer
def _beat(context, service_id, max_gap_ms):
    now, excluded_ms = _tick_in(context.session, max_gap_ms)
    context.session.execute(
        sa.update(_SERVICES).where(_SERVICES.c.id == service_id).values(
            last_seen_up=now, excluded_ms=excluded_ms))
    return now, excluded_ms


def _with_clock(write, context, report_interval, *args):
    """Run ``write`` (a ``_tick_in`` writer), creating the clock's row
    first if there is none yet."""
    max_gap_ms = int(MAX_GAP_INTERVALS * report_interval * 1000)
    try:
        return write(context, *args, max_gap_ms=max_gap_ms)
    except _NoClock:
        try:
            _create_clock(context, max_gap_ms)
        except db_exc.DBDuplicateEntry:
            pass    # another process created it meanwhile
        return write(context, *args, max_gap_ms=max_gap_ms)


def tick(context, report_interval):
    """Tell the clock that the database takes writes (the API processes,
    which have no heartbeat of their own, every ``report_interval``
    seconds: while any nova_lite process can write, time is counted)."""
    _with_clock(_tick, context, report_interval)


@db_api.context_manager.reader
def _get_by_host_and_binary(context, host, binary):
    """The service's row (by column name) or None,
    and the clock (``_read_clock``)."""
    row = context.session.execute(
        _BY_HOST_AND_BINARY,
        {'host': host, 'binary': binary}).mappings().one_or_none()
    return row, (_read_clock(context.session) if row is not None
                 else None)


@db_api.context_manager.reader
def _get_by_uuid(context, uuid):
    row = context.session.execute(
        _BY_UUID, {'uuid': uuid}).mappings().one_or_none()
    return row, (_read_clock(context.session) if row is not None
                 else None)


@db_api.context_manager.reader
def _get_all(context, binary=None):
    if binary:
        rows = context.session.execute(
            _ALL_OF_BINARY, {'binary': binary}).mappings().all()
    else:
        rows = context.session.execute(_ALL).mappings().all()
    return rows, (_read_clock(context.session) if rows else None)


@db_api.context_manager.writer
def _create(context, values):
    service = models.Service(**values)
    context.session.add(service)
    context.session.flush()
    return service


@db_api.context_manager.writer
def _update(context, service_id, values):
    context.session.execute(
        sa.update(models.Service).where(models.Service.id == service_id)
        .values(**values))
    return context.session.get(models.Service, service_id)


@db_api.context_manager.reader
def _min_version(context, binary):
    return context.session.execute(
        sa.select(sa.func.min(models.Service.version)).filter_by(
            binary=binary, forced_down=False)).scalar()


@base.NovaLiteObjectRegistry.register
class Service(base.NovaLiteObject, base.NovaLiteTimestampObject):
    VERSION = '1.0'

    fields = dict(base.NovaLiteTimestampObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'host': fields.StringField(),
        'binary': fields.StringField(),
        'topic': fields.StringField(nullable=True),
        'version': fields.IntegerField(),
        'disabled': fields.BooleanField(),
        'disabled_reason': fields.StringField(nullable=True),
        'forced_down': fields.BooleanField(),
        'last_seen_up': fields.DateTimeField(nullable=True),
    })

    @classmethod
    def _from_row_and_clock(cls, context, row, clock):
        obj = cls._from_db_row(context, None, row)
        # Not fields: what is_up needs of the row and the clock.
        obj._excluded_at_beat = row['excluded_ms']
        obj._clock = clock
        return obj

    @classmethod
    def get_by_host_and_binary(cls, context, host, binary):
        db_obj, clock = _get_by_host_and_binary(context, host, binary)
        if db_obj is None:
            raise exception.ServiceNotFound(service_id='%s/%s' % (
                binary, host))
        return cls._from_row_and_clock(context, db_obj, clock)

    @classmethod
    def list(cls, context, binary=None):
        rows, clock = _get_all(context, binary)
        return [cls._from_row_and_clock(context, s, clock) for s in rows]

    @classmethod
    def register(cls, context, host, binary, topic):
        """Create or refresh the row of a starting service."""
        values = {'version': SERVICE_VERSION, 'topic': topic,
                  'last_seen_up': utils.utcnow()}
        db_obj, _clock = _get_by_host_and_binary(context, host, binary)
        if db_obj is None:
            values.update(host=host, binary=binary,
                          uuid=uuidutils.generate_uuid())
            try:
                db_obj = _create(context, values)
            except Exception:
                # Another process registered the same (host, binary) at the
                # same moment: the unique constraint settled it; refresh.
                db_obj, _clock = _get_by_host_and_binary(context, host,
                                                         binary)
                if db_obj is None:
                    raise
                db_obj = _update(context, db_obj['id'], values)
        else:
            db_obj = _update(context, db_obj['id'], values)
        return cls._from_db_object(context, None, db_obj)

    @classmethod
    def set_status(cls, context, host, binary, disabled, reason=None):
        """Record an administrator's status of a block-storage service
        (a status row, created on first use; no heartbeat)."""
        if binary not in BLOCK_STORAGE_BINARIES:
            raise exception.ServiceNotFound(service_id='%s/%s' % (
                binary, host))
        values = {'disabled': disabled, 'disabled_reason': reason}
        db_obj, _clock = _get_by_host_and_binary(context, host, binary)
        if db_obj is None:
            try:
                db_obj = _create(context, dict(
                    values, host=host, binary=binary, topic=binary,
                    version=0, uuid=uuidutils.generate_uuid()))
                return cls._from_db_object(context, None, db_obj)
            except Exception:
                # Created by a concurrent request: update that row.
                db_obj, _clock = _get_by_host_and_binary(context, host,
                                                         binary)
                if db_obj is None:
                    raise
        db_obj = _update(context, db_obj['id'], values)
        return cls._from_db_object(context, None, db_obj)

    @classmethod
    def get_by_uuid(cls, context, uuid):
        """A nova_lite service by its uuid (2.53's id);
        ``ServiceNotFound`` (404) otherwise."""
        db_obj, clock = _get_by_uuid(context, uuid)
        if db_obj is None:
            raise exception.ServiceNotFound(service_id=uuid)
        return cls._from_row_and_clock(context, db_obj, clock)

    # What an administrator may change on a nova_lite service
    # (PUT /v2.1/os-services/{id}).
    ADMIN_FIELDS = ('disabled', 'disabled_reason', 'forced_down')

    def update_admin_state(self, **values):
        """Write the administrator's ``ADMIN_FIELDS`` given (the status,
        why it is disabled, forced down: fenced)."""
        unknown = set(values) - set(self.ADMIN_FIELDS)
        if unknown:
            raise ValueError('not an administrator field: %s' %
                             ', '.join(sorted(unknown)))
        _update(self._context, self.id, values)
        for name, value in values.items():
            setattr(self, name, value)
        self.obj_reset_changes(list(values))

    def heartbeat(self, report_interval):
        """Record that this service runs: the database's now as
        ``last_seen_up``, and a tick of the clock (the module docstring).
        ``report_interval``: the seconds between two heartbeats."""
        now, excluded_ms = _with_clock(_beat, self._context,
                                       report_interval, self.id)
        self.last_seen_up = now
        self.obj_reset_changes(['last_seen_up'])
        self._excluded_at_beat = excluded_ms

    def is_up(self, down_time):
        """True unless forced down or its last heartbeat is more than
        ``down_time`` s old, not counting the database's silences since
        (the module docstring)."""
        if self.forced_down:
            return False
        last = self.last_seen_up or self.updated_at or self.created_at
        if last is None:
            return False
        last = last.replace(tzinfo=None)
        now, excluded_ms = getattr(self, '_clock', None) or (None, None)
        if now is None:
            now = utils.utcnow()
        elapsed = now.replace(tzinfo=None) - last
        at_beat = getattr(self, '_excluded_at_beat', None)
        if (self.last_seen_up is not None and at_beat is not None and
                excluded_ms is not None and excluded_ms > at_beat):
            elapsed -= datetime.timedelta(milliseconds=excluded_ms - at_beat)
        return abs(elapsed) <= datetime.timedelta(seconds=down_time)

    @staticmethod
    def get_minimum_version(context, binary):
        return _min_version(context, binary) or 0


def owner_name(binary, host):
    """How a service is named as the owner of work in flight
    (``task_owner`` of mappings and servers): '<binary>:<host>'."""
    return '%s:%s' % (binary, host)


def up_hosts(context, conf, binary=COMPUTE_BINARY):
    """Hosts of enabled, up services of ``binary``, in registration order."""
    return [s.host for s in Service.list(context, binary)
            if not s.disabled and s.is_up(conf.service_down_time)]
