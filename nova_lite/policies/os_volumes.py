"""Policies of /v2.1/os-volumes, the compute API's deprecated proxy to
block storage (Nova's names; served below microversion 2.36).

They decide whether the compute API passes the request on; block storage
then applies its own rules (``volume:*``) to the caller, as Cinder does to
Nova's requests made with the user's token.
"""

from oslo_policy import policy

from nova_lite.policies import base

_ROOT = 'os_compute_api:os-volumes:%s'

LIST = _ROOT % 'list'
DETAIL = _ROOT % 'detail'
SHOW = _ROOT % 'show'
CREATE = _ROOT % 'create'
DELETE = _ROOT % 'delete'

_PROXY = (' The compute API passes the request on to block storage; this '
          'proxy is deprecated (404 from microversion 2.36).')

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the project\'s volumes.' + _PROXY,
        operations=[{'method': 'GET', 'path': '/os-volumes'}]),
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a volume.' + _PROXY,
        operations=[{'method': 'POST', 'path': '/os-volumes'}]),
    policy.DocumentedRuleDefault(
        name=DETAIL, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the project\'s volumes with details.' + _PROXY,
        operations=[{'method': 'GET', 'path': '/os-volumes/detail'}]),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show a volume.' + _PROXY,
        operations=[{'method': 'GET', 'path': '/os-volumes/{volume_id}'}]),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Delete a volume.' + _PROXY,
        operations=[{'method': 'DELETE',
                     'path': '/os-volumes/{volume_id}'}]),
]


def list_rules():
    return rules
