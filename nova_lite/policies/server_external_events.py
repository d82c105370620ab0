"""Policy of /v2.1/os-server-external-events: other OpenStack services
(Cinder's ``volume-extended``...) tell the compute service about servers.
Nova's default: the ``service`` role, or an administrator."""

from oslo_policy import policy

from nova_lite.policies import base

CREATE = 'os_compute_api:os-server-external-events:create'

rules = [
    policy.DocumentedRuleDefault(
        name=CREATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Create one or more external events about servers '
                    '(another OpenStack service, e.g. Cinder after it '
                    'extended an attached volume).',
        operations=[{'method': 'POST',
                     'path': '/os-server-external-events'}]),
]


def list_rules():
    return rules
