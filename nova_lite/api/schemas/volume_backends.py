"""Schemas of /v3 capabilities/{hostname} and scheduler-stats/get_pools."""

from nova_lite.api.schemas import common

SHOW_QUERY = common.query({}, strict=False)
POOLS_QUERY = common.query({
    'detail': common.STRING_PARAM,
    'name': common.STRING_PARAM,
    'volume_type': common.STRING_PARAM,
}, strict=False)

# One of Cinder's capability "properties": title, description, type (keys
# named like schema keywords, hence no "properties" here).
_PROPERTY = {
    'type': 'object',
    'additionalProperties': {'type': 'string'},
    'required': ['title', 'description', 'type'],
}

CAPABILITIES_RESPONSE = {
    'type': 'object',
    'properties': {
        'namespace': {'type': 'string'},
        'vendor_name': common.NULLABLE_STRING,
        'volume_backend_name': common.NULLABLE_STRING,
        'pool_name': common.NULLABLE_STRING,
        'driver_version': common.NULLABLE_STRING,
        'storage_protocol': common.NULLABLE_STRING,
        'display_name': common.NULLABLE_STRING,
        'description': common.NULLABLE_STRING,
        'visibility': common.NULLABLE_STRING,
        'replication_targets': {'type': 'array'},
    },
    # Cinder's field "properties" (named like the schema keyword).
    'patternProperties': {
        '^properties$': {'type': 'object',
                         'additionalProperties': _PROPERTY},
    },
    'required': ['namespace', 'vendor_name', 'volume_backend_name',
                 'pool_name', 'driver_version', 'storage_protocol',
                 'display_name', 'description', 'visibility',
                 'replication_targets', 'properties'],
    'additionalProperties': False,
}

POOLS_RESPONSE = {
    'type': 'object',
    'properties': {
        'pools': {
            'type': 'array',
            'items': {
                'type': 'object',
                'properties': {
                    'name': {'type': 'string'},
                    'capabilities': {'type': 'object',
                                     'additionalProperties': True},
                },
                'required': ['name'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['pools'],
    'additionalProperties': False,
}
