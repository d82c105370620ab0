"""Policies of /v2.1/servers/{server_id}/ips, as Nova's."""

from oslo_policy import policy

from nova_lite.policies import base

INDEX = 'os_compute_api:ips:index'
SHOW = 'os_compute_api:ips:show'

rules = [
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the IP addresses of a server.',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/ips'}]),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description="Show a server's IP addresses on one network.",
        operations=[{'method': 'GET',
                     'path': '/servers/{server_id}/ips/{network_label}'}]),
]


def list_rules():
    return rules
