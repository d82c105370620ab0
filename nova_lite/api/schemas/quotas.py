"""Schemas of the quotas and limits of both APIs.

Compute (Nova's): ``/v2.1/os-quota-sets/{tenant_id}`` (show, detail,
defaults, update, delete) and ``/v2.1/limits``; the network proxies leave
the quota set at 2.36 and the injected files at 2.57. Block storage
(Cinder's): ``/v3/os-quota-sets/{project_id}``, ``os-quota-class-sets``
and ``/v3/limits``; its quota sets name a resource per volume type, so
they are open objects of integers.
"""

from nova_lite.api.schemas import common
from nova_lite.compute import quotas as compute_quotas
from nova_lite import quota
from nova_lite.volume import quotas as volume_quotas

# A limit: an integer from -1 (unlimited), or such an integer as a string.
LIMIT = {
    'type': ['integer', 'string'],
    'pattern': '^-?[0-9]{1,10}$',
    'minimum': -1,
    'maximum': quota.MAX_LIMIT,
}
_BOOLEAN = {'type': ['boolean', 'string'],
            'enum': [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on',
                     'YES', 'Yes', 'yes', False, 'False', 'FALSE', 'false',
                     '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']}

_COMPUTE_V21 = compute_quotas.ALL
_COMPUTE_V236 = compute_quotas.CURRENT + tuple(compute_quotas.INJECTED)
_COMPUTE_V257 = compute_quotas.CURRENT


def _update(names):
    return {
        'type': 'object',
        'properties': {
            'quota_set': {
                'type': 'object',
                'properties': dict({n: LIMIT for n in names},
                                   force=_BOOLEAN),
                'additionalProperties': False,
            },
        },
        'required': ['quota_set'],
        'additionalProperties': False,
    }


UPDATE = _update(_COMPUTE_V21)
UPDATE_V236 = _update(_COMPUTE_V236)
UPDATE_V257 = _update(_COMPUTE_V257)

_QUERY = {'user_id': common.STRING_PARAM}
SHOW_QUERY = common.query(_QUERY, strict=False)
SHOW_QUERY_V2102 = common.query(_QUERY, strict=True)
DEFAULTS_QUERY = common.query({}, strict=False)
DEFAULTS_QUERY_V2102 = common.query({}, strict=True)


def _set(names, value, with_id=True):
    properties = {n: value for n in names}
    if with_id:
        properties['id'] = {'type': 'string'}
    return {
        'type': 'object',
        'properties': {
            'quota_set': {
                'type': 'object',
                'properties': properties,
                'required': sorted(properties),
                'additionalProperties': False,
            },
        },
        'required': ['quota_set'],
        'additionalProperties': False,
    }


_INT = {'type': 'integer'}
_DETAIL = {
    'type': 'object',
    'properties': {'in_use': _INT, 'limit': _INT, 'reserved': _INT},
    'required': ['in_use', 'limit', 'reserved'],
    'additionalProperties': False,
}
SHOW_RESPONSE = _set(_COMPUTE_V21, _INT)
SHOW_RESPONSE_V236 = _set(_COMPUTE_V236, _INT)
SHOW_RESPONSE_V257 = _set(_COMPUTE_V257, _INT)
DETAIL_RESPONSE = _set(_COMPUTE_V21, _DETAIL)
DETAIL_RESPONSE_V236 = _set(_COMPUTE_V236, _DETAIL)
DETAIL_RESPONSE_V257 = _set(_COMPUTE_V257, _DETAIL)
UPDATE_RESPONSE = _set(_COMPUTE_V21, _INT, with_id=False)
UPDATE_RESPONSE_V236 = _set(_COMPUTE_V236, _INT, with_id=False)
UPDATE_RESPONSE_V257 = _set(_COMPUTE_V257, _INT, with_id=False)

# /v2.1/limits: absolute limits and usage, by microversion.
_LIMITS_V257 = ('maxServerMeta', 'maxTotalCores', 'maxTotalInstances',
                'maxTotalRAMSize', 'maxTotalKeypairs', 'maxServerGroups',
                'maxServerGroupMembers', 'totalCoresUsed', 'totalRAMUsed',
                'totalInstancesUsed', 'totalServerGroupsUsed')
_LIMITS_V239 = _LIMITS_V257 + ('maxPersonality', 'maxPersonalitySize')
_LIMITS_V236 = _LIMITS_V239 + ('maxImageMeta',)
_LIMITS_V21 = _LIMITS_V236 + ('maxTotalFloatingIps', 'totalFloatingIpsUsed',
                              'maxSecurityGroups', 'totalSecurityGroupsUsed',
                              'maxSecurityGroupRules')
LIMITS_QUERY = common.query({'tenant_id': common.STRING_PARAM},
                            strict=False)
LIMITS_QUERY_V2102 = common.query({'tenant_id': common.STRING_PARAM},
                                  strict=True)


def _limits(names):
    return {
        'type': 'object',
        'properties': {
            'limits': {
                'type': 'object',
                'properties': {
                    'rate': {'type': 'array', 'maxItems': 0},
                    'absolute': {
                        'type': 'object',
                        'properties': {n: _INT for n in names},
                        'required': sorted(names),
                        'additionalProperties': False,
                    },
                },
                'required': ['rate', 'absolute'],
                'additionalProperties': False,
            },
        },
        'required': ['limits'],
        'additionalProperties': False,
    }


LIMITS_RESPONSE = _limits(_LIMITS_V21)
LIMITS_RESPONSE_V236 = _limits(_LIMITS_V236)
LIMITS_RESPONSE_V239 = _limits(_LIMITS_V239)
LIMITS_RESPONSE_V257 = _limits(_LIMITS_V257)

# -- block storage -----------------------------------------------------------
VOLUME_UPDATE = {
    'type': 'object',
    'properties': {
        'quota_set': {
            'type': 'object',
            'properties': {
                'skip_validation': _BOOLEAN,
                # Cinder ignores these two.
                'id': {'type': 'string', 'maxLength': 255},
                'tenant_id': {'type': 'string', 'maxLength': 255},
            },
            'propertyNames': {'maxLength': 255},
            'additionalProperties': LIMIT,
        },
    },
    'required': ['quota_set'],
    'additionalProperties': False,
}
VOLUME_CLASS_UPDATE = {
    'type': 'object',
    'properties': {
        'quota_class_set': {
            'type': 'object',
            'properties': {
                'id': {'type': 'string', 'maxLength': 255},
                'class_name': {'type': 'string', 'maxLength': 255},
            },
            'propertyNames': {'maxLength': 255},
            'additionalProperties': LIMIT,
        },
    },
    'required': ['quota_class_set'],
    'additionalProperties': False,
}
VOLUME_SHOW_QUERY = common.query({'usage': common.STRING_PARAM},
                                 strict=False)
VOLUME_QUERY = common.query({}, strict=False)


def _volume_set(key, value, with_id=True):
    quota_set = {
        'type': 'object',
        'properties': {n: value for n in volume_quotas.BASE},
        'required': list(volume_quotas.BASE),
        'additionalProperties': value,
    }
    if with_id:
        quota_set['properties']['id'] = {'type': 'string'}
        quota_set['required'] = quota_set['required'] + ['id']
    return {
        'type': 'object',
        'properties': {key: quota_set},
        'required': [key],
        'additionalProperties': False,
    }


VOLUME_SHOW_RESPONSE = {
    'type': 'object',
    'properties': {'quota_set': {
        'type': 'object',
        'properties': {'id': {'type': 'string'}},
        'required': ['id'] + list(volume_quotas.BASE),
        'additionalProperties': {'anyOf': [_INT, _DETAIL]},
    }},
    'required': ['quota_set'],
    'additionalProperties': False,
}
VOLUME_UPDATE_RESPONSE = _volume_set('quota_set', _INT, with_id=False)
VOLUME_CLASS_RESPONSE = _volume_set('quota_class_set', _INT)
VOLUME_CLASS_UPDATE_RESPONSE = _volume_set('quota_class_set', _INT,
                                           with_id=False)
_VOLUME_LIMITS = ('maxTotalVolumes', 'maxTotalSnapshots',
                  'maxTotalVolumeGigabytes', 'maxTotalBackups',
                  'maxTotalBackupGigabytes', 'totalVolumesUsed',
                  'totalGigabytesUsed', 'totalSnapshotsUsed',
                  'totalBackupsUsed', 'totalBackupGigabytesUsed')
VOLUME_LIMITS_RESPONSE = _limits(_VOLUME_LIMITS)
