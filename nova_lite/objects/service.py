"""The ``services`` table: every running conductor and compute, its
heartbeat, and whether it is up.

The table also keeps the administrator's status (enabled or disabled, and
why) of the block-storage services that ``/v3/os-services`` shows under
Cinder's names (``cinder-volume``, ``cinder-scheduler``; see
``nova_lite.volume.services``). Those status rows have no heartbeat of
their own and are not nova_lite processes: ``Service.list()`` without a
binary leaves them out.
"""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils
from oslo_versionedobjects import fields
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.objects import base

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


# The reads: Core statements on the table, built once, in connection-mode
# transactions (no ORM Session); objects are loaded from the result rows.
_SERVICES = models.Service.__table__
_COLUMNS = tuple(_SERVICES.c.keys())
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


@db_api.context_manager.reader.connection
def _get_by_host_and_binary(context, host, binary):
    """The service's row (values in the order of ``_COLUMNS``) or None."""
    return context.connection.execute(
        _BY_HOST_AND_BINARY, {'host': host, 'binary': binary}).one_or_none()


@db_api.context_manager.reader.connection
def _get_by_uuid(context, uuid):
    return context.connection.execute(
        _BY_UUID, {'uuid': uuid}).one_or_none()


@db_api.context_manager.reader.connection
def _get_all(context, binary=None):
    if binary:
        return context.connection.execute(
            _ALL_OF_BINARY, {'binary': binary}).all()
    return context.connection.execute(_ALL).all()


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
    def get_by_host_and_binary(cls, context, host, binary):
        db_obj = _get_by_host_and_binary(context, host, binary)
        if db_obj is None:
            raise exception.ServiceNotFound(service_id='%s/%s' % (
                binary, host))
        return cls._from_db_row(context, None, db_obj, _COLUMNS)

    @classmethod
    def list(cls, context, binary=None):
        return [cls._from_db_row(context, None, s, _COLUMNS)
                for s in _get_all(context, binary)]

    @classmethod
    def register(cls, context, host, binary, topic):
        """Create or refresh the row of a starting service."""
        values = {'version': SERVICE_VERSION, 'topic': topic,
                  'last_seen_up': base.utcnow()}
        db_obj = _get_by_host_and_binary(context, host, binary)
        if db_obj is None:
            values.update(host=host, binary=binary,
                          uuid=uuidutils.generate_uuid())
            try:
                db_obj = _create(context, values)
            except Exception:
                # Another process registered the same (host, binary) at the
                # same moment: the unique constraint settled it; refresh.
                db_obj = _get_by_host_and_binary(context, host, binary)
                if db_obj is None:
                    raise
                db_obj = _update(context, db_obj.id, values)
        else:
            db_obj = _update(context, db_obj.id, values)
        return cls._from_db_object(context, None, db_obj)

    @classmethod
    def set_status(cls, context, host, binary, disabled, reason=None):
        """Record an administrator's status of a block-storage service
        (a status row, created on first use; no heartbeat)."""
        if binary not in BLOCK_STORAGE_BINARIES:
            raise exception.ServiceNotFound(service_id='%s/%s' % (
                binary, host))
        values = {'disabled': disabled, 'disabled_reason': reason}
        db_obj = _get_by_host_and_binary(context, host, binary)
        if db_obj is None:
            try:
                db_obj = _create(context, dict(
                    values, host=host, binary=binary, topic=binary,
                    version=0, uuid=uuidutils.generate_uuid()))
                return cls._from_db_object(context, None, db_obj)
            except Exception:
                # Created by a concurrent request: update that row.
                db_obj = _get_by_host_and_binary(context, host, binary)
                if db_obj is None:
                    raise
        db_obj = _update(context, db_obj.id, values)
        return cls._from_db_object(context, None, db_obj)

    @classmethod
    def get_by_uuid(cls, context, uuid):
        """A nova_lite service by its uuid (2.53's id);
        ``ServiceNotFound`` (404) otherwise."""
        db_obj = _get_by_uuid(context, uuid)
        if db_obj is None:
            raise exception.ServiceNotFound(service_id=uuid)
        return cls._from_db_row(context, None, db_obj, _COLUMNS)

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

    def heartbeat(self):
        now = base.utcnow()
        _update(self._context, self.id, {'last_seen_up': now})
        self.last_seen_up = now
        self.obj_reset_changes(['last_seen_up'])

    def is_up(self, down_time):
        """True if the last heartbeat is less than ``down_time`` s old."""
        if self.forced_down:
            return False
        last = self.last_seen_up or self.updated_at or self.created_at
        if last is None:
            return False
        last = last.replace(tzinfo=None)
        elapsed = timeutils.utcnow().replace(tzinfo=None) - last
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
