"""Schemas of /v3 volume metadata (``/volumes/{volume_id}/metadata``)."""

import copy

from nova_lite.api.schemas import common
from nova_lite.api.schemas import volumes

# POST (add keys) and PUT (replace all): {"metadata": {key: value, ...}}.
SET = {
    'type': 'object',
    'properties': {'metadata': volumes.METADATA},
    'required': ['metadata'],
    'additionalProperties': False,
}

# PUT .../metadata/{key}: {"meta": {key: value}}, exactly one key (the
# handler checks it is the URL's).
_ONE_ITEM = copy.deepcopy(volumes.METADATA)
_ONE_ITEM.update(minProperties=1, maxProperties=1)
SET_ITEM = {
    'type': 'object',
    'properties': {'meta': _ONE_ITEM},
    'required': ['meta'],
    'additionalProperties': False,
}

SHOW_QUERY = common.query({}, strict=False)

_VALUES = {'type': 'object', 'additionalProperties': {'type': 'string'}}
METADATA_RESPONSE = {
    'type': 'object',
    'properties': {'metadata': _VALUES},
    'required': ['metadata'],
    'additionalProperties': False,
}
ITEM_RESPONSE = {
    'type': 'object',
    'properties': {'meta': dict(_VALUES, minProperties=1, maxProperties=1)},
    'required': ['meta'],
    'additionalProperties': False,
}
