"""Microversion parsing of both sub-APIs (API-CONTRACT.md 1.1 and 1.2)."""

import testtools

from nova_lite.api import microversion as mv
from nova_lite.api import validation
from nova_lite import exception


class ComputeVersionTest(testtools.TestCase):
    def parse(self, headers):
        return mv.COMPUTE.from_headers(headers)

    def test_no_header_is_minimum(self):
        self.assertEqual((2, 1), self.parse({}))

    def test_standard_header(self):
        self.assertEqual((2, 60), self.parse(
            {'OpenStack-API-Version': 'compute 2.60'}))

    def test_standard_header_last_compute_entry_wins(self):
        self.assertEqual((2, 79), self.parse(
            {'OpenStack-API-Version':
             'compute 2.60, volume 3.44, compute 2.79'}))

    def test_service_name_case_insensitive(self):
        self.assertEqual((2, 49), self.parse(
            {'OpenStack-API-Version': 'COMPUTE 2.49'}))

    def test_legacy_header(self):
        self.assertEqual((2, 20), self.parse(
            {'X-OpenStack-Nova-API-Version': '2.20'}))

    def test_standard_wins_over_legacy(self):
        self.assertEqual((2, 70), self.parse(
            {'OpenStack-API-Version': 'compute 2.70',
             'X-OpenStack-Nova-API-Version': '2.20'}))

    def test_no_compute_entry_falls_back_to_legacy_or_min(self):
        self.assertEqual((2, 1), self.parse(
            {'OpenStack-API-Version': 'volume 3.44'}))

    def test_latest(self):
        self.assertEqual(mv.COMPUTE.max, self.parse(
            {'OpenStack-API-Version': 'compute latest'}))

    def test_bad_format_is_400(self):
        for bad in ('2', '2.01', 'x.y', '2.1.1', '02.1', ''):
            exc = self.assertRaises(
                exception.InvalidAPIVersionString, self.parse,
                {'X-OpenStack-Nova-API-Version': bad or ' '})
            self.assertEqual(400, exc.code)

    def test_out_of_range_is_406(self):
        exc = self.assertRaises(
            exception.InvalidGlobalAPIVersion, self.parse,
            {'OpenStack-API-Version': 'compute 2.999'})
        self.assertEqual(406, exc.code)
        self.assertIn('Minimum is 2.1 and maximum is %s' % (mv.COMPUTE.max,),
                      exc.format_message())

    def test_response_headers(self):
        headers = mv.COMPUTE.response_headers(mv.APIVersion(2, 60))
        self.assertIn(('OpenStack-API-Version', 'compute 2.60'), headers)
        self.assertIn(('X-OpenStack-Nova-API-Version', '2.60'), headers)
        self.assertEqual(
            ['OpenStack-API-Version', 'X-OpenStack-Nova-API-Version'],
            [v for k, v in headers if k == 'Vary'])


class VolumeVersionTest(testtools.TestCase):
    def parse(self, headers):
        return mv.VOLUME.from_headers(headers)

    def test_default_is_3_0(self):
        self.assertEqual((3, 0), self.parse({}))

    def test_first_volume_entry_wins(self):
        self.assertEqual((3, 27), self.parse(
            {'OpenStack-API-Version': 'compute 2.60, volume 3.27, '
                                      'volume 3.44'}))

    def test_header_without_volume_entry_is_400(self):
        exc = self.assertRaises(exception.Invalid, self.parse,
                                {'OpenStack-API-Version': 'compute 2.60'})
        self.assertEqual(400, exc.code)

    def test_latest_and_range(self):
        self.assertEqual((3, 72), self.parse(
            {'OpenStack-API-Version': 'volume latest'}))
        self.assertRaises(exception.InvalidGlobalAPIVersion, self.parse,
                          {'OpenStack-API-Version': 'volume 3.73'})
        self.assertRaises(exception.InvalidGlobalAPIVersion, self.parse,
                          {'OpenStack-API-Version': 'volume 2.0'})

    def test_only_one_vary(self):
        headers = mv.VOLUME.response_headers(mv.APIVersion(3, 44))
        self.assertEqual([('OpenStack-API-Version', 'volume 3.44'),
                          ('Vary', 'OpenStack-API-Version')], headers)


class APIVersionTest(testtools.TestCase):
    def test_matches(self):
        v = mv.APIVersion(2, 79)
        self.assertTrue(v.matches('2.79'))
        self.assertTrue(v.matches('2.1', '2.79'))
        self.assertFalse(v.matches('2.80'))
        self.assertFalse(v.matches('2.1', '2.78'))
        self.assertTrue(mv.APIVersion(2, 100) > mv.APIVersion(2, 99))
        self.assertEqual('2.100', str(mv.APIVersion(2, 100)))


class BeforeTest(testtools.TestCase):
    """``before()``: the upper bound of a band that ends at a feature."""

    def test_previous_minor_as_a_string(self):
        self.assertEqual('2.69', mv.before('2.70'))
        self.assertEqual('2.99', mv.before('2.100'))
        self.assertEqual('2.9', mv.before('2.10'))
        self.assertEqual('3.0', mv.before('3.1'))
        self.assertEqual('3.53', mv.before(mv.ATTACHMENT_CREATE_MODE_ARG))

    def test_every_version_but_the_first(self):
        for service in (mv.COMPUTE, mv.VOLUME):
            for prev, version in zip(service.versions, service.versions[1:]):
                self.assertEqual(str(prev), mv.before(str(version)))

    def test_the_first_version_has_none(self):
        # 2.0 is no compute version and 3.0 has no previous minor: a band
        # ending before the first would cover nothing.
        self.assertRaises(ValueError, mv.before, mv.COMPUTE_MIN)
        self.assertRaises(ValueError, mv.before, '2.1')
        self.assertRaises(ValueError, mv.before, mv.VOLUME_MIN)
        self.assertRaises(ValueError, mv.before, '3.0')

    def test_versions_no_sub_api_serves(self):
        for version in ('2.0', '1.5', '4.1', '3.73', '2.106'):
            self.assertRaises(ValueError, mv.before, version)

    def test_not_a_version(self):
        for bad in ('2', '2.01', 'x.y', ''):
            self.assertRaises(exception.InvalidAPIVersionString,
                              mv.before, bad)

    def test_decorators_take_it(self):
        band = validation.Band(None, mv.COMPUTE_MIN, mv.before('2.70'))
        self.assertTrue(band.covers(mv.APIVersion(2, 69)))
        self.assertFalse(band.covers(mv.APIVersion(2, 70)))


class VersionListTest(testtools.TestCase):
    def test_ranges(self):
        self.assertEqual((mv.APIVersion.parse(mv.COMPUTE_MIN),
                          mv.APIVersion.parse(mv.COMPUTE_MAX)),
                         (mv.COMPUTE.min, mv.COMPUTE.max))
        self.assertEqual((mv.APIVersion.parse(mv.VOLUME_MIN),
                          mv.APIVersion.parse(mv.VOLUME_MAX)),
                         (mv.VOLUME.min, mv.VOLUME.max))
        self.assertEqual(105, len(mv.COMPUTE.versions))
        self.assertEqual(73, len(mv.VOLUME.versions))
