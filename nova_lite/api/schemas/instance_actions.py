"""Schemas of /v2.1/servers/{server_id}/os-instance-actions."""

import copy

from nova_lite.api.schemas import common

LIST_QUERY = common.query({}, strict=False)
LIST_QUERY_V258 = common.query({
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'marker': common.STRING_PARAM,
    'changes-since': common.STRING_PARAM,
}, strict=True)
LIST_QUERY_V266 = common.query({
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'marker': common.STRING_PARAM,
    'changes-since': common.STRING_PARAM,
    'changes-before': common.STRING_PARAM,
}, strict=True)
SHOW_QUERY = common.query({}, strict=False)
# 2.102: unknown query parameters are refused everywhere.
SHOW_QUERY_V2102 = common.query({}, strict=True)

_ACTION = {
    'type': 'object',
    'properties': {
        'action': {'type': 'string'},
        'instance_uuid': common.UUID,
        'message': common.NULLABLE_STRING,
        'project_id': common.NULLABLE_STRING,
        'request_id': {'type': 'string'},
        'start_time': common.DATETIME,
        'user_id': common.NULLABLE_STRING,
    },
    'required': ['action', 'instance_uuid', 'message', 'project_id',
                 'request_id', 'start_time', 'user_id'],
    'additionalProperties': False,
}
_ACTION_V258 = copy.deepcopy(_ACTION)
_ACTION_V258['properties']['updated_at'] = common.NULLABLE_DATETIME
_ACTION_V258['required'].append('updated_at')

_EVENT = {
    'type': 'object',
    'properties': {
        'event': {'type': 'string'},
        'start_time': common.DATETIME,
        'finish_time': common.NULLABLE_DATETIME,
        'result': common.NULLABLE_STRING,
        # Only with the events policy (administrators).
        'traceback': common.NULLABLE_STRING,
    },
    'required': ['event', 'start_time', 'finish_time', 'result'],
    'additionalProperties': False,
}
_EVENT_V262 = copy.deepcopy(_EVENT)
_EVENT_V262['properties']['hostId'] = {'type': 'string'}
_EVENT_V262['properties']['host'] = common.NULLABLE_STRING
_EVENT_V262['required'].append('hostId')
_EVENT_V284 = copy.deepcopy(_EVENT_V262)
_EVENT_V284['properties']['details'] = common.NULLABLE_STRING


def _with_events(action, event, required):
    item = copy.deepcopy(action)
    item['properties']['events'] = {'type': 'array', 'items': event}
    if required:
        item['required'].append('events')
    return item


def _list(item):
    return {
        'type': 'object',
        'properties': {
            'instanceActions': {'type': 'array', 'items': item},
            'links': {'type': 'array', 'items': {
                'type': 'object',
                'properties': {'rel': {'type': 'string'},
                               'href': {'type': 'string'}},
                'required': ['rel', 'href'],
                'additionalProperties': False}},
        },
        'required': ['instanceActions'],
        'additionalProperties': False,
    }


def _show(item):
    return {
        'type': 'object',
        'properties': {'instanceAction': item},
        'required': ['instanceAction'],
        'additionalProperties': False,
    }


LIST_RESPONSE = _list(_ACTION)
LIST_RESPONSE_V258 = _list(_ACTION_V258)

# Events only for administrators before 2.51, for everyone from 2.51.
SHOW_RESPONSE = _show(_with_events(_ACTION, _EVENT, required=False))
SHOW_RESPONSE_V251 = _show(_with_events(_ACTION, _EVENT, required=True))
SHOW_RESPONSE_V258 = _show(_with_events(_ACTION_V258, _EVENT, True))
SHOW_RESPONSE_V262 = _show(_with_events(_ACTION_V258, _EVENT_V262, True))
SHOW_RESPONSE_V284 = _show(_with_events(_ACTION_V258, _EVENT_V284, True))
