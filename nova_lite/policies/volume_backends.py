"""Policies of the /v3 backend views: capabilities and pools (Cinder's
rule names)."""

from oslo_policy import policy

from nova_lite.policies import base

CAPABILITIES = 'volume_extension:capabilities'
GET_POOLS = 'scheduler_extension:scheduler_stats:get_pools'

rules = [
    policy.DocumentedRuleDefault(
        name=CAPABILITIES, check_str=base.RULE_ADMIN_API,
        description='Show what a block-storage backend can do (the volume '
                    'type options it offers, e.g. multiattach).',
        operations=[{'method': 'GET', 'path': '/capabilities/{hostname}'}]),
    policy.DocumentedRuleDefault(
        name=GET_POOLS, check_str=base.RULE_ADMIN_API,
        description='List the block-storage backends (pools) and their '
                    'reported capabilities.',
        operations=[{'method': 'GET',
                     'path': '/scheduler-stats/get_pools'}]),
]


def list_rules():
    return rules
