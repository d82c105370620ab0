"""Policies of /v2.1/servers and its start/stop actions (Nova's names)."""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:servers:%s'

INDEX = _ROOT % 'index'
INDEX_ALL_TENANTS = _ROOT % 'index:get_all_tenants'
DETAIL = _ROOT % 'detail'
DETAIL_ALL_TENANTS = _ROOT % 'detail:get_all_tenants'
SHOW = _ROOT % 'show'
CREATE = _ROOT % 'create'
CREATE_ATTACH_VOLUME = _ROOT % 'create:attach_volume'
UPDATE = _ROOT % 'update'
DELETE = _ROOT % 'delete'
START = _ROOT % 'start'
STOP = _ROOT % 'stop'
EXTENDED_ATTRIBUTES = 'os_compute_api:os-extended-server-attributes'

_SERVER = '/servers/{server_id}'

rules = [
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the servers of the project.',
        operations=[{'method': 'GET', 'path': '/servers'}]),
    policy.DocumentedRuleDefault(
        name=INDEX_ALL_TENANTS, check_str=base.RULE_ADMIN_API,
        description='List the servers of all projects (all_tenants).',
        operations=[{'method': 'GET', 'path': '/servers'}]),
    policy.DocumentedRuleDefault(
        name=DETAIL, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the servers of the project with details.',
        operations=[{'method': 'GET', 'path': '/servers/detail'}]),
    policy.DocumentedRuleDefault(
        name=DETAIL_ALL_TENANTS, check_str=base.RULE_ADMIN_API,
        description='List the servers of all projects with details '
                    '(all_tenants).',
        operations=[{'method': 'GET', 'path': '/servers/detail'}]),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show a server.',
        operations=[{'method': 'GET', 'path': _SERVER}]),
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a server.',
        operations=[{'method': 'POST', 'path': '/servers'}]),
    policy.DocumentedRuleDefault(
        name=CREATE_ATTACH_VOLUME, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a server with volumes in '
                    'block_device_mapping_v2 (boot from volume).',
        operations=[{'method': 'POST', 'path': '/servers'}]),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Update a server (name, access addresses, description, '
                    'hostname).',
        operations=[{'method': 'PUT', 'path': _SERVER}]),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Delete a server (its volumes are detached).',
        operations=[{'method': 'DELETE', 'path': _SERVER}]),
    policy.DocumentedRuleDefault(
        name=START, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Start a stopped server.',
        operations=[{'method': 'POST',
                     'path': _SERVER + '/action (os-start)'}]),
    policy.DocumentedRuleDefault(
        name=STOP, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Stop a server.',
        operations=[{'method': 'POST',
                     'path': _SERVER + '/action (os-stop)'}]),
    policy.DocumentedRuleDefault(
        name=EXTENDED_ATTRIBUTES, check_str=base.RULE_ADMIN_API,
        description='Show the OS-EXT-SRV-ATTR attributes of servers '
                    '(compute host, instance name, root device...).',
        operations=[{'method': 'GET', 'path': _SERVER},
                    {'method': 'GET', 'path': '/servers/detail'}]),
]


def list_rules():
    return rules
