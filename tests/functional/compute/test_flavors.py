"""Flavors at microversion 2.102 (Nova's): the ``name`` filter, and the
deprecated ``rxtx_factor`` and ``OS-FLV-DISABLED:disabled`` gone."""

from tests.functional.compute import base

LEGACY_KEYS = {'rxtx_factor', 'OS-FLV-DISABLED:disabled'}


class FlavorsV2102Test(base.TestCase):
    def get(self, path, version):
        return self.api.as_(compute_version=version).get(path)

    def names(self, path, version):
        resp = self.get(path, version)
        self.assertEqual(200, resp.status, resp.text)
        return [f['name'] for f in resp.body['flavors']]

    def test_legacy_keys_removed_from_2_102(self):
        def flavor(resp):
            return resp.body.get('flavor') or resp.body['flavors'][0]
        for path in ('/v2.1/flavors/1', '/v2.1/flavors/detail'):
            old, new = self.get(path, '2.101'), self.get(path, '2.102')
            self.assertEqual(LEGACY_KEYS, LEGACY_KEYS & set(flavor(old)))
            self.assertEqual(set(), LEGACY_KEYS & set(flavor(new)))
            self.assertEqual(set(flavor(old)) - LEGACY_KEYS,
                             set(flavor(new)))

    def test_name_filter_from_2_102(self):
        for path in ('/v2.1/flavors', '/v2.1/flavors/detail'):
            self.assertEqual(['m1.large', 'm1.xlarge'],
                             self.names(path + '?name=large', '2.102'))
            self.assertEqual(['m1.small'],
                             self.names(path + '?name=^m1.s', '2.102'))
            self.assertEqual([], self.names(path + '?name=nothing',
                                            '2.102'))
            # Combined with the other filters and paging.
            self.assertEqual(['m1.xlarge'], self.names(
                path + '?name=large&minRam=16384', '2.102'))
            self.assertEqual(['m1.xlarge'], self.names(
                path + '?name=large&marker=4', '2.102'))
            # Before 2.102 it is not a filter: ignored up to 2.74, then
            # refused as an unknown parameter.
            self.assertEqual(5, len(self.names(path + '?name=large',
                                               '2.74')))
            self.assertEqual(400, self.get(path + '?name=large',
                                           '2.101').status)

    def test_invalid_name_pattern_is_400(self):
        resp = self.get('/v2.1/flavors?name=m1.(', '2.102')
        self.assertEqual(400, resp.status)
        self.assertIn('Invalid name filter', resp.body['badRequest'][
            'message'])
