"""Policies of /v3 attachments (Cinder's rule names)."""

from oslo_policy import policy

from nova_lite.policies import base

CREATE = 'volume:attachment_create'
UPDATE = 'volume:attachment_update'
DELETE = 'volume:attachment_delete'
COMPLETE = 'volume:attachment_complete'
MULTIATTACH_BOOTABLE_VOLUME = 'volume:multiattach_bootable_volume'

_ATTACHMENT = '/attachments/{attachment_id}'

rules = [
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create an attachment (reserve a volume, and connect '
                    'it when a connector is given).',
        operations=[{'method': 'POST', 'path': '/attachments'}]),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Connect an attachment to a host (its connector).',
        operations=[{'method': 'PUT', 'path': _ATTACHMENT}]),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Delete an attachment. Attachments of servers can only '
                    'be deleted by the compute service (409 otherwise).',
        operations=[{'method': 'DELETE', 'path': _ATTACHMENT}]),
    policy.DocumentedRuleDefault(
        name=COMPLETE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Mark an attachment as complete (volume in-use).',
        operations=[{'method': 'POST',
                     'path': _ATTACHMENT + '/action (os-complete)'}]),
    policy.DocumentedRuleDefault(
        name=MULTIATTACH_BOOTABLE_VOLUME,
        check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Attach a multiattach volume that is bootable and '
                    'already in use.',
        operations=[{'method': 'POST', 'path': '/attachments'}]),
]


def list_rules():
    return rules
