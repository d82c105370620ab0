"""Volume metadata rules without a database: the change a request makes,
ETags, the list filter, the statuses that refuse changes. (The schemas'
limits on keys and values: tests/unit/api/test_volume_metadata_schemas.py.)
"""

import testtools

from nova_lite.volume import metadata as vmeta
from nova_lite.volume import status as st

CURRENT = {'type': 'work', 'owner': 'alice', 'tier': 'gold'}


class PlanTest(testtools.TestCase):

    def test_merge_keeps_the_other_keys(self):
        plan = vmeta.plan(CURRENT, {'owner': 'bob', 'zone': 'a',
                                    'type': 'work'})
        self.assertEqual([], plan.removed)
        self.assertEqual({'zone': 'a'}, plan.added)
        # An unchanged value is not rewritten.
        self.assertEqual({'owner': 'bob'}, plan.changed)
        self.assertEqual({'owner': 'bob', 'tier': 'gold', 'type': 'work',
                          'zone': 'a'}, plan.result)

    def test_replace_removes_the_keys_not_given(self):
        plan = vmeta.plan(CURRENT, {'owner': 'bob', 'zone': 'a'},
                          replace=True)
        self.assertEqual(['tier', 'type'], plan.removed)
        self.assertEqual({'zone': 'a'}, plan.added)
        self.assertEqual({'owner': 'bob'}, plan.changed)
        self.assertEqual({'owner': 'bob', 'zone': 'a'}, plan.result)

    def test_replace_with_nothing_clears(self):
        plan = vmeta.plan(CURRENT, {}, replace=True)
        self.assertEqual(sorted(CURRENT), plan.removed)
        self.assertEqual(({}, {}, {}), (plan.added, plan.changed,
                                        plan.result))

    def test_merge_of_nothing_changes_nothing(self):
        plan = vmeta.plan(CURRENT, {})
        self.assertEqual(([], {}, {}), plan[:3])
        self.assertEqual(CURRENT, plan.result)

    def test_keys_are_exact(self):
        plan = vmeta.plan({'Type': 'a'}, {'type': 'b', 'Type ': 'c'},
                          replace=True)
        self.assertEqual(['Type'], plan.removed)
        self.assertEqual({'type': 'b', 'Type ': 'c'}, plan.added)

    def test_result_is_ordered_by_key(self):
        plan = vmeta.plan({'b': '1'}, {'c': '2', 'a': '3'})
        self.assertEqual(['a', 'b', 'c'], list(plan.result))
        self.assertEqual(['a', 'b'], list(vmeta.by_key({'b': 1, 'a': 2})))

    def test_inputs_are_not_changed(self):
        current, given = dict(CURRENT), {'zone': 'a'}
        vmeta.plan(current, given, replace=True)
        self.assertEqual((CURRENT, {'zone': 'a'}), (current, given))


class ETagTest(testtools.TestCase):

    def test_same_metadata_same_etag_whatever_the_order(self):
        self.assertEqual(vmeta.etag({'a': '1', 'b': '2'}),
                         vmeta.etag({'b': '2', 'a': '1'}))
        self.assertEqual(32, len(vmeta.etag({})))

    def test_any_change_changes_it(self):
        tags = {vmeta.etag(m) for m in ({}, {'a': '1'}, {'a': '2'},
                                        {'A': '1'}, {'a': '1', 'b': '1'})}
        self.assertEqual(5, len(tags))

    def test_if_match(self):
        tag = vmeta.etag(CURRENT)
        self.assertTrue(vmeta.etag_matches(CURRENT, None))
        self.assertTrue(vmeta.etag_matches(CURRENT, ['x', tag]))
        self.assertFalse(vmeta.etag_matches(CURRENT, ['x']))
        self.assertFalse(vmeta.etag_matches(CURRENT, []))
        self.assertFalse(vmeta.etag_matches({}, [tag]))


class FilterTest(testtools.TestCase):

    def test_python_literal_as_cinder_clients_send_it(self):
        # tempest: urlencode({'metadata': {'Type': 'work'}})
        self.assertEqual({'Type': 'work'},
                         vmeta.parse_filter(str({'Type': 'work'})))

    def test_json(self):
        self.assertEqual({'a': 'b', 'c': ''},
                         vmeta.parse_filter('{"a": "b", "c": ""}'))
        self.assertEqual({}, vmeta.parse_filter('{}'))

    def test_refused(self):
        for text in ('', 'work', '[]', '"x"', "{'a': 1}", '{1: "a"}',
                     '{"a": ["b"]}', "{'a': None}", "__import__('os')",
                     "{'a': 'b'} or 1", 'x\x00y', '[' * 100000,
                     '{"a": ' * 3000 + '"b"' + '}' * 3000,
                     "{'a': '%s'}" % ('x' * vmeta.MAX_FILTER_LENGTH),
                     '9' * 5000):
            self.assertRaises(ValueError, vmeta.parse_filter, text)


class StatusTest(testtools.TestCase):

    def test_metadata_frozen_as_cinder(self):
        self.assertEqual({'maintenance', 'uploading'},
                         set(st.METADATA_FROZEN))
        self.assertEqual(('maintenance',), st.UPDATE_FROZEN)
