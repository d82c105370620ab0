"""Servers (the ``instances`` table).

State moves by compare-and-swap: ``Instance.save(expected_task_state=...)``
is one ``UPDATE ... WHERE task_state IN (...)`` (the object's
``conditional_update``), and a lost race raises
``UnexpectedTaskStateError`` (409) instead of overwriting another request's
change. A deleted server keeps its row with ``vm_state = 'deleted'`` (its
instance actions stay readable); every lookup skips it unless asked.
"""

import re

from oslo_utils import uuidutils
from oslo_versionedobjects import fields
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.objects import base
from nova_lite import states
from nova_lite import utils

_UNSET = object()

# Columns a caller may change with save(); the rest are set at create.
_UPDATABLE = ('display_name', 'host', 'availability_zone', 'vm_state',
              'task_state', 'power_state', 'launched_at', 'terminated_at',
              'locked', 'locked_by', 'locked_reason', 'root_device_name',
              'shelved_at', 'deleted_at', 'task_owner', 'task_updated_at',
              'access_ip_v4', 'access_ip_v6', 'hostname',
              'display_description', 'server_metadata')

# Fields peers of an older object version do not know.
_FIELDS_SINCE_1_1 = ('task_owner', 'task_updated_at')
_FIELDS_SINCE_1_2 = ('access_ip_v4', 'access_ip_v6', 'hostname')
_FIELDS_SINCE_1_3 = ('display_description', 'server_metadata')


def _not_deleted():
    return models.Instance.vm_state != states.DELETED


# The lookup every request and RPC method starts with: a Core statement
# on the table, built once; the object is loaded from the result row.
_INSTANCES = models.Instance.__table__
_BY_UUID = sa.select(_INSTANCES).where(
    _INSTANCES.c.uuid == sa.bindparam('uuid'))
_BY_UUID_NOT_DELETED = _BY_UUID.where(_INSTANCES.c.vm_state != states.DELETED)
_BY_UUIDS_NOT_DELETED = sa.select(_INSTANCES).where(
    _INSTANCES.c.uuid.in_(sa.bindparam('uuids', expanding=True)),
    _INSTANCES.c.vm_state != states.DELETED)


@db_api.context_manager.reader
def _get_by_uuid(context, uuid, read_deleted):
    """The server's row (by column name) or None."""
    return context.session.execute(
        _BY_UUID if read_deleted else _BY_UUID_NOT_DELETED,
        {'uuid': uuid}).mappings().one_or_none()


@db_api.context_manager.reader
def _get_by_uuids(context, uuids):
    """The live servers' rows among ``uuids`` (one statement)."""
    return context.session.execute(
        _BY_UUIDS_NOT_DELETED, {'uuids': list(uuids)}).mappings().all()


@db_api.context_manager.writer
def _create(context, values, bdm_values):
    instance = models.Instance(**values)
    context.session.add(instance)
    for values in bdm_values:
        context.session.add(models.BlockDeviceMapping(**values))
    context.session.flush()
    return instance


def _name_clause(name):
    """Nova's ``name`` filter: a regular expression searched in the
    server's name, run by the database (an invalid one is matched as
    plain text)."""
    try:
        re.compile(name)
    except re.error:
        name = re.escape(name)
    return models.Instance.display_name.regexp_match(name)


@db_api.context_manager.reader
def _get_all(context, project_id, vm_states, read_deleted, host, name,
             limit, marker):
    """One page of servers, newest first: at most ``limit`` rows (None:
    all) after the server ``marker`` (a uuid; ``MarkerNotFound`` when it
    is not among the servers listed). Keyset paging on (created_at, id),
    so a page costs the same whatever the number of servers before it."""
    order = (models.Instance.created_at.desc(), models.Instance.id.desc())
    query = sa.select(models.Instance).order_by(*order)
    if project_id is not None:
        query = query.filter_by(project_id=project_id)
    if vm_states is not None:
        query = query.where(models.Instance.vm_state.in_(vm_states))
    elif not read_deleted:
        query = query.where(_not_deleted())
    if host is not None:
        query = query.filter_by(host=host)
    if name:
        query = query.where(_name_clause(name))
    if marker is not None:
        after = context.session.execute(
            query.with_only_columns(models.Instance.created_at,
                                    models.Instance.id)
            .where(models.Instance.uuid == marker)).one_or_none()
        if after is None:
            raise exception.MarkerNotFound(marker=marker)
        query = query.where(sa.or_(
            models.Instance.created_at < after.created_at,
            sa.and_(models.Instance.created_at == after.created_at,
                    models.Instance.id < after.id)))
    if limit is not None:
        query = query.limit(limit)
    return context.session.execute(query).scalars().all()


@db_api.context_manager.reader
def _get_stalled_tasks(context, task_state, owner_prefixes, updated_before):
    owner = models.Instance.task_owner
    return context.session.execute(
        sa.select(models.Instance).where(
            models.Instance.task_state == task_state,
            sa.or_(*[owner.startswith(p, autoescape=True)
                     for p in owner_prefixes]),
            _not_deleted(),
            sa.or_(models.Instance.task_updated_at.is_(None),
                   models.Instance.task_updated_at < updated_before))
    ).scalars().all()


@db_api.context_manager.reader
def _count_by_host(context, hosts):
    rows = context.session.execute(
        sa.select(models.Instance.host, sa.func.count())
        .where(models.Instance.host.in_(hosts), _not_deleted())
        .group_by(models.Instance.host)).all()
    return dict(rows)


@base.NovaLiteObjectRegistry.register
class Instance(base.NovaLiteObject, base.NovaLiteTimestampObject):
    # 1.0: initial
    # 1.1: task_owner, task_updated_at
    # 1.2: access_ip_v4, access_ip_v6, hostname
    # 1.3: display_description, server_metadata
    VERSION = '1.3'
    FIELDS_SINCE = {'1.1': _FIELDS_SINCE_1_1, '1.2': _FIELDS_SINCE_1_2,
                    '1.3': _FIELDS_SINCE_1_3}

    fields = dict(base.NovaLiteTimestampObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'display_name': fields.StringField(),
        'project_id': fields.StringField(),
        'user_id': fields.StringField(),
        'host': fields.StringField(nullable=True),
        'availability_zone': fields.StringField(nullable=True),
        'flavor_id': fields.StringField(),
        'image_ref': fields.StringField(nullable=True),
        'vm_state': fields.StringField(),
        'task_state': fields.StringField(nullable=True),
        'power_state': fields.IntegerField(),
        'launched_at': fields.DateTimeField(nullable=True),
        'terminated_at': fields.DateTimeField(nullable=True),
        'locked': fields.BooleanField(),
        'locked_by': fields.StringField(nullable=True),
        'locked_reason': fields.StringField(nullable=True),
        'reservation_id': fields.StringField(nullable=True),
        'launch_index': fields.IntegerField(),
        'root_device_name': fields.StringField(nullable=True),
        'shelved_at': fields.DateTimeField(nullable=True),
        'deleted_at': fields.DateTimeField(nullable=True),
        # Who owns task_state ('<binary>:<host>') and since when.
        'task_owner': fields.StringField(nullable=True),
        'task_updated_at': fields.DateTimeField(nullable=True),
        # What the create gave (accessIPv4/v6; hostname from 2.90).
        'access_ip_v4': fields.StringField(nullable=True),
        'access_ip_v6': fields.StringField(nullable=True),
        'hostname': fields.StringField(nullable=True),
        # The create's or an update's description (2.19) and metadata.
        'display_description': fields.StringField(nullable=True),
        'server_metadata': fields.DictOfStringsField(nullable=True),
    })

    model = models.Instance

    @property
    def status(self):
        return states.status_of(self.vm_state, self.task_state)

    @classmethod
    def get_by_uuid(cls, context, uuid, read_deleted=False):
        """The server ``uuid``; ``InstanceNotFound`` (404) if there is none
        (or it is deleted, unless ``read_deleted``)."""
        row = _get_by_uuid(context, uuid, read_deleted)
        if row is None:
            raise exception.InstanceNotFound(instance_id=uuid)
        return cls._from_db_row(context, None, row)

    def create(self, block_device_mappings=()):
        """Insert the server and its block device mappings (objects not
        yet created) in one transaction."""
        values = self.obj_get_changes()
        values.pop('id', None)
        bdms = []
        for bdm in block_device_mappings:
            bdm_values = bdm.obj_get_changes()
            bdm_values['instance_uuid'] = self.uuid
            bdm_values.setdefault('uuid', uuidutils.generate_uuid())
            bdms.append(bdm_values)
        db_obj = _create(self._context, values, bdms)
        self._from_db_object(self._context, self, db_obj)

    def save(self, expected_task_state=_UNSET, expected_vm_state=_UNSET,
             expected_host=_UNSET):
        """Write the changed fields, if the server is (still) in the
        expected states: ``UnexpectedTaskStateError`` (409) otherwise."""
        changes = {k: v for k, v in self.obj_get_changes().items()
                   if k in _UPDATABLE}
        if not changes:
            return
        given = {name: value for name, value in (
            ('task_state', expected_task_state),
            ('vm_state', expected_vm_state), ('host', expected_host))
            if value is not _UNSET}
        expected = {name: [value] if name == 'host' else list(value)
                    for name, value in given.items()}
        # Never a deleted server's row.
        expected['vm_state'] = [s for s in expected['vm_state']
                                if s != states.DELETED] \
            if 'vm_state' in expected else db_api.Not(states.DELETED)
        if self.conditional_update(changes, expected):
            return
        row = _get_by_uuid(self._context, self.uuid, True)
        if row is None or row['vm_state'] == states.DELETED or not given:
            # Gone, or (nothing expected) deleted since it was read.
            raise exception.InstanceNotFound(instance_id=self.uuid)
        name = next(iter(given))
        raise exception.UnexpectedTaskStateError(
            instance_uuid=self.uuid, expected=given[name], actual=row[name])

    @classmethod
    def get_stalled_tasks(cls, context, task_state, binaries,
                          updated_before):
        """Servers in ``task_state`` whose task a service of one of
        ``binaries`` owns and which did not move since ``updated_before``
        (naive UTC)."""
        rows = _get_stalled_tasks(context, task_state,
                                  [b + ':' for b in binaries],
                                  updated_before)
        return [cls._from_db_object(context, None, r) for r in rows]

    def take_over_task(self, owner):
        """Take the server's task over from its stalled owner: a
        compare-and-swap on the owner and the last move this object read
        from the database; ``TaskOwnerChanged`` if it moved meanwhile."""
        if not self.conditional_update(
                {'task_owner': owner, 'task_updated_at': utils.utcnow()},
                {'task_owner': self.task_owner,
                 'task_updated_at': self.task_updated_at}):
            raise exception.InstanceTaskOwnerChanged(
                task=self.task_state, instance_uuid=self.uuid)

    def refresh(self):
        row = _get_by_uuid(self._context, self.uuid, True)
        if row is None:
            raise exception.InstanceNotFound(instance_id=self.uuid)
        self._from_db_row(self._context, self, row)


def get_all(context, project_id=None, status=None, name=None,
            read_deleted=False, host=None, limit=None, marker=None):
    """Servers, newest first: of one project (None: all), with this API
    ``status`` and a ``name`` matching this regular expression; at most
    ``limit`` of them after the server ``marker`` (see ``_get_all``)."""
    vm_states = None
    if status is not None:
        vm_states = states.vm_states_of_status(status)
        if not vm_states:
            return []
    rows = _get_all(context, project_id, vm_states, read_deleted, host,
                    name, limit, marker)
    return [Instance._from_db_object(context, None, r) for r in rows]


def get_by_uuids(context, uuids):
    """``{uuid: Instance}`` of the live (not deleted) servers among
    ``uuids``, read in one statement; the others are missing."""
    uuids = sorted(set(uuids))
    if not uuids:
        return {}
    return {row['uuid']: Instance._from_db_row(context, None, row)
            for row in _get_by_uuids(context, uuids)}


def count_by_host(context, hosts):
    """{host: number of servers on it} for ``hosts``."""
    if not hosts:
        return {}
    return _count_by_host(context, list(hosts))
