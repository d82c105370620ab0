"""Policies of the restore and forceDelete server actions of deferred
delete, ``[DEFAULT] reclaim_instance_interval`` (Nova's names)."""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:os-deferred-delete:%s'

RESTORE = _ROOT % 'restore'
FORCE = _ROOT % 'force'

_ACTION = '/servers/{server_id}/action (%s)'

rules = [
    policy.DocumentedRuleDefault(
        name=RESTORE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Restore a soft-deleted server.',
        operations=[{'method': 'POST', 'path': _ACTION % 'restore'}]),
    policy.DocumentedRuleDefault(
        name=FORCE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Delete a soft-deleted server now.',
        operations=[{'method': 'POST', 'path': _ACTION % 'forceDelete'}]),
]


def list_rules():
    return rules
