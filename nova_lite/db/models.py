"""SQLAlchemy models: the tables nova_lite keeps, in two groups.

Compute (``services``, ``service_clock``, ``instances``,
``block_device_mappings``, ``instance_actions``, ``instance_actions_events``,
``instance_faults``, ``stale_disks``, ``quotas``, ``quota_locks``) and
block storage
(``volume_types``, ``volume_type_extra_specs``, ``volume_type_projects``,
``encryption``, ``volumes``, ``volume_metadata``, ``volume_attachment``,
``attachment_specs``, ``volume_quotas``, ``volume_quota_classes``,
``volume_quota_locks``)
are separate services that happen to share one database: no foreign key
crosses from one group to the other, and compute code never queries
block-storage tables
(``COMPUTE_TABLES`` / ``VOLUME_TABLES`` name the groups; a unit test keeps
them apart).

Alembic owns the schema (``nova_lite/db/migrations``); these models must
describe exactly what the migrations create, and
``tests/functional/db/test_migrations.py`` compares the two on SQLite,
MariaDB and PostgreSQL. Every constraint and index has an explicit name,
produced by ``NAMING_CONVENTION``, so that names are the same on every
backend and later migrations can refer to them.

Relationships are declared ``lazy='raise'``: list endpoints must load what
they show with a fixed number of queries (``selectinload``/``joinedload``),
and an accidental per-row lazy load fails loudly instead of turning into
N+1 queries.
"""

import datetime
from typing import Optional

from oslo_db.sqlalchemy import models as oslo_models
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy import orm

from nova_lite.db import secrets
from nova_lite import utils


def _column_names(constraint, table):
    # Nova's spelling of unique constraint names: uniq_<table>0<col>0<col>.
    return '0'.join(column.name for column in constraint.columns)


NAMING_CONVENTION = {
    'column_names': _column_names,
    'pk': 'pk_%(table_name)s',
    'ix': 'ix_%(table_name)s_%(column_0_N_name)s',
    'uq': 'uniq_%(table_name)s0%(column_names)s',
    'fk': 'fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s',
    'ck': 'ck_%(table_name)s_%(constraint_name)s',
}

# Column types used across tables. MySQL's plain DATETIME drops fractional
# seconds and TEXT holds only 64 KiB; the variants keep microseconds (as
# SQLite and PostgreSQL do) and allow large connection_info blobs.
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
MediumText = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')
# Strings compared byte for byte on MySQL/MariaDB too, as SQLite and
# PostgreSQL compare them (their default collation ignores case).
BinaryString = sa.String(255).with_variant(
    mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb')
UUID = sa.String(36)

_MYSQL_TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


class BASE(oslo_models.ModelBase, orm.DeclarativeBase):
    """Declarative base of every nova_lite model (one MetaData)."""

    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        datetime.datetime: DateTime,
        str: sa.String(255),
    }


class TimestampMixin:
    """``created_at`` set on insert, ``updated_at`` on every update."""

    created_at: orm.Mapped[Optional[datetime.datetime]] = orm.mapped_column(
        default=utils.utcnow)
    updated_at: orm.Mapped[Optional[datetime.datetime]] = orm.mapped_column(
        onupdate=utils.utcnow)


# ---------------------------------------------------------------------------
# Compute
# ---------------------------------------------------------------------------

class Service(TimestampMixin, BASE):
    """A running nova-lite-conductor or nova-lite-compute and its heartbeat.

    ``version`` is the service version the process was built with; the API
    refuses features that the oldest compute service cannot do.
    """

    __tablename__ = 'services'
    __table_args__ = (
        sa.UniqueConstraint('uuid'),
        sa.UniqueConstraint('host', 'binary'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    uuid: orm.Mapped[str] = orm.mapped_column(UUID)
    binary: orm.Mapped[str]
    host: orm.Mapped[str]
    topic: orm.Mapped[str]
    version: orm.Mapped[int] = orm.mapped_column(default=0)
    disabled: orm.Mapped[bool] = orm.mapped_column(default=False)
    disabled_reason: orm.Mapped[Optional[str]]
    forced_down: orm.Mapped[bool] = orm.mapped_column(default=False)
    # The database's clock at the last heartbeat, and the
    # ``service_clock.excluded_ms`` of that moment (NULL: a service that
    # has not beaten since the clock exists).
    last_seen_up: orm.Mapped[Optional[datetime.datetime]]
    excluded_ms: orm.Mapped[Optional[int]] = orm.mapped_column(
        sa.BigInteger)


class ServiceClock(TimestampMixin, BASE):
    """One row: the database's own record of when it took writes, so that
    a time in which it took none (stopped, stalled) is not counted against
    the services' heartbeats (``nova_lite.objects.service``).

    ``ticked_at``: the database's clock at the last write of any nova_lite
    process (a heartbeat or an API process's tick); ``excluded_ms``: the
    total of the gaps between two such writes beyond ``max_gap_ms`` (twice
    the writers' ``report_interval``), the database's silences.
    """

    __tablename__ = 'service_clock'
    __table_args__ = (_MYSQL_TABLE_ARGS,)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=False)
    ticked_at: orm.Mapped[datetime.datetime]
    excluded_ms: orm.Mapped[int] = orm.mapped_column(sa.BigInteger)
    max_gap_ms: orm.Mapped[int] = orm.mapped_column(sa.BigInteger)


class Instance(TimestampMixin, BASE):
    """A server. ``deleted_at`` is the soft-delete time (restore window)."""

    __tablename__ = 'instances'
    __table_args__ = (
        sa.UniqueConstraint('uuid'),
        # A project's servers are listed newest first, one page at a time
        # (keyset on created_at, id): the page is read from the index.
        sa.Index(None, 'project_id', 'created_at', 'id'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    uuid: orm.Mapped[str] = orm.mapped_column(UUID)
    display_name: orm.Mapped[str]
    project_id: orm.Mapped[str] = orm.mapped_column(index=True)
    user_id: orm.Mapped[str]
    host: orm.Mapped[Optional[str]] = orm.mapped_column(index=True)
    availability_zone: orm.Mapped[Optional[str]]
    flavor_id: orm.Mapped[str]
    image_ref: orm.Mapped[Optional[str]]
    vm_state: orm.Mapped[str]
    task_state: orm.Mapped[Optional[str]]
    power_state: orm.Mapped[int] = orm.mapped_column(default=0)
    launched_at: orm.Mapped[Optional[datetime.datetime]]
    terminated_at: orm.Mapped[Optional[datetime.datetime]]
    locked: orm.Mapped[bool] = orm.mapped_column(default=False)
    # 'admin' or 'owner': who may unlock.
    locked_by: orm.Mapped[Optional[str]]
    locked_reason: orm.Mapped[Optional[str]] = orm.mapped_column(sa.Text)
    reservation_id: orm.Mapped[Optional[str]]
    launch_index: orm.Mapped[int] = orm.mapped_column(default=0)
    root_device_name: orm.Mapped[Optional[str]]
    shelved_at: orm.Mapped[Optional[datetime.datetime]]
    deleted_at: orm.Mapped[Optional[datetime.datetime]]
    # Who owns the server's task_state ('<binary>:<host>') and since when:
    # the work to settle when that service dies.
    task_owner: orm.Mapped[Optional[str]]
    task_updated_at: orm.Mapped[Optional[datetime.datetime]]
    # What the create gave: accessIPv4/v6 and (2.90) hostname.
    access_ip_v4: orm.Mapped[Optional[str]] = orm.mapped_column(
        sa.String(39))
    access_ip_v6: orm.Mapped[Optional[str]] = orm.mapped_column(
        sa.String(39))
    hostname: orm.Mapped[Optional[str]]
    # What the create or an update gave: description (2.19) and metadata
    # (one JSON object of strings, read and written whole).
    display_description: orm.Mapped[Optional[str]] = orm.mapped_column(
        sa.Text)
    server_metadata: orm.Mapped[Optional[dict]] = orm.mapped_column(sa.JSON)


class BlockDeviceMapping(TimestampMixin, BASE):
    """One disk of a server: a volume, an image or a blank/local disk.

    The unique constraints are how races are settled: the same volume
    cannot be mapped twice to one server, nor one device name used twice
    (NULL volume ids and device names never collide, on every backend).
    """

    __tablename__ = 'block_device_mappings'
    __table_args__ = (
        sa.UniqueConstraint('uuid'),
        sa.UniqueConstraint('instance_uuid', 'volume_id'),
        sa.UniqueConstraint('instance_uuid', 'device_name'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    uuid: orm.Mapped[str] = orm.mapped_column(UUID)
    instance_uuid: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('instances.uuid', ondelete='CASCADE'),
        index=True)
    source_type: orm.Mapped[str]
    destination_type: orm.Mapped[str]
    guest_format: orm.Mapped[Optional[str]]
    device_type: orm.Mapped[Optional[str]]
    disk_bus: orm.Mapped[Optional[str]]
    boot_index: orm.Mapped[Optional[int]]
    device_name: orm.Mapped[Optional[str]]
    delete_on_termination: orm.Mapped[bool] = orm.mapped_column(
        default=False)
    snapshot_id: orm.Mapped[Optional[str]] = orm.mapped_column(UUID)
    volume_id: orm.Mapped[Optional[str]] = orm.mapped_column(UUID,
                                                             index=True)
    image_id: orm.Mapped[Optional[str]] = orm.mapped_column(UUID)
    volume_size: orm.Mapped[Optional[int]]
    no_device: orm.Mapped[bool] = orm.mapped_column(default=False)
    # Credentials in it are stored encrypted (nova_lite.db.secrets).
    connection_info: orm.Mapped[Optional[str]] = orm.mapped_column(
        secrets.SecretJSON(medium=True))
    tag: orm.Mapped[Optional[str]]
    # The block-storage attachment this mapping holds (NULL: legacy attach).
    attachment_id: orm.Mapped[Optional[str]] = orm.mapped_column(UUID)
    volume_type: orm.Mapped[Optional[str]]
    # 'ro' or 'rw' (microversion 2.105); NULL means the default, 'rw'.
    attach_mode: orm.Mapped[Optional[str]] = orm.mapped_column(sa.String(2))
    # The volume operation in flight on this mapping (attaching, detaching,
    # swapping...; NULL when none), the service that owns it
    # ('<binary>:<host>'), the last step it reached, what settling it needs
    # to know (JSON) and when it last moved. A periodic task finds work
    # whose owner is down or that stopped moving (doc/source/contributor/
    # crash-safety.rst).
    task: orm.Mapped[Optional[str]] = orm.mapped_column(
        sa.String(36), index=True)
    task_owner: orm.Mapped[Optional[str]]
    task_step: orm.Mapped[Optional[str]] = orm.mapped_column(sa.String(64))
    # JSON; credentials in it are stored encrypted (nova_lite.db.secrets).
    task_data: orm.Mapped[Optional[str]] = orm.mapped_column(
        secrets.SecretJSON())
    task_updated_at: orm.Mapped[Optional[datetime.datetime]]
    # The task's fencing token: raised by every start and take-over of
    # the task, compared by every move, end and delete of the row.
    task_generation: orm.Mapped[int] = orm.mapped_column(
        default=0, server_default='0')

    instance: orm.Mapped['Instance'] = orm.relationship(lazy='raise')


class InstanceAction(TimestampMixin, BASE):
    """A user-visible action on a server (os-instance-actions)."""

    __tablename__ = 'instance_actions'
    __table_args__ = (
        sa.Index('ix_instance_actions_instance_uuid_request_id',
                 'instance_uuid', 'request_id'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    action: orm.Mapped[str]
    instance_uuid: orm.Mapped[str] = orm.mapped_column(UUID, index=True)
    request_id: orm.Mapped[str]
    user_id: orm.Mapped[str]
    project_id: orm.Mapped[str]
    start_time: orm.Mapped[datetime.datetime]
    finish_time: orm.Mapped[Optional[datetime.datetime]]
    message: orm.Mapped[Optional[str]]

    events: orm.Mapped[list['InstanceActionEvent']] = orm.relationship(
        back_populates='action', lazy='raise',
        cascade='all, delete-orphan', passive_deletes=True,
        order_by='InstanceActionEvent.id')


class InstanceActionEvent(TimestampMixin, BASE):
    """One step of an instance action, with its result and traceback."""

    __tablename__ = 'instance_actions_events'
    __table_args__ = (_MYSQL_TABLE_ARGS,)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    action_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('instance_actions.id', ondelete='CASCADE'),
        index=True)
    event: orm.Mapped[str]
    result: orm.Mapped[Optional[str]]
    traceback: orm.Mapped[Optional[str]] = orm.mapped_column(sa.Text)
    start_time: orm.Mapped[datetime.datetime]
    finish_time: orm.Mapped[Optional[datetime.datetime]]
    host: orm.Mapped[Optional[str]]
    details: orm.Mapped[Optional[str]] = orm.mapped_column(sa.Text)

    action: orm.Mapped['InstanceAction'] = orm.relationship(
        back_populates='events', lazy='raise')


class InstanceFault(TimestampMixin, BASE):
    """The last errors of a server (the ``fault`` of server show)."""

    __tablename__ = 'instance_faults'
    __table_args__ = (_MYSQL_TABLE_ARGS,)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    instance_uuid: orm.Mapped[str] = orm.mapped_column(UUID, index=True)
    code: orm.Mapped[int]
    message: orm.Mapped[str]
    details: orm.Mapped[Optional[str]] = orm.mapped_column(sa.Text)
    host: orm.Mapped[Optional[str]]


class StaleDisk(TimestampMixin, BASE):
    """A volume disk a compute host may still give one of its guests
    although the volume is no longer the server's there: freed without
    the host while it was fenced (``compute.release``), or found by the
    host and not removed (``compute.host.recovery``). The host deletes
    the row once its guest no longer has the disk; while a host has rows,
    it cannot be let go (``forced_down: false`` answers 409)."""

    __tablename__ = 'stale_disks'
    __table_args__ = (
        sa.UniqueConstraint('host', 'instance_uuid', 'device_name',
                            'volume_id'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    host: orm.Mapped[str]
    instance_uuid: orm.Mapped[str] = orm.mapped_column(UUID)
    device_name: orm.Mapped[str]
    volume_id: orm.Mapped[str] = orm.mapped_column(UUID)


class Quota(TimestampMixin, BASE):
    """A project's own limit of one compute resource (``instances``,
    ``cores``, ``ram``...): an administrator's override of the default;
    -1 is unlimited."""

    __tablename__ = 'quotas'
    __table_args__ = (
        sa.UniqueConstraint('project_id', 'resource'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    project_id: orm.Mapped[str]
    resource: orm.Mapped[str]
    hard_limit: orm.Mapped[int]


class QuotaLock(TimestampMixin, BASE):
    """One row per project that has created servers: the row a creation
    locks (``SELECT ... FOR UPDATE``) while it counts the project's usage
    and inserts, so that two creations never both take the last unit."""

    __tablename__ = 'quota_locks'
    __table_args__ = (_MYSQL_TABLE_ARGS,)

    project_id: orm.Mapped[str] = orm.mapped_column(primary_key=True)


# ---------------------------------------------------------------------------
# Block storage
# ---------------------------------------------------------------------------

class VolumeType(TimestampMixin, BASE):
    """A volume type; its extra specs carry e.g. ``multiattach``."""

    __tablename__ = 'volume_types'
    __table_args__ = (
        sa.UniqueConstraint('name'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[str] = orm.mapped_column(UUID, primary_key=True)
    name: orm.Mapped[str]
    description: orm.Mapped[Optional[str]] = orm.mapped_column(sa.Text)
    is_public: orm.Mapped[bool] = orm.mapped_column(default=True)

    extra_specs: orm.Mapped[list['VolumeTypeExtraSpec']] = orm.relationship(
        back_populates='volume_type', lazy='raise',
        cascade='all, delete-orphan', passive_deletes=True)


class VolumeTypeProject(TimestampMixin, BASE):
    """A project's access to a private volume type (Cinder's
    ``volume_type_projects``): at most one row per pair; deleting the type
    deletes them."""

    __tablename__ = 'volume_type_projects'
    __table_args__ = (
        sa.UniqueConstraint('volume_type_id', 'project_id'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    volume_type_id: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('volume_types.id', ondelete='CASCADE'))
    project_id: orm.Mapped[str]


class VolumeTypeExtraSpec(TimestampMixin, BASE):
    __tablename__ = 'volume_type_extra_specs'
    __table_args__ = (
        sa.UniqueConstraint('volume_type_id', 'key'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    volume_type_id: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('volume_types.id', ondelete='CASCADE'))
    key: orm.Mapped[str]
    value: orm.Mapped[str]

    volume_type: orm.Mapped['VolumeType'] = orm.relationship(
        back_populates='extra_specs', lazy='raise')


class VolumeTypeEncryption(TimestampMixin, BASE):
    """Encryption specs of a volume type (Cinder's ``encryption`` table):
    at most one row per type."""

    __tablename__ = 'encryption'
    __table_args__ = (
        sa.UniqueConstraint('volume_type_id'),
        _MYSQL_TABLE_ARGS,
    )

    encryption_id: orm.Mapped[str] = orm.mapped_column(UUID,
                                                       primary_key=True)
    volume_type_id: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('volume_types.id', ondelete='CASCADE'))
    provider: orm.Mapped[str]
    control_location: orm.Mapped[str]
    cipher: orm.Mapped[Optional[str]]
    key_size: orm.Mapped[Optional[int]]


class Volume(TimestampMixin, BASE):
    """A block-storage volume; ``deleted`` rows are kept (soft delete)."""

    __tablename__ = 'volumes'
    __table_args__ = (
        # Lists page newest first by (created_at, id) within a project.
        sa.Index(None, 'project_id', 'created_at', 'id'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[str] = orm.mapped_column(UUID, primary_key=True)
    project_id: orm.Mapped[str] = orm.mapped_column(index=True)
    user_id: orm.Mapped[str]
    display_name: orm.Mapped[Optional[str]]
    display_description: orm.Mapped[Optional[str]] = orm.mapped_column(
        sa.Text)
    size: orm.Mapped[int]
    status: orm.Mapped[str]
    attach_status: orm.Mapped[str]
    multiattach: orm.Mapped[bool] = orm.mapped_column(default=False)
    bootable: orm.Mapped[bool] = orm.mapped_column(default=False)
    volume_type_id: orm.Mapped[Optional[str]] = orm.mapped_column(
        UUID, sa.ForeignKey('volume_types.id'), index=True)
    # The backend the volume lives on.
    host: orm.Mapped[Optional[str]]
    availability_zone: orm.Mapped[Optional[str]]
    migration_status: orm.Mapped[Optional[str]]
    # Cinder's _name_id: the id naming the volume's storage on its backend
    # (None: the volume's own id); a completed migration gives the volume
    # the storage made for its temporary volume.
    name_id: orm.Mapped[Optional[str]] = orm.mapped_column(UUID)
    provider_location: orm.Mapped[Optional[str]] = orm.mapped_column(sa.Text)
    # Credentials of the volume's exports, as the backend made them at
    # create (Cinder's ``CHAP <user> <secret>``); never shown by the API,
    # stored encrypted (nova_lite.db.secrets).
    provider_auth: orm.Mapped[Optional[str]] = orm.mapped_column(
        secrets.SecretString())
    encrypted: orm.Mapped[bool] = orm.mapped_column(default=False)
    deleted: orm.Mapped[bool] = orm.mapped_column(default=False, index=True)
    deleted_at: orm.Mapped[Optional[datetime.datetime]]
    # Cinder's source_volid: the volume this one was cloned from (None:
    # created empty). Not a foreign key: the source may be deleted.
    source_volid: orm.Mapped[Optional[str]] = orm.mapped_column(
        UUID, index=True)

    volume_type: orm.Mapped[Optional['VolumeType']] = orm.relationship(
        lazy='raise')
    # The live (not soft-deleted) attachments. Read-only: attachments are
    # created and deleted through VolumeAttachment rows themselves.
    attachments: orm.Mapped[list['VolumeAttachment']] = orm.relationship(
        primaryjoin='and_(Volume.id == VolumeAttachment.volume_id, '
                    'VolumeAttachment.deleted == false())',
        viewonly=True, lazy='raise', order_by='VolumeAttachment.id')
    # The user's key/value metadata (``metadata`` is the declarative
    # base's own attribute, hence Cinder's name).
    volume_metadata: orm.Mapped[list['VolumeMetadata']] = orm.relationship(
        back_populates='volume', lazy='raise', order_by='VolumeMetadata.key',
        cascade='all, delete-orphan', passive_deletes=True)
    admin_metadata: orm.Mapped[list['VolumeAdminMetadata']] = \
        orm.relationship(viewonly=True, lazy='raise',
                         order_by='VolumeAdminMetadata.key')


class VolumeMetadata(TimestampMixin, BASE):
    """One key of a volume's metadata (Cinder's ``volume_metadata``).

    Rows are deleted, not soft-deleted: with the volume's deletion, or when
    the key is removed. Keys and values compare byte for byte on every
    backend (``BinaryString``), so ``Type`` and ``type`` are two keys.
    """

    __tablename__ = 'volume_metadata'
    __table_args__ = (
        sa.UniqueConstraint('volume_id', 'key'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    volume_id: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('volumes.id', ondelete='CASCADE'))
    key: orm.Mapped[str] = orm.mapped_column(BinaryString)
    value: orm.Mapped[str] = orm.mapped_column(BinaryString)

    volume: orm.Mapped['Volume'] = orm.relationship(
        back_populates='volume_metadata', lazy='raise')


class VolumeAdminMetadata(TimestampMixin, BASE):
    """One key of a volume's administrator metadata, where Cinder keeps
    what the service says about a volume rather than its owner: the
    ``readonly`` flag (``os-update_readonly_flag``, ``'True'`` or
    ``'False'``). Rows are deleted with nothing kept."""

    __tablename__ = 'volume_admin_metadata'
    __table_args__ = (
        sa.UniqueConstraint('volume_id', 'key'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    volume_id: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('volumes.id'), index=True)
    key: orm.Mapped[str]
    value: orm.Mapped[str]


class VolumeAttachment(TimestampMixin, BASE):
    """An attachment of a volume to an instance (Cinder attachments API).

    ``attach_mode`` is 'rw', 'ro', or the literal string 'null' before the
    mode is known; deleted attachments are kept with ``deleted`` set.
    """

    __tablename__ = 'volume_attachment'
    __table_args__ = (_MYSQL_TABLE_ARGS,)

    id: orm.Mapped[str] = orm.mapped_column(UUID, primary_key=True)
    volume_id: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('volumes.id'), index=True)
    instance_uuid: orm.Mapped[Optional[str]] = orm.mapped_column(UUID,
                                                                 index=True)
    attached_host: orm.Mapped[Optional[str]]
    mountpoint: orm.Mapped[Optional[str]]
    attach_time: orm.Mapped[Optional[datetime.datetime]]
    detach_time: orm.Mapped[Optional[datetime.datetime]]
    attach_status: orm.Mapped[str]
    attach_mode: orm.Mapped[Optional[str]] = orm.mapped_column(sa.String(36))
    # Credentials in it are stored encrypted (nova_lite.db.secrets).
    connection_info: orm.Mapped[Optional[str]] = orm.mapped_column(
        secrets.SecretJSON(medium=True))
    deleted: orm.Mapped[bool] = orm.mapped_column(default=False, index=True)
    deleted_at: orm.Mapped[Optional[datetime.datetime]]

    volume: orm.Mapped['Volume'] = orm.relationship(lazy='raise')
    specs: orm.Mapped[list['AttachmentSpec']] = orm.relationship(
        back_populates='attachment', lazy='raise',
        cascade='all, delete-orphan', passive_deletes=True)


class AttachmentSpec(TimestampMixin, BASE):
    """One key of an attachment's host connector; ``value`` is JSON.

    The connector is stored as key/value rows, as in Cinder's
    add-new-attach-apis spec.
    """

    __tablename__ = 'attachment_specs'
    __table_args__ = (
        sa.UniqueConstraint('attachment_id', 'key'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    attachment_id: orm.Mapped[str] = orm.mapped_column(
        UUID, sa.ForeignKey('volume_attachment.id', ondelete='CASCADE'),
        index=True)
    key: orm.Mapped[str]
    value: orm.Mapped[str] = orm.mapped_column(sa.Text)

    attachment: orm.Mapped['VolumeAttachment'] = orm.relationship(
        back_populates='specs', lazy='raise')


class VolumeQuota(TimestampMixin, BASE):
    """A project's own limit of one block-storage resource (``volumes``,
    ``gigabytes``, ``volumes_<type>``...); -1 is unlimited."""

    __tablename__ = 'volume_quotas'
    __table_args__ = (
        sa.UniqueConstraint('project_id', 'resource'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    project_id: orm.Mapped[str]
    resource: orm.Mapped[str]
    hard_limit: orm.Mapped[int]


class VolumeQuotaClass(TimestampMixin, BASE):
    """A quota class's limit of one block-storage resource; the class
    ``default`` overrides the configured defaults for every project."""

    __tablename__ = 'volume_quota_classes'
    __table_args__ = (
        sa.UniqueConstraint('class_name', 'resource'),
        _MYSQL_TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True,
                                            autoincrement=True)
    class_name: orm.Mapped[str]
    resource: orm.Mapped[str]
    hard_limit: orm.Mapped[int]


class VolumeQuotaLock(TimestampMixin, BASE):
    """The row a volume creation of the project locks while it counts
    usage and inserts (see ``QuotaLock``)."""

    __tablename__ = 'volume_quota_locks'
    __table_args__ = (_MYSQL_TABLE_ARGS,)

    project_id: orm.Mapped[str] = orm.mapped_column(primary_key=True)


COMPUTE_TABLES = frozenset([
    'services', 'service_clock', 'instances', 'block_device_mappings',
    'instance_actions', 'instance_actions_events', 'instance_faults',
    'stale_disks', 'quotas', 'quota_locks',
])
VOLUME_TABLES = frozenset([
    'volume_types', 'volume_type_extra_specs', 'volume_type_projects',
    'encryption', 'volumes', 'volume_metadata', 'volume_attachment',
    'attachment_specs', 'volume_admin_metadata',
    'volume_quotas', 'volume_quota_classes', 'volume_quota_locks',
])
