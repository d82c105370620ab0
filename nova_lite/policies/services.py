"""Policies of /v2.1/os-services: which service is up, and (2.53) an
administrator's status of a compute service: enabled or disabled, forced
down (fenced)."""

from oslo_policy import policy

from nova_lite.policies import base

LIST = 'os_compute_api:os-services:list'
UPDATE = 'os_compute_api:os-services:update'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST,
        check_str=base.RULE_ADMIN_API,
        description='List all running nova_lite services and whether each '
                    'is up (its last heartbeat).',
        operations=[{'method': 'GET', 'path': '/os-services'}]),
    policy.DocumentedRuleDefault(
        name=UPDATE,
        check_str=base.RULE_ADMIN_API,
        description='Update a compute service: enable or disable it, or '
                    'force it down (fence it: its servers\' volume work is '
                    'then settled, and their volumes detached and their '
                    'deletes done, without it).',
        operations=[{'method': 'PUT', 'path': '/os-services/{service_id}'}]),
]


def list_rules():
    return rules
