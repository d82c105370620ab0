"""Schemas of /v3 os-services and os-hosts (Cinder's block-storage
services and hosts, for administrators)."""

import copy

from nova_lite.api.schemas import common

LIST_QUERY = common.query({
    'host': common.STRING_PARAM,
    'binary': common.STRING_PARAM,
    'service': common.STRING_PARAM,   # Cinder's older name of binary
}, strict=False)

_SERVICE = {
    'type': 'object',
    'properties': {
        'binary': {'type': 'string'},
        'disabled_reason': common.NULLABLE_STRING,
        'host': {'type': 'string'},
        'state': {'enum': ['up', 'down']},
        'status': {'enum': ['enabled', 'disabled']},
        'updated_at': common.NULLABLE_DATETIME,
        'zone': {'type': 'string'},
        # cinder-volume only:
        'frozen': {'type': 'boolean'},
        'replication_status': {'type': 'string'},
        'active_backend_id': common.NULLABLE_STRING,
    },
    'required': ['binary', 'disabled_reason', 'host', 'state', 'status',
                 'updated_at', 'zone'],
    'additionalProperties': False,
}
LIST_RESPONSE = {
    'type': 'object',
    'properties': {'services': {'type': 'array', 'items': _SERVICE}},
    'required': ['services'],
    'additionalProperties': False,
}
# 3.7: the service's cluster (nova_lite has none: null).
_SERVICE_V37 = copy.deepcopy(_SERVICE)
_SERVICE_V37['properties']['cluster'] = common.NULLABLE_STRING
_SERVICE_V37['required'].append('cluster')
LIST_RESPONSE_V37 = common.extend(LIST_RESPONSE, [], services={
    'type': 'array', 'items': _SERVICE_V37})
# 3.49: a cinder-volume's backend_state.
_SERVICE_V349 = copy.deepcopy(_SERVICE_V37)
_SERVICE_V349['properties']['backend_state'] = {'enum': ['up', 'down']}
LIST_RESPONSE_V349 = common.extend(LIST_RESPONSE, [], services={
    'type': 'array', 'items': _SERVICE_V349})

_HOST = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255}
# PUT os-services/enable|disable|freeze|thaw: which service (binary, or
# Cinder's older name "service"; the handler requires one of them).
UPDATE = {
    'type': 'object',
    'properties': {'host': _HOST, 'binary': _NAME, 'service': _NAME},
    'required': ['host'],
    'additionalProperties': False,
}
_REASON = {'type': 'string', 'minLength': 1, 'maxLength': 255,
           'pattern': r'^(?!\s*$).+'}
UPDATE_WITH_REASON = common.require(
    common.extend(UPDATE, [], disabled_reason=_REASON),
    [], 'disabled_reason')
FREEZE = {
    'type': 'object',
    'properties': {'host': _HOST},
    'required': ['host'],
    'additionalProperties': False,
}

_UPDATED = {
    'type': 'object',
    'properties': {
        'disabled': {'type': 'boolean'},
        'status': {'enum': ['enabled', 'disabled']},
        'host': {'type': 'string'},
        'service': {'type': 'string'},
        'binary': {'type': 'string'},
    },
    'required': ['disabled', 'status', 'host', 'service', 'binary'],
    'additionalProperties': False,
}
DISABLE_RESPONSE = _UPDATED
ENABLE_RESPONSE = common.require(common.extend(
    _UPDATED, [], disabled_reason=common.NULLABLE_STRING),
    [], 'disabled_reason')

HOSTS_QUERY = common.query({
    'service': common.STRING_PARAM,
    'zone': common.STRING_PARAM,
}, strict=False)
HOST_QUERY = common.query({}, strict=False)
_HOST_ENTRY = {
    'type': 'object',
    'properties': {
        'service-status': {'enum': ['available', 'unavailable']},
        'service': {'type': 'string'},
        'zone': {'type': 'string'},
        'service-state': {'enum': ['enabled', 'disabled']},
        'host_name': {'type': 'string'},
        'last-update': common.NULLABLE_DATETIME,
    },
    'required': ['service-status', 'service', 'zone', 'service-state',
                 'host_name', 'last-update'],
    'additionalProperties': False,
}
HOSTS_RESPONSE = {
    'type': 'object',
    'properties': {'hosts': {'type': 'array', 'items': _HOST_ENTRY}},
    'required': ['hosts'],
    'additionalProperties': False,
}
_COUNT = {'type': 'string', 'pattern': '^[0-9]+$'}
_RESOURCE = {
    'type': 'object',
    'properties': {
        'resource': {
            'type': 'object',
            'properties': {
                'volume_count': _COUNT,
                'total_volume_gb': _COUNT,
                'snapshot_count': _COUNT,
                'total_snapshot_gb': _COUNT,
                'project': {'type': 'string'},
                'host': {'type': 'string', 'pattern': '.+@.+'},
            },
            'required': ['volume_count', 'total_volume_gb',
                         'snapshot_count', 'total_snapshot_gb', 'project',
                         'host'],
            'additionalProperties': False,
        },
    },
    'required': ['resource'],
    'additionalProperties': False,
}
HOST_RESPONSE = {
    'type': 'object',
    'properties': {'host': {'type': 'array', 'items': _RESOURCE}},
    'required': ['host'],
    'additionalProperties': False,
}
