"""Schemas of /v2.1/flavors (the built-in flavors; read only)."""

import copy

from nova_lite.api.schemas import common

LINKS = {
    'type': 'array',
    'items': {
        'type': 'object',
        'properties': {
            'rel': {'type': 'string'},
            'href': {'type': 'string'},
        },
        'required': ['rel', 'href'],
        'additionalProperties': False,
    },
}

_QUERY_PROPERTIES = {
    'sort_key': common.STRING_PARAM,
    'sort_dir': common.STRING_PARAM,
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'marker': common.STRING_PARAM,
    'minRam': common.NON_NEGATIVE_INT_PARAM,
    'minDisk': common.NON_NEGATIVE_INT_PARAM,
    'is_public': common.STRING_PARAM,
}
LIST_QUERY = common.query(_QUERY_PROPERTIES, strict=False)
LIST_QUERY_V275 = common.query(_QUERY_PROPERTIES, strict=True)
# 2.102: the name filter (Nova's: a regular expression the name matches).
LIST_QUERY_V2102 = common.query(dict(_QUERY_PROPERTIES,
                                     name=common.STRING_PARAM), strict=True)
SHOW_QUERY = common.query({}, strict=False)
# 2.102: unknown query parameters are refused everywhere.
SHOW_QUERY_V2102 = common.query({}, strict=True)

# -- responses ---------------------------------------------------------------
_BRIEF = {
    'type': 'object',
    'properties': {
        'id': {'type': 'string'},
        'name': {'type': 'string'},
        'links': LINKS,
    },
    'required': ['id', 'name', 'links'],
    'additionalProperties': False,
}
_BRIEF_V255 = copy.deepcopy(_BRIEF)
_BRIEF_V255['properties']['description'] = common.NULLABLE_STRING
_BRIEF_V255['required'].append('description')

_FLAVOR = {
    'type': 'object',
    'properties': {
        'id': {'type': 'string'},
        'name': {'type': 'string'},
        'ram': {'type': 'integer'},
        'disk': {'type': 'integer'},
        'vcpus': {'type': 'integer'},
        'links': LINKS,
        'OS-FLV-EXT-DATA:ephemeral': {'type': 'integer'},
        'OS-FLV-DISABLED:disabled': {'type': 'boolean'},
        # "" for no swap until 2.75.
        'swap': {'type': ['integer', 'string']},
        'rxtx_factor': {'type': 'number'},
        'os-flavor-access:is_public': {'type': 'boolean'},
    },
    'required': ['id', 'name', 'ram', 'disk', 'vcpus', 'links',
                 'OS-FLV-EXT-DATA:ephemeral', 'OS-FLV-DISABLED:disabled',
                 'swap', 'rxtx_factor', 'os-flavor-access:is_public'],
    'additionalProperties': False,
}
_FLAVOR_V255 = copy.deepcopy(_FLAVOR)
_FLAVOR_V255['properties']['description'] = common.NULLABLE_STRING
_FLAVOR_V255['required'].append('description')
_FLAVOR_V261 = copy.deepcopy(_FLAVOR_V255)
_FLAVOR_V261['properties']['extra_specs'] = {
    'type': 'object', 'additionalProperties': {'type': 'string'}}
_FLAVOR_V261['required'].append('extra_specs')
_FLAVOR_V275 = copy.deepcopy(_FLAVOR_V261)
_FLAVOR_V275['properties']['swap'] = {'type': 'integer'}
# 2.102: the deprecated rxtx_factor and OS-FLV-DISABLED:disabled are gone.
_FLAVOR_V2102 = copy.deepcopy(_FLAVOR_V275)
for _key in ('rxtx_factor', 'OS-FLV-DISABLED:disabled'):
    del _FLAVOR_V2102['properties'][_key]
    _FLAVOR_V2102['required'].remove(_key)


def _list(item):
    return {
        'type': 'object',
        'properties': {
            'flavors': {'type': 'array', 'items': item},
            'flavors_links': LINKS,
        },
        'required': ['flavors'],
        'additionalProperties': False,
    }


def _show(item):
    return {
        'type': 'object',
        'properties': {'flavor': item},
        'required': ['flavor'],
        'additionalProperties': False,
    }


LIST_RESPONSE = _list(_BRIEF)
LIST_RESPONSE_V255 = _list(_BRIEF_V255)
DETAIL_RESPONSE = _list(_FLAVOR)
DETAIL_RESPONSE_V255 = _list(_FLAVOR_V255)
DETAIL_RESPONSE_V261 = _list(_FLAVOR_V261)
DETAIL_RESPONSE_V275 = _list(_FLAVOR_V275)
DETAIL_RESPONSE_V2102 = _list(_FLAVOR_V2102)
SHOW_RESPONSE = _show(_FLAVOR)
SHOW_RESPONSE_V255 = _show(_FLAVOR_V255)
SHOW_RESPONSE_V261 = _show(_FLAVOR_V261)
SHOW_RESPONSE_V275 = _show(_FLAVOR_V275)
SHOW_RESPONSE_V2102 = _show(_FLAVOR_V2102)
