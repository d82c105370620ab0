"""Policies of the quotas and limits of both APIs, as upstream's.

Compute: ``/v2.1/os-quota-sets`` and ``/v2.1/limits`` (Nova's rules);
block storage: ``/v3/{project_id}/os-quota-sets``, ``os-quota-class-sets``
and ``limits`` (Cinder's rules).
"""

from oslo_policy import policy

from nova_lite.policies import base

COMPUTE_ROOT = 'os_compute_api:os-quota-sets:%s'
COMPUTE_SHOW = COMPUTE_ROOT % 'show'
COMPUTE_DETAIL = COMPUTE_ROOT % 'detail'
COMPUTE_DEFAULTS = COMPUTE_ROOT % 'defaults'
COMPUTE_UPDATE = COMPUTE_ROOT % 'update'
COMPUTE_DELETE = COMPUTE_ROOT % 'delete'
COMPUTE_LIMITS = 'os_compute_api:limits'
COMPUTE_LIMITS_OTHER_PROJECT = 'os_compute_api:limits:other_project'

VOLUME_SHOW = 'volume_extension:quotas:show'
VOLUME_UPDATE = 'volume_extension:quotas:update'
VOLUME_DELETE = 'volume_extension:quotas:delete'
VOLUME_CLASS_GET = 'volume_extension:quota_classes:get'
VOLUME_CLASS_UPDATE = 'volume_extension:quota_classes:update'
VOLUME_LIMITS = 'limits_extension:used_limits'

_QS = '/os-quota-sets/{tenant_id}'
_VQS = '/os-quota-sets/{project_id}'

rules = [
    policy.DocumentedRuleDefault(
        name=COMPUTE_SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the quotas of a project.',
        operations=[{'method': 'GET', 'path': _QS}]),
    policy.DocumentedRuleDefault(
        name=COMPUTE_DETAIL, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the quotas of a project with their usage.',
        operations=[{'method': 'GET', 'path': _QS + '/detail'}]),
    policy.DocumentedRuleDefault(
        name=COMPUTE_DEFAULTS, check_str='@',
        description='Show the default quotas.',
        operations=[{'method': 'GET', 'path': _QS + '/defaults'}]),
    policy.DocumentedRuleDefault(
        name=COMPUTE_UPDATE, check_str=base.RULE_ADMIN_API,
        description='Set the quotas of a project.',
        operations=[{'method': 'PUT', 'path': _QS}]),
    policy.DocumentedRuleDefault(
        name=COMPUTE_DELETE, check_str=base.RULE_ADMIN_API,
        description='Revert the quotas of a project to the defaults.',
        operations=[{'method': 'DELETE', 'path': _QS}]),
    policy.DocumentedRuleDefault(
        name=COMPUTE_LIMITS, check_str='@',
        description='Show the limits and usage of the own project.',
        operations=[{'method': 'GET', 'path': '/limits'}]),
    policy.DocumentedRuleDefault(
        name=COMPUTE_LIMITS_OTHER_PROJECT, check_str=base.RULE_ADMIN_API,
        description='Show the limits and usage of another project '
                    '(``tenant_id`` query parameter).',
        operations=[{'method': 'GET', 'path': '/limits'}]),
    policy.DocumentedRuleDefault(
        name=VOLUME_SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the block-storage quotas of a project (with '
                    'their usage on ``?usage=true``), or the defaults.',
        operations=[{'method': 'GET', 'path': _VQS},
                    {'method': 'GET', 'path': _VQS + '/defaults'}]),
    policy.DocumentedRuleDefault(
        name=VOLUME_UPDATE, check_str=base.RULE_ADMIN_API,
        description='Set the block-storage quotas of a project.',
        operations=[{'method': 'PUT', 'path': _VQS}]),
    policy.DocumentedRuleDefault(
        name=VOLUME_DELETE, check_str=base.RULE_ADMIN_API,
        description='Revert the block-storage quotas of a project to the '
                    'defaults.',
        operations=[{'method': 'DELETE', 'path': _VQS}]),
    policy.DocumentedRuleDefault(
        name=VOLUME_CLASS_GET, check_str=base.RULE_ADMIN_API,
        description='Show the limits of a quota class.',
        operations=[{'method': 'GET',
                     'path': '/os-quota-class-sets/{class_name}'}]),
    policy.DocumentedRuleDefault(
        name=VOLUME_CLASS_UPDATE, check_str=base.RULE_ADMIN_API,
        description='Set the limits of a quota class (``default``: every '
                    "project's defaults).",
        operations=[{'method': 'PUT',
                     'path': '/os-quota-class-sets/{class_name}'}]),
    policy.DocumentedRuleDefault(
        name=VOLUME_LIMITS, check_str='@',
        description='Show the block-storage limits and usage of the own '
                    'project.',
        operations=[{'method': 'GET', 'path': '/limits'}]),
]


def list_rules():
    return rules
