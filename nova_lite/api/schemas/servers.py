"""Schemas of /v2.1/servers and the server actions nova_lite serves.

The server view and the create body change at many microversions; both are
built by functions of the version (``server_view(v)``, ``create(v)``) and
published per band in ``SERVER_VIEW_BANDS`` / ``CREATE_BANDS``: each band is
the previous one plus its change, as Nova's deepcopied schemas are.
"""

import copy

from nova_lite.api import microversion as mv
from nova_lite.api.schemas import common
from nova_lite.api.schemas import flavors as flavor_schema
from nova_lite.api.schemas import volume_attachments as va_schema

LINKS = flavor_schema.LINKS

# Where the server view changes (first version of each band).
SERVER_VIEW_CHANGES = [mv.COMPUTE_MIN, mv.EXTENDED_VOLUMES_DOT,
                       mv.SERVER_LOCKED, mv.SERVER_DESCRIPTION,
                       mv.SERVER_TAGS, mv.FLAVOR_EMBEDDED, mv.TRUSTED_CERTS,
                       mv.SERVER_GROUPS, mv.LOCKED_REASON, mv.PINNED_AZ,
                       mv.SCHEDULER_HINTS]

# Where the create body changes.
CREATE_CHANGES = [mv.COMPUTE_MIN, mv.SERVER_DESCRIPTION, mv.BDM_TAG,
                  mv.BDM_TAG_REMOVED, mv.NETWORKS_NONE, mv.BDM_TAG_RESTORED,
                  mv.BDM_VOLUME_TYPE, mv.CREATE_HOSTNAME, mv.HOSTNAME_FQDN,
                  mv.ATTACH_MODE]


def bands(changes):
    """[(min, max)] for a list of first versions of each band."""
    return [(first, mv.before(nxt) if nxt else None)
            for first, nxt in zip(changes, changes[1:] + [None])]


def _v(version):
    return mv.APIVersion.parse(version)


# -- server view -----------------------------------------------------------
_NULLABLE_STRING = common.NULLABLE_STRING
_ID_LINKS = {
    'type': 'object',
    'properties': {'id': {'type': 'string'}, 'links': LINKS},
    'required': ['id', 'links'],
    'additionalProperties': False,
}
_FLAVOR_EMBEDDED = {
    'type': 'object',
    'properties': {
        'vcpus': {'type': 'integer'},
        'ram': {'type': 'integer'},
        'disk': {'type': 'integer'},
        'ephemeral': {'type': 'integer'},
        'swap': {'type': 'integer'},
        'original_name': {'type': 'string'},
        'extra_specs': {'type': 'object',
                        'additionalProperties': {'type': 'string'}},
    },
    'required': ['vcpus', 'ram', 'disk', 'ephemeral', 'swap',
                 'original_name'],
    'additionalProperties': False,
}
_FAULT = {
    'type': 'object',
    'properties': {
        'code': {'type': 'integer'},
        'created': {'type': 'string'},
        'message': {'type': 'string'},
        'details': {'type': 'string'},
    },
    'required': ['code', 'created', 'message'],
    'additionalProperties': False,
}


def _volumes_attached(version):
    item = {
        'type': 'object',
        'properties': {'id': common.UUID},
        'required': ['id'],
        'additionalProperties': False,
    }
    if version >= _v(mv.EXTENDED_VOLUMES_DOT):
        item['properties']['delete_on_termination'] = {'type': 'boolean'}
        item['required'].append('delete_on_termination')
    return {'type': 'array', 'items': item}


def server_view(version, listing=False):
    """The server object of show/detail at ``version`` (an APIVersion)."""
    props = {
        'id': common.UUID,
        'name': {'type': 'string'},
        'status': {'type': 'string'},
        'tenant_id': {'type': 'string'},
        'user_id': {'type': 'string'},
        'metadata': {'type': 'object',
                     'additionalProperties': {'type': 'string'}},
        'hostId': {'type': 'string'},
        'image': {'oneOf': [{'type': 'string', 'maxLength': 0},
                            _ID_LINKS]},
        'flavor': _ID_LINKS,
        'created': {'type': 'string'},
        'updated': {'type': 'string'},
        'addresses': {'type': 'object', 'additionalProperties': False},
        'accessIPv4': {'type': 'string'},
        'accessIPv6': {'type': 'string'},
        'links': LINKS,
        'OS-DCF:diskConfig': {'enum': ['MANUAL', 'AUTO']},
        'progress': {'type': 'integer'},
        'OS-EXT-AZ:availability_zone': {'type': 'string'},
        'config_drive': {'type': 'string'},
        'key_name': _NULLABLE_STRING,
        'OS-SRV-USG:launched_at': common.NULLABLE_DATETIME,
        'OS-SRV-USG:terminated_at': common.NULLABLE_DATETIME,
        'OS-EXT-STS:task_state': _NULLABLE_STRING,
        'OS-EXT-STS:vm_state': {'type': 'string'},
        'OS-EXT-STS:power_state': {'type': 'integer'},
        'os-extended-volumes:volumes_attached': _volumes_attached(version),
        'fault': _FAULT,
        # Administrators only (os-extended-server-attributes).
        'OS-EXT-SRV-ATTR:host': _NULLABLE_STRING,
        'OS-EXT-SRV-ATTR:instance_name': {'type': 'string'},
        'OS-EXT-SRV-ATTR:hypervisor_hostname': _NULLABLE_STRING,
    }
    required = ['id', 'name', 'status', 'tenant_id', 'user_id', 'metadata',
                'hostId', 'image', 'flavor', 'created', 'updated',
                'addresses', 'accessIPv4', 'accessIPv6', 'links',
                'OS-DCF:diskConfig', 'OS-EXT-AZ:availability_zone',
                'config_drive', 'key_name', 'OS-SRV-USG:launched_at',
                'OS-SRV-USG:terminated_at', 'OS-EXT-STS:task_state',
                'OS-EXT-STS:vm_state', 'OS-EXT-STS:power_state',
                'os-extended-volumes:volumes_attached']
    if version >= _v(mv.EXTENDED_VOLUMES_DOT):
        props.update({
            'OS-EXT-SRV-ATTR:reservation_id': _NULLABLE_STRING,
            'OS-EXT-SRV-ATTR:launch_index': {'type': 'integer'},
            'OS-EXT-SRV-ATTR:hostname': {'type': 'string'},
            'OS-EXT-SRV-ATTR:kernel_id': _NULLABLE_STRING,
            'OS-EXT-SRV-ATTR:ramdisk_id': _NULLABLE_STRING,
            'OS-EXT-SRV-ATTR:root_device_name': _NULLABLE_STRING,
            'OS-EXT-SRV-ATTR:user_data': _NULLABLE_STRING,
        })
    additions = [
        (mv.SERVER_LOCKED, 'locked', {'type': 'boolean'}),
        (mv.SERVER_DESCRIPTION, 'description', _NULLABLE_STRING),
        (mv.SERVER_TAGS, 'tags',
         {'type': 'array', 'items': {'type': 'string'}}),
        (mv.TRUSTED_CERTS, 'trusted_image_certificates',
         {'type': ['array', 'null'], 'items': {'type': 'string'}}),
        (mv.SERVER_GROUPS, 'server_groups',
         {'type': 'array', 'items': {'type': 'string'}}),
        (mv.LOCKED_REASON, 'locked_reason', _NULLABLE_STRING),
        (mv.PINNED_AZ, 'pinned_availability_zone', _NULLABLE_STRING),
        (mv.SCHEDULER_HINTS, 'scheduler_hints', {'type': 'object'}),
    ]
    for first, name, prop in additions:
        # /servers/detail has no server_groups (Nova 2.71: show only).
        if version >= _v(first) and not (listing and
                                         name == 'server_groups'):
            props[name] = prop
            required.append(name)
    if version >= _v(mv.FLAVOR_EMBEDDED):
        props['flavor'] = _FLAVOR_EMBEDDED
    return {'type': 'object', 'properties': props, 'required': required,
            'additionalProperties': False}


def show_response(version):
    return {
        'type': 'object',
        'properties': {'server': server_view(version)},
        'required': ['server'],
        'additionalProperties': False,
    }


def detail_response(version):
    return {
        'type': 'object',
        'properties': {
            'servers': {'type': 'array',
                        'items': server_view(version, listing=True)},
            'servers_links': LINKS,
        },
        'required': ['servers'],
        'additionalProperties': False,
    }


SERVER_VIEW_BANDS = [(lo, hi, show_response(_v(lo)), detail_response(_v(lo)))
                     for lo, hi in bands(SERVER_VIEW_CHANGES)]

LIST_RESPONSE = {
    'type': 'object',
    'properties': {
        'servers': {'type': 'array', 'items': {
            'type': 'object',
            'properties': {'id': common.UUID, 'name': {'type': 'string'},
                           'links': LINKS},
            'required': ['id', 'name', 'links'],
            'additionalProperties': False,
        }},
        'servers_links': LINKS,
    },
    'required': ['servers'],
    'additionalProperties': False,
}

_LIST_QUERY_PROPERTIES = {
    'name': common.STRING_PARAM,
    'status': common.STRING_PARAM,
    'limit': common.NON_NEGATIVE_INT_PARAM,
    'marker': common.STRING_PARAM,
    'all_tenants': common.STRING_PARAM,
    'project_id': common.STRING_PARAM,
}
LIST_QUERY = common.query(_LIST_QUERY_PROPERTIES, strict=False)
SHOW_QUERY = common.query({}, strict=False)
# 2.102: unknown query parameters are refused everywhere (a filter Nova
# has and nova_lite does not is an unknown parameter too).
LIST_QUERY_V2102 = common.query(_LIST_QUERY_PROPERTIES, strict=True)
SHOW_QUERY_V2102 = common.query({}, strict=True)

# -- create ------------------------------------------------------------------
# As Nova's: an integer, or a string of digits (at most 18 of them).
_POSITIVE_INT = {'type': ['integer', 'string'], 'pattern': '^[0-9]*$',
                 'minimum': 1, 'minLength': 1, 'maxLength': 18}
_NETWORK = {
    'type': 'object',
    'properties': {
        'uuid': {'type': 'string'},
        'port': {'type': ['string', 'null']},
        'fixed_ip': {'type': 'string'},
    },
    'additionalProperties': False,
}
ATTACH_MODE = {'type': 'string', 'enum': ['ro', 'rw']}
_BDM_V2 = {
    'type': 'object',
    'properties': {
        'source_type': {'enum': ['volume', 'image', 'snapshot', 'blank']},
        'destination_type': {'enum': ['local', 'volume']},
        'uuid': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                 'pattern': '^[a-zA-Z0-9._-]*$'},
        'image_id': common.UUID,
        'volume_id': common.UUID,
        'snapshot_id': common.UUID,
        'volume_size': {'type': ['integer', 'string'],
                        'pattern': '^[0-9]+$', 'minimum': 1,
                        'maximum': 2147483647},
        'device_name': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                        'pattern': '^[a-zA-Z0-9._/-]*$'},
        'delete_on_termination': va_schema.BOOLEAN,
        'boot_index': {'type': ['integer', 'string', 'null'],
                       'pattern': '^-?[0-9]+$'},
        'guest_format': {'type': 'string', 'maxLength': 255},
        'device_type': {'type': 'string', 'maxLength': 255},
        'disk_bus': {'type': 'string', 'maxLength': 255},
        'no_device': {},
        'connection_info': {'type': 'string', 'maxLength': 16777215},
        'virtual_name': {'type': 'string', 'maxLength': 255},
    },
    'additionalProperties': False,
}
# Nova's parameter_types.name: 1 to 255 characters, no leading or trailing
# white space.
SECURITY_GROUP_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
                       'pattern': r'^\S(.*\S)?$'}
_SERVER_CREATE = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'imageRef': {'oneOf': [common.UUID,
                               {'type': 'string', 'maxLength': 0}]},
        'flavorRef': {'type': ['string', 'integer'], 'minLength': 1},
        'networks': {'type': 'array', 'items': _NETWORK},
        'block_device_mapping_v2': {'type': 'array', 'items': _BDM_V2},
        'min_count': _POSITIVE_INT,
        'max_count': _POSITIVE_INT,
        'return_reservation_id': va_schema.BOOLEAN,
        'availability_zone': {'type': 'string', 'minLength': 1,
                              'maxLength': 255},
        'metadata': {'type': 'object',
                     'additionalProperties': {'type': 'string',
                                              'maxLength': 255}},
        'OS-DCF:diskConfig': {'enum': ['AUTO', 'MANUAL']},
        'config_drive': va_schema.BOOLEAN,
        'user_data': {'type': 'string', 'maxLength': 65535},
        'adminPass': {'type': 'string'},
        'accessIPv4': {'type': 'string', 'format': 'ipv4'},
        'accessIPv6': {'type': 'string', 'format': 'ipv6'},
        # Nova's: names (or ids) of security groups; nova_lite has no
        # networking, so they are only echoed in the 202 body.
        'security_groups': {
            'type': 'array',
            'items': {
                'type': 'object',
                'properties': {'name': SECURITY_GROUP_NAME},
                'additionalProperties': False,
            },
        },
    },
    'required': ['name', 'flavorRef'],
    'additionalProperties': False,
}


def _hostname_schema(version):
    """Nova's: a short name up to 2.93, a FQDN from 2.94."""
    return {
        'type': 'string', 'minLength': 2,
        'maxLength': 255 if version >= _v(mv.HOSTNAME_FQDN) else 63,
        'pattern': '^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$'
        if version >= _v(mv.HOSTNAME_FQDN) else
        '^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$'}


def create(version):
    """The POST /servers body at ``version``."""
    server = copy.deepcopy(_SERVER_CREATE)
    props = server['properties']
    if version >= _v(mv.SERVER_DESCRIPTION):
        props['description'] = {'type': ['string', 'null'],
                                'maxLength': 255}
    bdm = props['block_device_mapping_v2']['items']['properties']
    network = props['networks']['items']['properties']
    if version == _v(mv.BDM_TAG) or version >= _v(mv.BDM_TAG_RESTORED):
        bdm['tag'] = va_schema.TAG
        network['tag'] = va_schema.TAG
    if version >= _v(mv.BDM_VOLUME_TYPE):
        bdm['volume_type'] = {'type': ['string', 'null'], 'minLength': 0,
                              'maxLength': 255}
    if version >= _v(mv.CREATE_HOSTNAME):
        props['hostname'] = _hostname_schema(version)
    if version >= _v(mv.ATTACH_MODE):
        # volume-multiattach-enhancements: volume mappings only (a local
        # one with attach_mode is refused by the request checks, 400).
        bdm['attach_mode'] = ATTACH_MODE
    if version >= _v(mv.NETWORKS_NONE):
        props['networks'] = {'oneOf': [
            {'type': 'array', 'items': props['networks']['items'],
             'minItems': 1},
            {'enum': ['none', 'auto']},
        ]}
        server['required'].append('networks')
    return {
        'type': 'object',
        'properties': {
            'server': server,
            'os:scheduler_hints': {'type': 'object'},
            'OS-SCH-HNT:scheduler_hints': {'type': 'object'},
        },
        'required': ['server'],
        'additionalProperties': False,
    }


CREATE_BANDS = [(lo, hi, create(_v(lo))) for lo, hi in bands(CREATE_CHANGES)]

CREATE_RESPONSE = {
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'id': common.UUID,
                'links': LINKS,
                'OS-DCF:diskConfig': {'enum': ['MANUAL', 'AUTO']},
                'adminPass': {'type': 'string'},
                'security_groups': {
                    'type': 'array',
                    'items': {
                        'type': 'object',
                        'properties': {'name': {'type': 'string'}},
                        'required': ['name'],
                        'additionalProperties': False,
                    },
                },
            },
            'required': ['id', 'links', 'OS-DCF:diskConfig',
                         'security_groups'],
            'additionalProperties': False,
        },
        'reservation_id': {'type': 'string'},
    },
    'additionalProperties': False,
}


# -- actions ------------------------------------------------------------------
def update(version):
    """The PUT /servers/{id} body at ``version``."""
    props = {
        'name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'accessIPv4': {'type': 'string', 'format': 'ipv4'},
        'accessIPv6': {'type': 'string', 'format': 'ipv6'},
        'OS-DCF:diskConfig': {'enum': ['AUTO', 'MANUAL']},
    }
    if version >= _v(mv.SERVER_DESCRIPTION):
        props['description'] = {'type': ['string', 'null'],
                                'maxLength': 255}
    if version >= _v(mv.CREATE_HOSTNAME):
        props['hostname'] = _hostname_schema(version)
    return {
        'type': 'object',
        'properties': {'server': {'type': 'object', 'properties': props,
                                  'additionalProperties': False}},
        'required': ['server'],
        'additionalProperties': False,
    }


UPDATE_CHANGES = [mv.COMPUTE_MIN, mv.SERVER_DESCRIPTION,
                  mv.CREATE_HOSTNAME, mv.HOSTNAME_FQDN]
UPDATE_BANDS = [(lo, hi, update(_v(lo))) for lo, hi in bands(UPDATE_CHANGES)]

# Below 2.75 the update answers the server without the extended
# attributes (Nova's view for PUT); from 2.75 the whole show view.
UPDATE_HIDDEN_PREFIXES = ('OS-EXT-AZ:', 'OS-EXT-SRV-ATTR:', 'OS-EXT-STS:',
                          'OS-SRV-USG:', 'os-extended-volumes:')
UPDATE_HIDDEN_KEYS = ('config_drive', 'key_name', 'server_groups')


def update_response(version):
    body = show_response(version)
    if version < _v(mv.UPDATE_ALL_ATTRIBUTES):
        view = body['properties']['server']
        view['required'] = [
            k for k in view['required']
            if not (k.startswith(UPDATE_HIDDEN_PREFIXES) or
                    k in UPDATE_HIDDEN_KEYS)]
    return body


UPDATE_RESPONSE_BANDS = [
    (lo, hi, update_response(_v(lo)))
    for lo, hi in bands(sorted(set(SERVER_VIEW_CHANGES +
                                   [mv.UPDATE_ALL_ATTRIBUTES]), key=_v))]


def any_action(name):
    """``{"<name>": <anything>}``: actions whose value is ignored."""
    return {
        'type': 'object',
        'properties': {name: {}},
        'required': [name],
        'additionalProperties': False,
    }


STOP = any_action('os-stop')
START = any_action('os-start')
PAUSE = any_action('pause')
UNPAUSE = any_action('unpause')
LOCK = any_action('lock')
UNLOCK = any_action('unlock')
LOCK_V273 = {
    'type': 'object',
    'properties': {
        'lock': {
            'type': ['object', 'null'],
            'properties': {
                'locked_reason': {'type': 'string', 'minLength': 1,
                                  'maxLength': 255},
            },
            'additionalProperties': False,
        },
    },
    'required': ['lock'],
    'additionalProperties': False,
}

# Shelve (Nova's shelve schemas) and deferred delete.
SHELVE = any_action('shelve')
SHELVE_OFFLOAD = any_action('shelveOffload')
UNSHELVE = any_action('unshelve')
_AZ_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_HOST_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255}
# 2.77: null, or an availability zone (required, nothing else).
UNSHELVE_V277 = {
    'type': 'object',
    'properties': {
        'unshelve': {
            'type': ['object', 'null'],
            'properties': {'availability_zone': _AZ_NAME},
            'required': ['availability_zone'],
            'additionalProperties': False,
        },
    },
    'required': ['unshelve'],
    'additionalProperties': False,
}
# 2.91: null, or an object with an optional availability zone (null
# unpins) and an optional host.
UNSHELVE_V291 = {
    'type': 'object',
    'properties': {
        'unshelve': {
            'oneOf': [
                {'type': 'null'},
                {'type': 'object',
                 'properties': {
                     'availability_zone': {
                         'oneOf': [{'type': 'null'}, _AZ_NAME]},
                     'host': _HOST_NAME,
                 },
                 'additionalProperties': False},
            ],
        },
    },
    'required': ['unshelve'],
    'additionalProperties': False,
}
RESTORE = any_action('restore')
FORCE_DELETE = any_action('forceDelete')
