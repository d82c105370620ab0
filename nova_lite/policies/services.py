"""Policies of /v2.1/os-services: which service is up, for operators."""

from oslo_policy import policy

from nova_lite.policies import base

LIST = 'os_compute_api:os-services:list'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST,
        check_str=base.RULE_ADMIN_API,
        description='List all running nova_lite services and whether each '
                    'is up (its last heartbeat).',
        operations=[{'method': 'GET', 'path': '/os-services'}]),
]


def list_rules():
    return rules
