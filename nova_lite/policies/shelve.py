"""Policies of the shelve, shelveOffload and unshelve server actions
(Nova's names)."""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:os-shelve:%s'

SHELVE = _ROOT % 'shelve'
SHELVE_OFFLOAD = _ROOT % 'shelve_offload'
UNSHELVE = _ROOT % 'unshelve'
UNSHELVE_TO_HOST = _ROOT % 'unshelve_to_host'

_ACTION = '/servers/{server_id}/action (%s)'

rules = [
    policy.DocumentedRuleDefault(
        name=SHELVE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Shelve a server: power it off, keeping its volumes; it '
                    'is offloaded from its host after [DEFAULT] '
                    'shelved_offload_time.',
        operations=[{'method': 'POST', 'path': _ACTION % 'shelve'}]),
    policy.DocumentedRuleDefault(
        name=SHELVE_OFFLOAD, check_str=base.RULE_ADMIN_API,
        description='Offload a shelved server from its compute host now.',
        operations=[{'method': 'POST', 'path': _ACTION % 'shelveOffload'}]),
    policy.DocumentedRuleDefault(
        name=UNSHELVE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Unshelve a shelved or shelved-offloaded server.',
        operations=[{'method': 'POST', 'path': _ACTION % 'unshelve'}]),
    policy.DocumentedRuleDefault(
        name=UNSHELVE_TO_HOST, check_str=base.RULE_ADMIN_API,
        description='Unshelve a shelved-offloaded server onto a given '
                    'compute host (microversion 2.91).',
        operations=[{'method': 'POST', 'path': _ACTION % 'unshelve'}]),
]


def list_rules():
    return rules
