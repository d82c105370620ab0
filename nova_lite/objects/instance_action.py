"""Instance actions and their events (``os-instance-actions``).

An action is one user request on a server (``attach_volume``, ``stop``),
keyed by the request id; events are the steps services ran for it
(``compute_attach_volume``), each with its result and, on failure, the
traceback and a short ``details`` string. ``EventReporter`` wraps a step.
"""

import sys
import traceback as tb_module

from oslo_log import log as logging
from oslo_versionedobjects import fields
import sqlalchemy as sa
from sqlalchemy import orm

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.objects import base
from nova_lite.objects import instance_fault
from nova_lite import utils

LOG = logging.getLogger(__name__)

RESULT_SUCCESS = 'Success'
RESULT_ERROR = 'Error'

# Action names (Nova's).
CREATE = 'create'
DELETE = 'delete'
STOP = 'stop'
START = 'start'
PAUSE = 'pause'
UNPAUSE = 'unpause'
LOCK = 'lock'
UNLOCK = 'unlock'
ATTACH_VOLUME = 'attach_volume'
DETACH_VOLUME = 'detach_volume'
SWAP_VOLUME = 'swap_volume'
EXTEND_VOLUME = 'extend_volume'
SHELVE = 'shelve'
SHELVE_OFFLOAD = 'shelveOffload'
UNSHELVE = 'unshelve'
RESTORE = 'restore'


def transaction(context):
    """A writer transaction for ``with``: an action and the rows its
    request writes with it (a block device mapping) are written in one
    transaction, all or nothing: the writers inside join it."""
    return db_api.context_manager.writer.using(context)


@db_api.context_manager.writer
def _action_start(context, values):
    """INSERT the action; returns its id."""
    result = context.session.execute(_INSERT_ACTION, values)
    return result.inserted_primary_key[0]


@db_api.context_manager.reader
def _get_action(context, instance_uuid, request_id):
    return context.session.execute(
        sa.select(models.InstanceAction)
        .filter_by(instance_uuid=instance_uuid, request_id=request_id)
        .order_by(models.InstanceAction.id.desc()).limit(1)
    ).scalar_one_or_none()


@db_api.context_manager.reader
def _get_action_with_events(context, instance_uuid, request_id):
    return context.session.execute(
        sa.select(models.InstanceAction)
        .filter_by(instance_uuid=instance_uuid, request_id=request_id)
        .options(orm.selectinload(models.InstanceAction.events))
        .order_by(models.InstanceAction.id.desc()).limit(1)
    ).scalar_one_or_none()


@db_api.context_manager.reader
def _get_actions(context, instance_uuid, limit, marker, changes_since,
                 changes_before):
    model = models.InstanceAction
    query = sa.select(model).filter_by(instance_uuid=instance_uuid)
    if marker is not None:
        mark = _get_action(context, instance_uuid, marker)
        if mark is None:
            raise exception.MarkerNotFound(marker=marker)
        query = query.where(sa.or_(
            model.created_at < mark.created_at,
            sa.and_(model.created_at == mark.created_at,
                    model.id < mark.id)))
    if changes_since is not None:
        query = query.where(sa.func.coalesce(
            model.updated_at, model.created_at) >= changes_since)
    if changes_before is not None:
        query = query.where(sa.func.coalesce(
            model.updated_at, model.created_at) <= changes_before)
    query = query.order_by(model.created_at.desc(), model.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return context.session.execute(query).scalars().all()


# Every step of every request records an event start and finish (four
# writer transactions per attach), and every request that changes a server
# starts an action. These writers are Core statements on the tables, built
# once with bound parameters (not per call). Called inside an outer
# ``transaction()``, they join it.
_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__

_INSERT_ACTION = sa.insert(_ACTIONS)
_FINISH_ACTION = sa.update(_ACTIONS).where(
    _ACTIONS.c.id == sa.bindparam('action_id')).values(
    finish_time=sa.bindparam('finish_time'))
_ACTION_ID = sa.select(_ACTIONS.c.id).where(
    _ACTIONS.c.instance_uuid == sa.bindparam('instance_uuid'),
    _ACTIONS.c.request_id == sa.bindparam('request_id')).order_by(
    _ACTIONS.c.id.desc()).limit(1)
# The action's updated_at follows its events (changes-since, 2.58).
_TOUCH_ACTION = sa.update(_ACTIONS).where(
    _ACTIONS.c.id == sa.bindparam('action_id')).values(
    updated_at=sa.bindparam('at'))
_TOUCH_ACTION_ERROR = sa.update(_ACTIONS).where(
    _ACTIONS.c.id == sa.bindparam('action_id')).values(
    updated_at=sa.bindparam('at'), message=RESULT_ERROR)
_INSERT_EVENT = sa.insert(_EVENTS)
_LAST_EVENT_ID = sa.select(_EVENTS.c.id).where(
    _EVENTS.c.action_id == sa.bindparam('action_id'),
    _EVENTS.c.event == sa.bindparam('event_name')).order_by(
    _EVENTS.c.id.desc()).limit(1)
_FINISH_EVENT = sa.update(_EVENTS).where(
    _EVENTS.c.id == sa.bindparam('event_id')).values(
    finish_time=sa.bindparam('finish_time'), result=sa.bindparam('result'),
    details=sa.bindparam('details'), traceback=sa.bindparam('traceback'))


@db_api.context_manager.writer
def _finish_action(context, action_id, finish_time):
    context.session.execute(_FINISH_ACTION, {
        'action_id': action_id, 'finish_time': finish_time})


def _action_id(context, instance_uuid, request_id):
    action_id = context.session.execute(_ACTION_ID, {
        'instance_uuid': instance_uuid, 'request_id': request_id}).scalar()
    if action_id is None:
        raise exception.InstanceActionNotFound(request_id=request_id,
                                               instance_uuid=instance_uuid)
    return action_id


# Both writers update the action row *before* they touch its events. The
# event INSERT's foreign key check takes a shared lock on the action row;
# taken after it, the action UPDATE is a lock upgrade, and two services
# recording steps of one request at the same moment (the conductor
# finishing its event as the host starts its own) deadlock on MariaDB.
# Updating the action first serializes them on its row instead.


@db_api.context_manager.writer
def _event_start(context, instance_uuid, request_id, values):
    """Returns ``(action id, event id)``: what ``_event_finish`` needs to
    finish this event without looking either up again."""
    action_id = _action_id(context, instance_uuid, request_id)
    context.session.execute(_TOUCH_ACTION, {
        'action_id': action_id, 'at': values['start_time']})
    result = context.session.execute(
        _INSERT_EVENT, dict(values, action_id=action_id))
    return action_id, result.inserted_primary_key[0]


@db_api.context_manager.writer
def _event_finish(context, instance_uuid, request_id, event_name, values,
                  ids=None, open_only=False):
    """Finish the request's latest ``event_name`` event, or, with ``ids``
    (what ``_event_start`` returned in this process), that very event:
    two statements fewer. ``open_only``: unless another process finished
    it already (then nothing changes)."""
    if ids is not None:
        action_id, event_id = ids
    else:
        action_id = _action_id(context, instance_uuid, request_id)
        event_id = context.session.execute(_LAST_EVENT_ID, {
            'action_id': action_id, 'event_name': event_name}).scalar()
    if event_id is None:
        raise exception.InstanceActionEventNotFound(action_id=action_id,
                                                    event=event_name)
    touch = (_TOUCH_ACTION_ERROR if values['result'] == RESULT_ERROR
             else _TOUCH_ACTION)
    context.session.execute(touch, {'action_id': action_id,
                                    'at': values['finish_time']})
    finish = {'finish_time': values['finish_time'],
              'result': values['result'], 'details': values.get('details'),
              'traceback': values.get('traceback')}
    if open_only:
        # Unless somebody finished it already (a service that settled the
        # step meanwhile: its verdict stands).
        db_api.conditional_update(context, models.InstanceActionEvent,
                                  finish, {'id': event_id,
                                           'finish_time': None})
        return
    result = context.session.execute(_FINISH_EVENT,
                                     dict(finish, event_id=event_id))
    if result.rowcount != 1:
        raise exception.InstanceActionEventNotFound(action_id=action_id,
                                                    event=event_name)


@base.NovaLiteObjectRegistry.register
class InstanceActionEvent(base.NovaLiteObject,
                          base.NovaLiteTimestampObject):
    VERSION = '1.0'

    fields = dict(base.NovaLiteTimestampObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'action_id': fields.IntegerField(),
        'event': fields.StringField(),
        'start_time': fields.DateTimeField(),
        'finish_time': fields.DateTimeField(nullable=True),
        'result': fields.StringField(nullable=True),
        'traceback': fields.StringField(nullable=True),
        'host': fields.StringField(nullable=True),
        'details': fields.StringField(nullable=True),
    })

    @staticmethod
    def event_start(context, instance_uuid, event_name, host=None):
        """Record the start; returns the ``ids`` for ``event_finish``."""
        return _event_start(context, instance_uuid, context.request_id, {
            'event': event_name, 'start_time': utils.utcnow(),
            'host': host})

    @staticmethod
    def event_finish(context, instance_uuid, event_name, exc=None,
                     exc_tb=None, ids=None, open_only=False):
        values = {'finish_time': utils.utcnow(), 'result': RESULT_SUCCESS}
        if exc is not None:
            message, _code = instance_fault.message_and_code(exc)
            values.update(
                result=RESULT_ERROR, details=message,
                traceback=''.join(tb_module.format_exception(
                    type(exc), exc, exc_tb or exc.__traceback__)))
        _event_finish(context, instance_uuid, context.request_id,
                      event_name, values, ids=ids, open_only=open_only)


@base.NovaLiteObjectRegistry.register
class InstanceAction(base.NovaLiteObject, base.NovaLiteTimestampObject):
    VERSION = '1.0'

    fields = dict(base.NovaLiteTimestampObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'action': fields.StringField(),
        'instance_uuid': fields.UUIDField(),
        'request_id': fields.StringField(),
        'user_id': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'start_time': fields.DateTimeField(),
        'finish_time': fields.DateTimeField(nullable=True),
        'message': fields.StringField(nullable=True),
        'events': fields.ListOfObjectsField('InstanceActionEvent'),
    })

    @classmethod
    def _from_db_object(cls, context, obj, db_obj, events=None):
        obj = cls._new(context, obj)
        cls._from_db_fields(obj, db_obj, [
            f for f in obj.fields if f != 'events'])
        if events is not None:
            obj.events = [InstanceActionEvent._from_db_object(
                context, None, e) for e in events]
        obj.obj_reset_changes()
        return obj

    @classmethod
    def action_start(cls, context, instance_uuid, action):
        """Record that the request ``context`` started ``action``."""
        now = utils.utcnow()
        values = {
            'action': action, 'instance_uuid': instance_uuid,
            'request_id': context.request_id,
            'user_id': context.user_id or '',
            'project_id': context.project_id or '',
            'start_time': now, 'created_at': now}
        action_id = _action_start(context, values)
        obj = cls(context=context, id=action_id, updated_at=None,
                  finish_time=None, message=None, **values)
        obj.obj_reset_changes()
        return obj

    def finish(self):
        self.finish_time = utils.utcnow()
        _finish_action(self._context, self.id, self.finish_time)
        self.obj_reset_changes(['finish_time'])

    @classmethod
    def get_by_request_id(cls, context, instance_uuid, request_id):
        """The action with its events; ``InstanceActionNotFound`` (404)."""
        db_obj = _get_action_with_events(context, instance_uuid, request_id)
        if db_obj is None:
            raise exception.InstanceActionNotFound(
                request_id=request_id, instance_uuid=instance_uuid)
        return cls._from_db_object(context, None, db_obj,
                                   events=db_obj.events)

    @classmethod
    def get_all_by_instance(cls, context, instance_uuid, limit=None,
                            marker=None, changes_since=None,
                            changes_before=None):
        """Newest first; ``marker`` is a request id (``MarkerNotFound``)."""
        return [cls._from_db_object(context, None, a)
                for a in _get_actions(context, instance_uuid, limit, marker,
                                      changes_since, changes_before)]


class EventReporter(object):
    """Record one step of the current request's action as an event::

        with EventReporter(ctxt, 'compute_attach_volume', host, uuid):
            ...

    The event is finished with ``Success``, or with ``Error`` plus the
    traceback when the block raises (the exception propagates). When the
    request recorded no action (nothing to attach the event to), the step
    runs unrecorded.

    ``finish()`` ends the event with ``Success`` before the block does, so
    that the step's last write and its event's end can share a
    transaction, and so that nothing the step hands on (a cast) waits on
    it. Should the block still raise after that, the event is finished
    again, with ``Error``: what the user sees is what happened. An event
    another service finished meanwhile (it settled the step: its task was
    taken from this one) keeps that service's result.
    """

    def __init__(self, context, event_name, host, *instance_uuids):
        self.context = context
        self.event_name = event_name
        self.host = host
        self.instance_uuids = instance_uuids
        self._started = []
        self._finished = False

    def __enter__(self):
        for uuid in self.instance_uuids:
            try:
                ids = InstanceActionEvent.event_start(
                    self.context, uuid, self.event_name, self.host)
                self._started.append((uuid, ids))
            except exception.InstanceActionNotFound:
                LOG.debug('No action for request %s on %s: event %s not '
                          'recorded', self.context.request_id, uuid,
                          self.event_name)
            except Exception:
                # Recording is never worth failing (and so not undoing) the
                # step itself for.
                LOG.exception('Could not record the start of event %s of '
                              '%s', self.event_name, uuid)
        return self

    def _finish(self, exc=None, exc_tb=None):
        for uuid, ids in self._started:
            try:
                InstanceActionEvent.event_finish(
                    self.context, uuid, self.event_name, exc=exc,
                    exc_tb=exc_tb, ids=ids, open_only=not self._finished)
            except Exception:
                LOG.exception('Could not finish event %s of %s',
                              self.event_name, uuid)

    def finish(self):
        """Finish the event(s) now, with ``Success`` (in the caller's
        transaction, if it is in one)."""
        self._finish()
        self._finished = True

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_val is not None or not self._finished:
            self._finish(exc_val, exc_tb)
        return False


def record_failure(context, instance_uuid, event_name, exc, host=None):
    """A finished ``Error`` event for a step that failed before it could
    be wrapped (e.g. in the conductor); no action: nothing recorded.
    True if the event was recorded."""
    try:
        ids = InstanceActionEvent.event_start(context, instance_uuid,
                                              event_name, host)
        InstanceActionEvent.event_finish(context, instance_uuid, event_name,
                                         exc=exc, exc_tb=sys.exc_info()[2],
                                         ids=ids)
    except exception.InstanceActionNotFound:
        LOG.debug('No action for request %s on %s: %s not recorded',
                  context.request_id, instance_uuid, event_name)
        return False
    return True


@db_api.context_manager.writer
def _finish_open_events(context, instance_uuid, request_id, values):
    """Finish every event of the request's action still open; the number
    finished."""
    action_id = _action_id(context, instance_uuid, request_id)
    touch = (_TOUCH_ACTION_ERROR if values['result'] == RESULT_ERROR
             else _TOUCH_ACTION)
    context.session.execute(touch, {'action_id': action_id,
                                    'at': values['finish_time']})
    return context.session.execute(
        sa.update(_EVENTS).where(_EVENTS.c.action_id == action_id,
                                 _EVENTS.c.finish_time.is_(None))
        .values(**values)).rowcount


def settle_events(context, instance_uuid, event_name, exc=None, host=None):
    """After a crash: end the request's (``context.request_id``) events
    that its dead process left open, with ``Error`` and ``exc``'s message
    when the work was rolled back (``exc``), else with ``Success``. If none
    was open and the work was rolled back, an ``event_name`` event records
    the error, so the user always sees why the volume is not attached.
    Nothing happens when the request recorded no action."""
    values = {'finish_time': utils.utcnow(), 'result': RESULT_SUCCESS,
              'details': None, 'traceback': None}
    if exc is not None:
        message, _code = instance_fault.message_and_code(exc)
        values.update(result=RESULT_ERROR, details=message)
    try:
        finished = _finish_open_events(context, instance_uuid,
                                       context.request_id, values)
    except exception.InstanceActionNotFound:
        return
    if not finished and exc is not None:
        record_failure(context, instance_uuid, event_name, exc, host=host)
