"""Policies of /v3 volume types and their extra specs."""

from oslo_policy import policy

from nova_lite.policies import base

CREATE = 'volume_extension:type_create'
UPDATE = 'volume_extension:type_update'
DELETE = 'volume_extension:type_delete'
GET = 'volume_extension:type_get'
GET_ALL = 'volume_extension:type_get_all'
EXTRA_SPECS = 'volume_extension:access_types_extra_specs'
EXTRA_SPECS_INDEX = 'volume_extension:types_extra_specs:index'
EXTRA_SPECS_SHOW = 'volume_extension:types_extra_specs:show'
EXTRA_SPECS_CREATE = 'volume_extension:types_extra_specs:create'
EXTRA_SPECS_UPDATE = 'volume_extension:types_extra_specs:update'
EXTRA_SPECS_DELETE = 'volume_extension:types_extra_specs:delete'
READ_SENSITIVE = 'volume_extension:types_extra_specs:read_sensitive'
ENCRYPTION_CREATE = 'volume_extension:volume_type_encryption:create'
ENCRYPTION_GET = 'volume_extension:volume_type_encryption:get'
ENCRYPTION_UPDATE = 'volume_extension:volume_type_encryption:update'
ENCRYPTION_DELETE = 'volume_extension:volume_type_encryption:delete'

# Extra specs every user may see (Cinder's list); the others (e.g.
# volume_backend_name) only with READ_SENSITIVE.
USER_VISIBLE_EXTRA_SPECS = (
    'RESKEY:availability_zones',
    'multiattach',
    'replication_enabled',
)

_TYPE = '/types/{type_id}'
_SPECS = '/types/{type_id}/extra_specs'
_ENCRYPTION = '/types/{type_id}/encryption'
_EVERYONE = '@'

rules = [
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.RULE_ADMIN_API,
        description='Create a volume type.',
        operations=[{'method': 'POST', 'path': '/types'}]),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.RULE_ADMIN_API,
        description='Update a volume type.',
        operations=[{'method': 'PUT', 'path': _TYPE}]),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.RULE_ADMIN_API,
        description='Delete a volume type.',
        operations=[{'method': 'DELETE', 'path': _TYPE}]),
    policy.DocumentedRuleDefault(
        name=GET, check_str=_EVERYONE,
        description='Show a volume type (a private type: administrators '
                    'and the projects that have access to it).',
        operations=[{'method': 'GET', 'path': _TYPE}]),
    policy.DocumentedRuleDefault(
        name=GET_ALL, check_str=_EVERYONE,
        description='List volume types.',
        operations=[{'method': 'GET', 'path': '/types'}]),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS, check_str=_EVERYONE,
        description='See extra specs in volume type views.',
        operations=[{'method': 'GET', 'path': _TYPE},
                    {'method': 'GET', 'path': '/types'}]),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_INDEX, check_str=_EVERYONE,
        description='List the extra specs of a volume type.',
        operations=[{'method': 'GET', 'path': _SPECS}]),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_SHOW, check_str=_EVERYONE,
        description='Show one extra spec of a volume type.',
        operations=[{'method': 'GET', 'path': _SPECS + '/{key}'}]),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_CREATE, check_str=base.RULE_ADMIN_API,
        description='Create or replace extra specs of a volume type.',
        operations=[{'method': 'POST', 'path': _SPECS}]),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_UPDATE, check_str=base.RULE_ADMIN_API,
        description='Set one extra spec of a volume type.',
        operations=[{'method': 'PUT', 'path': _SPECS + '/{key}'}]),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_DELETE, check_str=base.RULE_ADMIN_API,
        description='Delete one extra spec of a volume type.',
        operations=[{'method': 'DELETE', 'path': _SPECS + '/{key}'}]),
    policy.DocumentedRuleDefault(
        name=READ_SENSITIVE, check_str=base.RULE_ADMIN_API,
        description='See every extra spec, not only the user-visible ones '
                    '(multiattach, RESKEY:availability_zones, '
                    'replication_enabled).',
        operations=[{'method': 'GET', 'path': _TYPE},
                    {'method': 'GET', 'path': _SPECS}]),
    policy.DocumentedRuleDefault(
        name=ENCRYPTION_CREATE, check_str=base.RULE_ADMIN_API,
        description='Give a volume type encryption specs (refused while '
                    'volumes use the type).',
        operations=[{'method': 'POST', 'path': _ENCRYPTION}]),
    policy.DocumentedRuleDefault(
        name=ENCRYPTION_GET, check_str=base.RULE_ADMIN_API,
        description='Show the encryption specs of a volume type.',
        operations=[{'method': 'GET', 'path': _ENCRYPTION},
                    {'method': 'GET', 'path': _ENCRYPTION + '/{key}'}]),
    policy.DocumentedRuleDefault(
        name=ENCRYPTION_UPDATE, check_str=base.RULE_ADMIN_API,
        description='Change the encryption specs of a volume type '
                    '(refused while volumes use the type).',
        operations=[{'method': 'PUT',
                     'path': _ENCRYPTION + '/{encryption_id}'}]),
    policy.DocumentedRuleDefault(
        name=ENCRYPTION_DELETE, check_str=base.RULE_ADMIN_API,
        description='Remove the encryption specs of a volume type '
                    '(refused while volumes use the type).',
        operations=[{'method': 'DELETE',
                     'path': _ENCRYPTION + '/{encryption_id}'}]),
]


def list_rules():
    return rules
