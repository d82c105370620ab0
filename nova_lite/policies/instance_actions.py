"""Policies of /v2.1/servers/{server_id}/os-instance-actions (Nova's
names)."""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:os-instance-actions:%s'

LIST = _ROOT % 'list'
SHOW = _ROOT % 'show'
EVENTS = _ROOT % 'events'
EVENTS_DETAILS = _ROOT % 'events:details'

_COLLECTION = '/servers/{server_id}/os-instance-actions'
_ITEM = _COLLECTION + '/{request_id}'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the actions taken on a server.',
        operations=[{'method': 'GET', 'path': _COLLECTION}]),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show one action of a server.',
        operations=[{'method': 'GET', 'path': _ITEM}]),
    policy.DocumentedRuleDefault(
        name=EVENTS, check_str=base.RULE_ADMIN_API,
        description='Show the events of an action (before microversion '
                    '2.51), their tracebacks and, from 2.62, the host '
                    'each ran on.',
        operations=[{'method': 'GET', 'path': _ITEM}]),
    policy.DocumentedRuleDefault(
        name=EVENTS_DETAILS, check_str=base.RULE_ADMIN_API,
        description='Show the details (the error message) of failed '
                    'events (microversion 2.84).',
        operations=[{'method': 'GET', 'path': _ITEM}]),
]


def list_rules():
    return rules
