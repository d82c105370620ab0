"""/v3 volumes and volume types through the API."""

from tests.functional.volume import base


class VolumesTest(base.VolumeTestCase):

    def test_create_show_list_delete(self):
        volume = self.create_volume(name='data', description='d', size=2)
        self.assertEqual('available', volume['status'])
        self.assertEqual(2, volume['size'])
        self.assertEqual('false', volume['bootable'])
        self.assertFalse(volume['multiattach'])
        self.assertEqual([], volume['attachments'])
        # The os-vol-*-attr fields are in show and list detail, not in
        # the create answer (Cinder's extensions; tempest's schema).
        self.assertNotIn('os-vol-tenant-attr:tenant_id', volume)
        shown = self.show_volume(volume['id'])
        self.assertEqual('demo', shown.pop('os-vol-tenant-attr:tenant_id'))
        self.assertNotIn('os-vol-host-attr:host', shown)
        self.assertEqual(volume, shown)
        updated = self.vol.put('/v3/volumes/%s' % volume['id'], body={
            'volume': {'name': 'data'}}).body['volume']
        self.assertNotIn('os-vol-tenant-attr:tenant_id', updated)

        summary = self.vol.get('/v3/volumes').body['volumes']
        self.assertEqual([{'id': volume['id'], 'name': 'data',
                           'links': volume['links']}], summary)
        detail = self.vol.get('/v3/volumes/detail').body['volumes']
        self.assertEqual([volume['id']], [v['id'] for v in detail])

        resp = self.vol.delete('/v3/volumes/%s' % volume['id'])
        self.assertEqual(202, resp.status)
        self.assertEqual(404, self.vol.get(
            '/v3/volumes/%s' % volume['id']).status)

    def test_summary(self):
        self.create_volume(size=2)
        self.create_volume(size=3)
        path = '/v3/demo/volumes/summary'
        self.assertEqual(404, self.vol.as_(volume_version='3.11').get(
            path).status)
        resp = self.vol.as_(volume_version='3.12').get(path)
        self.assertEqual({'volume-summary': {'total_count': 2,
                                             'total_size': 5}}, resp.body)
        resp = self.vol.get(path)       # 3.36+: with metadata
        self.assertEqual({'total_count': 2, 'total_size': 5,
                          'metadata': {}}, resp.body['volume-summary'])
        other = self.api.as_(token='other:other', volume_version=base.LATEST)
        self.assertEqual(0, other.get('/v3/other/volumes/summary').body[
            'volume-summary']['total_count'])
        self.assertEqual(2, self.admin.get(
            '/v3/admin/volumes/summary?all_tenants=1').body[
            'volume-summary']['total_count'])

    def test_urls_with_and_without_project_id(self):
        volume = self.create_volume()
        for path in ('/v3/volumes/%s', '/v3/demo/volumes/%s'):
            resp = self.vol.get(path % volume['id'])
            self.assertEqual(200, resp.status, path)
        self.assertEqual(202, self.vol.post(
            '/v3/demo/volumes', body={'volume': {'size': 1}}).status)
        self.assertEqual(400, self.vol.get(
            '/v3/other/volumes/%s' % volume['id']).status)

    def test_filters_name_and_status(self):
        a = self.create_volume(name='a')
        self.create_volume(name='b')
        found = self.vol.get('/v3/volumes/detail?name=a').body['volumes']
        self.assertEqual([a['id']], [v['id'] for v in found])
        found = self.vol.get(
            '/v3/volumes?status=available').body['volumes']
        self.assertEqual(2, len(found))
        self.assertEqual([], self.vol.get(
            '/v3/volumes?status=in-use').body['volumes'])

    def test_limit_and_marker(self):
        ids = [self.create_volume(name=str(i))['id'] for i in range(3)]
        page = self.vol.get('/v3/volumes?limit=2&sort=name:asc').body
        self.assertEqual(ids[:2], [v['id'] for v in page['volumes']])
        self.assertIn('volumes_links', page)
        self.assertEqual('volumes', page['volumes_links'][0]['href'].split(
            '?')[0].rsplit('/', 1)[1])
        detail = self.vol.get('/v3/volumes/detail?limit=2&sort=name:asc')
        self.assertEqual('detail', detail.body['volumes_links'][0][
            'href'].split('?')[0].rsplit('/', 1)[1])
        rest = self.vol.get('/v3/volumes?limit=2&sort=name:asc&marker=%s'
                            % ids[1]).body
        self.assertEqual(ids[2:], [v['id'] for v in rest['volumes']])

    def test_project_isolation(self):
        mine = self.create_volume()
        other_api = self.api.as_(token='alice:other', volume_version='3.71')
        theirs = self.create_volume(api=other_api)
        self.assertEqual([mine['id']], [
            v['id'] for v in self.vol.get('/v3/volumes').body['volumes']])
        self.assertEqual(404, self.vol.get(
            '/v3/volumes/%s' % theirs['id']).status)
        self.assertEqual(404, self.vol.delete(
            '/v3/volumes/%s' % theirs['id']).status)
        self.assertEqual(404, self.reserve(theirs['id'], expect=404).status)
        # The administrator sees everything with all_tenants, and any
        # volume by id.
        admin_ids = {v['id'] for v in self.admin.get(
            '/v3/volumes?all_tenants=1').body['volumes']}
        self.assertEqual({mine['id'], theirs['id']}, admin_ids)
        self.assertEqual([], self.admin.get('/v3/volumes').body['volumes'])
        shown = self.show_volume(theirs['id'], api=self.admin)
        self.assertEqual('compute1@file#file', shown['os-vol-host-attr:host'])

    def test_microversion_fields(self):
        volume = self.create_volume()
        old = self.api.as_(volume_version='3.0').get(
            '/v3/volumes/%s' % volume['id']).body['volume']
        self.assertNotIn('group_id', old)
        self.assertNotIn('shared_targets', old)
        new = self.show_volume(volume['id'])
        for key in ('group_id', 'shared_targets', 'service_uuid',
                    'volume_type_id', 'consumes_quota'):
            self.assertIn(key, new)

    def test_bad_bodies_are_400(self):
        for body in ({'volume': {'size': 0}}, {'volume': {'size': 'x'}},
                     {'volume': {'size': 1, 'bogus': 1}},
                     {'volume': {}}, {'nope': {}},
                     {'volume': {'size': 1, 'multiattach': True}},
                     {'volume': {'size': 1, 'availability_zone': 'az9'}},
                     {'volume': {'size': 1, 'metadata': {'a': 1}}},
                     {'volume': {'size': 1, 'metadata': {'': 'b'}}}):
            resp = self.vol.post('/v3/volumes', body=body)
            self.assertEqual(400, resp.status, body)
            self.assertIn('badRequest', resp.body)
        resp = self.vol.post('/v3/volumes', body={
            'volume': {'size': 1, 'volume_type': 'nope'}})
        self.assertEqual(404, resp.status)
        resp = self.vol.post('/v3/volumes', body={
            'volume': {'size': 1, 'snapshot_id':
                       '9a3a4e2c-2a58-4a8e-9c76-4a8e2b8c1f00'}})
        self.assertEqual(404, resp.status)

    def test_unknown_volume_is_404(self):
        missing = '/v3/volumes/4c8f4d2e-8f3a-4b6e-bb39-0f6a2f1f7a10'
        self.assertEqual(404, self.vol.get(missing).status)
        self.assertEqual(404, self.vol.delete(missing).status)
        self.assertEqual(404, self.vol.put(
            missing, body={'volume': {'name': 'x'}}).status)

    def test_update_and_set_bootable(self):
        volume = self.create_volume(name='a')
        resp = self.vol.put('/v3/volumes/%s' % volume['id'],
                            body={'volume': {'name': 'b'}})
        self.assertEqual('b', resp.body['volume']['name'])
        resp = self.vol.post('/v3/volumes/%s/action' % volume['id'],
                             body={'os-set_bootable': {'bootable': 'true'}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual('true', self.show_volume(volume['id'])['bootable'])
        self.assertEqual(400, self.vol.post(
            '/v3/volumes/%s/action' % volume['id'],
            body={'os-bogus': None}).status)

    def test_delete_volume_with_attachment_is_400(self):
        volume = self.create_volume()
        self.reserve(volume['id'])
        resp = self.vol.delete('/v3/volumes/%s' % volume['id'])
        self.assertEqual(400, resp.status)
        self.assertIn('must not be migrating, attached', resp.text)
        self.assertEqual('reserved', self.status(volume['id']))

    def test_begin_and_roll_detaching(self):
        volume = self.create_volume()
        path = '/v3/volumes/%s/action' % volume['id']
        self.assertEqual(400, self.vol.post(
            path, body={'os-begin_detaching': None}).status)
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        self.assertEqual(202, self.vol.post(
            path, body={'os-begin_detaching': None}).status)
        self.assertEqual('detaching', self.status(volume['id']))
        self.assertEqual(202, self.vol.post(
            path, body={'os-roll_detaching': None}).status)
        self.assertEqual('in-use', self.status(volume['id']))


class DefaultVolumeTypeTest(base.VolumeTestCase):
    """Cinder's default type: ``__DEFAULT__``, made by the schema."""

    def test_volume_without_type_gets_the_default(self):
        default = self.vol.get('/v3/types/default')
        self.assertEqual(200, default.status, default.text)
        default = default.body['volume_type']
        self.assertEqual(('__DEFAULT__', 'Default Volume Type', True),
                         (default['name'], default['description'],
                          default['is_public']))
        self.assertEqual(default, self.vol.get(
            '/v3/types/%s' % default['id']).body['volume_type'])
        volume = self.create_volume()
        self.assertEqual('__DEFAULT__', volume['volume_type'])
        self.assertEqual(default['id'], self.vol.as_(
            volume_version='3.63').get('/v3/volumes/%s' % volume[
                'id']).body['volume']['volume_type_id'])
        # It counts in the type's quota, as Cinder's does.
        usage = self.admin.get(
            '/v3/os-quota-sets/demo?usage=True').body['quota_set']
        self.assertEqual(1, usage['volumes___DEFAULT__']['in_use'])

    def test_default_type_cannot_be_deleted(self):
        default = self.vol.get('/v3/types/default').body['volume_type']
        resp = self.admin.delete('/v3/types/%s' % default['id'])
        self.assertEqual(400, resp.status)
        self.assertEqual(
            'The volume type %s is a default volume type and cannot be '
            'deleted.' % default['id'], resp.body['badRequest']['message'])
        self.assertEqual(200, self.vol.get(
            '/v3/types/%s' % default['id']).status)

    def test_configured_default(self):
        gold = self.create_type('gold')
        self.conf.set_override('default_volume_type', 'gold',
                               group='volume')
        self.assertEqual(gold['id'], self.vol.get(
            '/v3/types/default').body['volume_type']['id'])
        self.assertEqual('gold', self.create_volume()['volume_type'])
        self.assertEqual(400, self.admin.delete(
            '/v3/types/%s' % gold['id']).status)
        # __DEFAULT__ is an ordinary type then.
        plain = self.admin.get('/v3/types?is_public=none').body[
            'volume_types']
        old = [t['id'] for t in plain if t['name'] == '__DEFAULT__'][0]
        self.assertEqual(202, self.admin.delete('/v3/types/%s' % old).status)

    def test_misconfigured_default(self):
        self.conf.set_override('default_volume_type', 'missing',
                               group='volume')
        message = ('The request cannot be fulfilled as the default volume '
                   'type missing cannot be found.')
        resp = self.vol.get('/v3/types/default')
        self.assertEqual((500, message), (
            resp.status, resp.body['computeFault']['message']))
        resp = self.create_volume(expect=500)
        self.assertEqual(message, resp.body['computeFault']['message'])
        # A type asked for by name still works.
        self.create_type('gold')
        self.assertEqual('gold',
                         self.create_volume(volume_type='gold')[
                             'volume_type'])


class VolumeTypesTest(base.VolumeTestCase):

    def test_admin_creates_everyone_lists(self):
        vtype = self.create_type(
            'ma', extra_specs={'multiattach': '<is> True',
                               'volume_backend_name': 'file'},
            description='shared')
        self.assertEqual({'multiattach': '<is> True',
                          'volume_backend_name': 'file'},
                         vtype['extra_specs'])
        self.assertTrue(vtype['os-volume-type-access:is_public'])
        # As Cinder's answers (tempest's schemas): qos_specs_id in an
        # administrator's show only; no type-access field in update.
        self.assertNotIn('qos_specs_id', vtype)
        shown = self.admin.get('/v3/types/%s' % vtype['id']).body
        self.assertIsNone(shown['volume_type']['qos_specs_id'])
        updated = self.admin.put('/v3/types/%s' % vtype['id'], body={
            'volume_type': {'description': 'still shared'}}).body
        self.assertEqual({'id', 'name', 'description', 'is_public',
                          'extra_specs'}, set(updated['volume_type']))
        listed = self.vol.get('/v3/types').body['volume_types']
        self.assertEqual(['__DEFAULT__', 'ma'], [t['name'] for t in listed])
        # Users see only the user-visible extra specs.
        self.assertEqual({'multiattach': '<is> True'},
                         listed[1]['extra_specs'])
        self.assertEqual(200, self.vol.get(
            '/v3/types/%s' % vtype['id']).status)

    def test_users_cannot_manage_types(self):
        resp = self.vol.post('/v3/types',
                             body={'volume_type': {'name': 'x'}})
        self.assertEqual(403, resp.status)
        vtype = self.create_type('t')
        self.assertEqual(403, self.vol.delete(
            '/v3/types/%s' % vtype['id']).status)
        self.assertEqual(403, self.vol.post(
            '/v3/types/%s/extra_specs' % vtype['id'],
            body={'extra_specs': {'a': 'b'}}).status)

    def test_extra_specs_crud(self):
        vtype = self.create_type('t')
        base_path = '/v3/types/%s/extra_specs' % vtype['id']
        resp = self.admin.post(base_path,
                               body={'extra_specs': {'k': 'v', 'x': 'y'}})
        self.assertEqual({'k': 'v', 'x': 'y'}, resp.body['extra_specs'])
        self.assertEqual({'k': 'v'}, self.admin.get(base_path + '/k').body)
        resp = self.admin.put(base_path + '/k', body={'k': 'w'})
        self.assertEqual({'k': 'w'}, resp.body)
        self.assertEqual(400, self.admin.put(base_path + '/k',
                                             body={'z': 'w'}).status)
        self.assertEqual(202, self.admin.delete(base_path + '/x').status)
        self.assertEqual(404, self.admin.delete(base_path + '/x').status)
        self.assertEqual({'k': 'w'}, self.admin.get(base_path).body[
            'extra_specs'])

    def test_duplicate_name_is_409_and_in_use_type_is_400(self):
        vtype = self.create_type('t')
        resp = self.admin.post('/v3/types',
                               body={'volume_type': {'name': 't'}})
        self.assertEqual(409, resp.status)
        volume = self.create_volume(volume_type='t')
        self.assertEqual('t', volume['volume_type'])
        self.assertEqual(vtype['id'], volume['volume_type_id'])
        self.assertEqual(400, self.admin.delete(
            '/v3/types/%s' % vtype['id']).status)
        self.vol.delete('/v3/volumes/%s' % volume['id'])
        self.assertEqual(202, self.admin.delete(
            '/v3/types/%s' % vtype['id']).status)
        self.assertEqual(404, self.admin.get(
            '/v3/types/%s' % vtype['id']).status)

    def test_private_types_are_hidden_from_users(self):
        vtype = self.create_type(
            'secret', **{'os-volume-type-access:is_public': False})

        def names(api, query=''):
            return [t['name'] for t in api.get(
                '/v3/types' + query).body['volume_types']]
        self.assertEqual(['__DEFAULT__'], names(self.vol))
        self.assertEqual(404, self.vol.get(
            '/v3/types/%s' % vtype['id']).status)
        # As Cinder: an administrator's list too is of the public types
        # (and those of the own project) unless is_public says otherwise.
        self.assertEqual(['__DEFAULT__'], names(self.admin))
        self.assertEqual(['__DEFAULT__', 'secret'],
                         names(self.admin, '?is_public=none'))

    def test_multiattach_type_makes_multiattach_volumes(self):
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        volume = self.create_volume(volume_type='ma')
        self.assertTrue(volume['multiattach'])
        # Only the exact '<is> True' counts, as in Cinder.
        self.create_type('loose', extra_specs={'multiattach': 'True'})
        self.assertFalse(self.create_volume(
            volume_type='loose')['multiattach'])


class WithCountTest(base.VolumeTestCase):
    """Cinder's ``with_count`` (3.45): how many volumes match, all pages
    together."""

    def setUp(self):
        super().setUp()
        for name in ('a', 'b', 'b'):
            self.create_volume(name=name)
        other = self.api.as_(token='other:other', volume_version=base.LATEST)
        self.create_volume(api=other, name='b')

    def test_count_of_every_page(self):
        for path in ('/v3/volumes', '/v3/volumes/detail'):
            resp = self.vol.get(path + '?with_count=true&limit=1')
            self.assertEqual(200, resp.status, resp.text)
            self.assertEqual((1, 3), (len(resp.body['volumes']),
                                      resp.body['count']))
            self.assertEqual(2, self.vol.get(
                path + '?with_count=True&name=b').body['count'])
            self.assertEqual(0, self.vol.get(
                path + '?with_count=1&status=error').body['count'])
            # An administrator's all_tenants counts every project.
            self.assertEqual(3, self.admin.get(
                path + '?with_count=true&all_tenants=1&name=b').body[
                    'count'])
            # Not asked, asked false, or below 3.45: no count.
            for query, version in (('', base.LATEST),
                                   ('?with_count=false', base.LATEST),
                                   ('?with_count=true', '3.44')):
                resp = self.api.as_(volume_version=version).get(
                    path + query)
                self.assertEqual(200, resp.status, resp.text)
                self.assertNotIn('count', resp.body)
            resp = self.vol.get(path + '?with_count=maybe')
            self.assertEqual(400, resp.status)
            self.assertIn("Value 'maybe' for 'with_count' is not a "
                          "boolean.", resp.text)

    def test_cinderclient_with_count(self):
        # What `cinder list --with-count` calls: a (volumes, count) pair.
        from cinderclient import client as cinder_client
        from keystoneauth1 import session as ks_session
        from keystoneauth1 import token_endpoint

        from tests.fixtures import system
        server = self.useFixture(system.HTTPServer(self.sys.app))
        endpoint = server.base_url + '/v3'
        cs = cinder_client.Client('3.45', session=ks_session.Session(
            auth=token_endpoint.Token(endpoint, 'demo:demo')),
            endpoint_override=endpoint)
        for detailed in (True, False):
            volumes, count = cs.volumes.list(
                detailed=detailed, search_opts={'with_count': True},
                limit=2)
            self.assertEqual((2, 3), (len(volumes), count))
