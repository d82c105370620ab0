"""The availability zones of both APIs: one zone, ``nova``."""

from tests.functional import base


class AvailabilityZonesTest(base.TestCase):

    def test_compute_list_and_detail(self):
        resp = self.api.get('/v2.1/os-availability-zone')
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'availabilityZoneInfo': [{
            'zoneName': 'nova', 'zoneState': {'available': True},
            'hosts': None}]}, resp.body)
        self.assertEqual(403, self.api.get(
            '/v2.1/os-availability-zone/detail').status)
        zones = {z['zoneName']: z for z in self.admin_api.get(
            '/v2.1/os-availability-zone/detail').body[
            'availabilityZoneInfo']}
        self.assertEqual({'nova', 'internal'}, set(zones))
        compute = zones['nova']['hosts']['compute1']['nova-lite-compute']
        self.assertTrue(compute['available'])
        self.assertTrue(compute['active'])
        self.assertIn('nova-lite-conductor', [
            binary for host in zones['internal']['hosts'].values()
            for binary in host])

    def test_volume_list(self):
        resp = self.api.get('/v3/demo/os-availability-zone')
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'availabilityZoneInfo': [{
            'zoneName': 'nova', 'zoneState': {'available': True}}]},
            resp.body)
