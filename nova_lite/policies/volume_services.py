"""Policies of /v3 os-services and os-hosts: the block-storage services
for operators (Cinder's rule names)."""

from oslo_policy import policy

from nova_lite.policies import base

SERVICES_INDEX = 'volume_extension:services:index'
SERVICES_UPDATE = 'volume_extension:services:update'
HOSTS = 'volume_extension:hosts'

rules = [
    policy.DocumentedRuleDefault(
        name=SERVICES_INDEX, check_str=base.RULE_ADMIN_API,
        description='List the block-storage services (cinder-scheduler, '
                    'cinder-volume per backend) and whether each is up.',
        operations=[{'method': 'GET', 'path': '/os-services'}]),
    policy.DocumentedRuleDefault(
        name=SERVICES_UPDATE, check_str=base.RULE_ADMIN_API,
        description='Enable or disable a block-storage service (a disabled '
                    'cinder-volume backend gets no new volumes).',
        operations=[
            {'method': 'PUT', 'path': '/os-services/enable'},
            {'method': 'PUT', 'path': '/os-services/disable'},
            {'method': 'PUT', 'path': '/os-services/disable-log-reason'},
            {'method': 'PUT', 'path': '/os-services/freeze'},
            {'method': 'PUT', 'path': '/os-services/thaw'},
        ]),
    policy.DocumentedRuleDefault(
        name=HOSTS, check_str=base.RULE_ADMIN_API,
        description='List the block-storage hosts, and show the volumes '
                    'of each project on a volume host.',
        operations=[{'method': 'GET', 'path': '/os-hosts'},
                    {'method': 'GET', 'path': '/os-hosts/{host_name}'}]),
]


def list_rules():
    return rules
