"""Policy defaults are registered and behave as documented."""

import os

import fixtures
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

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

    def test_volume_type_access_rules(self):
        admin = self.ctx('admin', 'p1', ['admin', 'member', 'reader'])
        member = self.ctx('u', 'p1', ['member', 'reader'])
        reader = self.ctx('r', 'p1', ['reader'])
        target = {'project_id': 'p1'}
        for rule in ('volume_extension:volume_type_access:addProjectAccess',
                     'volume_extension:volume_type_access:'
                     'removeProjectAccess',
                     'volume_extension:volume_type_access:get_all_for_type'):
            self.assertTrue(admin.can(rule, target), rule)
            self.assertFalse(member.can(rule, target, fatal=False), rule)
        # Who sees os-volume-type-access:is_public in type views.
        rule = 'volume_extension:volume_type_access'
        self.assertTrue(admin.can(rule, target))
        self.assertTrue(member.can(rule, target))
        self.assertFalse(reader.can(rule, target, fatal=False))


class EnforcerThrottleTest(base.TestCase):
    """The enforcer looks for policy file changes at most once a second;
    every question is answered by oslo.policy."""

    def setUp(self):
        super().setUp()
        self.policy_file = os.path.join(self.useFixture(
            fixtures.TempDir()).path, 'policy.yaml')
        policy_opts.set_defaults(self.conf, policy_file=self.policy_file)
        self.enforcer = policy.init(self.conf)
        self.addCleanup(policy.reset)
        self.member = context.RequestContext(
            user_id='u', project_id='p1', roles=['member', 'reader'])
        self.member.enforcer = self.enforcer
        self.checks = 0
        real = oslo_policy.Enforcer.enforce

        def counting(*args, **kwargs):
            self.checks += 1
            return real(*args, **kwargs)
        self.useFixture(fixtures.MockPatchObject(
            oslo_policy.Enforcer, 'enforce', counting))

    def test_every_question_is_asked_of_oslo_policy(self):
        for _ in range(3):
            self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        for _ in range(2):
            self.assertFalse(self.member.can(RULE, {'project_id': 'p2'},
                                             fatal=False))
        self.assertEqual(5, self.checks)

    def test_denial_raises_what_oslo_policy_raises(self):
        exc = self.assertRaises(
            oslo_policy.PolicyNotAuthorized, self.enforcer.authorize, RULE,
            {'project_id': 'p2'}, self.member, do_raise=True)
        self.assertEqual('%s is disallowed by policy' % RULE, str(exc))
        exc = self.assertRaises(exception.PolicyNotAuthorized,
                                self.member.can, RULE, {'project_id': 'p2'})
        self.assertIn(RULE, str(exc))

    def test_set_rules_applies_at_once(self):
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.enforcer.set_rules(oslo_policy.Rules.from_dict(
            {RULE: 'role:admin'}), overwrite=False, use_conf=False)
        self.assertRaises(exception.PolicyNotAuthorized, self.member.can,
                          RULE, {'project_id': 'p1'})

    def test_policy_file_change_applies_after_the_interval(self):
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        with open(self.policy_file, 'w') as f:
            f.write('"%s": "role:admin"\n' % RULE)
        # Within the interval the file is not looked at again...
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        # ...after it, the new rule applies.
        self.enforcer._next_file_check = 0
        self.assertRaises(exception.PolicyNotAuthorized, self.member.can,
                          RULE, {'project_id': 'p1'})
        self.assertLessEqual(policy.POLICY_FILE_CHECK_SECONDS, 1.0)

    def test_files_are_looked_at_once_within_the_interval(self):
        looks = []
        real = oslo_policy.Enforcer.load_rules

        def counting(enforcer, force_reload=False):
            looks.append(force_reload)
            return real(enforcer, force_reload)
        self.useFixture(fixtures.MockPatchObject(
            oslo_policy.Enforcer, 'load_rules', counting))
        self.enforcer._next_file_check = 0
        for _ in range(5):
            self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual([False], looks)
        # A forced reload is never held back.
        self.enforcer.load_rules(force_reload=True)
        self.assertEqual([False, True], looks)


RULE = 'volume:attachment_create'
