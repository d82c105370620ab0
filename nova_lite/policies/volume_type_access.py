"""Policies of /v3 volume type access (private volume types), with
Cinder's names and defaults."""

from oslo_policy import policy

from nova_lite.policies import base

TYPE_ACCESS = 'volume_extension:volume_type_access'
ADD_PROJECT = 'volume_extension:volume_type_access:addProjectAccess'
REMOVE_PROJECT = 'volume_extension:volume_type_access:removeProjectAccess'
GET_ALL_FOR_TYPE = 'volume_extension:volume_type_access:get_all_for_type'

_ACTION = '/types/{type_id}/action'

rules = [
    policy.DocumentedRuleDefault(
        name=TYPE_ACCESS, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description="Adds the boolean field "
                    "'os-volume-type-access:is_public' to the answers of "
                    "these calls (which other rules allow).",
        operations=[{'method': 'GET', 'path': '/types'},
                    {'method': 'GET', 'path': '/types/{type_id}'},
                    {'method': 'POST', 'path': '/types'}]),
    policy.DocumentedRuleDefault(
        name=ADD_PROJECT, check_str=base.RULE_ADMIN_API,
        description='Give a project access to a private volume type.',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (addProjectAccess)'}]),
    policy.DocumentedRuleDefault(
        name=REMOVE_PROJECT, check_str=base.RULE_ADMIN_API,
        description="Take a project's access to a private volume type "
                    "away.",
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (removeProjectAccess)'}]),
    policy.DocumentedRuleDefault(
        name=GET_ALL_FOR_TYPE, check_str=base.RULE_ADMIN_API,
        description='List the projects that have access to a private '
                    'volume type.',
        operations=[{'method': 'GET',
                     'path': '/types/{type_id}/os-volume-type-access'}]),
]


def list_rules():
    return rules
