"""/v2.1/os-volumes, the compute API's deprecated proxy to block storage:
Nova's view and errors below 2.36, 404 on every route from 2.36, and the
same answers whether the compute API reaches block storage in-process
(``[volume] client = local``) or over REST (``cinder``)."""

import os

import fixtures
from oslo_policy import opts as policy_opts
from oslo_utils import uuidutils

from nova_lite.compute import api as compute_api
from nova_lite import config
from nova_lite.volume_client import cinder as cinder_client
from nova_lite.volume_client import local as local_client
from tests.fixtures import system
from tests.functional import api_samples
from tests.functional.compute import base

URL = '/v2.1/os-volumes'
LAST = '2.35'
VIEW_KEYS = {'id', 'status', 'size', 'availabilityZone', 'createdAt',
             'displayName', 'displayDescription', 'volumeType',
             'snapshotId', 'metadata', 'attachments'}


class OSVolumesTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.compute = self.api.as_(compute_version=LAST)
        self.v3 = self.volume_api(self.admin_api)

    def os_create(self, expect=200, api=None, **fields):
        volume = {'size': 1}
        volume.update(fields)
        resp = (api or self.compute).post(URL, body={'volume': volume})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def os_show(self, volume_id, expect=200, api=None):
        resp = (api or self.compute).get('%s/%s' % (URL, volume_id))
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body['volume'] if expect == 200 else resp

    def os_list(self, query='', detail=False, api=None):
        path = URL + ('/detail' if detail else '') + query
        resp = (api or self.compute).get(path)
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['volumes']

    def v3_volumes(self, api=None):
        resp = (api or self.volume_api()).get('/v3/volumes/detail')
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['volumes']

    def fault(self, resp, name, code):
        self.assertEqual(code, resp.status, resp.text)
        self.assertEqual([name], list(resp.body))
        self.assertEqual(code, resp.body[name]['code'])
        return resp.body[name]['message']

    def attached_in_v3(self, volume_id, device='/dev/vdb'):
        """Attach ``volume_id`` in block storage (no server needed): the
        attachment reserved, connected with ``device`` and completed.
        Returns ``(instance uuid, attachment id)``."""
        instance = uuidutils.generate_uuid()
        api = self.volume_api()
        resp = api.post('/v3/attachments', body={'attachment': {
            'volume_uuid': volume_id, 'instance_uuid': instance}})
        self.assertEqual(200, resp.status, resp.text)
        attachment_id = resp.body['attachment']['id']
        resp = api.put('/v3/attachments/%s' % attachment_id, body={
            'attachment': {'connector': {'host': 'compute1',
                                         'mountpoint': device}}})
        self.assertEqual(200, resp.status, resp.text)
        resp = api.as_(volume_version='3.44').post(
            '/v3/attachments/%s/action' % attachment_id,
            body={'os-complete': None})
        self.assertEqual(204, resp.status, resp.text)
        return instance, attachment_id


class OSVolumesTest(OSVolumesTestCase):

    def test_create_show_list_delete(self):
        resp = self.os_create(size=2, display_name='vol-a',
                              display_description='the first')
        created = resp.body['volume']
        volume_id = created['id']
        self.assertEqual(VIEW_KEYS, set(created))
        self.assertEqual(
            {'id': volume_id, 'status': 'available', 'size': 2,
             'availabilityZone': 'nova', 'displayName': 'vol-a',
             'displayDescription': 'the first', 'volumeType': '__DEFAULT__',
             'snapshotId': None, 'metadata': {}, 'attachments': [{}]},
            {k: v for k, v in created.items() if k != 'createdAt'})
        self.assertEqual('http://localhost/v2.1/os-volumes/%s' % volume_id,
                         resp.headers['Location'])
        # Block storage has it, as the caller's, with the same fields.
        stored = self.show_volume(volume_id)
        self.assertEqual(
            ('vol-a', 'the first', 2, 'available', 'demo',
             stored['created_at']),
            (stored['name'], stored['description'], stored['size'],
             stored['status'], stored['os-vol-tenant-attr:tenant_id'],
             created['createdAt']))
        # Show, list and detail give the same view (tempest compares
        # them).
        self.assertEqual(created, self.os_show(volume_id))
        self.assertEqual([created], self.os_list())
        self.assertEqual([created], self.os_list(detail=True))

        resp = self.compute.delete('%s/%s' % (URL, volume_id))
        self.assertEqual(202, resp.status, resp.text)
        self.assertEqual('', resp.text)
        self.assertEqual([], self.v3_volumes(self.v3))
        message = self.fault(self.os_show(volume_id, expect=404),
                             'itemNotFound', 404)
        self.assertEqual('Volume %s could not be found.' % volume_id,
                         message)

    def test_every_route_is_404_from_2_36(self):
        volume_id = self.os_create().body['volume']['id']
        for version in ('2.36', '2.60', '2.101', 'latest'):
            api = self.api.as_(compute_version=version)
            for method, path, body in [
                    ('GET', URL, None),
                    ('GET', URL + '/detail', None),
                    ('GET', '%s/%s' % (URL, volume_id), None),
                    ('POST', URL, {'volume': {'size': 1}}),
                    ('DELETE', '%s/%s' % (URL, volume_id), None)]:
                resp = api.request(method, path, body=body)
                self.fault(resp, 'itemNotFound', 404)
                if version != 'latest':
                    self.assertEqual(
                        'compute %s' % version,
                        resp.headers['OpenStack-API-Version'])
        # Nothing was created or deleted.
        self.assertEqual([volume_id], [v['id'] for v in self.v3_volumes()])
        # And the versions below answer, the default (2.1) included.
        for version in ('2.1', '2.20', LAST):
            self.assertEqual([volume_id], [v['id'] for v in self.os_list(
                api=self.api.as_(compute_version=version))])
        self.assertEqual([volume_id],
                         [v['id'] for v in self.os_list(api=self.api)])
        legacy = self.api.get(URL, headers={
            'X-OpenStack-Nova-API-Version': '2.36'})
        self.fault(legacy, 'itemNotFound', 404)

    def test_paging_with_limit_and_offset(self):
        ids = [self.os_create(display_name='v%d' % i).body['volume']['id']
               for i in range(4)]
        listed = self.os_list()
        # Newest first, as block storage lists them.
        self.assertEqual(list(reversed(ids)), [v['id'] for v in listed])
        every = [v['id'] for v in listed]
        for detail in (False, True):
            def page(query):
                return [v['id'] for v in self.os_list(query, detail)]
            self.assertEqual(every, page(''))
            self.assertEqual(every[:2], page('?limit=2'))
            self.assertEqual(every[1:2], page('?offset=1&limit=1'))
            self.assertEqual(every[2:], page('?offset=2'))
            self.assertEqual([], page('?offset=4'))
            # limit=0 is no limit, as in Nova; the last repeat wins.
            self.assertEqual(every, page('?limit=0'))
            self.assertEqual(every[:3], page('?limit=1&limit=3'))
            # [api] max_limit caps every page.
            self.conf.set_override('max_limit', 2, group='api')
            self.assertEqual(every[:2], page('?limit=3'))
            self.assertEqual(every[1:3], page('?offset=1'))
            self.conf.clear_override('max_limit', group='api')
            # Unknown parameters are ignored (the strict 2.75 and 2.102
            # rules come after this API's last version).
            self.assertEqual(every, page('?name=v1&sort_key=size'))
        for bad in ('?limit=-1', '?limit=x', '?offset=1.5',
                    '?limit=1234567890123456789'):
            resp = self.compute.get(URL + bad)
            self.fault(resp, 'badRequest', 400)

    def test_only_the_callers_project(self):
        mine = self.os_create().body['volume']['id']
        other = self.api.as_(token='alt:alt', compute_version=LAST)
        theirs = self.os_create(api=other).body['volume']['id']
        self.assertEqual([mine], [v['id'] for v in self.os_list()])
        self.assertEqual([theirs],
                         [v['id'] for v in self.os_list(api=other)])
        # Another project's volume is not found, to show or delete.
        self.fault(self.os_show(theirs, expect=404), 'itemNotFound', 404)
        resp = self.compute.delete('%s/%s' % (URL, theirs))
        self.fault(resp, 'itemNotFound', 404)
        self.assertEqual('available', self.show_volume(theirs)['status'])
        # An administrator sees it by id; lists show the admin's own
        # project only (Nova asks block storage without all_tenants).
        admin = self.admin_api.as_(compute_version=LAST)
        self.assertEqual(theirs, self.os_show(theirs, api=admin)['id'])
        self.assertEqual([], self.os_list(api=admin))

    def test_attached_volume(self):
        """As tempest's attach tests at old microversions: the volume
        created through os-volumes and attached to a server is shown
        ``in-use`` with Nova's attachment view, and cannot be deleted."""
        server_id = self.create_server()
        volume_id = self.os_create(display_name='data').body['volume']['id']
        resp = self.attach(server_id, volume_id, api=self.compute)
        device = resp.body['volumeAttachment']['device']
        self.wait_for_volume_status(volume_id, 'in-use')
        shown = self.os_show(volume_id)
        self.assertEqual('in-use', shown['status'])
        self.assertEqual([{'id': volume_id, 'volumeId': volume_id,
                           'serverId': server_id, 'device': device}],
                         shown['attachments'])
        self.assertEqual([shown], self.os_list(detail=True))
        message = self.fault(self.compute.delete('%s/%s' % (URL, volume_id)),
                             'badRequest', 400)
        self.assertIn('Volume status must be available', message)
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        self.detach(server_id, volume_id, api=self.compute)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([{}], self.os_show(volume_id)['attachments'])
        self.assertEqual(202, self.compute.delete(
            '%s/%s' % (URL, volume_id)).status)

    def test_multiattach_volume_shows_one_attachment(self):
        """Nova keeps one attachment per volume in this view: the first
        block storage lists."""
        volume_id = self.create_volume(multiattach=True)
        servers = {self.attached_in_v3(volume_id, device=device)[0]: device
                   for device in ('/dev/vdb', '/dev/vdc')}
        listed = self.show_volume(volume_id)['attachments']
        self.assertEqual(servers, {a['server_id']: a['device']
                                   for a in listed})
        self.assertEqual([{'id': volume_id, 'volumeId': volume_id,
                           'serverId': listed[0]['server_id'],
                           'device': listed[0]['device']}],
                         self.os_show(volume_id)['attachments'])

    def test_volume_type_and_zone(self):
        vtype = self.multiattach_type()
        shown = self.os_create(volume_type='multiattach',
                               availability_zone='nova').body['volume']
        self.assertEqual(('multiattach', 'nova'),
                         (shown['volumeType'], shown['availabilityZone']))
        # By id too; the view names the type.
        shown = self.os_create(volume_type=vtype).body['volume']
        self.assertEqual('multiattach', shown['volumeType'])
        self.assertTrue(self.show_volume(shown['id'])['multiattach'])


class OSVolumesErrorsTest(OSVolumesTestCase):

    def test_unknown_volume(self):
        for volume_id in (uuidutils.generate_uuid(), 'invalid-id'):
            message = self.fault(self.os_show(volume_id, expect=404),
                                 'itemNotFound', 404)
            self.assertEqual('Volume %s could not be found.' % volume_id,
                             message)
            self.fault(self.compute.delete('%s/%s' % (URL, volume_id)),
                       'itemNotFound', 404)
        # No id at all (tempest's "without passing volume id").
        self.fault(self.compute.get(URL + '/'), 'itemNotFound', 404)
        self.fault(self.compute.delete(URL + '/'), 'itemNotFound', 404)

    def test_bad_bodies_are_400_and_create_nothing(self):
        for volume in [
                {'size': '#$%'}, {'size': ''}, {'size': None},
                {'size': -1}, {'size': 0}, {'size': True}, {'size': 1.5},
                {'size': 2147483648}, {'size': '1' * 19},
                {'display_name': 'no size'},
                {'size': 1, 'imageRef': uuidutils.generate_uuid()},
                {'size': 1, 'name': 'v3 field'},
                {'size': 1, 'display_name': None},
                {'size': 1, 'display_name': 'x' * 256},
                {'size': 1, 'metadata': {'key': 1}},
                {'size': 1, 'metadata': []},
                {'size': 1, 'snapshot_id': None}]:
            resp = self.compute.post(URL, body={'volume': volume})
            self.fault(resp, 'badRequest', 400)
        for body in ({}, {'volume': None}, {'volumes': {'size': 1}},
                     {'volume': {'size': 1}, 'extra': 1}):
            self.fault(self.compute.post(URL, body=body), 'badRequest', 400)
        self.assertEqual([], self.v3_volumes())

    def test_block_storage_refusals_come_through(self):
        # Size "0" passes Nova's schema (digits): refused in block
        # storage's words, whichever client would carry it.
        message = self.fault(self.os_create(expect=400, size='0'),
                             'badRequest', 400)
        self.assertEqual("Invalid input received: Volume size '0' must be "
                         "an integer and greater than 0", message)
        # More than block storage stores (Cinder's answer).
        message = self.fault(self.os_create(expect=400, size='2147483648'),
                             'badRequest', 400)
        self.assertEqual('Invalid input received: size must be <= '
                         '2147483647.', message)
        message = self.fault(
            self.os_create(expect=400, availability_zone='zone9'),
            'badRequest', 400)
        self.assertEqual("Invalid input received: Availability zone "
                         "'zone9' is invalid.", message)
        message = self.fault(self.os_create(expect=404, volume_type='gold'),
                             'itemNotFound', 404)
        self.assertEqual('Volume type gold could not be found.', message)
        snapshot = uuidutils.generate_uuid()
        message = self.fault(self.os_create(expect=404, snapshot_id=snapshot),
                             'itemNotFound', 404)
        self.assertEqual('Snapshot %s could not be found.' % snapshot,
                         message)
        self.assertEqual([], self.v3_volumes())
        # A size as digits is a size.
        self.assertEqual(3, self.os_create(size='3').body['volume']['size'])

    def test_metadata_as_block_storage_takes_it(self):
        """Metadata goes to block storage only when it has keys; the
        answer is block storage's, whatever it keeps."""
        shown = self.os_create(metadata={}).body['volume']
        self.assertEqual({}, shown['metadata'])
        metadata = {'Type': 'work'}
        direct = self.volume_api().post('/v3/volumes', body={
            'volume': {'size': 1, 'metadata': metadata}})
        resp = self.compute.post(URL, body={'volume': {
            'size': 1, 'metadata': metadata}})
        if direct.status == 202:
            self.assertEqual(200, resp.status, resp.text)
            self.assertEqual(metadata, resp.body['volume']['metadata'])
            self.assertEqual(metadata, self.os_show(
                resp.body['volume']['id'])['metadata'])
        else:
            self.assertEqual(direct.status, resp.status, resp.text)
            self.assertEqual(direct.body, resp.body)

    def test_over_quota_is_403(self):
        resp = self.v3.put('/v3/admin/os-quota-sets/demo', body={
            'quota_set': {'volumes': 1, 'gigabytes': 5}})
        self.assertEqual(200, resp.status, resp.text)
        message = self.fault(self.os_create(expect=403, size=6),
                             'forbidden', 403)
        self.assertEqual(
            'Requested volume or snapshot exceeds allowed gigabytes quota. '
            'Requested 6G, quota is 5G and 0G has been consumed.', message)
        self.os_create()
        message = self.fault(self.os_create(expect=403), 'forbidden', 403)
        self.assertEqual("Maximum number of volumes allowed (1) exceeded "
                         "for quota 'volumes'.", message)
        self.assertEqual(1, len(self.v3_volumes()))


class OSVolumesPolicyTest(OSVolumesTestCase):
    """The compute API's own rules come first: denied there, nothing
    reaches block storage."""

    POLICY = ('"os_compute_api:os-volumes:create": "rule:context_is_admin"\n'
              '"os_compute_api:os-volumes:delete": "rule:context_is_admin"\n'
              '"os_compute_api:os-volumes:detail": "!"\n')

    def setUp(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'policy.yaml')
        with open(path, 'w') as f:
            f.write(self.POLICY)
        self.CONF = dict(self.CONF, **{'oslo_policy.policy_file': path})
        # [oslo_policy] is registered by the enforcer, after the test
        # configuration is set: register it first.
        prepare = config.prepare

        def prepare_with_policy(conf):
            prepare(conf)
            for group, opts in policy_opts.list_opts():
                conf.register_opts(opts, group=group)
            return conf
        self.useFixture(fixtures.MockPatch('nova_lite.config.prepare',
                                           side_effect=prepare_with_policy))
        super().setUp()

    def test_denied_rules_are_403(self):
        message = self.fault(self.os_create(expect=403), 'forbidden', 403)
        self.assertEqual("Policy doesn't allow os_compute_api:os-volumes:"
                         "create to be performed.", message)
        self.assertEqual([], self.v3_volumes())
        volume_id = self.create_volume()
        resp = self.compute.delete('%s/%s' % (URL, volume_id))
        self.fault(resp, 'forbidden', 403)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.fault(self.compute.get(URL + '/detail'), 'forbidden', 403)
        # The rules left at their defaults still let the member in.
        self.assertEqual([volume_id], [v['id'] for v in self.os_list()])
        self.assertEqual(volume_id, self.os_show(volume_id)['id'])
        admin = self.admin_api.as_(compute_version=LAST)
        self.assertEqual(200, self.os_create(api=admin).status)
        self.assertEqual(202, admin.delete('%s/%s' % (URL, volume_id)).status)


class OSVolumesClientsTest(OSVolumesTestCase):
    """The same requests answered alike through the ``local`` and the
    ``cinder`` VolumeClient (the latter over HTTP against nova_lite's own
    ``/v3``)."""

    def setUp(self):
        super().setUp()
        server = self.useFixture(system.HTTPServer(self.sys.app))
        self.conf.set_override('endpoint_override', server.base_url + '/v3',
                               group='volume')

    def use(self, client):
        compute_api.get_api(self.conf).volume_client = client

    def story(self):
        """``(statuses, answers)`` of a series of requests, the answers
        with ids and times made stable."""
        scrub = api_samples.Scrubber('http://localhost')
        statuses, answers = [], []

        def call(method, path, body=None):
            resp = self.compute.request(method, path, body=body)
            statuses.append(resp.status)
            answers.append(scrub((method, path, resp.status, resp.body)))
            return resp

        created = call('POST', URL, {'volume': {
            'size': 2, 'display_name': 'a', 'display_description': 'd',
            'volume_type': 'multiattach'}}).body['volume']
        item = '%s/%s' % (URL, created['id'])
        call('POST', URL, {'volume': {'size': '1', 'display_name': 'b'}})
        call('GET', item)
        _instance, attachment_id = self.attached_in_v3(created['id'])
        for path in (URL, URL + '/detail', URL + '?limit=1&offset=1', item):
            call('GET', path)
        call('DELETE', item)
        for volume in ({'size': '0'}, {'size': 1, 'volume_type': 'gold'},
                       {'size': 1, 'availability_zone': 'zone9'},
                       {'size': 1, 'snapshot_id': 'snap-1'},
                       {'size': 5000},
                       {'size': 1, 'metadata': {'k': 'v'}}):
            call('POST', URL, {'volume': volume})
        call('GET', '%s/%s' % (URL, uuidutils.generate_uuid()))
        call('DELETE', '%s/%s' % (URL, uuidutils.generate_uuid()))
        resp = self.volume_api().delete('/v3/attachments/%s' % attachment_id)
        self.assertEqual(200, resp.status, resp.text)
        for volume in self.v3_volumes():
            call('DELETE', '%s/%s' % (URL, volume['id']))
        call('GET', URL)
        return statuses, answers

    def test_local_and_cinder_answer_alike(self):
        self.multiattach_type()
        api = compute_api.get_api(self.conf)
        self.assertIsInstance(api.volume_client, local_client.LocalClient)
        statuses, local = self.story()
        self.use(cinder_client.CinderClient(self.conf))
        self.assertEqual((statuses, local), self.story())
        # And the story is what it should be (metadata: whatever block
        # storage answers, see OSVolumesErrorsTest).
        self.assertEqual([200, 200, 200, 200, 200, 200, 200, 400,
                          400, 404, 400, 404, 403], statuses[:13],
                         '\n'.join(local))
        self.assertEqual([404, 404, 202, 202], statuses[14:18])
        self.assertEqual((200, 0), (statuses[-1], local[-1].count('"id"')))
