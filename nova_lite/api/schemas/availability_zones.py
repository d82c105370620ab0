"""Schemas of the availability zones of both APIs (one zone, ``nova``)."""

from nova_lite.api.schemas import common

QUERY = common.query({}, strict=False)
QUERY_V2102 = common.query({}, strict=True)

_STATE = {
    'type': 'object',
    'properties': {'available': {'type': 'boolean'}},
    'required': ['available'],
    'additionalProperties': False,
}
_SERVICE_STATE = {
    'type': 'object',
    'properties': {
        'available': {'type': 'boolean'},
        'active': {'type': 'boolean'},
        'updated_at': common.NULLABLE_DATETIME,
    },
    'required': ['available', 'active', 'updated_at'],
    'additionalProperties': False,
}


def _zones(hosts):
    return {
        'type': 'object',
        'properties': {'availabilityZoneInfo': {'type': 'array', 'items': {
            'type': 'object',
            'properties': {
                'zoneName': {'type': 'string'},
                'zoneState': _STATE,
                'hosts': hosts,
            },
            'required': ['zoneName', 'zoneState', 'hosts'],
            'additionalProperties': False,
        }}},
        'required': ['availabilityZoneInfo'],
        'additionalProperties': False,
    }


COMPUTE_LIST_RESPONSE = _zones({'type': 'null'})
COMPUTE_DETAIL_RESPONSE = _zones({
    'type': ['object', 'null'],
    'additionalProperties': {
        'type': 'object', 'additionalProperties': _SERVICE_STATE}})
VOLUME_LIST_RESPONSE = {
    'type': 'object',
    'properties': {'availabilityZoneInfo': {'type': 'array', 'items': {
        'type': 'object',
        'properties': {'zoneName': {'type': 'string'},
                       'zoneState': _STATE},
        'required': ['zoneName', 'zoneState'],
        'additionalProperties': False,
    }}},
    'required': ['availabilityZoneInfo'],
    'additionalProperties': False,
}
