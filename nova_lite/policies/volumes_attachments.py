"""Policies of /v2.1/servers/{server_id}/os-volume_attachments (Nova's
names)."""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:os-volumes-attachments:%s'

INDEX = _ROOT % 'index'
SHOW = _ROOT % 'show'
CREATE = _ROOT % 'create'
UPDATE = _ROOT % 'update'
SWAP = _ROOT % 'swap'
DELETE = _ROOT % 'delete'

_COLLECTION = '/servers/{server_id}/os-volume_attachments'
_ITEM = _COLLECTION + '/{volume_id}'

rules = [
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the volumes attached to a server.',
        operations=[{'method': 'GET', 'path': _COLLECTION}]),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show one volume attachment of a server.',
        operations=[{'method': 'GET', 'path': _ITEM}]),
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Attach a volume to a server.',
        operations=[{'method': 'POST', 'path': _COLLECTION}]),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Update a volume attachment (delete_on_termination, '
                    'microversion 2.85) without swapping.',
        operations=[{'method': 'PUT', 'path': _ITEM}]),
    policy.DocumentedRuleDefault(
        name=SWAP, check_str=base.ADMIN_OR_SERVICE,
        description='Swap the volume of an attachment for another (the '
                    'new volume takes the old one\'s device). Whatever '
                    'this policy allows, only block storage\'s volume '
                    'migration swaps, acting as the service: a swap of a '
                    'volume that is not migrating is 409, as in Nova 32 '
                    'and later (bug 2112187), and so is one of a migrating '
                    'volume by anyone but the service, or for another '
                    'volume than the migration\'s.',
        operations=[{'method': 'PUT', 'path': _ITEM}]),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Detach a volume from a server.',
        operations=[{'method': 'DELETE', 'path': _ITEM}]),
]


def list_rules():
    return rules
