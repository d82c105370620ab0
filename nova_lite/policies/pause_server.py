"""Policies of the pause and unpause server actions (Nova's names)."""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:os-pause-server:%s'

PAUSE = _ROOT % 'pause'
UNPAUSE = _ROOT % 'unpause'

_ACTION = '/servers/{server_id}/action (%s)'

rules = [
    policy.DocumentedRuleDefault(
        name=PAUSE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Pause a server.',
        operations=[{'method': 'POST', 'path': _ACTION % 'pause'}]),
    policy.DocumentedRuleDefault(
        name=UNPAUSE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Unpause a paused server.',
        operations=[{'method': 'POST', 'path': _ACTION % 'unpause'}]),
]


def list_rules():
    return rules
