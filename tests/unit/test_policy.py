"""Policy defaults are registered and behave as documented."""

from nova_lite import context
from nova_lite import exception
from nova_lite import policies
from nova_lite import policy
from tests import base


class PolicyTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.enforcer = policy.init(self.conf)
        self.addCleanup(policy.reset)

    def ctx(self, user, project, roles):
        ctxt = context.RequestContext(user_id=user, project_id=project,
                                      roles=roles)
        ctxt.enforcer = self.enforcer
        return ctxt

    def test_rule_names_unique(self):
        names = [r.name for r in policies.list_rules()]
        self.assertEqual(len(names), len(set(names)))

    def test_admin_only_rule(self):
        admin = self.ctx('admin', 'p1', ['admin', 'member', 'reader'])
        member = self.ctx('u', 'p1', ['member', 'reader'])
        self.assertTrue(admin.can('os_compute_api:os-services:list', {}))
        self.assertRaises(exception.PolicyNotAuthorized, member.can,
                          'os_compute_api:os-services:list', {})
        self.assertFalse(member.can('os_compute_api:os-services:list', {},
                                    fatal=False))

    def test_project_member_rule(self):
        member = self.ctx('u', 'p1', ['member', 'reader'])
        self.assertTrue(member.can('project_member_or_admin',
                                   {'project_id': 'p1'}))
        self.assertFalse(member.can('project_member_or_admin',
                                    {'project_id': 'p2'}, fatal=False))
