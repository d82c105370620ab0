"""Block device mappings: the disks of a server (volumes, image, local).

The table's unique constraints settle races across processes: one mapping
per (server, volume) and per (server, device name). ``create()`` turns a
lost race into ``InvalidVolume`` ("already attached", 400) or
``DevicePathInUse`` (409), so callers can retry with another device name.
"""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
from oslo_utils import uuidutils
from oslo_versionedobjects import fields
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import base
from nova_lite import tasks
from nova_lite import utils

SOURCE_VOLUME = 'volume'
SOURCE_IMAGE = 'image'
DESTINATION_VOLUME = 'volume'
DESTINATION_LOCAL = 'local'

# attach_mode of volume mappings (local ones have none); rows written
# before the mode existed have NULL, which means read/write.
ATTACH_MODE_RW = 'rw'
ATTACH_MODE_RO = 'ro'
ATTACH_MODES = (ATTACH_MODE_RO, ATTACH_MODE_RW)

_MODEL_FIELDS = (
    'uuid', 'instance_uuid', 'source_type', 'destination_type',
    'guest_format', 'device_type', 'disk_bus', 'boot_index', 'device_name',
    'delete_on_termination', 'snapshot_id', 'volume_id', 'image_id',
    'volume_size', 'no_device', 'connection_info', 'tag', 'attachment_id',
    'volume_type', 'attach_mode', 'task', 'task_owner', 'task_step',
    'task_data', 'task_updated_at', 'task_generation')

# Fields peers of an older object version do not know.
_FIELDS_SINCE_1_1 = ('task', 'task_owner', 'task_step', 'task_data',
                     'task_updated_at')
_FIELDS_SINCE_1_2 = ('task_generation',)
_TASK_FIELDS = _FIELDS_SINCE_1_1 + _FIELDS_SINCE_1_2

# "Whatever the column holds": a task move that does not compare it.
_ANY = object()


# Every attach and detach reads and writes mappings several times: the
# reads and the insert are Core statements on the table, built once here
# with bind parameters, and objects are loaded from the result rows by
# column name; every other write is a compare-and-swap of the object
# (``conditional_update``/``conditional_destroy``). Inside an outer
# transaction, such as instance_action.transaction(), they join it.
_BDMS = models.BlockDeviceMapping.__table__

_INSERT = sa.insert(_BDMS)
# A row is this object's by its id and its uuid (``IDENTITY``): SQLite
# gives the id of a deleted last row to the next insert, and a workflow
# still holding the deleted mapping must not update or delete its
# successor (a new attach of the same volume).
# A volume_id of None means IS NULL (the mappings of no volume), as an
# ORM filter_by(volume_id=None) did.
_BY_VOLUME_AND_INSTANCE = sa.select(_BDMS).where(
    _BDMS.c.volume_id == sa.bindparam('volume_id'),
    _BDMS.c.instance_uuid == sa.bindparam('instance_uuid'))
_BY_NO_VOLUME_AND_INSTANCE = sa.select(_BDMS).where(
    _BDMS.c.volume_id.is_(None),
    _BDMS.c.instance_uuid == sa.bindparam('instance_uuid'))
_BY_VOLUME = sa.select(_BDMS).where(
    _BDMS.c.volume_id == sa.bindparam('volume_id')).order_by(_BDMS.c.id)
_BY_NO_VOLUME = sa.select(_BDMS).where(
    _BDMS.c.volume_id.is_(None)).order_by(_BDMS.c.id)
_BY_INSTANCES = sa.select(_BDMS).where(
    _BDMS.c.instance_uuid.in_(sa.bindparam('instance_uuids', expanding=True))
).order_by(_BDMS.c.id)


@db_api.context_manager.reader
def _get_with_tasks(context, owners, updated_before):
    query = sa.select(_BDMS).where(_BDMS.c.task.is_not(None))
    if owners is not None:
        query = query.where(_BDMS.c.task_owner.in_(list(owners)))
    if updated_before is not None:
        query = query.where(sa.or_(_BDMS.c.task_updated_at.is_(None),
                                   _BDMS.c.task_updated_at < updated_before))
    return context.session.execute(
        query.order_by(_BDMS.c.id)).mappings().all()


@db_api.context_manager.writer
def _create(context, values):
    """The new row's values by column name: those given, the columns'
    defaults (created_at) and the new id (the other columns are NULL)."""
    result = context.session.execute(_INSERT, values)
    written = dict.fromkeys(_BDMS.c.keys())
    written.update(result.last_inserted_params())
    written['id'] = result.inserted_primary_key[0]
    return written


@db_api.context_manager.reader
def _get_by_volume_and_instance(context, volume_id, instance_uuid):
    if volume_id is None:
        return context.session.execute(
            _BY_NO_VOLUME_AND_INSTANCE,
            {'instance_uuid': instance_uuid}).mappings().one_or_none()
    return context.session.execute(
        _BY_VOLUME_AND_INSTANCE,
        {'volume_id': volume_id, 'instance_uuid': instance_uuid}
    ).mappings().one_or_none()


@db_api.context_manager.reader
def _get_by_volume(context, volume_id):
    if volume_id is None:
        return context.session.execute(_BY_NO_VOLUME).mappings().all()
    return context.session.execute(
        _BY_VOLUME, {'volume_id': volume_id}).mappings().all()


@db_api.context_manager.reader
def _get_by_instance_uuids(context, instance_uuids):
    return context.session.execute(
        _BY_INSTANCES, {'instance_uuids': instance_uuids}).mappings().all()


def _translate_duplicate(exc, values):
    if 'device_name' in (exc.columns or []):
        raise exception.DevicePathInUse(path=values.get('device_name'))
    if 'volume_id' in (exc.columns or []):
        raise exception.InvalidVolume(
            reason=_('volume %s already attached') % values.get('volume_id'))
    raise exc


@base.NovaLiteObjectRegistry.register
class BlockDeviceMapping(base.NovaLiteObject, base.NovaLiteTimestampObject):
    # 1.0: initial
    # 1.1: task, task_owner, task_step, task_data, task_updated_at
    # 1.2: task_generation
    VERSION = '1.2'
    FIELDS_SINCE = {'1.1': _FIELDS_SINCE_1_1, '1.2': _FIELDS_SINCE_1_2}

    fields = dict(base.NovaLiteTimestampObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'instance_uuid': fields.UUIDField(),
        'source_type': fields.StringField(),
        'destination_type': fields.StringField(),
        'guest_format': fields.StringField(nullable=True),
        'device_type': fields.StringField(nullable=True),
        'disk_bus': fields.StringField(nullable=True),
        'boot_index': fields.IntegerField(nullable=True),
        'device_name': fields.StringField(nullable=True),
        'delete_on_termination': fields.BooleanField(default=False),
        'snapshot_id': fields.UUIDField(nullable=True),
        'volume_id': fields.UUIDField(nullable=True),
        'image_id': fields.StringField(nullable=True),
        'volume_size': fields.IntegerField(nullable=True),
        'no_device': fields.BooleanField(default=False),
        'connection_info': fields.SensitiveStringField(nullable=True),
        'tag': fields.StringField(nullable=True),
        'attachment_id': fields.UUIDField(nullable=True),
        'volume_type': fields.StringField(nullable=True),
        'attach_mode': fields.StringField(nullable=True),
        # The volume operation in flight and who owns it (models.py).
        'task': fields.StringField(nullable=True),
        'task_owner': fields.StringField(nullable=True),
        'task_step': fields.StringField(nullable=True),
        'task_data': fields.SensitiveStringField(nullable=True),
        'task_updated_at': fields.DateTimeField(nullable=True),
        # The task's fencing token (see ``take_over_task``).
        'task_generation': fields.IntegerField(default=0),
    })

    @property
    def is_volume(self):
        return self.destination_type == DESTINATION_VOLUME

    @property
    def is_root(self):
        return self.obj_attr_is_set('boot_index') and self.boot_index == 0

    @property
    def attach_pending(self):
        """An attach was accepted for this volume but block storage has not
        reserved it yet: no attachment and never connected (unlike a
        legacy mapping, which has a connection but no attachment)."""
        return (self.is_volume and not self.attachment_id and
                not self.connection_info)

    @property
    def effective_attach_mode(self):
        """``ro`` or ``rw`` for a volume mapping (NULL means ``rw``),
        None for a local one."""
        if not self.is_volume:
            return None
        return self.attach_mode or ATTACH_MODE_RW

    def get_connection_info(self):
        if not self.obj_attr_is_set('connection_info') or \
                not self.connection_info:
            return None
        return jsonutils.loads(self.connection_info)

    def set_connection_info(self, info):
        self.connection_info = (jsonutils.dumps(info)
                                if info is not None else None)

    model = models.BlockDeviceMapping
    IDENTITY = ('id', 'uuid')

    @classmethod
    def new_volume(cls, context, instance_uuid, volume_id, device_name=None,
                   boot_index=None, tag=None, delete_on_termination=False,
                   attach_mode=None, volume_size=None):
        """A (not yet created) mapping of a volume to a server."""
        return cls(context, uuid=uuidutils.generate_uuid(),
                   instance_uuid=instance_uuid, source_type=SOURCE_VOLUME,
                   destination_type=DESTINATION_VOLUME, volume_id=volume_id,
                   device_name=device_name, boot_index=boot_index, tag=tag,
                   delete_on_termination=bool(delete_on_termination),
                   attach_mode=attach_mode or (
                       ATTACH_MODE_RW if volume_id else None),
                   volume_size=volume_size,
                   no_device=False, attachment_id=None,
                   connection_info=None, snapshot_id=None, image_id=None,
                   guest_format=None, device_type=None, disk_bus=None,
                   volume_type=None, task=None, task_owner=None,
                   task_step=None, task_data=None, task_updated_at=None,
                   task_generation=0)

    def create(self):
        values = {k: v for k, v in self.obj_get_changes().items()
                  if k in _MODEL_FIELDS}
        if 'uuid' not in values:
            values['uuid'] = uuidutils.generate_uuid()
        try:
            row = _create(self._context, values)
        except db_exc.DBDuplicateEntry as exc:
            _translate_duplicate(exc, values)
        self._from_db_row(self._context, self, row)

    def save(self):
        values = {k: v for k, v in self.obj_get_changes().items()
                  if k in _MODEL_FIELDS and k != 'uuid'}
        if not values:
            return
        # The row is not read back: what changed is what was written, with
        # the updated_at conditional_update writes.
        try:
            updated = self.conditional_update(values)
        except db_exc.DBDuplicateEntry as exc:
            _translate_duplicate(exc, values)
        if not updated:
            raise exception.VolumeBDMNotFound(
                instance_uuid=self.instance_uuid, volume_id=self.volume_id)
        self.obj_reset_changes()

    def _generation(self):
        """The fencing token this object holds (``_ANY`` for an object
        from a peer older than 1.2, which carries none)."""
        if self.obj_attr_is_set('task_generation'):
            return self.task_generation
        return _ANY

    def destroy(self, context=None):
        """Delete the mapping, if its task generation is still the one
        this object read (a conditional delete: a service that took the
        task over meanwhile raised it, and the row is then no longer this
        object's to delete); True if it was deleted. ``context``: the
        transaction to delete in (default: the object's)."""
        generation = self._generation()
        return self.conditional_destroy(
            {} if generation is _ANY else {'task_generation': generation},
            context=context)

    def destroy_if_pending(self):
        """Delete the mapping if its attach is still pending (no
        attachment yet: a compare-and-swap); True if it was deleted. The
        attach workflow notices the mapping is gone at its next write and
        undoes what it did."""
        return self.conditional_destroy({'attachment_id': None,
                                         'connection_info': None})

    # -- the operation in flight (crash safety) ---------------------------
    # Every move of the task columns is a compare-and-swap on the task and
    # owner this object read (and, to take work over, its last move), so
    # two services never both own, settle or end one operation.

    def get_task_data(self):
        """``task_data`` as a dict (empty when none)."""
        if not self.obj_attr_is_set('task_data') or not self.task_data:
            return {}
        return jsonutils.loads(self.task_data)

    def _cas_task(self, values, expected_task, expected_owner,
                  expected_step=_ANY, expected_updated_at=_ANY,
                  expected_generation=None):
        """The compare-and-swap of every task move: on the task and owner
        given, the step and last move when given, and the generation this
        object holds (``expected_generation``, when given, instead)."""
        values = dict(values, task_updated_at=utils.utcnow())
        if 'task_data' in values and values['task_data'] is not None and \
                not isinstance(values['task_data'], str):
            values['task_data'] = jsonutils.dumps(values['task_data'])
        if expected_generation is None:
            expected_generation = self._generation()
        expected = {'task': expected_task, 'task_owner': expected_owner,
                    'task_step': expected_step,
                    'task_updated_at': expected_updated_at,
                    'task_generation': expected_generation}
        if not self.conditional_update(values, {
                name: value for name, value in expected.items()
                if value is not _ANY}):
            raise exception.TaskOwnerChanged(
                task=expected_task or values.get('task'),
                volume_id=self.volume_id, instance_uuid=self.instance_uuid)

    def set_task(self, task, owner, step, data=None):
        """The task a mapping not created yet is created with (one
        insert); ``start_task`` starts one on an existing mapping."""
        tasks.check_step(task, step)
        self.task = task
        self.task_owner = owner
        self.task_step = step
        self.task_data = None if data is None else jsonutils.dumps(data)
        self.task_updated_at = utils.utcnow()

    def _next_generation(self):
        generation = self._generation()
        return 1 if generation is _ANY else generation + 1

    def start_task(self, task, owner, step, data=None):
        """Record that ``owner`` ('<binary>:<host>') starts ``task`` on
        this mapping, with the next generation (the messages of an
        earlier task of the mapping no longer match it);
        ``VolumeTaskInProgress`` (409) if another operation is in flight
        on it, ``VolumeBDMNotFound`` (404) if the mapping is gone (a
        detach finished since it was read)."""
        tasks.check_step(task, step)
        for _attempt in range(2):
            try:
                self._cas_task({'task': task, 'task_owner': owner,
                                'task_step': step, 'task_data': data,
                                'task_generation': self._next_generation()},
                               None, _ANY)
                return
            except exception.TaskOwnerChanged:
                current = _get_by_volume_and_instance(
                    self._context, self.volume_id, self.instance_uuid)
                if current is None:
                    raise exception.VolumeBDMNotFound(
                        instance_uuid=self.instance_uuid,
                        volume_id=self.volume_id)
                if current['task'] is not None:
                    raise exception.VolumeTaskInProgress(
                        volume_id=self.volume_id,
                        instance_uuid=self.instance_uuid, task=current['task'])
                # An earlier task started and ended since this object was
                # read: try again from the generation it left.
                self.task_generation = current['task_generation']
                self.obj_reset_changes(['task_generation'])
        raise exception.TaskOwnerChanged(
            task=task, volume_id=self.volume_id,
            instance_uuid=self.instance_uuid)

    def move_task(self, step, owner=_ANY, data=_ANY, **changes):
        """Record the next durable ``step`` of this mapping's task (and
        hand it to another ``owner``, replace ``data``, and write the
        step's own ``changes`` of other fields, e.g. ``connection_info``,
        in the same statement), if it is still at the step this object
        read, under the same owner; ``TaskOwnerChanged`` otherwise (so of
        two deliveries of one message, only one moves it on). A move the
        task's table does not list (``tasks.STEPS``) is a ``ValueError``,
        before anything is written."""
        tasks.check_move(self.task, self.task_step, step)
        unknown = set(changes) - set(_MODEL_FIELDS) | (
            set(changes) & set(_TASK_FIELDS))
        if unknown:
            raise ValueError('not a field to change with a step: %s' %
                             ', '.join(sorted(unknown)))
        values = dict(changes, task_step=step)
        if owner is not _ANY:
            values['task_owner'] = owner
        if data is not _ANY:
            values['task_data'] = data
        self._cas_task(values, self.task, self.task_owner, self.task_step)

    def take_over_task(self, owner):
        """Take the task over from its (dead, stalled or fenced) owner,
        raising its generation (the fencing token): moves only if nobody
        moved it since this object read it from the database (its last
        move compared to the microsecond: not for an object that crossed
        RPC, whose times lost theirs), so of two services settling the
        same work one wins and the other gets ``TaskOwnerChanged``; and
        the worker it was taken from, even one of the same owner name,
        finds the generation moved at its next write and stops there."""
        self._cas_task({'task_owner': owner,
                        'task_generation': self._next_generation()},
                       self.task, self.task_owner, self.task_step,
                       self.task_updated_at)

    def touch_task(self, expected_updated_at=_ANY):
        """Record that the task's owner is still at it (a long wait: its
        last move is now), if the task is still at the task, owner, step
        and generation this object read (and, given, the last move):
        ``TaskOwnerChanged`` otherwise. With ``expected_updated_at``, a
        claim: of two services touching the same stalled task to act on
        it, one wins."""
        self._cas_task({}, self.task, self.task_owner, self.task_step,
                       expected_updated_at)

    def task_ref(self):
        """What a message acting for this task carries, for the receiver
        to compare with the row (see ``matches``)."""
        return {'task': self.task, 'owner': self.task_owner,
                'step': self.task_step, 'generation': self.task_generation}

    def matches(self, ref):
        """Whether this mapping is still at the task ``ref`` (a
        ``task_ref()`` a message carried)."""
        return (self.task, self.task_owner, self.task_step,
                self.task_generation) == (ref.get('task'), ref.get('owner'),
                                          ref.get('step'),
                                          ref.get('generation'))

    def hand_over_task(self, task, owner, step, data=None):
        """Replace the task this object read with ``task`` of ``owner``
        (with the next generation), if it is still at the step and owner
        read (a compare-and-swap); ``TaskOwnerChanged`` otherwise. For a
        task that is over in all but its clearing (see
        ``compute.server_volumes``)."""
        tasks.check_step(task, step)
        self._cas_task({'task': task, 'task_owner': owner, 'task_step': step,
                        'task_data': data,
                        'task_generation': self._next_generation()},
                       self.task, self.task_owner, self.task_step)

    def end_task(self):
        """The task is over (finished or rolled back): clear it, if it is
        still at the step and owner this object read;
        ``TaskOwnerChanged`` otherwise."""
        self._cas_task({'task': None, 'task_owner': None, 'task_step': None,
                        'task_data': None}, self.task, self.task_owner,
                       self.task_step)

    @classmethod
    def get_with_tasks(cls, context, owners=None, updated_before=None):
        """Mappings with an operation in flight: of the given ``owners``
        only, and/or that last moved before ``updated_before``."""
        return [cls._from_db_row(context, None, b)
                for b in _get_with_tasks(context, owners, updated_before)]

    @classmethod
    def get_by_volume_and_instance(cls, context, volume_id, instance_uuid):
        """``VolumeBDMNotFound`` (404) when the volume is not mapped."""
        db_obj = _get_by_volume_and_instance(context, volume_id,
                                             instance_uuid)
        if db_obj is None:
            raise exception.VolumeBDMNotFound(instance_uuid=instance_uuid,
                                              volume_id=volume_id)
        return cls._from_db_row(context, None, db_obj)

    @classmethod
    def get_all_by_volume(cls, context, volume_id):
        """Every mapping of the volume, on any server."""
        return [cls._from_db_row(context, None, b)
                for b in _get_by_volume(context, volume_id)]

    @classmethod
    def get_all_by_instance(cls, context, instance_uuid):
        """The server's mappings, in creation order."""
        return [cls._from_db_row(context, None, b)
                for b in _get_by_instance_uuids(context, [instance_uuid])]

    @classmethod
    def get_all_by_instances(cls, context, instance_uuids):
        """{instance uuid: [mappings]} in one query."""
        result = {uuid: [] for uuid in instance_uuids}
        if instance_uuids:
            for b in _get_by_instance_uuids(context, list(instance_uuids)):
                result[b['instance_uuid']].append(
                    cls._from_db_row(context, None, b))
        return result
