"""Schemas of /v2.1/servers/{server_id}/os-volume_attachments
(API-CONTRACT.md 2.2 to 2.8). Each versioned schema is the previous one
plus one change."""

import copy

from nova_lite.api.schemas import common

# Nova's parameter types.
DEVICE = {
    'type': ['string', 'null'],
    'pattern': r'(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$',
}
TAG = {'type': 'string', 'minLength': 1, 'maxLength': 60,
       'pattern': '^[^,/]*$'}
BOOLEAN = {
    'type': ['boolean', 'string'],
    'enum': [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES',
             'Yes', 'yes', False, 'False', 'FALSE', 'false', '0', 'OFF',
             'Off', 'off', 'NO', 'No', 'no'],
}

# -- requests ----------------------------------------------------------------
CREATE = {
    'type': 'object',
    'properties': {
        'volumeAttachment': {
            'type': 'object',
            'properties': {
                'volumeId': common.UUID,
                'device': DEVICE,
            },
            'required': ['volumeId'],
            'additionalProperties': False,
        },
    },
    'required': ['volumeAttachment'],
    'additionalProperties': False,
}
CREATE_V249 = common.extend(CREATE, ['volumeAttachment'], tag=TAG)
CREATE_V279 = common.extend(CREATE_V249, ['volumeAttachment'],
                            delete_on_termination=BOOLEAN)
# 2.105 (volume-multiattach-enhancements): read-only or read/write.
ATTACH_MODE = {'type': 'string', 'enum': ['ro', 'rw']}
CREATE_V2105 = common.extend(CREATE_V279, ['volumeAttachment'],
                             attach_mode=ATTACH_MODE)

UPDATE = {
    'type': 'object',
    'properties': {
        'volumeAttachment': {
            'type': 'object',
            'properties': {
                'volumeId': common.UUID,
            },
            'required': ['volumeId'],
            'additionalProperties': False,
        },
    },
    'required': ['volumeAttachment'],
    'additionalProperties': False,
}
UPDATE_V285 = common.extend(
    UPDATE, ['volumeAttachment'], device=DEVICE, tag=TAG,
    delete_on_termination=BOOLEAN, serverId=common.UUID, id=common.UUID)

# -- queries ------------------------------------------------------------------
INDEX_QUERY = common.query({
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'offset': common.NON_NEGATIVE_INT_PARAM,
}, strict=False)
INDEX_QUERY_V275 = common.query({
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'offset': common.NON_NEGATIVE_INT_PARAM,
}, strict=True)
SHOW_QUERY = common.query({}, strict=False)

# -- responses ----------------------------------------------------------------
_ATTACHMENT = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'serverId': common.UUID,
        'volumeId': common.UUID,
        'device': {'type': 'string'},
    },
    'required': ['id', 'serverId', 'volumeId'],
    'additionalProperties': False,
}
_ATTACHMENT_V270 = copy.deepcopy(_ATTACHMENT)
_ATTACHMENT_V270['properties']['tag'] = common.NULLABLE_STRING
_ATTACHMENT_V270['required'].append('tag')
_ATTACHMENT_V279 = copy.deepcopy(_ATTACHMENT_V270)
_ATTACHMENT_V279['properties']['delete_on_termination'] = {
    'type': 'boolean'}
_ATTACHMENT_V279['required'].append('delete_on_termination')
_ATTACHMENT_V289 = copy.deepcopy(_ATTACHMENT_V279)
del _ATTACHMENT_V289['properties']['id']
_ATTACHMENT_V289['required'].remove('id')
_ATTACHMENT_V289['properties']['attachment_id'] = common.UUID
_ATTACHMENT_V289['properties']['bdm_uuid'] = common.UUID
_ATTACHMENT_V289['required'] += ['attachment_id', 'bdm_uuid']
# 2.105 (nova_lite's): the mode of the attachment, and an attach in
# progress listed before block storage reserved the volume, with no
# attachment yet (2.89 to 2.104 hide it, as Nova does).
_ATTACHMENT_V2105 = copy.deepcopy(_ATTACHMENT_V289)
_ATTACHMENT_V2105['properties']['attachment_id'] = {
    'type': ['string', 'null'], 'format': 'uuid'}
_ATTACHMENT_V2105['properties']['attach_mode'] = ATTACH_MODE
_ATTACHMENT_V2105['required'].append('attach_mode')


def _show(item):
    return {
        'type': 'object',
        'properties': {'volumeAttachment': item},
        'required': ['volumeAttachment'],
        'additionalProperties': False,
    }


def _index(item):
    return {
        'type': 'object',
        'properties': {
            'volumeAttachments': {'type': 'array', 'items': item},
        },
        'required': ['volumeAttachments'],
        'additionalProperties': False,
    }


SHOW_RESPONSE = _show(_ATTACHMENT)
SHOW_RESPONSE_V270 = _show(_ATTACHMENT_V270)
SHOW_RESPONSE_V279 = _show(_ATTACHMENT_V279)
SHOW_RESPONSE_V289 = _show(_ATTACHMENT_V289)
SHOW_RESPONSE_V2105 = _show(_ATTACHMENT_V2105)

INDEX_RESPONSE = _index(_ATTACHMENT)
INDEX_RESPONSE_V270 = _index(_ATTACHMENT_V270)
INDEX_RESPONSE_V279 = _index(_ATTACHMENT_V279)
INDEX_RESPONSE_V289 = _index(_ATTACHMENT_V289)
INDEX_RESPONSE_V2105 = _index(_ATTACHMENT_V2105)

# The POST body: ``device`` always present (null for a shelved-offloaded
# server) and never the 2.89 change (Nova's oversight, kept).
_CREATED = copy.deepcopy(_ATTACHMENT)
_CREATED['properties']['device'] = common.NULLABLE_STRING
_CREATED['required'].append('device')
_CREATED_V270 = copy.deepcopy(_CREATED)
_CREATED_V270['properties']['tag'] = common.NULLABLE_STRING
_CREATED_V270['required'].append('tag')
_CREATED_V279 = copy.deepcopy(_CREATED_V270)
_CREATED_V279['properties']['delete_on_termination'] = {'type': 'boolean'}
_CREATED_V279['required'].append('delete_on_termination')

CREATE_RESPONSE = _show(_CREATED)
CREATE_RESPONSE_V270 = _show(_CREATED_V270)
CREATE_RESPONSE_V279 = _show(_CREATED_V279)
