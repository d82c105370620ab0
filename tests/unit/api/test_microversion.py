"""Microversion parsing of both sub-APIs (API-CONTRACT.md 1.1 and 1.2)."""

import testtools

from nova_lite.api import microversion as mv
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
        self.assertEqual((3, 71), self.parse(
            {'OpenStack-API-Version': 'volume latest'}))
        self.assertRaises(exception.InvalidGlobalAPIVersion, self.parse,
                          {'OpenStack-API-Version': 'volume 3.72'})
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
