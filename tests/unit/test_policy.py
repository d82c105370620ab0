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


class EnforcerCostTest(base.TestCase):
    """The enforcer remembers allowed answers of pure rules and looks for
    policy file changes at most once a second, without changing answers."""

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

    def test_allowed_answer_is_remembered(self):
        for _ in range(3):
            self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(1, self.checks)
        # Another target or other credentials are other questions.
        self.assertFalse(self.member.can(RULE, {'project_id': 'p2'},
                                         fatal=False))
        reader = context.RequestContext(user_id='u', project_id='p1',
                                        roles=['reader'])
        reader.enforcer = self.enforcer
        self.assertFalse(reader.can(RULE, {'project_id': 'p1'},
                                    fatal=False))
        self.assertEqual(3, self.checks)

    def test_raised_denial_is_not_remembered(self):
        for _ in range(2):
            self.assertRaises(exception.PolicyNotAuthorized, self.member.can,
                              RULE, {'project_id': 'p2'})
        self.assertEqual(2, self.checks)

    def test_returned_denial_is_remembered(self):
        for _ in range(2):
            self.assertFalse(self.member.can(RULE, {'project_id': 'p2'},
                                             fatal=False))
        self.assertEqual(1, self.checks)
        # Asked again with fatal=True: the same exception as oslo.policy's.
        exc = self.assertRaises(exception.PolicyNotAuthorized,
                                self.member.can, RULE, {'project_id': 'p2'})
        self.assertIn(RULE, str(exc))
        self.assertEqual(1, self.checks)

    def test_set_rules_forgets(self):
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.enforcer.set_rules(oslo_policy.Rules.from_dict(
            {RULE: 'role:admin'}), overwrite=False, use_conf=False)
        self.assertRaises(exception.PolicyNotAuthorized, self.member.can,
                          RULE, {'project_id': 'p1'})

    def test_rules_with_other_checks_are_not_remembered(self):
        # A check class of its own (like http:): its answer may depend on
        # more than the target and the credentials.
        self.enforcer.set_rules(oslo_policy.Rules.from_dict(
            {RULE: 'rule:project_member_or_admin and @'}), overwrite=False,
            use_conf=False)
        self.enforcer.rules[RULE].rules.append(_AlwaysCheck('always', 'x'))
        for _ in range(2):
            self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(2, self.checks)

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

    def test_looking_at_unchanged_files_keeps_answers(self):
        # No policy file (the default): looking again changes nothing.
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(1, self.checks)
        self.enforcer._next_file_check = 0
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(1, self.checks)
        # A new policy file is a change: the answer is asked again...
        with open(self.policy_file, 'w') as f:
            f.write('"%s": "rule:project_member_or_admin"\n' % RULE)
        self.enforcer._next_file_check = 0
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(2, self.checks)
        # ...and while it stays as it is, remembered.
        self.enforcer._next_file_check = 0
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(2, self.checks)

    def _context(self, cls=context.RequestContext, **kwargs):
        values = dict(user_id='u', project_id='p1', roles=['member', 'reader'])
        values.update(kwargs)
        ctxt = cls(**values)
        ctxt.enforcer = self.enforcer
        return ctxt

    def test_equal_credentials_share_an_answer(self):
        # Another context (another request) of the same user asks the same
        # question: remembered, though the two objects differ.
        for _ in range(2):
            self.assertTrue(self._context().can(RULE, {'project_id': 'p1'}))
        self.assertEqual(1, self.checks)

    def test_every_policy_value_tells_credentials_apart(self):
        # Two contexts that differ in any one value oslo.context gives
        # oslo.policy are two questions, even when the answer is the same.
        first = self._context()
        self.assertTrue(first.can(RULE, {'project_id': 'p1'}))
        others = {
            'user_id': 'u2', 'user_domain_id': 'd1', 'domain_id': 'd2',
            'project_domain_id': 'd3', 'is_admin_project': False,
            'service_user_id': 's', 'service_user_domain_id': 'sd',
            'service_project_id': 'sp', 'service_project_domain_id': 'spd',
            'service_roles': ['service'], 'roles': ['reader', 'member'],
        }
        for name, value in sorted(others.items()):
            ctxt = self._context(**{name: value})
            self.assertNotEqual(first.to_policy_values()[name],
                                ctxt.to_policy_values()[name], name)
            ctxt.can(RULE, {'project_id': 'p1'}, fatal=False)
        self.assertEqual(1 + len(others), self.checks)

    def test_changed_roles_are_asked_again(self):
        ctxt = self._context(roles=['reader'])
        self.assertFalse(ctxt.can(RULE, {'project_id': 'p1'}, fatal=False))
        ctxt.roles.append('member')
        self.assertTrue(ctxt.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(2, self.checks)

    def test_credentials_of_their_own_are_frozen_whole(self):
        # A context class that gives oslo.policy more than oslo.context's
        # values: its whole mapping is the key.
        class Tiered(context.RequestContext):
            tier = 'gold'

            def to_policy_values(self):
                values = super().to_policy_values()
                values['tier'] = self.tier
                return values

        gold = self._context(cls=Tiered)
        silver = self._context(cls=Tiered)
        silver.tier = 'silver'
        for ctxt in (gold, gold, silver):
            self.assertTrue(ctxt.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(2, self.checks)

    def test_credentials_given_as_a_mapping_are_remembered(self):
        creds = self.member.to_policy_values()
        for _ in range(2):
            self.assertTrue(self.enforcer.authorize(
                RULE, {'project_id': 'p1'}, dict(creds)))
        self.assertEqual(1, self.checks)
        # A context with the same values is keyed from its attributes: one
        # more evaluation, the same answer.
        self.assertTrue(self.member.can(RULE, {'project_id': 'p1'}))
        self.assertEqual(2, self.checks)

    def test_remembered_denial_raises_what_oslo_policy_raises(self):
        self.assertFalse(self.member.can(RULE, {'project_id': 'p2'},
                                         fatal=False))
        exc = self.assertRaises(
            oslo_policy.PolicyNotAuthorized, self.enforcer.authorize, RULE,
            {'project_id': 'p2'}, self.member, do_raise=True)
        self.assertEqual('%s is disallowed by policy' % RULE, str(exc))
        self.assertEqual(1, self.checks)


RULE = 'volume:attachment_create'


class _AlwaysCheck(oslo_policy.Check):
    def __call__(self, target, creds, enforcer, current_rule=None):
        return True
