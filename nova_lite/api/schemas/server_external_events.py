"""Schemas of POST /v2.1/os-server-external-events: Nova's, one band per
microversion that added an event name (2.51 ``volume-extended``, 2.76
``power-update``, 2.82 ``accelerator-request-bound``, 2.93
``volume-reimaged``)."""

import copy

from nova_lite.api.schemas import common
from nova_lite.compute import external_events as events

_TAG = {'type': 'string', 'maxLength': 255}
_STATUS = {'type': 'string', 'enum': list(events.STATUSES)}

CREATE = {
    'type': 'object',
    'properties': {
        'events': {
            'type': 'array',
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'name': {'type': 'string',
                             'enum': list(events.NETWORK_EVENTS)},
                    'server_uuid': common.UUID,
                    'status': _STATUS,
                    'tag': _TAG,
                },
                'required': ['name', 'server_uuid'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['events'],
    'additionalProperties': False,
}

CREATE_RESPONSE = {
    'type': 'object',
    'properties': {
        'events': {
            'type': 'array',
            'items': {
                'type': 'object',
                'properties': {
                    'code': {'type': 'integer', 'enum': [
                        events.ACCEPTED, events.NO_TAG, events.NOT_FOUND,
                        events.NO_HOST]},
                    'name': {'type': 'string',
                             'enum': list(events.NETWORK_EVENTS)},
                    'server_uuid': common.UUID,
                    'status': _STATUS,
                    'tag': _TAG,
                },
                # The tag is answered when it was sent.
                'required': ['code', 'name', 'server_uuid', 'status'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['events'],
    'additionalProperties': False,
}


def _with_name(schema, name):
    new = copy.deepcopy(schema)
    new['properties']['events']['items']['properties']['name'][
        'enum'].append(name)
    return new


CREATE_V251 = _with_name(CREATE, events.VOLUME_EXTENDED)
CREATE_V276 = _with_name(CREATE_V251, events.POWER_UPDATE)
CREATE_V282 = _with_name(CREATE_V276, events.ACCELERATOR_REQUEST_BOUND)
CREATE_V293 = _with_name(CREATE_V282, events.VOLUME_REIMAGED)

CREATE_RESPONSE_V251 = _with_name(CREATE_RESPONSE, events.VOLUME_EXTENDED)
CREATE_RESPONSE_V276 = _with_name(CREATE_RESPONSE_V251, events.POWER_UPDATE)
CREATE_RESPONSE_V282 = _with_name(CREATE_RESPONSE_V276,
                                  events.ACCELERATOR_REQUEST_BOUND)
CREATE_RESPONSE_V293 = _with_name(CREATE_RESPONSE_V282,
                                  events.VOLUME_REIMAGED)
