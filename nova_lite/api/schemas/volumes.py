"""Schemas of /v3 volumes and their actions (Cinder's, per microversion)."""

import copy

from nova_lite.api import microversion as mv
from nova_lite.api.schemas import common
from nova_lite import api_version
from nova_lite.volume import status as st

# Cinder's boolean parameter: a JSON boolean or one of these strings.
BOOLEAN = {
    'type': ['boolean', 'string'],
    'enum': [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES',
             'Yes', 'yes', 'y', 't', False, 'False', 'FALSE', 'false', '0',
             'OFF', 'Off', 'off', 'NO', 'No', 'no', 'n', 'f'],
}
OPTIONAL_UUID = {'type': ['string', 'null'], 'format': 'uuid'}
_NAME = {'type': ['string', 'null'], 'maxLength': 255}
_DESCRIPTION = {'type': ['string', 'null'], 'maxLength': 65535}
# A volume's metadata, as Cinder's schemas have it: keys of 1 to 255
# letters, digits and "-_:. /", string values of at most 255 characters.
# (\Z, not $: $ would also match before a final newline.)
METADATA_KEY = '^[a-zA-Z0-9-_:. /]{1,255}\\Z'
METADATA = {
    'type': 'object',
    'patternProperties': {
        METADATA_KEY: {'type': 'string', 'maxLength': 255},
    },
    'additionalProperties': False,
}
_NULLABLE_METADATA = dict(METADATA, type=['object', 'null'])

# -- requests ----------------------------------------------------------------

CREATE = {
    'type': 'object',
    'properties': {
        'volume': {
            'type': 'object',
            'properties': {
                'name': _NAME,
                'description': _DESCRIPTION,
                'display_name': _NAME,
                'display_description': _DESCRIPTION,
                'volume_type': {'type': ['string', 'null'],
                                'maxLength': 255},
                'metadata': _NULLABLE_METADATA,
                'snapshot_id': OPTIONAL_UUID,
                'source_volid': OPTIONAL_UUID,
                'consistencygroup_id': OPTIONAL_UUID,
                'size': {'type': ['integer', 'string', 'null'],
                         'pattern': '^[0-9]+$', 'minimum': 1,
                         'maximum': 2147483647},
                'availability_zone': {'type': ['string', 'null'],
                                      'maxLength': 255},
                'multiattach': {'anyOf': [BOOLEAN, {'type': 'null'}]},
                'image_id': {'type': ['string', 'null'], 'maxLength': 255},
                'imageRef': {'type': ['string', 'null'], 'maxLength': 255},
            },
            'additionalProperties': True,
        },
        'OS-SCH-HNT:scheduler_hints': {'type': ['object', 'null']},
    },
    'required': ['volume'],
    'additionalProperties': False,
}
CREATE_V313 = common.extend(CREATE, ['volume'], group_id={
    'type': ['string', 'null'], 'maxLength': 255})
CREATE_V347 = common.extend(CREATE_V313, ['volume'],
                            backup_id=OPTIONAL_UUID)
CREATE_V353 = copy.deepcopy(CREATE_V347)
CREATE_V353['properties']['volume']['additionalProperties'] = False

UPDATE = {
    'type': 'object',
    'properties': {
        'volume': {
            'type': 'object',
            'properties': {
                'name': _NAME,
                'description': _DESCRIPTION,
                'display_name': _NAME,
                'display_description': _DESCRIPTION,
                'metadata': METADATA,
            },
            'additionalProperties': False,
        },
    },
    'required': ['volume'],
    'additionalProperties': False,
}

SET_BOOTABLE = {
    'type': 'object',
    'properties': {
        'os-set_bootable': {
            'type': 'object',
            'properties': {'bootable': BOOLEAN},
            'required': ['bootable'],
            'additionalProperties': False,
        },
    },
    'required': ['os-set_bootable'],
    'additionalProperties': False,
}


def _marker_action(name):
    # {"os-begin_detaching": null} (any value is accepted, as in Cinder).
    return {
        'type': 'object',
        'properties': {name: {}},
        'required': [name],
        'additionalProperties': False,
    }


BEGIN_DETACHING = _marker_action('os-begin_detaching')
ROLL_DETACHING = _marker_action('os-roll_detaching')
RESERVE = _marker_action('os-reserve')
UNRESERVE = _marker_action('os-unreserve')

ATTACH = {
    'type': 'object',
    'properties': {
        'os-attach': {
            'type': 'object',
            'properties': {
                'instance_uuid': common.UUID,
                'host_name': {'type': 'string', 'maxLength': 255},
                'mountpoint': {'type': 'string', 'minLength': 1,
                               'maxLength': 255},
                'mode': {'type': 'string', 'enum': list(st.ATTACH_MODES)},
            },
            'required': ['mountpoint'],
            # An instance or a host (Cinder's rule).
            'anyOf': [{'required': ['instance_uuid']},
                      {'required': ['host_name']}],
            'additionalProperties': False,
        },
    },
    'required': ['os-attach'],
    'additionalProperties': False,
}

DETACH = {
    'type': 'object',
    'properties': {
        'os-detach': {
            # {"os-detach": {}} or null; a null attachment_id as Cinder.
            'type': ['object', 'null'],
            'properties': {'attachment_id': OPTIONAL_UUID},
            'additionalProperties': False,
        },
    },
    'required': ['os-detach'],
    'additionalProperties': False,
}

UPDATE_READONLY_FLAG = {
    'type': 'object',
    'properties': {
        'os-update_readonly_flag': {
            'type': 'object',
            'properties': {'readonly': BOOLEAN},
            'required': ['readonly'],
            'additionalProperties': False,
        },
    },
    'required': ['os-update_readonly_flag'],
    'additionalProperties': False,
}

FORCE_DELETE = _marker_action('os-force_delete')

# Cinder's volume size parameter: an integer, or a string of digits.
VOLUME_SIZE = {'type': ['integer', 'string'], 'pattern': '^[0-9]+$',
               'minimum': 1, 'maximum': 2147483647}

EXTEND = {
    'type': 'object',
    'properties': {
        'os-extend': {
            'type': 'object',
            'properties': {'new_size': VOLUME_SIZE},
            'required': ['new_size'],
            'additionalProperties': False,
        },
    },
    'required': ['os-extend'],
    'additionalProperties': False,
}

RETYPE = {
    'type': 'object',
    'properties': {
        'os-retype': {
            'type': 'object',
            'properties': {
                'new_type': {'type': 'string', 'minLength': 1,
                             'maxLength': 255},
                'migration_policy': {
                    'type': ['string', 'null'],
                    'enum': ['on-demand', 'never', None]},
            },
            'required': ['new_type'],
            'additionalProperties': False,
        },
    },
    'required': ['os-retype'],
    'additionalProperties': False,
}

MIGRATE = {
    'type': 'object',
    'properties': {
        'os-migrate_volume': {
            'type': 'object',
            'properties': {
                'host': {'type': 'string', 'maxLength': 255},
                'force_host_copy': BOOLEAN,
                'lock_volume': BOOLEAN,
            },
            'required': ['host'],
            'additionalProperties': False,
        },
    },
    'required': ['os-migrate_volume'],
    'additionalProperties': False,
}
# 3.16: a cluster instead of a host (nova_lite has none: 400).
MIGRATE_V316 = copy.deepcopy(MIGRATE)
MIGRATE_V316['properties']['os-migrate_volume']['properties'].update(
    host={'type': ['string', 'null'], 'maxLength': 255},
    cluster={'type': ['string', 'null'], 'maxLength': 255})
del MIGRATE_V316['properties']['os-migrate_volume']['required']

MIGRATE_COMPLETION = {
    'type': 'object',
    'properties': {
        'os-migrate_volume_completion': {
            'type': 'object',
            'properties': {
                'new_volume': common.UUID,
                'error': {'type': ['string', 'null', 'boolean']},
            },
            'required': ['new_volume'],
            'additionalProperties': False,
        },
    },
    'required': ['os-migrate_volume_completion'],
    'additionalProperties': False,
}
MIGRATE_COMPLETION_RESPONSE = {
    'type': 'object',
    'properties': {'save_volume_id': common.UUID},
    'required': ['save_volume_id'],
    'additionalProperties': False,
}

FORCE_DETACH = {
    'type': 'object',
    'properties': {
        'os-force_detach': {
            'type': 'object',
            'properties': {
                'attachment_id': {'type': ['string', 'null']},
                # Cinder's schema admits a string (which names no host).
                'connector': {'anyOf': [
                    common.CONNECTOR,
                    {'type': ['string', 'null'], 'maxLength': 255}]},
            },
            'additionalProperties': False,
        },
    },
    'required': ['os-force_detach'],
    'additionalProperties': False,
}

RESET_STATUS = {
    'type': 'object',
    'properties': {
        'os-reset_status': {
            'type': 'object',
            'properties': {
                'status': {'type': ['string', 'null'],
                           'enum': list(st.RESETTABLE) + [None]},
                'attach_status': {'type': ['string', 'null'],
                                  'enum': list(st.RESETTABLE_ATTACH) + [None]},
                'migration_status': {
                    'type': ['string', 'null'],
                    'enum': list(st.RESETTABLE_MIGRATION) + [None]},
            },
            'anyOf': [{'required': ['status']},
                      {'required': ['attach_status']},
                      {'required': ['migration_status']}],
            'additionalProperties': False,
        },
    },
    'required': ['os-reset_status'],
    'additionalProperties': False,
}

LIST_QUERY = common.query({
    'all_tenants': common.STRING_PARAM,
    'project_id': common.STRING_PARAM,
    'name': common.STRING_PARAM,
    'status': common.STRING_PARAM,
    'bootable': common.STRING_PARAM,
    # {"key": "value"} as JSON or as Python's str() of a dict (Cinder's
    # clients send that); read by nova_lite.volume.metadata.parse_filter.
    'metadata': common.STRING_PARAM,
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'offset': common.NON_NEGATIVE_INT_PARAM,
    'marker': common.STRING_PARAM,
    'sort': common.STRING_PARAM,
    'sort_key': common.STRING_PARAM,
    'sort_dir': common.STRING_PARAM,
}, strict=False)
SHOW_QUERY = common.query({}, strict=False)

# -- responses ---------------------------------------------------------------

LINKS = {
    'type': 'array',
    'items': {
        'type': 'object',
        'properties': {'rel': {'type': 'string'},
                       'href': {'type': 'string'}},
        'required': ['rel', 'href'],
        'additionalProperties': False,
    },
}

_ATTACHMENT = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'attachment_id': common.UUID,
        'volume_id': common.UUID,
        'server_id': {'type': ['string', 'null']},
        'host_name': common.NULLABLE_STRING,
        'device': common.NULLABLE_STRING,
        'attached_at': common.NULLABLE_DATETIME,
    },
    'required': ['id', 'attachment_id', 'volume_id', 'server_id',
                 'host_name', 'device', 'attached_at'],
    'additionalProperties': False,
}

_DETAIL = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'status': {'type': 'string'},
        'size': {'type': 'integer'},
        'availability_zone': common.NULLABLE_STRING,
        'created_at': common.DATETIME,
        'updated_at': common.NULLABLE_DATETIME,
        'name': common.NULLABLE_STRING,
        'description': common.NULLABLE_STRING,
        'volume_type': common.NULLABLE_STRING,
        'snapshot_id': common.NULLABLE_STRING,
        'source_volid': common.NULLABLE_STRING,
        'metadata': {'type': 'object',
                     'additionalProperties': {'type': 'string'}},
        'links': LINKS,
        'user_id': {'type': 'string'},
        'bootable': {'enum': ['true', 'false']},
        'encrypted': {'type': 'boolean'},
        'replication_status': common.NULLABLE_STRING,
        'consistencygroup_id': common.NULLABLE_STRING,
        'multiattach': {'type': 'boolean'},
        'attachments': {'type': 'array', 'items': _ATTACHMENT},
        # Shown by policy (owner/admin, admin).
        'os-vol-tenant-attr:tenant_id': {'type': 'string'},
        'os-vol-host-attr:host': common.NULLABLE_STRING,
        'migration_status': common.NULLABLE_STRING,
        'os-vol-mig-status-attr:migstat': common.NULLABLE_STRING,
        'os-vol-mig-status-attr:name_id': common.NULLABLE_STRING,
    },
    'required': ['id', 'status', 'size', 'availability_zone', 'created_at',
                 'updated_at', 'name', 'description', 'volume_type',
                 'snapshot_id', 'source_volid', 'metadata', 'links',
                 'user_id', 'bootable', 'encrypted', 'replication_status',
                 'consistencygroup_id', 'multiattach', 'attachments'],
    'additionalProperties': False,
}
_DETAIL_V313 = copy.deepcopy(_DETAIL)
_DETAIL_V313['properties']['group_id'] = common.NULLABLE_STRING
_DETAIL_V313['required'].append('group_id')
_DETAIL_V321 = copy.deepcopy(_DETAIL_V313)
_DETAIL_V321['properties']['provider_id'] = common.NULLABLE_STRING  # admin
_DETAIL_V348 = copy.deepcopy(_DETAIL_V321)
_DETAIL_V348['properties'].update(shared_targets={'type': ['boolean',
                                                           'null']},
                                  service_uuid=common.NULLABLE_STRING)
_DETAIL_V348['required'] += ['shared_targets', 'service_uuid']
_DETAIL_V361 = copy.deepcopy(_DETAIL_V348)
_DETAIL_V361['properties']['cluster_name'] = common.NULLABLE_STRING  # admin
_DETAIL_V363 = copy.deepcopy(_DETAIL_V361)
_DETAIL_V363['properties']['volume_type_id'] = common.NULLABLE_STRING
_DETAIL_V363['required'].append('volume_type_id')
_DETAIL_V365 = copy.deepcopy(_DETAIL_V363)
_DETAIL_V365['properties']['consumes_quota'] = {'type': 'boolean'}
_DETAIL_V365['required'].append('consumes_quota')

# (min, max, detail item) bands of the detailed views.
DETAIL_BANDS = [
    (mv.VOLUME_MIN, mv.before(mv.GROUP_VOLUME), _DETAIL),
    (mv.GROUP_VOLUME, mv.before(mv.VOLUME_DETAIL_PROVIDER_ID), _DETAIL_V313),
    (mv.VOLUME_DETAIL_PROVIDER_ID,
     mv.before(mv.SHARED_TARGETS_AND_SERVICE_FIELDS), _DETAIL_V321),
    (mv.SHARED_TARGETS_AND_SERVICE_FIELDS, mv.before(mv.VOLUME_CLUSTER_NAME),
     _DETAIL_V348),
    (mv.VOLUME_CLUSTER_NAME, mv.before(mv.VOLUME_TYPE_ID_IN_VOLUME_DETAIL),
     _DETAIL_V361),
    (mv.VOLUME_TYPE_ID_IN_VOLUME_DETAIL, mv.before(mv.USE_QUOTA),
     _DETAIL_V363),
    (mv.USE_QUOTA, None, _DETAIL_V365),
]


def one(item):
    return {
        'type': 'object',
        'properties': {'volume': item},
        'required': ['volume'],
        'additionalProperties': False,
    }


def many(item, count=False):
    """A list of ``item``; ``count``: with Cinder's ``count`` (3.45, when
    ``with_count`` asks for it)."""
    properties = {'volumes': {'type': 'array', 'items': item},
                  'volumes_links': LINKS}
    if count:
        properties['count'] = {'type': 'integer', 'minimum': 0}
    return {
        'type': 'object',
        'properties': properties,
        'required': ['volumes'],
        'additionalProperties': False,
    }


def _split(bands, version):
    """``(low, high, item, from_version)`` of ``bands``, the band holding
    ``version`` split there; ``from_version``: the band starts at or after
    it."""
    result = []
    wanted = api_version.APIVersion.parse(version)
    for low, high, item in bands:
        starts = api_version.APIVersion.parse(low)
        ends = api_version.APIVersion.parse(high) if high else None
        if starts < wanted and (ends is None or wanted <= ends):
            result.append((low, mv.before(version), item, False))
            result.append((version, high, item, True))
        else:
            result.append((low, high, item, wanted <= starts))
    return result


SUMMARY = {
    'type': 'object',
    'properties': {
        'id': common.UUID,
        'name': common.NULLABLE_STRING,
        'links': LINKS,
    },
    'required': ['id', 'name', 'links'],
    'additionalProperties': False,
}
LIST_RESPONSE = many(SUMMARY)
LIST_RESPONSE_V345 = many(SUMMARY, count=True)
# GET /volumes/detail: the detail bands, with ``count`` from 3.45.
LIST_DETAIL_BANDS = [
    (low, high, many(item, count=counted))
    for low, high, item, counted in _split(DETAIL_BANDS,
                                           mv.SUPPORT_COUNT_INFO)]


# GET /volumes/summary (3.12; metadata from 3.36).
SUMMARY_QUERY = common.query({'all_tenants': common.STRING_PARAM},
                             strict=False)
_SUMMARY = {
    'type': 'object',
    'properties': {
        'total_count': {'type': 'integer'},
        'total_size': {'type': 'integer'},
    },
    'required': ['total_count', 'total_size'],
    'additionalProperties': False,
}
SUMMARY_RESPONSE = {
    'type': 'object',
    'properties': {'volume-summary': _SUMMARY},
    'required': ['volume-summary'],
    'additionalProperties': False,
}
# metadata: every key of the volumes' metadata with all its values.
SUMMARY_RESPONSE_V336 = common.require(common.extend(
    SUMMARY_RESPONSE, ['volume-summary'],
    metadata={'type': 'object', 'additionalProperties': {
        'type': 'array', 'items': {'type': 'string'}}}),
    ['volume-summary'], 'metadata')
