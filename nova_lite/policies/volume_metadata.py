"""Policies of /v3 volume metadata (Cinder's rule names)."""

from oslo_policy import policy

from nova_lite.policies import base

GET = 'volume:get_volume_metadata'
CREATE = 'volume:create_volume_metadata'
UPDATE = 'volume:update_volume_metadata'
DELETE = 'volume:delete_volume_metadata'

_METADATA = '/volumes/{volume_id}/metadata'
_KEY = _METADATA + '/{key}'

rules = [
    policy.DocumentedRuleDefault(
        name=GET, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show a volume\'s metadata, or one key of it. (The '
                    'volume\'s own views show its metadata to whoever may '
                    'see the volume.)',
        operations=[{'method': 'GET', 'path': _METADATA},
                    {'method': 'GET', 'path': _KEY}]),
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Add keys to a volume\'s metadata, or change their '
                    'values.',
        operations=[{'method': 'POST', 'path': _METADATA}]),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Replace a volume\'s whole metadata, or set one key of '
                    'it. (A volume update that gives metadata needs '
                    'volume:update only.)',
        operations=[{'method': 'PUT', 'path': _METADATA},
                    {'method': 'PUT', 'path': _KEY}]),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Remove one key of a volume\'s metadata.',
        operations=[{'method': 'DELETE', 'path': _KEY}]),
]


def list_rules():
    return rules
