"""Schemas of /v3 attachments (from 3.27; os-complete 3.44; mode 3.54)."""

from nova_lite.api.schemas import common
from nova_lite.api.schemas import volumes

CREATE = {
    'type': 'object',
    'properties': {
        'attachment': {
            'type': 'object',
            'properties': {
                'instance_uuid': {'type': ['string', 'null'],
                                  'format': 'uuid'},
                'connector': {'anyOf': [common.CONNECTOR,
                                        {'type': 'null'}]},
                'volume_uuid': common.UUID,
            },
            'required': ['volume_uuid'],
            'additionalProperties': False,
        },
    },
    'required': ['attachment'],
    'additionalProperties': False,
}
CREATE_V354 = common.extend(CREATE, ['attachment'], mode={
    'type': 'string', 'enum': ['rw', 'ro']})

UPDATE = {
    'type': 'object',
    'properties': {
        'attachment': {
            'type': 'object',
            'properties': {
                'connector': dict(common.CONNECTOR, minProperties=1),
            },
            'required': ['connector'],
            'additionalProperties': False,
        },
    },
    'required': ['attachment'],
    'additionalProperties': False,
}

COMPLETE = {
    'type': 'object',
    'properties': {'os-complete': {}},
    'required': ['os-complete'],
    'additionalProperties': False,
}

LIST_QUERY = common.query({
    'all_tenants': common.STRING_PARAM,
    'volume_id': common.STRING_PARAM,
    'status': common.STRING_PARAM,
    'attach_status': common.STRING_PARAM,
    'instance_id': common.STRING_PARAM,
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'offset': common.NON_NEGATIVE_INT_PARAM,
    'marker': common.STRING_PARAM,
    'sort': common.STRING_PARAM,
    'sort_key': common.STRING_PARAM,
    'sort_dir': common.STRING_PARAM,
}, strict=False)
SHOW_QUERY = common.query({}, strict=False)

_STATUS = {'enum': ['attached', 'attaching', 'detached', 'reserved',
                    'error_attaching', 'error_detaching', 'deleted']}
SUMMARY = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'status': _STATUS,
        'instance': {'type': ['string', 'null']},
        'volume_id': common.UUID,
    },
    'required': ['id', 'status', 'instance', 'volume_id'],
    'additionalProperties': False,
}
DETAIL = common.require(common.extend(
    SUMMARY, [],
    attached_at={'type': 'string'},
    detached_at={'type': 'string'},
    attach_mode={'enum': ['rw', 'ro', 'null', None]},
    connection_info={'type': 'object', 'additionalProperties': True},
), [], 'attached_at', 'detached_at', 'attach_mode', 'connection_info')
# GET /attachments/{id} also names the attachments sharing its host
# connection (the add-new-attach-apis spec's attachment_get).
SHOW = common.require(common.extend(
    DETAIL, [], shared_connections_by_attachment={
        'type': 'array', 'items': common.UUID}),
    [], 'shared_connections_by_attachment')

SHOW_RESPONSE_V372 = {
    'type': 'object',
    'properties': {'attachment': SHOW},
    'required': ['attachment'],
    'additionalProperties': False,
}
DETAIL_RESPONSE = {
    'type': 'object',
    'properties': {'attachment': DETAIL},
    'required': ['attachment'],
    'additionalProperties': False,
}
LIST_RESPONSE = {
    'type': 'object',
    'properties': {'attachments': {'type': 'array', 'items': SUMMARY},
                   'attachments_links': volumes.LINKS},
    'required': ['attachments'],
    'additionalProperties': False,
}
LIST_DETAIL_RESPONSE = {
    'type': 'object',
    'properties': {'attachments': {'type': 'array', 'items': DETAIL},
                   'attachments_links': volumes.LINKS},
    'required': ['attachments'],
    'additionalProperties': False,
}
# DELETE: Cinder's list of the volume's remaining attachments, plus (from
# nova_lite's 3.72) the ids of those that shared the deleted one's host
# connection.
DELETE_RESPONSE = {
    'type': 'object',
    'properties': {
        'attachments': {'type': 'array', 'items': SUMMARY},
    },
    'required': ['attachments'],
    'additionalProperties': False,
}
DELETE_RESPONSE_V372 = common.require(common.extend(
    DELETE_RESPONSE, [], shared_connections_by_attachment={
        'type': 'array', 'items': common.UUID}),
    [], 'shared_connections_by_attachment')
