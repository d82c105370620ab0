"""Policies of the availability zones of both APIs, as upstream's."""

from oslo_policy import policy

from nova_lite.policies import base

COMPUTE_LIST = 'os_compute_api:os-availability-zone:list'
COMPUTE_DETAIL = 'os_compute_api:os-availability-zone:detail'
VOLUME_LIST = 'volume_extension:availability_zone_list'

rules = [
    policy.DocumentedRuleDefault(
        name=COMPUTE_LIST, check_str='@',
        description='List the availability zones servers can be in.',
        operations=[{'method': 'GET', 'path': '/os-availability-zone'}]),
    policy.DocumentedRuleDefault(
        name=COMPUTE_DETAIL, check_str=base.RULE_ADMIN_API,
        description='List the availability zones with their hosts and '
                    'services.',
        operations=[{'method': 'GET',
                     'path': '/os-availability-zone/detail'}]),
    policy.DocumentedRuleDefault(
        name=VOLUME_LIST, check_str='@',
        description='List the availability zones volumes can be in.',
        operations=[{'method': 'GET', 'path': '/os-availability-zone'}]),
]


def list_rules():
    return rules
