"""Schemas of /v3 types and their extra specs."""

from nova_lite.api.schemas import common
from nova_lite.api.schemas import volumes

_SPEC_KEY = '^[a-zA-Z0-9-_:. /]{1,255}$'
EXTRA_SPECS = {
    'type': 'object',
    'patternProperties': {
        _SPEC_KEY: {'type': 'string', 'maxLength': 255},
    },
    'additionalProperties': False,
}

CREATE = {
    'type': 'object',
    'properties': {
        'volume_type': {
            'type': 'object',
            'properties': {
                'name': {'type': 'string', 'minLength': 1,
                         'maxLength': 255, 'pattern': r'^(?!\s*$).+'},
                'description': {'type': ['string', 'null'],
                                'maxLength': 255},
                'os-volume-type-access:is_public': volumes.BOOLEAN,
                'extra_specs': EXTRA_SPECS,
            },
            'required': ['name'],
            'additionalProperties': False,
        },
    },
    'required': ['volume_type'],
    'additionalProperties': False,
}

UPDATE = {
    'type': 'object',
    'properties': {
        'volume_type': {
            'type': 'object',
            'properties': {
                'name': {'type': ['string', 'null'], 'minLength': 1,
                         'maxLength': 255},
                'description': {'type': ['string', 'null'],
                                'maxLength': 255},
                'is_public': volumes.BOOLEAN,
            },
            'additionalProperties': False,
        },
    },
    'required': ['volume_type'],
    'additionalProperties': False,
}

SET_EXTRA_SPECS = {
    'type': 'object',
    'properties': {'extra_specs': EXTRA_SPECS},
    'required': ['extra_specs'],
    'additionalProperties': False,
}
# PUT /types/{id}/extra_specs/{key}: {key: value}, one key (checked
# against the URL by the handler).
SET_EXTRA_SPEC = {
    'type': 'object',
    'patternProperties': {
        _SPEC_KEY: {'type': 'string', 'maxLength': 255},
    },
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
}

LIST_QUERY = common.query({
    'is_public': common.STRING_PARAM,
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'marker': common.STRING_PARAM,
    'offset': common.NON_NEGATIVE_INT_PARAM,
    'sort': common.STRING_PARAM,
    'sort_key': common.STRING_PARAM,
    'sort_dir': common.STRING_PARAM,
    'all_tenants': common.STRING_PARAM,
}, strict=False)
SHOW_QUERY = common.query({}, strict=False)

_TYPE = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'name': {'type': 'string'},
        'description': common.NULLABLE_STRING,
        'is_public': {'type': 'boolean'},
        'os-volume-type-access:is_public': {'type': 'boolean'},
        'extra_specs': {'type': 'object',
                        'additionalProperties': {'type': 'string'}},
        'qos_specs_id': common.NULLABLE_STRING,
    },
    # os-volume-type-access:is_public: for those
    # volume_extension:volume_type_access allows.
    'required': ['id', 'name', 'description', 'is_public'],
    'additionalProperties': False,
}
SHOW_RESPONSE = {
    'type': 'object',
    'properties': {'volume_type': _TYPE},
    'required': ['volume_type'],
    'additionalProperties': False,
}
# Create: no qos_specs_id; update: nor os-volume-type-access:is_public.
CREATE_RESPONSE = common.remove(SHOW_RESPONSE, ['volume_type'],
                                'qos_specs_id')
UPDATE_RESPONSE = common.remove(CREATE_RESPONSE, ['volume_type'],
                                'os-volume-type-access:is_public')
LIST_RESPONSE = {
    'type': 'object',
    'properties': {'volume_types': {'type': 'array', 'items': _TYPE}},
    'required': ['volume_types'],
    'additionalProperties': False,
}
EXTRA_SPECS_RESPONSE = {
    'type': 'object',
    'properties': {'extra_specs': {
        'type': 'object', 'additionalProperties': {'type': 'string'}}},
    'required': ['extra_specs'],
    'additionalProperties': False,
}
EXTRA_SPEC_RESPONSE = {
    'type': 'object',
    'additionalProperties': {'type': 'string'},
    'minProperties': 1,
    'maxProperties': 1,
}

# -- encryption (/types/{type_id}/encryption) ---------------------------------

_KEY_SIZE = {'type': ['string', 'integer', 'null'], 'pattern': '^[0-9]+$',
             'minimum': 0, 'maximum': 2147483647}
_ENCRYPTION_FIELDS = {
    'key_size': _KEY_SIZE,
    'provider': {'type': 'string', 'minLength': 0, 'maxLength': 255},
    'control_location': {'enum': ['front-end', 'back-end']},
    'cipher': {'type': ['string', 'null'], 'minLength': 0,
               'maxLength': 255},
}
ENCRYPTION_UPDATE = {
    'type': 'object',
    'properties': {
        'encryption': {
            'type': 'object',
            'properties': _ENCRYPTION_FIELDS,
            'additionalProperties': False,
        },
    },
    'required': ['encryption'],
    'additionalProperties': False,
}
ENCRYPTION_CREATE = common.require(ENCRYPTION_UPDATE, ['encryption'],
                                   'provider', 'control_location')

_ENCRYPTION_VALUES = {
    'key_size': {'type': ['integer', 'null']},
    'provider': {'type': 'string'},
    'control_location': {'enum': ['front-end', 'back-end']},
    'cipher': common.NULLABLE_STRING,
}
# GET: the specs themselves, not wrapped ({} when the type has none).
ENCRYPTION_RESPONSE = {
    'type': 'object',
    'properties': dict(
        _ENCRYPTION_VALUES,
        volume_type_id=common.UUID,
        encryption_id=common.UUID,
        created_at=common.NULLABLE_DATETIME,
        updated_at=common.NULLABLE_DATETIME,
        deleted={'type': 'boolean'},
        deleted_at=common.NULLABLE_DATETIME),
    'additionalProperties': False,
}
ENCRYPTION_KEY_RESPONSE = {
    'type': 'object',
    'additionalProperties': {'type': ['string', 'integer', 'boolean',
                                      'null']},
    'minProperties': 1,
    'maxProperties': 1,
}
# POST and PUT echo the request's specs (POST adds the ids), as Cinder.
ENCRYPTION_UPDATE_RESPONSE = {
    'type': 'object',
    'properties': {
        'encryption': {
            'type': 'object',
            'properties': _ENCRYPTION_VALUES,
            'additionalProperties': False,
        },
    },
    'required': ['encryption'],
    'additionalProperties': False,
}
ENCRYPTION_CREATE_RESPONSE = common.require(common.extend(
    ENCRYPTION_UPDATE_RESPONSE, ['encryption'],
    volume_type_id=common.UUID, encryption_id=common.UUID),
    ['encryption'], 'provider', 'control_location', 'volume_type_id',
    'encryption_id')

# -- volume type access (private types) ---------------------------------------

_PROJECT_ACCESS = {
    'type': 'object',
    'properties': {
        'project': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    },
    'required': ['project'],
    'additionalProperties': False,
}
ADD_PROJECT_ACCESS = {
    'type': 'object',
    'properties': {'addProjectAccess': _PROJECT_ACCESS},
    'required': ['addProjectAccess'],
    'additionalProperties': False,
}
REMOVE_PROJECT_ACCESS = {
    'type': 'object',
    'properties': {'removeProjectAccess': _PROJECT_ACCESS},
    'required': ['removeProjectAccess'],
    'additionalProperties': False,
}
TYPE_ACCESS_RESPONSE = {
    'type': 'object',
    'properties': {
        'volume_type_access': {
            'type': 'array',
            'items': {
                'type': 'object',
                'properties': {
                    'volume_type_id': common.UUID,
                    'project_id': {'type': 'string'},
                },
                'required': ['volume_type_id', 'project_id'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['volume_type_access'],
    'additionalProperties': False,
}
