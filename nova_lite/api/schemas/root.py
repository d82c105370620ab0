"""Response schemas of the version documents (used by the tests)."""

_LINK = {
    'type': 'object',
    'properties': {'rel': {'type': 'string'}, 'href': {'type': 'string'},
                   'type': {'type': 'string'}},
    'required': ['rel', 'href'],
    'additionalProperties': False,
}
_MEDIA_TYPE = {
    'type': 'object',
    'properties': {'base': {'type': 'string'}, 'type': {'type': 'string'}},
    'required': ['base', 'type'],
    'additionalProperties': False,
}
VERSION = {
    'type': 'object',
    'properties': {
        'id': {'type': 'string'},
        'status': {'enum': ['CURRENT', 'SUPPORTED', 'DEPRECATED']},
        'version': {'type': 'string'},
        'min_version': {'type': 'string'},
        'updated': {'type': 'string'},
        'links': {'type': 'array', 'items': _LINK},
        'media-types': {'type': 'array', 'items': _MEDIA_TYPE},
    },
    'required': ['id', 'status', 'version', 'min_version', 'updated',
                 'links'],
    'additionalProperties': False,
}
VERSIONS_RESPONSE = {
    'type': 'object',
    'properties': {'versions': {'type': 'array', 'items': VERSION}},
    'required': ['versions'],
    'additionalProperties': False,
}
VERSION_RESPONSE = {
    'type': 'object',
    'properties': {'version': VERSION},
    'required': ['version'],
    'additionalProperties': False,
}
