"""Check strings shared by every resource's rules.

nova_lite uses project-scoped roles only (``admin``, ``member``,
``reader``), the defaults Nova and Cinder converged on. ``service`` is the
role of other OpenStack services (e.g. Cinder calling swap).
"""

from oslo_policy import policy

ADMIN = 'role:admin'
PROJECT_MEMBER = 'role:member and project_id:%(project_id)s'
PROJECT_READER = 'role:reader and project_id:%(project_id)s'
SERVICE = 'role:service'

RULE_ADMIN_API = 'rule:context_is_admin'
ADMIN_OR_SERVICE = 'rule:service_or_admin'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'

rules = [
    policy.RuleDefault(
        'context_is_admin', ADMIN,
        description='Decides what an administrator is.'),
    policy.RuleDefault(
        'service_or_admin', ADMIN + ' or ' + SERVICE,
        description='An administrator or another OpenStack service.'),
    policy.RuleDefault(
        'project_member_or_admin',
        ADMIN + ' or (' + PROJECT_MEMBER + ')',
        description='A member of the target project, or an administrator.'),
    policy.RuleDefault(
        'project_reader_or_admin',
        ADMIN + ' or (' + PROJECT_READER + ')',
        description='A reader of the target project, or an administrator.'),
]


def list_rules():
    return rules
