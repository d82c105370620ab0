"""/v2.1/servers/{server_id}/os-instance-actions: what was done to a
server, and how each step went.

An action per request (``attach_volume``, ``stop``...) with its events
(``compute_attach_volume``...): a failed step has result ``Error``, its
traceback for administrators and, from 2.84, a ``details`` message.
Events are shown to administrators, and to everyone from 2.51. From 2.21
the actions of a deleted server can still be read.
"""

import hashlib

from oslo_utils import timeutils

from nova_lite.api import links
from nova_lite.api import microversion as mv
from nova_lite.api.schemas import instance_actions as schema
from nova_lite.api import validation
from nova_lite.compute import api as compute_api
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import instance_action
from nova_lite.policies import instance_actions as policies
from nova_lite import utils


def _instance(req, ctxt, server_id, rule):
    want = mv.want(req)
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    instance = api.get(
        ctxt, server_id,
        read_deleted=want.matches(mv.ACTIONS_OF_DELETED_SERVERS))
    ctxt.can(rule, target={'project_id': instance.project_id})
    return instance


def _serialize_action(action, want):
    view = {
        'action': action.action,
        'instance_uuid': action.instance_uuid,
        'message': action.message,
        'project_id': action.project_id,
        'request_id': action.request_id,
        'start_time': utils.isotime(action.start_time),
        'user_id': action.user_id,
    }
    if want.matches(mv.ACTIONS_PAGING):
        view['updated_at'] = utils.isotime(action.updated_at)
    return view


def _event_host_id(project_id, host):
    if not host:
        return ''
    return hashlib.sha224((project_id + host).encode('utf-8')).hexdigest()


def _serialize_event(event, want, project_id, show_traceback,
                     show_details):
    view = {
        'event': event.event,
        'start_time': utils.isotime(event.start_time),
        'finish_time': utils.isotime(event.finish_time),
        'result': event.result,
    }
    if show_traceback:
        view['traceback'] = event.traceback
    if want.matches(mv.ACTION_EVENT_HOST):
        view['hostId'] = _event_host_id(project_id, event.host)
        if show_traceback:
            view['host'] = event.host
    if want.matches(mv.ACTION_EVENT_DETAILS) and show_details:
        view['details'] = event.details
    return view


def _time_param(req, name):
    value = req.GET.get(name)
    if value is None:
        return None
    try:
        parsed = timeutils.parse_isotime(value)
    except ValueError:
        raise exception.ValidationError(
            message=_('Invalid input for query parameter %(name)s: '
                      '%(value)s is not a date-time.') %
            {'name': name, 'value': value})
    return timeutils.normalize_time(parsed)


@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.ACTIONS_PAGING))
@validation.query(schema.LIST_QUERY_V258, mv.ACTIONS_PAGING,
                  mv.before(mv.ACTIONS_CHANGES_BEFORE))
@validation.query(schema.LIST_QUERY_V266, mv.ACTIONS_CHANGES_BEFORE)
@validation.response(200, schema.LIST_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.ACTIONS_PAGING))
@validation.response(200, schema.LIST_RESPONSE_V258, mv.ACTIONS_PAGING)
def list_instance_actions(req, server_id):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    instance = _instance(req, ctxt, server_id, policies.LIST)
    kwargs = {}
    body_links = []
    if want.matches(mv.ACTIONS_PAGING):
        max_limit = req.environ['nova_lite.conf'].api.max_limit
        limit = req.GET.get('limit')
        limit = min(int(limit), max_limit) if limit else max_limit
        kwargs = dict(limit=limit + 1, marker=req.GET.get('marker'),
                      changes_since=_time_param(req, 'changes-since'),
                      changes_before=_time_param(req, 'changes-before'))
    actions = instance_action.InstanceAction.get_all_by_instance(
        ctxt, instance.uuid, **kwargs)
    more = bool(kwargs) and len(actions) > kwargs['limit'] - 1
    if more:
        actions = actions[:kwargs['limit'] - 1]
    # limit=0 is an empty page, with no next one to point at.
    if more and actions:
        body_links = [{'rel': 'next', 'href': '%s?limit=%d&marker=%s' % (
            links.collection_url(
                req, 'servers/%s/os-instance-actions' % instance.uuid),
            kwargs['limit'] - 1, actions[-1].request_id)}]
    body = {'instanceActions': [_serialize_action(a, want)
                                for a in actions]}
    if body_links:
        body['links'] = body_links
    return body


@validation.query(schema.SHOW_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.SHOW_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.SHOW_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.ACTION_EVENTS_FOR_ALL))
@validation.response(200, schema.SHOW_RESPONSE_V251, mv.ACTION_EVENTS_FOR_ALL,
                     mv.before(mv.ACTIONS_PAGING))
@validation.response(200, schema.SHOW_RESPONSE_V258, mv.ACTIONS_PAGING,
                     mv.before(mv.ACTION_EVENT_HOST))
@validation.response(200, schema.SHOW_RESPONSE_V262, mv.ACTION_EVENT_HOST,
                     mv.before(mv.ACTION_EVENT_DETAILS))
@validation.response(200, schema.SHOW_RESPONSE_V284, mv.ACTION_EVENT_DETAILS)
def show_instance_action(req, server_id, request_id):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    instance = _instance(req, ctxt, server_id, policies.SHOW)
    action = instance_action.InstanceAction.get_by_request_id(
        ctxt, instance.uuid, request_id)
    view = _serialize_action(action, want)
    target = {'project_id': instance.project_id}
    show_events = ctxt.can(policies.EVENTS, target=target, fatal=False)
    if show_events or want.matches(mv.ACTION_EVENTS_FOR_ALL):
        show_details = ctxt.can(policies.EVENTS_DETAILS, target=target,
                                fatal=False)
        view['events'] = [
            _serialize_event(e, want, instance.project_id, show_events,
                             show_details) for e in reversed(action.events)]
    return {'instanceAction': view}
