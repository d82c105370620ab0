"""Policies of /v3 volumes and their actions (Cinder's rule names)."""

from oslo_policy import policy

from nova_lite.policies import base

CREATE = 'volume:create'
GET = 'volume:get'
GET_ALL = 'volume:get_all'
UPDATE = 'volume:update'
DELETE = 'volume:delete'
MULTIATTACH = 'volume:multiattach'
RETYPE = 'volume:retype'
EXTEND = 'volume:extend'
FORCE_DELETE = 'volume_extension:volume_admin_actions:force_delete'
FORCE_DETACH = 'volume_extension:volume_admin_actions:force_detach'
RESET_STATUS = 'volume_extension:volume_admin_actions:reset_status'
MIGRATE = 'volume_extension:volume_admin_actions:migrate_volume'
MIGRATE_COMPLETION = (
    'volume_extension:volume_admin_actions:migrate_volume_completion')
HOST_ATTRIBUTE = 'volume_extension:volume_host_attribute'
MIG_STATUS_ATTRIBUTE = 'volume_extension:volume_mig_status_attribute'
TENANT_ATTRIBUTE = 'volume_extension:volume_tenant_attribute'
BEGIN_DETACHING = 'volume_extension:volume_actions:begin_detaching'
ROLL_DETACHING = 'volume_extension:volume_actions:roll_detaching'
RESERVE = 'volume_extension:volume_actions:reserve'
UNRESERVE = 'volume_extension:volume_actions:unreserve'
ATTACH = 'volume_extension:volume_actions:attach'
DETACH = 'volume_extension:volume_actions:detach'
UPDATE_READONLY_FLAG = 'volume:update_readonly_flag'

_VOLUME = '/volumes/{volume_id}'
_ACTION = '/volumes/{volume_id}/action'

rules = [
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a volume.',
        operations=[{'method': 'POST', 'path': '/volumes'}]),
    policy.DocumentedRuleDefault(
        name=GET, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show a volume.',
        operations=[{'method': 'GET', 'path': _VOLUME}]),
    policy.DocumentedRuleDefault(
        name=GET_ALL, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List volumes (an administrator may add all_tenants to '
                    'see every project\'s).',
        operations=[{'method': 'GET', 'path': '/volumes'},
                    {'method': 'GET', 'path': '/volumes/detail'}]),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Update a volume\'s name or description, or its '
                    'bootable flag.',
        operations=[{'method': 'PUT', 'path': _VOLUME},
                    {'method': 'POST',
                     'path': _ACTION + ' (os-set_bootable)'}]),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Delete a volume.',
        operations=[{'method': 'DELETE', 'path': _VOLUME}]),
    policy.DocumentedRuleDefault(
        name=MULTIATTACH, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a volume of a multiattach volume type, or '
                    'retype a volume to one (a volume several servers may '
                    'attach at once). Deny it to keep a cloud free of '
                    'multiattach volumes.',
        operations=[{'method': 'POST', 'path': '/volumes'},
                    {'method': 'POST', 'path': _ACTION + ' (os-retype)'}]),
    policy.DocumentedRuleDefault(
        name=RETYPE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Change the type of a volume.',
        operations=[{'method': 'POST', 'path': _ACTION + ' (os-retype)'}]),
    policy.DocumentedRuleDefault(
        name=EXTEND, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Extend an available volume (os-extend).',
        operations=[{'method': 'POST', 'path': _ACTION + ' (os-extend)'}]),
    policy.DocumentedRuleDefault(
        name=FORCE_DETACH, check_str=base.RULE_ADMIN_API,
        description='Force-detach one attachment of a volume whatever its '
                    'state, leaving the volume\'s other attachments '
                    'attached.',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-force_detach)'}]),
    policy.DocumentedRuleDefault(
        name=FORCE_DELETE, check_str=base.RULE_ADMIN_API,
        description='Delete a volume whatever its status, unless it is '
                    'attached or migrating (os-force_delete).',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-force_delete)'}]),
    policy.DocumentedRuleDefault(
        name=RESET_STATUS, check_str=base.RULE_ADMIN_API,
        description='Reset the status, attach status or migration status '
                    'of a volume (attach status detached also detaches '
                    'every attachment of the volume).',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-reset_status)'}]),
    policy.DocumentedRuleDefault(
        name=MIGRATE, check_str=base.RULE_ADMIN_API,
        description='Migrate a volume to another backend '
                    '(os-migrate_volume).',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-migrate_volume)'}]),
    policy.DocumentedRuleDefault(
        name=MIGRATE_COMPLETION, check_str=base.ADMIN_OR_SERVICE,
        description='Complete (or fail) the migration of a volume, once '
                    'the compute service swapped its server\'s disk '
                    '(os-migrate_volume_completion). Cinder\'s default is '
                    'administrators: nova_lite\'s compute hosts call it as '
                    'the service.',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-migrate_volume_completion)'}]),
    policy.DocumentedRuleDefault(
        name=HOST_ATTRIBUTE, check_str=base.RULE_ADMIN_API,
        description='See the backend of a volume '
                    '(os-vol-host-attr:host) and the host of its '
                    'attachments.',
        operations=[{'method': 'GET', 'path': _VOLUME}]),
    policy.DocumentedRuleDefault(
        name=MIG_STATUS_ATTRIBUTE, check_str=base.RULE_ADMIN_API,
        description='See the migration status of a volume.',
        operations=[{'method': 'GET', 'path': _VOLUME}]),
    policy.DocumentedRuleDefault(
        name=TENANT_ATTRIBUTE, check_str=base.PROJECT_READER_OR_ADMIN,
        description='See the project of a volume '
                    '(os-vol-tenant-attr:tenant_id).',
        operations=[{'method': 'GET', 'path': _VOLUME}]),
    policy.DocumentedRuleDefault(
        name=BEGIN_DETACHING, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Mark an in-use volume as detaching (legacy marker the '
                    'compute service uses).',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-begin_detaching)'}]),
    policy.DocumentedRuleDefault(
        name=ROLL_DETACHING, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Roll a detaching volume back to in-use.',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-roll_detaching)'}]),
    policy.DocumentedRuleDefault(
        name=RESERVE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Mark an available volume as attaching (legacy '
                    'attach, before 3.27).',
        operations=[{'method': 'POST', 'path': _ACTION + ' (os-reserve)'}]),
    policy.DocumentedRuleDefault(
        name=UNRESERVE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Give back a volume marked as attaching (legacy '
                    'attach, before 3.27).',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-unreserve)'}]),
    policy.DocumentedRuleDefault(
        name=ATTACH, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Record a volume as attached to an instance or a host '
                    '(legacy attach, before 3.27).',
        operations=[{'method': 'POST', 'path': _ACTION + ' (os-attach)'}]),
    policy.DocumentedRuleDefault(
        name=DETACH, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Remove an attachment of a volume (legacy detach, '
                    'before 3.27). An attachment a server holds is '
                    'detached through the compute API, whatever this '
                    'rule says.',
        operations=[{'method': 'POST', 'path': _ACTION + ' (os-detach)'}]),
    policy.DocumentedRuleDefault(
        name=UPDATE_READONLY_FLAG, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Set or clear the read-only flag of an available '
                    'volume.',
        operations=[{'method': 'POST',
                     'path': _ACTION + ' (os-update_readonly_flag)'}]),
]


def list_rules():
    return rules
