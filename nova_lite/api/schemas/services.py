"""Schemas of /v2.1/os-services: the list, and (2.53) the update of a
compute service by its uuid."""

import copy

from nova_lite.api.schemas import common
from nova_lite.api.schemas import volume_attachments as va_schema

_QUERY_PROPERTIES = {
    'binary': common.STRING_PARAM,
    'host': common.STRING_PARAM,
}
LIST_QUERY = common.query(_QUERY_PROPERTIES, strict=False)
# 2.102: unknown query parameters are refused everywhere.
LIST_QUERY_V2102 = common.query(_QUERY_PROPERTIES, strict=True)

_SERVICE = {
    'type': 'object',
    'properties': {
        'id': {'type': 'integer'},
        'binary': {'type': 'string'},
        'disabled_reason': common.NULLABLE_STRING,
        'host': {'type': 'string'},
        'state': {'enum': ['up', 'down']},
        'status': {'enum': ['enabled', 'disabled']},
        'updated_at': common.NULLABLE_DATETIME,
        'zone': {'type': 'string'},
    },
    'required': ['id', 'binary', 'disabled_reason', 'host', 'state',
                 'status', 'updated_at', 'zone'],
    'additionalProperties': False,
}
LIST_RESPONSE = {
    'type': 'object',
    'properties': {'services': {'type': 'array', 'items': _SERVICE}},
    'required': ['services'],
    'additionalProperties': False,
}

_SERVICE_V211 = copy.deepcopy(_SERVICE)
_SERVICE_V211['properties']['forced_down'] = {'type': 'boolean'}
_SERVICE_V211['required'].append('forced_down')
LIST_RESPONSE_V211 = common.extend(LIST_RESPONSE, [], services={
    'type': 'array', 'items': _SERVICE_V211})

_SERVICE_V253 = copy.deepcopy(_SERVICE_V211)
_SERVICE_V253['properties']['id'] = common.UUID
LIST_RESPONSE_V253 = common.extend(LIST_RESPONSE, [], services={
    'type': 'array', 'items': _SERVICE_V253})


# PUT /os-services/{service_id} (2.53): Nova's update_v253.
UPDATE_V253 = {
    'type': 'object',
    'properties': {
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'disabled_reason': {'type': 'string', 'minLength': 1,
                            'maxLength': 255},
        'forced_down': va_schema.BOOLEAN,
    },
    'additionalProperties': False,
}
UPDATE_RESPONSE_V253 = {
    'type': 'object',
    'properties': {'service': _SERVICE_V253},
    'required': ['service'],
    'additionalProperties': False,
}
