"""Policies of the lock and unlock server actions (Nova's names)."""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:os-lock-server:%s'

LOCK = _ROOT % 'lock'
UNLOCK = _ROOT % 'unlock'
UNLOCK_OVERRIDE = _ROOT % 'unlock:unlock_override'

_ACTION = '/servers/{server_id}/action (%s)'

rules = [
    policy.DocumentedRuleDefault(
        name=LOCK, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Lock a server: only administrators may then act on '
                    'it.',
        operations=[{'method': 'POST', 'path': _ACTION % 'lock'}]),
    policy.DocumentedRuleDefault(
        name=UNLOCK, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Unlock a server.',
        operations=[{'method': 'POST', 'path': _ACTION % 'unlock'}]),
    policy.DocumentedRuleDefault(
        name=UNLOCK_OVERRIDE, check_str=base.RULE_ADMIN_API,
        description='Unlock a server locked by someone else (an owner '
                    'cannot undo an administrator\'s lock without it).',
        operations=[{'method': 'POST', 'path': _ACTION % 'unlock'}]),
]


def list_rules():
    return rules
