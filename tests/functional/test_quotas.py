"""Quotas and limits of both APIs, through the API on the whole system:
defaults, administrators' overrides, enforcement at server and volume
create (multi-create up front), usage, policies and bad input."""

import concurrent.futures
import threading

from tests.functional import api_samples
from tests.functional.compute import base

IMAGE = base.IMAGE
QS = '/v2.1/os-quota-sets/demo'


class ComputeQuotaTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.admin = self.admin_api.as_(compute_version='2.57')
        self.user = self.api.as_(compute_version='2.57')

    def set_quota(self, expect=200, **values):
        resp = self.admin.put(QS, body={'quota_set': values})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def boot(self, api=None, expect=202, **extra):
        server = {'name': 's', 'flavorRef': '1', 'imageRef': IMAGE,
                  'networks': 'none'}
        server.update(extra)
        resp = (api or self.user).post('/v2.1/servers',
                                       body={'server': server})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def server_count(self):
        return len(self.admin.get('/v2.1/servers?all_tenants=1').body[
            'servers'])

    def test_defaults_and_keys_by_microversion(self):
        shown = self.user.get(QS).body['quota_set']
        self.assertEqual({'id': 'demo', 'instances': 10, 'cores': 20,
                          'ram': 51200, 'metadata_items': 128,
                          'key_pairs': 100, 'server_groups': 10,
                          'server_group_members': 10}, shown)
        old = self.api.as_(compute_version='2.1').get(QS).body['quota_set']
        self.assertEqual(-1, old['fixed_ips'])
        self.assertEqual(5, old['injected_files'])
        mid = self.api.as_(compute_version='2.36').get(QS).body['quota_set']
        self.assertNotIn('fixed_ips', mid)
        self.assertIn('injected_files', mid)
        defaults = self.user.get(QS + '/defaults').body['quota_set']
        self.assertEqual(shown, defaults)

    def test_update_show_detail_delete(self):
        resp = self.set_quota(instances=3, cores='6')
        self.assertNotIn('id', resp.body['quota_set'])
        self.assertEqual(3, resp.body['quota_set']['instances'])
        self.assertEqual(6, resp.body['quota_set']['cores'])
        self.boot(flavorRef='3')            # 2 vCPU, 4096 MiB
        detail = self.user.get(QS + '/detail').body['quota_set']
        self.assertEqual({'limit': 3, 'in_use': 1, 'reserved': 0},
                         detail['instances'])
        self.assertEqual({'limit': 6, 'in_use': 2, 'reserved': 0},
                         detail['cores'])
        self.assertEqual(4096, detail['ram']['in_use'])
        # Defaults stay.
        self.assertEqual(10, self.user.get(QS + '/defaults').body[
            'quota_set']['instances'])
        self.assertEqual(202, self.admin.delete(QS).status)
        self.assertEqual(10, self.user.get(QS).body['quota_set'][
            'instances'])

    def test_below_usage_needs_force(self):
        self.boot()
        self.boot()
        resp = self.set_quota(expect=400, instances=1)
        self.assertIn('must be greater than or equal to already used and '
                      'reserved 2', resp.body['badRequest']['message'])
        self.assertEqual(10, self.user.get(QS).body['quota_set'][
            'instances'])
        self.set_quota(instances=1, force=True)
        self.assertEqual(1, self.user.get(QS).body['quota_set'][
            'instances'])
        self.boot(expect=403)

    def test_create_over_quota_is_403_and_creates_nothing(self):
        self.set_quota(instances=2)
        self.boot()
        self.boot()
        resp = self.boot(expect=403)
        self.assertEqual(
            'Quota exceeded for instances: Requested 1, but already used 2 '
            'of 2 instances', resp.body['forbidden']['message'])
        self.assertEqual(2, self.server_count())
        self.set_quota(instances=10, cores=4)   # 2 used
        self.boot(flavorRef='3')
        resp = self.boot(expect=403, flavorRef='3')
        self.assertIn('Quota exceeded for cores', resp.text)
        self.assertEqual(3, self.server_count())

    def test_multi_create_takes_what_fits_or_nothing(self):
        self.set_quota(instances=4)
        self.boot()
        self.boot(min_count=2, max_count=10, name='multi')
        made = [s['name'] for s in self.admin.get(
            '/v2.1/servers?all_tenants=1').body['servers']
            if s['name'].startswith('multi')]
        self.assertEqual(['multi-1', 'multi-2', 'multi-3'], sorted(made))
        resp = self.boot(expect=403, min_count=1, max_count=5)
        self.assertIn('Requested 1, but already used 4 of 4 instances',
                      resp.text)
        self.assertEqual(4, self.server_count())

    def test_max_count_ten_thousand_takes_the_default_quota(self):
        # The hostile-input report: max_count=10000 was accepted (3,551
        # servers 45 s later). Now it takes the 10 the quota allows...
        self.boot(min_count=1, max_count=10000, name='many')
        self.assertEqual(10, self.server_count())
        # ...and a min_count that cannot fit is 403 at once.
        resp = self.boot(expect=403, min_count=10000, max_count=10000)
        self.assertIn('Requested 10000, but already used 10 of 10 '
                      'instances', resp.text)
        self.assertEqual(10, self.server_count())

    def test_min_count_that_does_not_fit_creates_nothing(self):
        self.set_quota(instances=3)
        self.boot(expect=403, min_count=4, max_count=4)
        self.assertEqual(0, self.server_count())

    def test_concurrent_creates_never_pass_the_last_unit(self):
        self.set_quota(instances=3)
        barrier = threading.Barrier(8)

        def one(_):
            barrier.wait(timeout=30)
            return self.user.post('/v2.1/servers', body={'server': {
                'name': 's', 'flavorRef': '1', 'imageRef': IMAGE,
                'networks': 'none'}}).status
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            statuses = sorted(pool.map(one, range(8)))
        self.assertEqual([202] * 3 + [403] * 5, statuses)
        self.assertEqual(3, self.server_count())

    def test_deleted_servers_free_their_quota(self):
        self.set_quota(instances=1)
        server_id = self.boot().body['server']['id']
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.boot(expect=403)
        self.assertEqual(204, self.user.delete(
            '/v2.1/servers/%s' % server_id).status)
        self.wait_for_server_gone(server_id)
        self.boot()

    def test_policies(self):
        self.assertEqual(403, self.user.put(QS, body={
            'quota_set': {'instances': 50}}).status)
        self.assertEqual(403, self.user.delete(QS).status)
        other = '/v2.1/os-quota-sets/other'
        self.assertEqual(403, self.user.get(other).status)
        self.assertEqual(403, self.user.get(other + '/detail').status)
        self.assertEqual(200, self.user.get(other + '/defaults').status)
        self.assertEqual(200, self.admin.get(other).status)
        self.assertEqual(10, self.user.get(QS).body['quota_set'][
            'instances'])

    def test_bad_bodies_are_400_and_change_nothing(self):
        for body in ({'quota_set': {'instances': 'many'}},
                     {'quota_set': {'instances': -2}},
                     {'quota_set': {'instances': 2 ** 31}},
                     {'quota_set': {'instances': '99999999999'}},
                     {'quota_set': {'instances': 1, 'bogus': 1}},
                     {'quota_set': {'injected_files': 1}},   # gone at 2.57
                     {'quota_set': {'instances': 1, 'force': 'maybe'}},
                     {'quota_set': []}, {}):
            resp = self.admin.put(QS, body=body)
            self.assertEqual(400, resp.status, (body, resp.text))
            self.assertIn('badRequest', resp.body)
        self.assertEqual(10, self.user.get(QS).body['quota_set'][
            'instances'])
        self.assertEqual(200, self.admin_api.as_(compute_version='2.1').put(
            QS, body={'quota_set': {'floating_ips': 5}}).status)

    def test_limits(self):
        self.set_quota(instances=5, ram=10000)
        self.boot(flavorRef='2')           # 1 vCPU, 2048 MiB
        absolute = self.user.get('/v2.1/limits').body['limits']['absolute']
        self.assertEqual(5, absolute['maxTotalInstances'])
        self.assertEqual(1, absolute['totalInstancesUsed'])
        self.assertEqual(10000, absolute['maxTotalRAMSize'])
        self.assertEqual(2048, absolute['totalRAMUsed'])
        self.assertEqual(1, absolute['totalCoresUsed'])
        self.assertNotIn('maxPersonality', absolute)
        old = self.api.as_(compute_version='2.1').get('/v2.1/limits').body
        self.assertEqual([], old['limits']['rate'])
        self.assertIn('maxTotalFloatingIps', old['limits']['absolute'])
        self.assertEqual(403, self.user.get(
            '/v2.1/limits?tenant_id=other').status)
        other = self.admin.get('/v2.1/limits?tenant_id=demo').body
        self.assertEqual(1, other['limits']['absolute'][
            'totalInstancesUsed'])


VQS = '/v3/demo/os-quota-sets/demo'


class VolumeQuotaTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.admin = self.admin_api.as_(volume_version='3.0')
        self.user = self.api.as_(volume_version='3.0')

    def set_quota(self, expect=200, **values):
        resp = self.admin.put('/v3/admin/os-quota-sets/demo',
                              body={'quota_set': values})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def create(self, expect=202, **volume):
        volume.setdefault('size', 1)
        resp = self.user.post('/v3/volumes', body={'volume': volume})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def volume_count(self):
        return len(self.user.get('/v3/volumes').body['volumes'])

    def gold(self):
        resp = self.admin.post('/v3/types', body={'volume_type': {
            'name': 'gold'}})
        self.assertEqual(200, resp.status, resp.text)

    def test_show_defaults_and_usage(self):
        self.gold()
        shown = self.user.get(VQS).body['quota_set']
        self.assertEqual({'id': 'demo', 'volumes': 10, 'snapshots': 10,
                          'gigabytes': 1000, 'backups': 10,
                          'backup_gigabytes': 1000, 'groups': 10,
                          'per_volume_gigabytes': -1, 'volumes_gold': -1,
                          'gigabytes_gold': -1, 'snapshots_gold': -1,
                          'volumes___DEFAULT__': -1,
                          'gigabytes___DEFAULT__': -1,
                          'snapshots___DEFAULT__': -1},
                         shown)
        self.create(size=3, volume_type='gold')
        usage = self.user.get(VQS + '?usage=True').body['quota_set']
        self.assertEqual({'limit': 1000, 'in_use': 3, 'reserved': 0},
                         usage['gigabytes'])
        self.assertEqual({'limit': -1, 'in_use': 1, 'reserved': 0},
                         usage['volumes_gold'])
        self.assertEqual(shown, self.user.get(VQS + '/defaults').body[
            'quota_set'])

    def test_volumes_gigabytes_and_size_limits(self):
        self.set_quota(volumes=2, gigabytes=5, per_volume_gigabytes=4)
        self.create(size=3)
        resp = self.create(expect=413, size=3)
        self.assertEqual(
            'Requested volume or snapshot exceeds allowed gigabytes quota. '
            'Requested 3G, quota is 5G and 3G has been consumed.',
            resp.body['overLimit']['message'])
        resp = self.create(expect=400, size=5)
        self.assertIn('larger than maximum allowed limit 4G', resp.text)
        self.create(size=2)
        resp = self.create(expect=413)
        self.assertEqual("Maximum number of volumes allowed (2) exceeded "
                         "for quota 'volumes'.",
                         resp.body['overLimit']['message'])
        self.assertEqual(2, self.volume_count())

    def test_per_type_limits(self):
        self.gold()
        self.set_quota(volumes_gold=1)
        self.create(volume_type='gold')
        resp = self.create(expect=413, volume_type='gold')
        self.assertIn("quota 'volumes_gold'", resp.text)
        self.create()
        self.assertEqual(2, self.volume_count())

    def test_retype_respects_the_new_types_limits(self):
        self.gold()
        self.set_quota(volumes_gold=1, gigabytes_gold=2)
        self.create(volume_type='gold')
        plain = self.create(size=2).body['volume']
        path = '/v3/volumes/%s/action' % plain['id']
        retype = {'os-retype': {'new_type': 'gold'}}
        resp = self.user.post(path, body=retype)
        self.assertEqual(413, resp.status, resp.text)
        self.assertIn("quota 'volumes_gold'", resp.text)
        self.set_quota(volumes_gold=2)
        resp = self.user.post(path, body=retype)
        self.assertEqual(413, resp.status, resp.text)
        self.assertIn('gigabytes_gold', resp.text)
        self.set_quota(gigabytes_gold=-1)
        self.assertEqual(202, self.user.post(path, body=retype).status)
        shown = self.user.get('/v3/volumes/%s' % plain['id']).body['volume']
        self.assertEqual('gold', shown['volume_type'])

    def test_deleted_volumes_free_their_quota(self):
        self.set_quota(volumes=1)
        volume = self.create().body['volume']
        self.create(expect=413)
        self.assertEqual(202, self.user.delete(
            '/v3/volumes/%s' % volume['id']).status)
        self.create()

    def test_quota_class_default_and_delete(self):
        resp = self.admin.put('/v3/os-quota-class-sets/default', body={
            'quota_class_set': {'volumes': 3}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(3, resp.body['quota_class_set']['volumes'])
        shown = self.admin.get('/v3/os-quota-class-sets/default').body
        self.assertEqual('default', shown['quota_class_set']['id'])
        self.assertEqual(3, self.user.get(VQS + '/defaults').body[
            'quota_set']['volumes'])
        self.set_quota(volumes=7)
        self.assertEqual(7, self.user.get(VQS).body['quota_set']['volumes'])
        self.assertEqual(200, self.admin.delete(
            '/v3/os-quota-sets/demo').status)
        self.assertEqual(3, self.user.get(VQS).body['quota_set']['volumes'])

    def test_update_validation(self):
        self.create(size=2)
        resp = self.set_quota(expect=400, gigabytes=1,
                              skip_validation=False)
        self.assertIn('gigabytes', resp.text)
        self.set_quota(gigabytes=1)         # skip_validation defaults true
        for values in ({'bogus': 1}, {'volumes_nosuchtype': 1},
                       {'volumes': 'x'}, {'volumes': -5},
                       {'volumes': 2 ** 31}, {'skip_validation': 'maybe'}):
            resp = self.set_quota(expect=400, **values)
            self.assertIn('badRequest', resp.body)
        self.assertIn('Bad key(s) in quota set: bogus',
                      self.set_quota(expect=400, bogus=1).text)
        self.assertEqual(1, self.user.get(VQS).body['quota_set'][
            'gigabytes'])

    def test_policies(self):
        self.assertEqual(403, self.user.put(VQS, body={
            'quota_set': {'volumes': 50}}).status)
        self.assertEqual(403, self.user.delete(VQS).status)
        self.assertEqual(403, self.user.get(
            '/v3/demo/os-quota-sets/other').status)
        self.assertEqual(403, self.user.get(
            '/v3/os-quota-class-sets/default').status)
        self.assertEqual(403, self.user.put(
            '/v3/os-quota-class-sets/default',
            body={'quota_class_set': {'volumes': 1}}).status)
        self.assertEqual(10, self.user.get(VQS).body['quota_set'][
            'volumes'])

    def test_limits(self):
        self.set_quota(volumes=4)
        self.create(size=2)
        absolute = self.user.get('/v3/demo/limits').body['limits'][
            'absolute']
        self.assertEqual(4, absolute['maxTotalVolumes'])
        self.assertEqual(1, absolute['totalVolumesUsed'])
        self.assertEqual(2, absolute['totalGigabytesUsed'])
        self.assertEqual(1000, absolute['maxTotalVolumeGigabytes'])


class QuotaSamplesTest(api_samples.SampleAssertions, base.TestCase):
    """The api-ref samples of quotas and limits
    (``api-ref/source/samples/quotas/``; ``NOVA_LITE_WRITE_SAMPLES=1``
    rewrites them)."""

    def _call(self, api, method, path, name, body=None):
        if body is not None:
            self._sample('quotas', name + '-req.json', body)
        resp = api.request(method, path, body=body)
        self.assertEqual(200, resp.status, resp.text)
        self._sample('quotas', name + '-resp.json', resp.body)

    def test_samples(self):
        self.scrub = api_samples.Scrubber('http://localhost')
        admin = self.admin_api.as_(compute_version='2.57',
                                   volume_version='3.0')
        user = self.api.as_(compute_version='2.57', volume_version='3.0')
        self.create_server()
        self._call(user, 'GET', QS, 'quotas-show-get')
        self._call(admin, 'PUT', QS, 'quotas-update-put',
                   body={'quota_set': {'instances': 50, 'cores': 100}})
        self._call(user, 'GET', '/v2.1/limits', 'limits-get')
        self._call(user, 'GET', VQS + '?usage=true',
                   'volume-quotas-show-get')
