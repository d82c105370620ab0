"""Schemas of /v2.1/os-volumes, the compute API's deprecated proxy to block
storage (served from 2.1 to 2.35, as Nova).

The request is Nova's, bounded where block storage would refuse it anyway
(Cinder's lengths, its metadata keys and values, a size it can store), so
that what the compute API passes on is what ``/v3`` accepts, whichever
VolumeClient carries it.
"""

from nova_lite.api.schemas import common
from nova_lite.api.schemas import volumes as volume_schema

# The largest size block storage stores (Cinder's db.MAX_INT).
MAX_SIZE = 2147483647

# -- requests ----------------------------------------------------------------
CREATE = {
    'type': 'object',
    'properties': {
        'volume': {
            'type': 'object',
            'properties': {
                # Nova: an integer, or a string of digits, at least 1 (a
                # string is not compared: "0" reaches block storage, which
                # refuses it). At most 18 digits, nova_lite's rule for
                # integers in text.
                'size': {'type': ['integer', 'string'],
                         'pattern': '^[0-9]{1,18}$',
                         'minimum': 1, 'maximum': MAX_SIZE},
                'display_name': {'type': 'string', 'maxLength': 255},
                'display_description': {'type': 'string',
                                        'maxLength': 65535},
                'volume_type': {'type': 'string', 'maxLength': 255},
                'metadata': dict(volume_schema.METADATA, type='object'),
                'availability_zone': {'type': 'string', 'maxLength': 255},
                # Any text, as Nova: an unknown snapshot is 404.
                'snapshot_id': {'type': 'string', 'maxLength': 255},
            },
            'required': ['size'],
            'additionalProperties': False,
        },
    },
    'required': ['volume'],
    'additionalProperties': False,
}

# -- queries ------------------------------------------------------------------
# Nova's: limit and offset, other parameters ignored (2.75 and 2.102, which
# refuse them elsewhere, are above the last version of this API).
LIST_QUERY = common.query({
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'offset': common.NON_NEGATIVE_INT_PARAM,
}, strict=False)
SHOW_QUERY = common.query({}, strict=False)

# -- responses ----------------------------------------------------------------
_ATTACHMENT = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'volumeId': common.UUID,
        'serverId': common.UUID,
        'device': {'type': 'string'},
    },
    'required': ['id', 'volumeId', 'serverId'],
    'additionalProperties': False,
}
# Nova's attachments: the volume's (first) attachment, or one empty object
# when it has none.
_NO_ATTACHMENT = {
    'type': 'object',
    'properties': {},
    'additionalProperties': False,
}
_ATTACHMENTS = {
    'type': 'array',
    'minItems': 1,
    'oneOf': [
        {'items': _ATTACHMENT},
        {'items': _NO_ATTACHMENT, 'maxItems': 1},
    ],
}

VOLUME = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'status': {'type': 'string'},
        'size': {'type': 'integer'},
        'availabilityZone': common.NULLABLE_STRING,
        'createdAt': common.DATETIME,
        'displayName': common.NULLABLE_STRING,
        'displayDescription': common.NULLABLE_STRING,
        'volumeType': common.NULLABLE_STRING,
        'snapshotId': {'type': ['string', 'null'], 'format': 'uuid'},
        'metadata': {'type': 'object',
                     'additionalProperties': {'type': 'string'}},
        'attachments': _ATTACHMENTS,
    },
    'required': ['id', 'status', 'size', 'availabilityZone', 'createdAt',
                 'displayName', 'displayDescription', 'volumeType',
                 'snapshotId', 'metadata', 'attachments'],
    'additionalProperties': False,
}

SHOW_RESPONSE = {
    'type': 'object',
    'properties': {'volume': VOLUME},
    'required': ['volume'],
    'additionalProperties': False,
}
CREATE_RESPONSE = SHOW_RESPONSE
# Nova's list and detail views are the same.
LIST_RESPONSE = {
    'type': 'object',
    'properties': {'volumes': {'type': 'array', 'items': VOLUME}},
    'required': ['volumes'],
    'additionalProperties': False,
}
