"""Volume metadata through /v3, as Cinder answers it: at create, in the
volume views, ``/volumes/{id}/metadata[/{key}]``, the volume update, the
list filter and the summary; the status rules, If-Match, the policies, and
bad input (400 in the API's fault format, nothing changed)."""

import os
import urllib.parse

import fixtures
from oslo_policy import opts as policy_opts
import sqlalchemy as sa

from nova_lite import config
from nova_lite import context
from nova_lite.db import api as db_api
from nova_lite.db import models
from tests.fixtures import system
from tests.functional.volume import base

METADATA = {'key1': 'value1', 'key2': 'value2', 'key3': 'value3',
            'key4': '<value&special_chars>'}


def _rows(volume_id):
    """The volume's metadata as stored: ``{key: value}``."""
    @db_api.context_manager.reader
    def read(ctxt):
        return dict(ctxt.session.execute(
            sa.select(models.VolumeMetadata.key,
                      models.VolumeMetadata.value).where(
                models.VolumeMetadata.volume_id == volume_id)).all())
    return read(context.get_admin_context())


class _MetadataTestCase(base.VolumeTestCase):

    def path(self, volume_id, key=None):
        path = '/v3/volumes/%s/metadata' % volume_id
        return path + '/' + key if key is not None else path

    def metadata(self, volume_id, api=None):
        resp = (api or self.vol).get(self.path(volume_id))
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['metadata']

    def reset_status(self, volume_id, status):
        resp = self.admin.post('/v3/volumes/%s/action' % volume_id,
                               body={'os-reset_status': {'status': status}})
        self.assertEqual(202, resp.status, resp.text)


class VolumeMetadataTest(_MetadataTestCase):

    def test_create_with_metadata_shown_in_every_view(self):
        volume = self.create_volume(name='v', metadata={'Type': 'Test'})
        self.assertEqual({'Type': 'Test'}, volume['metadata'])
        self.assertEqual({'Type': 'Test'}, _rows(volume['id']))
        self.assertEqual({'Type': 'Test'},
                         self.show_volume(volume['id'])['metadata'])
        detail = self.vol.get('/v3/volumes/detail').body['volumes']
        self.assertEqual([{'Type': 'Test'}], [v['metadata'] for v in detail])
        # The summary list has no metadata (Cinder's view).
        listed = self.vol.get('/v3/volumes').body['volumes']
        self.assertNotIn('metadata', listed[0])
        # At every microversion of the detail views.
        old = self.api.as_(volume_version='3.0').get(
            '/v3/volumes/%s' % volume['id']).body['volume']
        self.assertEqual({'Type': 'Test'}, old['metadata'])
        plain = self.create_volume(metadata=None)
        self.assertEqual({}, plain['metadata'])
        self.assertEqual({}, self.metadata(plain['id']))

    def test_crud_as_tempest(self):
        # tempest.api.volume.test_volume_metadata.test_crud_volume_metadata
        volume_id = self.create_volume()['id']
        resp = self.vol.post(self.path(volume_id),
                             body={'metadata': METADATA})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(METADATA, resp.body['metadata'])
        self.assertEqual(METADATA, self.metadata(volume_id))

        update = {'key4': 'value4', 'key1': 'value1_update'}
        resp = self.vol.put(self.path(volume_id), body={'metadata': update})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(update, resp.body['metadata'])
        self.assertEqual(update, self.metadata(volume_id))
        self.assertEqual(update, _rows(volume_id))

        resp = self.vol.delete(self.path(volume_id, 'key1'))
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual('', resp.text)
        self.assertEqual({'key4': 'value4'}, self.metadata(volume_id))
        self.assertEqual({'key4': 'value4'}, _rows(volume_id))

        # tempest's tearDown: PUT of {} clears.
        resp = self.vol.put(self.path(volume_id), body={'metadata': {}})
        self.assertEqual({}, resp.body['metadata'])
        self.assertEqual({}, _rows(volume_id))

    def test_post_merges_and_answers_the_whole_metadata(self):
        volume_id = self.create_volume(metadata={'a': '1', 'b': '2'})['id']
        resp = self.vol.post(self.path(volume_id),
                             body={'metadata': {'b': '3', 'c': '4'}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'a': '1', 'b': '3', 'c': '4'},
                         resp.body['metadata'])
        self.assertEqual({'a': '1', 'b': '3', 'c': '4'}, _rows(volume_id))
        # Keys are exact: "A" is another key than "a".
        self.vol.post(self.path(volume_id), body={'metadata': {'A': '5'}})
        self.assertEqual({'A': '5', 'a': '1', 'b': '3', 'c': '4'},
                         _rows(volume_id))

    def test_one_key(self):
        # tempest: test_update_show_volume_metadata_item
        volume_id = self.create_volume(metadata={
            'key1': 'value1', 'key2': 'value2', 'key3': 'value3'})['id']
        resp = self.vol.put(self.path(volume_id, 'key3'),
                            body={'meta': {'key3': 'value3_update'}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'meta': {'key3': 'value3_update'}}, resp.body)
        resp = self.vol.get(self.path(volume_id, 'key3'))
        self.assertEqual({'meta': {'key3': 'value3_update'}}, resp.body)
        self.assertEqual({'key1': 'value1', 'key2': 'value2',
                          'key3': 'value3_update'}, _rows(volume_id))
        # A new key by PUT; keys with spaces and slashes-free punctuation.
        resp = self.vol.put(self.path(volume_id, 'a%20b:c.d'),
                            body={'meta': {'a b:c.d': 'e'}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual('e', _rows(volume_id)['a b:c.d'])
        self.assertEqual(200, self.vol.delete(
            self.path(volume_id, 'a%20b:c.d')).status)

    def test_missing_keys_are_404(self):
        volume_id = self.create_volume(metadata={'a': '1'})['id']
        for method in ('GET', 'DELETE'):
            resp = self.vol.request(method, self.path(volume_id, 'b'))
            self.assertEqual(404, resp.status, method)
            self.assertEqual('Volume %s has no metadata with key b.'
                             % volume_id,
                             resp.body['itemNotFound']['message'])
        # Keys are exact here too.
        self.assertEqual(404, self.vol.delete(
            self.path(volume_id, 'A')).status)
        self.assertEqual({'a': '1'}, _rows(volume_id))

    def test_unknown_and_other_projects_volumes_are_404(self):
        other = self.vol.as_(token='alice:other')
        theirs = self.create_volume(api=other, metadata={'a': '1'})['id']
        missing = '4c8f4d2e-8f3a-4b6e-bb39-0f6a2f1f7a10'
        for volume_id in (theirs, missing):
            for method, path, body in (
                    ('GET', self.path(volume_id), None),
                    ('POST', self.path(volume_id), {'metadata': {'b': '2'}}),
                    ('PUT', self.path(volume_id), {'metadata': {}}),
                    ('GET', self.path(volume_id, 'a'), None),
                    ('PUT', self.path(volume_id, 'a'), {'meta': {'a': '3'}}),
                    ('DELETE', self.path(volume_id, 'a'), None)):
                resp = self.vol.request(method, path, body=body)
                self.assertEqual(404, resp.status, (method, path))
                self.assertIn('itemNotFound', resp.body)
        self.assertEqual({'a': '1'}, _rows(theirs))
        # The administrator may change any project's.
        resp = self.admin.post(self.path(theirs), body={'metadata': {
            'b': '2'}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'a': '1', 'b': '2'}, _rows(theirs))

    def test_volume_update_replaces_the_metadata(self):
        volume = self.create_volume(name='v', metadata={'a': '1', 'b': '2'})
        path = '/v3/volumes/%s' % volume['id']
        resp = self.vol.put(path, body={'volume': {
            'metadata': {'b': '3', 'c': '4'}}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'b': '3', 'c': '4'},
                         resp.body['volume']['metadata'])
        self.assertEqual({'b': '3', 'c': '4'}, _rows(volume['id']))
        # A name alone leaves the metadata as it is (tempest's
        # test_volume_create_get_update_delete).
        resp = self.vol.put(path, body={'volume': {'name': 'w'}})
        self.assertEqual({'b': '3', 'c': '4'},
                         resp.body['volume']['metadata'])
        self.assertEqual('w', resp.body['volume']['name'])
        # {} clears; null is refused (Cinder's update schema).
        resp = self.vol.put(path, body={'volume': {'metadata': None}})
        self.assertEqual(400, resp.status)
        self.assertEqual({'b': '3', 'c': '4'}, _rows(volume['id']))
        resp = self.vol.put(path, body={'volume': {'metadata': {}}})
        self.assertEqual({}, resp.body['volume']['metadata'])
        self.assertEqual({}, _rows(volume['id']))

    def test_bad_input_is_400_and_changes_nothing(self):
        volume_id = self.create_volume(metadata={'a': '1'})['id']
        bad_metadata = [None, [], 'a=b', {'b': 1}, {'b': None},
                        {'b': ['c']}, {'': 'x'}, {'k' * 256: 'x'},
                        {'b': 'v' * 256}, {'b\n': 'x'}, {'é': 'x'},
                        {'a?': 'x'}]
        requests = []
        for metadata in bad_metadata:
            requests += [
                ('POST', self.path(volume_id), {'metadata': metadata}),
                ('PUT', self.path(volume_id), {'metadata': metadata}),
                ('PUT', '/v3/volumes/%s' % volume_id,
                 {'volume': {'metadata': metadata}})]
        requests += [
            ('POST', self.path(volume_id), {}),
            ('POST', self.path(volume_id), {'meta': {'b': '2'}}),
            ('POST', self.path(volume_id), {'metadata': {'b': '2'},
                                            'x': 1}),
            ('PUT', self.path(volume_id), {'metadata': {'b': '2'},
                                           'type': 'object'}),
            # One key, and the URL's.
            ('PUT', self.path(volume_id, 'a'), {'meta': {'b': '2'}}),
            ('PUT', self.path(volume_id, 'a'), {'meta': {'a': '2',
                                                         'b': '2'}}),
            ('PUT', self.path(volume_id, 'a'), {'meta': {}}),
            ('PUT', self.path(volume_id, 'a'), {'metadata': {'a': '2'}}),
            ('PUT', self.path(volume_id, 'a'), {'meta': {'a': 2}}),
            ('POST', '/v3/volumes', {'volume': {'size': 1, 'metadata': {
                'b': 1}}}),
        ]
        for method, path, body in requests:
            resp = self.vol.request(method, path, body=body)
            self.assertEqual(400, resp.status, (method, path, body))
            self.assertEqual(400, resp.body['badRequest']['code'])
        resp = self.vol.put(self.path(volume_id, 'a'),
                            body={'meta': {'b': '2'}})
        self.assertEqual('Invalid input received: Request body and URI '
                         'mismatch', resp.body['badRequest']['message'])
        resp = self.vol.request('POST', self.path(volume_id), body=None,
                                headers={'Content-Type': 'application/json'})
        self.assertEqual(400, resp.status)
        self.assertEqual({'a': '1'}, _rows(volume_id))
        self.assertEqual(1, len(self.vol.get('/v3/volumes').body['volumes']))

    def test_allowed_in_use_refused_in_maintenance_and_uploading(self):
        volume_id = self.create_volume(metadata={'a': '1'})['id']
        attachment = self.reserve(volume_id)
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        self.assertEqual('in-use', self.status(volume_id))
        resp = self.vol.post(self.path(volume_id),
                             body={'metadata': {'b': '2'}})
        self.assertEqual(200, resp.status, resp.text)

        for status in ('maintenance', 'uploading'):
            self.reset_status(volume_id, status)
            for method, path, body, verb in (
                    ('POST', self.path(volume_id), {'metadata': {'c': '3'}},
                     'Updating'),
                    ('PUT', self.path(volume_id), {'metadata': {}},
                     'Updating'),
                    ('PUT', self.path(volume_id, 'a'), {'meta': {'a': '3'}},
                     'Updating'),
                    ('DELETE', self.path(volume_id, 'a'), None,
                     'Deleting')):
                resp = self.vol.request(method, path, body=body)
                self.assertEqual(400, resp.status, (status, method, path))
                self.assertEqual(
                    'Invalid volume: %s volume metadata is not allowed for '
                    'volumes in %s status.' % (verb, status),
                    resp.body['badRequest']['message'])
            self.assertEqual({'a': '1', 'b': '2'}, _rows(volume_id))
            self.assertEqual({'a': '1', 'b': '2'}, self.metadata(volume_id))

        # In maintenance no update of the volume at all, as in Cinder.
        self.reset_status(volume_id, 'maintenance')
        path = '/v3/volumes/%s' % volume_id
        for body in ({'volume': {'metadata': {}}},
                     {'volume': {'name': 'x'}}):
            resp = self.vol.put(path, body=body)
            self.assertEqual(400, resp.status, body)
            self.assertEqual('Invalid volume: The volume cannot be updated '
                             'during maintenance.',
                             resp.body['badRequest']['message'])
        resp = self.vol.post(path + '/action',
                             body={'os-set_bootable': {'bootable': True}})
        self.assertEqual(400, resp.status)
        shown = self.show_volume(volume_id)
        self.assertEqual((None, 'false', {'a': '1', 'b': '2'}),
                         (shown['name'], shown['bootable'],
                          shown['metadata']))
        # Uploading refuses the metadata routes only (Cinder's update
        # checks maintenance alone).
        self.reset_status(volume_id, 'uploading')
        resp = self.vol.put(path, body={'volume': {'metadata': {'z': '9'}}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'z': '9'}, _rows(volume_id))

    def test_deleting_the_volume_deletes_its_metadata(self):
        volume_id = self.create_volume(metadata={'a': '1', 'b': '2'})['id']
        keep = self.create_volume(metadata={'a': '1'})['id']
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % volume_id).status)
        self.assertEqual({}, _rows(volume_id))
        self.assertEqual({'a': '1'}, _rows(keep))
        self.assertEqual(404, self.vol.get(self.path(volume_id)).status)

    def test_metadata_is_free_of_quota(self):
        self.admin.put('/v3/os-quota-sets/demo',
                       body={'quota_set': {'volumes': 1}})
        volume_id = self.create_volume(metadata={'a': '1'})['id']
        many = {'k%03d' % i: 'v' for i in range(200)}
        resp = self.vol.post(self.path(volume_id), body={'metadata': many})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(201, len(_rows(volume_id)))


class ListFilterAndSummaryTest(_MetadataTestCase):

    def setUp(self):
        super().setUp()
        self.work = [self.create_volume(name='w%d' % i, size=i + 1,
                                        metadata={'Type': 'work',
                                                  'n': str(i)})['id']
                     for i in range(3)]
        self.other = self.create_volume(name='o', size=5,
                                        metadata={'Type': 'home'})['id']
        self.bare = self.create_volume(name='b', size=7)['id']

    def _ids(self, query, detail=False):
        path = '/v3/volumes%s?%s' % ('/detail' if detail else '', query)
        resp = self.vol.get(path)
        self.assertEqual(200, resp.status, resp.text)
        return sorted(v['id'] for v in resp.body['volumes'])

    def test_filter_as_tempest_sends_it(self):
        # tempest: urlencode({'metadata': {'Type': 'work'}}), a Python
        # dict's str(), as Cinder reads it.
        query = urllib.parse.urlencode({'metadata': {'Type': 'work'}})
        for detail in (False, True):
            self.assertEqual(sorted(self.work), self._ids(query, detail))
        resp = self.vol.get('/v3/volumes/detail?' + query)
        for volume in resp.body['volumes']:
            self.assertEqual('work', volume['metadata']['Type'])

    def test_filter_in_json_with_several_keys_and_other_filters(self):
        query = urllib.parse.urlencode(
            {'metadata': '{"Type": "work", "n": "1"}'})
        self.assertEqual([self.work[1]], self._ids(query))
        self.assertEqual([], self._ids(query + '&name=w0'))
        self.assertEqual([self.work[1]], self._ids(query + '&name=w1'))
        self.assertEqual([], self._ids(urllib.parse.urlencode(
            {'metadata': {'Type': 'WORK'}})))
        self.assertEqual([], self._ids(urllib.parse.urlencode(
            {'metadata': {'type': 'work'}})))
        everything = sorted(self.work + [self.other, self.bare])
        self.assertEqual(everything, self._ids('metadata=%7B%7D'))

    def test_bad_filter_is_400(self):
        for value in ('work', '[1]', "{'Type': 1}", '{', "{'a': None}"):
            resp = self.vol.get('/v3/volumes?' + urllib.parse.urlencode(
                {'metadata': value}))
            self.assertEqual(400, resp.status, value)
            self.assertIn('Invalid value for metadata',
                          resp.body['badRequest']['message'])

    def test_summary_metadata(self):
        resp = self.vol.get('/v3/volumes/summary')
        self.assertEqual({'total_count': 5, 'total_size': 18, 'metadata': {
            'Type': ['home', 'work'], 'n': ['0', '1', '2']}},
            resp.body['volume-summary'])
        self.assertNotIn('metadata', self.vol.as_(volume_version='3.35').get(
            '/v3/volumes/summary').body['volume-summary'])
        other = self.vol.as_(token='alice:other')
        self.create_volume(api=other, metadata={'Type': 'lab'})
        self.assertEqual({'Type': ['lab']}, other.get(
            '/v3/volumes/summary').body['volume-summary']['metadata'])
        self.assertEqual(['home', 'lab', 'work'], self.admin.get(
            '/v3/volumes/summary?all_tenants=1').body['volume-summary'][
            'metadata']['Type'])
        # Deleted volumes' metadata is gone from it.
        self.vol.delete('/v3/volumes/%s' % self.other)
        self.assertEqual(['work'], self.vol.get('/v3/volumes/summary').body[
            'volume-summary']['metadata']['Type'])


class ETagTest(_MetadataTestCase):
    """3.15 (Cinder's ETAGS): the metadata's Etag, and If-Match on PUT."""

    def test_etag_and_if_match(self):
        volume_id = self.create_volume(metadata={'a': '1'})['id']
        resp = self.vol.get(self.path(volume_id))
        etag = resp.headers['Etag']
        self.assertEqual(34, len(etag))
        # Same metadata, same ETag.
        self.assertEqual(etag, self.vol.get(self.path(volume_id)).headers[
            'Etag'])

        resp = self.vol.put(self.path(volume_id), body={'metadata': {
            'a': '2'}}, headers={'If-Match': etag})
        self.assertEqual(200, resp.status, resp.text)
        new_etag = self.vol.get(self.path(volume_id)).headers['Etag']
        self.assertNotEqual(etag, new_etag)

        # The stale ETag: 412, nothing changed, for both PUTs.
        for path, body in ((self.path(volume_id), {'metadata': {}}),
                           (self.path(volume_id, 'a'), {'meta': {'a': '3'}})):
            resp = self.vol.put(path, body=body, headers={'If-Match': etag})
            self.assertEqual(412, resp.status, resp.text)
            self.assertEqual(412, resp.body['preconditionFailed']['code'])
            self.assertEqual({'a': '2'}, _rows(volume_id))
        # Unquoted (as Cinder sends it), or one of several, or "*".
        for header in (new_etag.strip('"'), '"x", %s' % new_etag, '*'):
            resp = self.vol.put(self.path(volume_id, 'a'),
                                body={'meta': {'a': '2'}},
                                headers={'If-Match': header})
            self.assertEqual(200, resp.status, header)
        # POST and DELETE do not look at it (as in Cinder).
        self.assertEqual(200, self.vol.post(
            self.path(volume_id), body={'metadata': {'b': '1'}},
            headers={'If-Match': '"x"'}).status)
        self.assertEqual(200, self.vol.delete(
            self.path(volume_id, 'b'), headers={'If-Match': '"x"'}).status)

    def test_before_3_15_no_etag_and_if_match_ignored(self):
        old = self.vol.as_(volume_version='3.14')
        volume_id = self.create_volume(metadata={'a': '1'})['id']
        resp = old.get(self.path(volume_id))
        self.assertNotIn('Etag', resp.headers)
        resp = old.put(self.path(volume_id), body={'metadata': {'a': '2'}},
                       headers={'If-Match': '"stale"'})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'a': '2'}, _rows(volume_id))


class MetadataPolicyTest(_MetadataTestCase):
    """An operator's policy file governs the metadata routes; the
    volume's own views and update follow the volume's policies."""

    POLICY = ('"volume:get_volume_metadata": "rule:context_is_admin"\n'
              '"volume:create_volume_metadata": "rule:context_is_admin"\n'
              '"volume:update_volume_metadata": "rule:context_is_admin"\n'
              '"volume:delete_volume_metadata": "rule:context_is_admin"\n')

    def setUp(self):
        where = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(where, 'policy.yaml')
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

    def test_denied_routes_are_403_and_change_nothing(self):
        volume_id = self.create_volume(metadata={'a': '1'})['id']
        for method, path, body, rule in (
                ('GET', self.path(volume_id), None, 'get'),
                ('GET', self.path(volume_id, 'a'), None, 'get'),
                ('POST', self.path(volume_id), {'metadata': {'b': '2'}},
                 'create'),
                ('PUT', self.path(volume_id), {'metadata': {}}, 'update'),
                ('PUT', self.path(volume_id, 'a'), {'meta': {'a': '2'}},
                 'update'),
                ('DELETE', self.path(volume_id, 'a'), None, 'delete')):
            resp = self.vol.request(method, path, body=body)
            self.assertEqual(403, resp.status, (method, path))
            self.assertEqual("Policy doesn't allow volume:%s_volume_metadata "
                             "to be performed." % rule,
                             resp.body['forbidden']['message'])
        self.assertEqual({'a': '1'}, _rows(volume_id))
        # The volume's views and its update are the volume's policies'.
        self.assertEqual({'a': '1'},
                         self.show_volume(volume_id)['metadata'])
        resp = self.vol.put('/v3/volumes/%s' % volume_id,
                            body={'volume': {'metadata': {'c': '3'}}})
        self.assertEqual(200, resp.status, resp.text)
        # The administrator may.
        self.assertEqual({'c': '3'}, self.metadata(volume_id,
                                                   api=self.admin))


class ClientsTest(_MetadataTestCase):
    """openstacksdk and python-cinderclient, unchanged, over HTTP."""

    def setUp(self):
        super().setUp()
        self.server = self.useFixture(system.HTTPServer(self.sys.app))

    def _cinder(self, version):
        from cinderclient import client as cinder_client
        from keystoneauth1 import session as ks_session
        from keystoneauth1 import token_endpoint
        endpoint = self.server.base_url + '/v3'
        return cinder_client.Client(version, session=ks_session.Session(
            auth=token_endpoint.Token(endpoint, 'demo:demo')),
            endpoint_override=endpoint)

    def test_openstacksdk(self):
        import openstack
        conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': self.server.base_url, 'token': 'demo:demo'},
            block_storage_endpoint_override=self.server.base_url + '/v3',
            region_name='RegionOne')
        self.addCleanup(conn.close)
        volume = conn.block_storage.create_volume(size=1,
                                                  metadata={'a': '1'})
        self.assertEqual({'a': '1'}, volume.metadata)
        conn.block_storage.set_volume_metadata(volume, b='2', a='3')
        self.assertEqual({'a': '3', 'b': '2'},
                         conn.block_storage.fetch_volume_metadata(
                             volume).metadata)
        conn.block_storage.delete_volume_metadata(volume, keys=['a'])
        self.assertEqual({'b': '2'}, _rows(volume.id))
        self.assertEqual({'b': '2'},
                         conn.block_storage.get_volume(volume.id).metadata)

    def test_cinderclient(self):
        for version in ('3.0', '3.15', '3.71'):
            cs = self._cinder(version)
            volume = cs.volumes.create(1, metadata={'Type': 'work',
                                                    'gone': 'x'})
            self.assertEqual({'Type': 'work', 'gone': 'x'}, volume.metadata)
            cs.volumes.set_metadata(volume, {'owner': version})
            # From 3.15 the client deletes with a PUT and If-Match, the
            # ETag it just read.
            cs.volumes.delete_metadata(volume, ['gone'])
            self.assertEqual({'Type': 'work', 'owner': version},
                             _rows(volume.id))
            found = cs.volumes.list(search_opts={'metadata': {
                'owner': version}})
            self.assertEqual([volume.id], [v.id for v in found])
            cs.volumes.update_all_metadata(volume, {'only': 'this'})
            self.assertEqual({'only': 'this'},
                             cs.volumes.get(volume.id).metadata)
