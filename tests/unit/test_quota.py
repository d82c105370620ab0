"""The quota arithmetic: limits merged in order, headroom, the up-front
count of a multi-create, limits parsed from request bodies."""

import testtools

from nova_lite.compute import flavors
from nova_lite.compute import quotas as compute_quotas
from nova_lite import exception
from nova_lite import quota

LIMITS = {'instances': 10, 'cores': 20, 'ram': 51200}


class MergeTest(testtools.TestCase):
    def test_later_overrides_win_and_unknown_names_are_dropped(self):
        merged = quota.merge({'a': 1, 'b': 2}, {'a': 5, 'z': 9}, {'a': 7})
        self.assertEqual({'a': 7, 'b': 2}, merged)


class HeadroomTest(testtools.TestCase):
    def test_headroom(self):
        self.assertIsNone(quota.headroom(-1, 100))
        self.assertEqual(3, quota.headroom(10, 7))
        self.assertEqual(0, quota.headroom(5, 9))   # over after a force

    def test_limit_below_usage(self):
        quota.check_limit_update('instances', 5, 5)
        quota.check_limit_update('instances', -1, 500)
        e = self.assertRaises(exception.QuotaBelowUsage,
                              quota.check_limit_update, 'instances', 4, 5)
        self.assertEqual(400, e.code)


class ParseLimitTest(testtools.TestCase):
    def test_integers_and_strings(self):
        self.assertEqual(-1, quota.parse_limit('-1', 'x'))
        self.assertEqual(7, quota.parse_limit(7, 'x'))
        self.assertEqual(quota.MAX_LIMIT,
                         quota.parse_limit(str(quota.MAX_LIMIT), 'x'))
        for bad in ('-2', str(quota.MAX_LIMIT + 1), '9999999999'):
            self.assertRaises(exception.InvalidInput, quota.parse_limit,
                              bad, 'x')


class FittingTest(testtools.TestCase):
    """Nova's up-front check of a multi-create."""

    def fit(self, used, flavor='1', min_count=1, max_count=1, **limits):
        return compute_quotas._fitting(
            dict(LIMITS, **limits),
            dict({'instances': 0, 'cores': 0, 'ram': 0}, **used),
            flavors.get(flavor), min_count, max_count)

    def test_max_count_is_reduced_to_what_fits(self):
        self.assertEqual(4, self.fit({'instances': 6}, min_count=1,
                                     max_count=10))
        # m1.medium: 2 vCPU; 20 cores, 15 used: two more fit.
        self.assertEqual(2, self.fit({'cores': 15}, flavor='3',
                                     max_count=5))

    def test_min_count_that_does_not_fit_is_403(self):
        e = self.assertRaises(exception.TooManyInstances, self.fit,
                              {'instances': 9}, min_count=2, max_count=3)
        self.assertEqual(403, e.code)
        self.assertEqual('Quota exceeded for instances: Requested 2, but '
                         'already used 9 of 10 instances', str(e))

    def test_every_resource_over_is_named(self):
        e = self.assertRaises(exception.TooManyInstances, self.fit,
                              {'instances': 10, 'cores': 20})
        self.assertIn('instances, cores', str(e))

    def test_unlimited_resources_do_not_count(self):
        self.assertEqual(50, self.fit({'instances': 10 ** 6}, instances=-1,
                                      cores=-1, ram=-1, max_count=50))
