"""Multiattach on the block-storage side (the multi-attach spec): placement
by capability with fast failure, the policies, retype, force detach, and
host connections shared by several attachments of one volume."""

import concurrent.futures
import os
import threading
from unittest import mock

import fixtures
from oslo_policy import opts as policy_opts
from oslo_utils import uuidutils
import requests
import sqlalchemy as sa

from nova_lite import config
from nova_lite import context
from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import fake
from tests.fixtures import system
from tests.functional.volume import base

MA = {'multiattach': '<is> True'}


def _set_volume(volume_id, **values):
    @db_api.context_manager.writer
    def update(ctxt):
        ctxt.session.execute(sa.update(models.Volume).where(
            models.Volume.id == volume_id).values(**values))
    update(context.get_admin_context())


class _FakeBackend(base.VolumeTestCase):
    """One ``fake`` backend (multiattach) whose connections are recorded."""
    CONF = {'volume.enabled_backends': ['fake']}

    def setUp(self):
        super().setUp()
        drivers.register_backend_opts(self.conf)
        self.driver = drivers.get_driver(self.conf, 'fake')
        self.terminated = []
        real = fake.FakeDriver.terminate_connection

        def spy(driver, volume, connector):
            self.terminated.append((volume['id'], connector.get('host')))
            return real(driver, volume, connector)
        self.useFixture(fixtures.MockPatchObject(
            fake.FakeDriver, 'terminate_connection', autospec=True,
            side_effect=spy))

    def ma_volume(self):
        listed = self.admin.get('/v3/types').body['volume_types']
        if 'ma' not in [t['name'] for t in listed]:
            self.create_type('ma', extra_specs=MA)
        return self.create_volume(volume_type='ma')

    def attach(self, volume_id, host, api=None, **connector):
        attachment = self.reserve(volume_id, api=api)
        self.connect(attachment['id'], host=host, api=api, **connector)
        self.complete(attachment['id'], api=api)
        return attachment

    def hosts(self, volume_id):
        return sorted(self.driver.connections({'id': volume_id}))


class CreateTest(base.VolumeTestCase):
    CONF = {'volume.enabled_backends': ['fake', 'file']}

    def setUp(self):
        super().setUp()
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('multiattach', False, group='fake')

    def test_legacy_multiattach_parameter_is_refused(self):
        for value in (True, 'true', 'yes'):
            resp = self.create_volume(multiattach=value, expect=400)
            self.assertEqual(
                'Invalid input received: multiattach parameter has been '
                'removed. The default behavior is to use multiattach enabled '
                'volume types. Contact your administrator to create a '
                'multiattach enabled volume type and use it to create '
                'multiattach volumes.', resp.body['badRequest']['message'])
        for value in (False, 'false', None):
            self.assertFalse(self.create_volume(
                multiattach=value)['multiattach'])
        self.assertEqual(3, len(self.vol.get('/v3/volumes').body['volumes']))

    def test_multiattach_type_goes_to_a_multiattach_backend(self):
        self.create_type('ma', extra_specs=MA)
        volume = self.create_volume(volume_type='ma')
        self.assertTrue(volume['multiattach'])
        self.assertEqual('compute1@file#file', self.show_volume(
            volume['id'], api=self.admin)['os-vol-host-attr:host'])
        self.assertEqual('compute1@fake#fake', self.show_volume(
            self.create_volume()['id'],
            api=self.admin)['os-vol-host-attr:host'])

    def test_no_multiattach_backend_is_400_and_no_volume(self):
        self.create_type('ma-fake', extra_specs=dict(
            MA, volume_backend_name='fake'))
        resp = self.create_volume(volume_type='ma-fake', expect=400)
        self.assertEqual(
            'Invalid input received: No enabled backend can host a '
            'multiattach volume of type ma-fake: none reports the '
            'multiattach capability under the requested '
            'volume_backend_name.', resp.body['badRequest']['message'])
        self.assertEqual([], self.admin.get(
            '/v3/volumes?all_tenants=1').body['volumes'])

    def test_capabilities_are_cached_until_refreshed(self):
        self.create_type('ma-fake', extra_specs=dict(
            MA, volume_backend_name='fake'))
        self.create_volume(volume_type='ma-fake', expect=400)
        # The backend can now, but the report is cached (60 s by default).
        self.conf.set_override('multiattach', True, group='fake')
        self.create_volume(volume_type='ma-fake', expect=400)
        # Asking for the capabilities asks the backend again.
        shown = self.admin.get('/v3/capabilities/fake').body
        self.assertIn('multiattach', shown['properties'])
        self.assertTrue(self.create_volume(
            volume_type='ma-fake')['multiattach'])
        # With no cache, every request asks.
        self.conf.set_override('capabilities_cache_time', 0, group='volume')
        self.conf.set_override('multiattach', False, group='fake')
        self.create_volume(volume_type='ma-fake', expect=400)

    def test_capabilities_and_pools(self):
        shown = self.admin.get('/v3/capabilities/fake')
        self.assertEqual(200, shown.status, shown.text)
        self.assertEqual({
            'namespace': 'OS::Storage::Capabilities::fake',
            'vendor_name': 'Open Source', 'volume_backend_name': 'fake',
            'pool_name': 'fake', 'driver_version': '1.0.0',
            'storage_protocol': 'fake', 'display_name': None,
            'description': None, 'visibility': None,
            'replication_targets': [], 'properties': {}}, shown.body)
        props = self.admin.get(
            '/v3/capabilities/node1@file#file').body['properties']
        self.assertEqual(['multiattach'], list(props))
        resp = self.admin.get('/v3/capabilities/nowhere')
        self.assertEqual(404, resp.status)
        self.assertEqual("Can't find service: nowhere",
                         resp.body['itemNotFound']['message'])
        self.assertEqual(403, self.vol.get('/v3/capabilities/fake').status)

        pools = self.admin.get('/v3/scheduler-stats/get_pools').body
        self.assertEqual({'pools': [{'name': 'compute1@fake#fake'},
                                    {'name': 'compute1@file#file'}]},
                         pools)
        # Filtered by a pool's name, or its backend's.
        for name in ('compute1@file#file', 'file'):
            self.assertEqual([{'name': 'compute1@file#file'}],
                             self.admin.get(
                                 '/v3/scheduler-stats/get_pools?name=%s' %
                                 name.replace('#', '%23')).body['pools'])
        detail = self.admin.get(
            '/v3/scheduler-stats/get_pools?detail=True').body['pools']
        self.assertEqual([False, True],
                         [p['capabilities']['multiattach'] for p in detail])
        # What tempest's pool test looks for by default (its [volume]
        # vendor_name), as Cinder's reference drivers report it.
        self.assertEqual(['Open Source', 'Open Source'],
                         [p['capabilities']['vendor_name'] for p in detail])
        self.create_type('ma', extra_specs=MA)
        self.assertEqual([{'name': 'compute1@file#file'}], self.admin.get(
            '/v3/scheduler-stats/get_pools?volume_type=ma').body['pools'])
        self.assertEqual(403, self.vol.get(
            '/v3/scheduler-stats/get_pools').status)

    def test_real_clients_read_capabilities_and_pools(self):
        import openstack
        from cinderclient import client as cinder_client
        from keystoneauth1 import session as ks_session
        from keystoneauth1 import token_endpoint

        server = self.useFixture(system.HTTPServer(self.sys.app))
        conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': server.base_url, 'token': 'admin:admin'},
            block_storage_endpoint_override=server.base_url + '/v3',
            region_name='RegionOne')
        self.addCleanup(conn.close)
        caps = conn.block_storage.get_capabilities('file')
        self.assertEqual('file', caps.volume_backend_name)
        self.assertIn('multiattach', caps.properties)
        pools = {p.name: p.capabilities
                 for p in conn.block_storage.backend_pools()}
        self.assertEqual({'compute1@fake#fake': False,
                          'compute1@file#file': True},
                         {n: c['multiattach'] for n, c in pools.items()})

        endpoint = server.base_url + '/v3'
        cs = cinder_client.Client('3.50', session=ks_session.Session(
            auth=token_endpoint.Token(endpoint, 'admin:admin')),
            endpoint_override=endpoint)
        self.assertEqual({}, cs.capabilities.get('fake').properties)
        self.create_type('ma', extra_specs=MA)
        listed = cs.volumes.get_pools(True, {'volume_type': 'ma'}).pools
        self.assertEqual([('compute1@file#file', True)], [
            (p['name'], p['capabilities']['multiattach']) for p in listed])


class RetypeTest(_FakeBackend):

    def retype(self, volume_id, new_type, expect=202, api=None, **kw):
        body = {'os-retype': dict(new_type=new_type, **kw)}
        resp = (api or self.vol).post('/v3/volumes/%s/action' % volume_id,
                                      body=body)
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def test_available_volume_in_and_out_of_multiattach(self):
        self.create_type('ma', extra_specs=MA)
        plain = self.create_type('plain')
        volume = self.create_volume(volume_type='plain')
        self.retype(volume['id'], 'ma', migration_policy='never')
        shown = self.show_volume(volume['id'])
        self.assertEqual(('ma', True), (shown['volume_type'],
                                        shown['multiattach']))
        self.assertEqual('available', shown['status'])
        self.retype(volume['id'], plain['id'])      # by id too
        shown = self.show_volume(volume['id'])
        self.assertEqual(('plain', False), (shown['volume_type'],
                                            shown['multiattach']))
        # A volume with no type can get one.
        untyped = self.create_volume()
        self.retype(untyped['id'], 'ma')
        self.assertTrue(self.show_volume(untyped['id'])['multiattach'])

    def test_multiattach_change_needs_an_available_volume(self):
        self.create_type('ma', extra_specs=MA)
        self.create_type('plain')
        self.create_type('plain2')
        volume = self.create_volume(volume_type='plain')
        attachment = self.reserve(volume['id'])
        for state in ('reserved', 'in-use'):
            if state == 'in-use':
                self.connect(attachment['id'])
                self.complete(attachment['id'])
            resp = self.retype(volume['id'], 'ma', expect=400)
            self.assertEqual(
                'Invalid input received: Invalid volume_type passed, '
                'retypes affecting multiattach are only allowed on '
                'available volumes, the specified volume however currently '
                'has a status of: %s.' % state,
                resp.body['badRequest']['message'])
        shown = self.show_volume(volume['id'])
        self.assertEqual(('plain', False, 'in-use'), (
            shown['volume_type'], shown['multiattach'], shown['status']))
        # A retype that keeps multiattach as it is may happen in-use.
        self.retype(volume['id'], 'plain2')
        self.assertEqual(('plain2', 'in-use'), (
            self.show_volume(volume['id'])['volume_type'],
            self.status(volume['id'])))
        # ...and so out of multiattach.
        ma_volume = self.ma_volume()
        self.attach(ma_volume['id'], 'h1')
        resp = self.retype(ma_volume['id'], 'plain', expect=400)
        self.assertIn('status of: in-use', resp.text)
        self.assertTrue(self.show_volume(ma_volume['id'])['multiattach'])

    def test_refusals(self):
        self.create_type('plain')
        volume = self.create_volume(volume_type='plain')
        resp = self.retype(volume['id'], 'plain', expect=400)
        self.assertIn('requested type has to be different', resp.text)
        self.retype(volume['id'], 'no-such-type', expect=404)
        self.retype(volume['id'], 'plain', migration_policy='sometimes',
                    expect=400)
        self.retype(uuidutils.generate_uuid(), 'plain', expect=404)
        # A backend that does not fit: a migration only on demand, to a
        # backend that fits (none here).
        self.create_type('gold', extra_specs={
            'volume_backend_name': 'gold'})
        resp = self.retype(volume['id'], 'gold', expect=400)
        self.assertIn('retype it with migration_policy on-demand', resp.text)
        resp = self.retype(volume['id'], 'gold', expect=400,
                           migration_policy='on-demand')
        self.assertIn('No valid backend was found', resp.text)
        self.conf.set_override('multiattach', False, group='fake')
        self.admin.get('/v3/capabilities/fake')     # refresh the cache
        self.create_type('ma', extra_specs=MA)
        resp = self.retype(volume['id'], 'ma', expect=400)
        self.assertIn('cannot host volume type ma', resp.text)
        self.assertEqual('plain', self.show_volume(volume['id'])[
            'volume_type'])
        # Another project's volume is not found.
        other = self.create_volume(api=self.api.as_(
            token='other:other', volume_version=base.LATEST))
        self.retype(other['id'], 'plain', expect=404)

    def test_openstacksdk_and_cinderclient(self):
        import openstack
        from cinderclient import client as cinder_client
        from keystoneauth1 import session as ks_session
        from keystoneauth1 import token_endpoint

        self.create_type('ma', extra_specs=MA)
        self.create_type('plain')
        server = self.useFixture(system.HTTPServer(self.sys.app))
        conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': server.base_url, 'token': 'demo:demo'},
            block_storage_endpoint_override=server.base_url + '/v3',
            region_name='RegionOne')
        self.addCleanup(conn.close)
        volume = conn.block_storage.create_volume(size=1,
                                                  volume_type='plain')
        conn.block_storage.retype_volume(volume, 'ma')
        self.assertTrue(conn.block_storage.get_volume(
            volume.id).is_multiattach)

        endpoint = server.base_url + '/v3'
        cs = cinder_client.Client('3.50', session=ks_session.Session(
            auth=token_endpoint.Token(endpoint, 'demo:demo')),
            endpoint_override=endpoint)
        cs.volumes.retype(volume.id, 'plain', 'never')
        self.assertFalse(cs.volumes.get(volume.id).multiattach)
        self.attach(volume.id, 'h1')
        from cinderclient import exceptions as cinder_exc
        e = self.assertRaises(cinder_exc.BadRequest, cs.volumes.retype,
                              volume.id, 'ma', 'never')
        self.assertIn('retypes affecting multiattach', str(e))


class PolicyFileTest(_FakeBackend):
    """An operator's policy file can deny multiattach."""

    def setUp(self):
        where = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(where, 'policy.yaml')
        with open(path, 'w') as f:
            f.write(self.POLICY)
        self.CONF = dict(self.CONF, **{'oslo_policy.policy_file': path})
        # [oslo_policy] is registered by the enforcer, later than the test
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


class DenyMultiattachPolicyTest(PolicyFileTest):
    POLICY = '"volume:multiattach": "rule:context_is_admin"\n'

    def test_create_and_retype_to_multiattach_are_403(self):
        self.create_type('ma', extra_specs=MA)
        resp = self.create_volume(volume_type='ma', expect=403)
        self.assertEqual("Policy doesn't allow volume:multiattach to be "
                         "performed.", resp.body['forbidden']['message'])
        volume = self.create_volume()
        resp = self.vol.post('/v3/volumes/%s/action' % volume['id'],
                             body={'os-retype': {'new_type': 'ma'}})
        self.assertEqual(403, resp.status)
        self.assertFalse(self.show_volume(volume['id'])['multiattach'])
        # The administrator may.
        self.assertTrue(self.create_volume(
            api=self.admin, volume_type='ma')['multiattach'])
        self.assertEqual(202, self.admin.post(
            '/v3/volumes/%s/action' % volume['id'],
            body={'os-retype': {'new_type': 'ma'}}).status)


class DenyBootableMultiattachPolicyTest(PolicyFileTest):
    POLICY = ('"volume:multiattach_bootable_volume": '
              '"rule:context_is_admin"\n')

    def test_second_attach_of_bootable_multiattach_volume_is_403(self):
        volume = self.ma_volume()
        self.assertEqual(200, self.vol.post(
            '/v3/volumes/%s/action' % volume['id'],
            body={'os-set_bootable': {'bootable': True}}).status)
        self.attach(volume['id'], 'h1')     # available: no check
        resp = self.reserve(volume['id'], expect=403)
        self.assertIn('volume:multiattach_bootable_volume', resp.text)
        self.assertEqual('in-use', self.status(volume['id']))
        self.reserve(volume['id'], api=self.admin)
        # Not bootable: allowed.
        other = self.ma_volume()
        self.attach(other['id'], 'h1')
        self.reserve(other['id'])


class ForceDetachTest(_FakeBackend):

    def force_detach(self, volume_id, expect=202, api=None, **body):
        resp = (api or self.admin).post(
            '/v3/volumes/%s/action' % volume_id,
            body={'os-force_detach': body})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def test_one_attachment_goes_the_others_stay(self):
        volume = self.ma_volume()
        a1 = self.attach(volume['id'], 'h1')
        a2 = self.attach(volume['id'], 'h2')
        self.force_detach(volume['id'], api=self.vol, expect=403,
                          attachment_id=a1['id'])
        self.force_detach(volume['id'], attachment_id=a1['id'])
        self.assertEqual([(volume['id'], 'h1')], self.terminated)
        self.assertEqual(['h2'], self.hosts(volume['id']))
        self.assertEqual('in-use', self.status(volume['id']))
        shown = self.show_volume(volume['id'])
        self.assertEqual([a2['id']], [a['attachment_id']
                                      for a in shown['attachments']])
        self.assertEqual('attached', self.vol.get(
            '/v3/attachments/%s' % a2['id']).body['attachment']['status'])
        self.assertEqual(404, self.vol.get(
            '/v3/attachments/%s' % a1['id']).status)
        # The last one: no id needed.
        self.force_detach(volume['id'])
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual([], self.hosts(volume['id']))

    def test_more_than_one_needs_an_attachment_id(self):
        volume = self.ma_volume()
        self.attach(volume['id'], 'h1')
        self.attach(volume['id'], 'h2')
        resp = self.force_detach(volume['id'], expect=400)
        self.assertEqual(
            'Invalid volume: Detach volume failed: More than one '
            'attachment, but no attachment_id provided.',
            resp.body['badRequest']['message'])
        self.assertEqual([], self.terminated)
        self.assertEqual(['h1', 'h2'], self.hosts(volume['id']))

    def test_any_state_and_a_given_connector(self):
        volume = self.ma_volume()
        reserved = self.reserve(volume['id'])
        self.force_detach(volume['id'], attachment_id=reserved['id'])
        self.assertEqual([], self.terminated)     # never connected
        self.assertEqual('available', self.status(volume['id']))
        attaching = self.reserve(volume['id'])
        self.connect(attaching['id'], host='h1')
        self.assertEqual('attaching', self.status(volume['id']))
        self.force_detach(volume['id'], attachment_id=attaching['id'],
                          connector={'host': 'h1', 'initiator': 'iqn.x'})
        self.assertEqual([(volume['id'], 'h1')], self.terminated)
        self.assertEqual('available', self.status(volume['id']))

    def test_unknown_and_mismatched_attachments(self):
        volume = self.ma_volume()
        other = self.ma_volume()
        attachment = self.attach(other['id'], 'h1')
        resp = self.force_detach(volume['id'], expect=400,
                                 attachment_id=attachment['id'])
        self.assertIn('Mismatched volumes on attachment', resp.text)
        # An unknown attachment: only the volume is cleaned up.
        _set_volume(volume['id'], status='detaching',
                    attach_status='attached')
        self.force_detach(volume['id'],
                          attachment_id=uuidutils.generate_uuid())
        self.assertEqual('available', self.status(volume['id']))
        # ...but an errored volume stays errored.
        _set_volume(volume['id'], status='error')
        self.force_detach(volume['id'])
        self.assertEqual('error', self.status(volume['id']))
        _set_volume(volume['id'], status='maintenance')
        resp = self.force_detach(volume['id'], expect=400)
        self.assertIn('maintenance', resp.text)
        self.force_detach(uuidutils.generate_uuid(), expect=404)

    def test_a_servers_attachment_is_409(self):
        volume = self.ma_volume()
        attachment = self.attach(volume['id'], 'h1')
        base.server_holding(attachment)
        resp = self.force_detach(volume['id'], expect=409,
                                 attachment_id=attachment['id'])
        self.assertEqual(
            'Detach volume from instance %s using the Compute API'
            % attachment['instance'],
            resp.body['conflictingRequest']['message'])
        self.assertEqual([], self.terminated)
        self.assertEqual('in-use', self.status(volume['id']))

    def test_backend_failure_changes_nothing(self):
        volume = self.ma_volume()
        attachment = self.attach(volume['id'], 'h1')
        self.conf.set_override('fail_connect', True, group='fake')
        resp = self.force_detach(volume['id'], expect=500,
                                 attachment_id=attachment['id'])
        self.assertIn('the attachment is unchanged', resp.text)
        shown = self.vol.get('/v3/attachments/%s' % attachment['id']).body[
            'attachment']
        self.assertEqual(('attached', ''), (shown['status'],
                                            shown['detached_at']))
        self.assertEqual('in-use', self.status(volume['id']))

    def test_openstacksdk(self):
        import openstack
        volume = self.ma_volume()
        a1 = self.attach(volume['id'], 'h1')
        self.attach(volume['id'], 'h2')
        server = self.useFixture(system.HTTPServer(self.sys.app))
        conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': server.base_url, 'token': 'admin:admin'},
            block_storage_endpoint_override=server.base_url + '/v3',
            region_name='RegionOne')
        self.addCleanup(conn.close)
        conn.block_storage.detach_volume(volume['id'], a1['id'], force=True)
        self.assertEqual(['h2'], self.hosts(volume['id']))
        self.assertEqual('in-use', conn.block_storage.get_volume(
            volume['id']).status)


class SharedConnectionTest(_FakeBackend):

    def test_host_stays_connected_while_an_attachment_uses_it(self):
        volume = self.ma_volume()
        a1 = self.attach(volume['id'], 'h1')
        a2 = self.attach(volume['id'], 'h1')
        a3 = self.attach(volume['id'], 'h2')
        self.assertEqual(['h1', 'h2'], self.hosts(volume['id']))
        record = self.driver.connections({'id': volume['id']})['h1']
        self.assertEqual(2, record['initialized'])

        resp = self.vol.delete('/v3/attachments/%s' % a1['id'])
        self.assertEqual([a2['id']],
                         resp.body['shared_connections_by_attachment'])
        self.assertEqual([], self.terminated)
        self.assertEqual(['h1', 'h2'], self.hosts(volume['id']))
        self.assertEqual('in-use', self.status(volume['id']))

        resp = self.vol.delete('/v3/attachments/%s' % a3['id'])
        self.assertEqual([], resp.body['shared_connections_by_attachment'])
        self.assertEqual([(volume['id'], 'h2')], self.terminated)
        resp = self.vol.delete('/v3/attachments/%s' % a2['id'])
        self.assertEqual([], resp.body['shared_connections_by_attachment'])
        self.assertEqual([(volume['id'], 'h2'), (volume['id'], 'h1')],
                         self.terminated)
        self.assertEqual([], self.hosts(volume['id']))
        self.assertEqual('available', self.status(volume['id']))

    def test_concurrent_deletes_on_one_host_disconnect_it_once(self):
        volume = self.ma_volume()
        ids = [self.attach(volume['id'], 'h1')['id'] for _i in range(6)]
        server = self.useFixture(system.HTTPServer(self.sys.app))
        start = threading.Barrier(len(ids))

        def delete(attachment_id):
            start.wait(timeout=30)
            return requests.delete(
                '%s/v3/attachments/%s' % (server.base_url, attachment_id),
                timeout=60, headers={
                    'X-Auth-Token': 'demo:demo',
                    'OpenStack-API-Version': 'volume 3.72'})
        with concurrent.futures.ThreadPoolExecutor(len(ids)) as pool:
            responses = list(pool.map(delete, ids))
        self.assertEqual([200] * len(ids), [r.status_code for r in responses])
        # Exactly one delete found no one else on the host.
        shared = [r.json()['shared_connections_by_attachment']
                  for r in responses]
        self.assertEqual(1, shared.count([]))
        self.assertEqual([(volume['id'], 'h1')], self.terminated)
        self.assertEqual([], self.hosts(volume['id']))
        self.assertEqual('available', self.status(volume['id']))

    def test_failed_disconnect_keeps_the_attachment_in_use(self):
        volume = self.ma_volume()
        a1 = self.attach(volume['id'], 'h1')
        a2 = self.attach(volume['id'], 'h1')
        self.conf.set_override('fail_connect', True, group='fake')
        # Shared: no backend call, so the failing backend does not matter.
        self.assertEqual(200, self.vol.delete(
            '/v3/attachments/%s' % a1['id']).status)
        resp = self.vol.delete('/v3/attachments/%s' % a2['id'])
        self.assertEqual(500, resp.status)
        shown = self.vol.get('/v3/attachments/%s' % a2['id']).body[
            'attachment']
        self.assertEqual(('attached', ''), (shown['status'],
                                            shown['detached_at']))
        self.assertEqual(['h1'], self.hosts(volume['id']))
        self.conf.set_override('fail_connect', False, group='fake')
        self.assertEqual(200, self.vol.delete(
            '/v3/attachments/%s' % a2['id']).status)
        self.assertEqual([], self.hosts(volume['id']))

    def test_a_failed_second_connect_leaves_the_first_connected(self):
        volume = self.ma_volume()
        self.attach(volume['id'], 'h1')
        second = self.reserve(volume['id'])
        with mock.patch.object(attachment_db, 'attachment_connect',
                               side_effect=exception.ResourceConflict(
                                   reason='changed meanwhile')):
            self.connect(second['id'], host='h1', expect=409)
        self.assertEqual([], self.terminated)
        self.assertEqual(['h1'], self.hosts(volume['id']))

    def test_read_only_attachments(self):
        volume = self.ma_volume()
        ro = self.reserve(volume['id'], mode='ro')
        connected = self.connect(ro['id'], host='h1')
        self.complete(ro['id'])
        self.assertEqual('ro', connected['attach_mode'])
        self.assertEqual('ro', connected['connection_info']['access_mode'])
        record = self.driver.connections({'id': volume['id']})['h1']
        self.assertEqual('ro', record['mode'])
        self.assertEqual('h1', record['connector']['host'])
        # The connector's mode is used when the attachment has none.
        rw = self.reserve(volume['id'])
        self.connect(rw['id'], host='h2', mode='rw')
        self.assertEqual('rw', self.driver.connections(
            {'id': volume['id']})['h2']['mode'])


class FileBackendTest(base.VolumeTestCase):
    """The ``file`` backend records connections on disk and hands
    read-only attachments ``access_mode: ro``."""

    def test_records_and_read_only(self):
        self.create_type('ma', extra_specs=MA)
        volume = self.create_volume(volume_type='ma')
        row = volume_db.volume_get(context.get_admin_context(),
                                   volume['id'])
        driver = drivers.get_driver(self.conf, 'file')
        vol = {'id': row.id, 'provider_location': row.provider_location}
        ro = self.reserve(volume['id'], mode='ro')
        info = self.connect(ro['id'], host='h1')['connection_info']
        self.complete(ro['id'])
        self.assertEqual(('ro', row.provider_location),
                         (info['access_mode'], info['path']))
        rw = self.reserve(volume['id'])
        self.connect(rw['id'], host='h1')
        self.complete(rw['id'])
        self.assertEqual({'h1'}, set(driver.connections(vol)))
        self.assertEqual(2, driver.connections(vol)['h1']['initialized'])
        self.vol.delete('/v3/attachments/%s' % ro['id'])
        self.assertEqual({'h1'}, set(driver.connections(vol)))
        self.vol.delete('/v3/attachments/%s' % rw['id'])
        self.assertEqual({}, driver.connections(vol))


class EncryptionTest(base.VolumeTestCase):
    """Encrypted volume types, and multiattach never with encryption."""

    SPECS = {'provider': 'luks', 'control_location': 'front-end',
             'cipher': 'aes-xts-plain64', 'key_size': '256'}

    def encrypt(self, type_id, expect=200, api=None, **specs):
        resp = (api or self.admin).post(
            '/v3/types/%s/encryption' % type_id,
            body={'encryption': specs or self.SPECS})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def test_encryption_specs_crud(self):
        vtype = self.create_type('enc')
        path = '/v3/types/%s/encryption' % vtype['id']
        self.assertEqual({}, self.admin.get(path).body)
        created = self.encrypt(vtype['id']).body['encryption']
        self.assertEqual(dict(self.SPECS, key_size=256,
                              volume_type_id=vtype['id'],
                              encryption_id=created['encryption_id']),
                         created)
        shown = self.admin.get(path).body
        self.assertEqual(('luks', 256, False, None), (
            shown['provider'], shown['key_size'], shown['deleted'],
            shown['deleted_at']))
        self.assertEqual({'provider': 'luks'},
                         self.admin.get(path + '/provider').body)
        self.assertEqual(404, self.admin.get(path + '/nothing').status)
        resp = self.encrypt(vtype['id'], expect=400)
        self.assertIn('already exists', resp.text)
        self.assertEqual(403, self.vol.get(path).status)
        self.encrypt(vtype['id'], api=self.vol, expect=403)
        resp = self.admin.put(path + '/' + created['encryption_id'],
                              body={'encryption': {'key_size': 512}})
        self.assertEqual((200, {'encryption': {'key_size': 512}}),
                         (resp.status, resp.body))
        self.assertEqual(512, self.admin.get(path).body['key_size'])
        self.assertEqual(400, self.admin.post(path, body={'encryption': {
            'provider': 'luks'}}).status)           # control_location
        self.assertEqual(202, self.admin.delete(
            path + '/' + created['encryption_id']).status)
        self.assertEqual({}, self.admin.get(path).body)
        self.assertEqual(404, self.admin.delete(path + '/x').status)
        self.assertEqual(404, self.admin.get(
            '/v3/types/%s/encryption' % uuidutils.generate_uuid()).status)

    def test_multiattach_with_encryption_is_refused(self):
        ma_enc = self.create_type('ma-enc', extra_specs=MA)
        self.encrypt(ma_enc['id'])
        resp = self.create_volume(volume_type='ma-enc', expect=400)
        self.assertEqual(
            'Invalid volume: Multiattach cannot be used with encrypted '
            'volumes.', resp.body['badRequest']['message'])
        enc = self.create_type('enc')
        self.encrypt(enc['id'])
        resp = self.create_volume(volume_type='enc', expect=400)
        self.assertIn('cannot create encrypted volumes', resp.text)
        self.assertEqual([], self.vol.get('/v3/volumes').body['volumes'])

        volume = self.create_volume()
        action = '/v3/volumes/%s/action' % volume['id']
        resp = self.vol.post(action, body={'os-retype': {
            'new_type': 'ma-enc'}})
        self.assertEqual(400, resp.status)
        self.assertEqual(
            'Invalid input received: Retype requested both encryption and '
            'multi-attach, which is not supported.',
            resp.body['badRequest']['message'])
        resp = self.vol.post(action, body={'os-retype': {
            'new_type': 'enc'}})
        self.assertEqual(400, resp.status)
        self.assertIn('changing the encryption of a volume', resp.text)
        self.assertEqual('__DEFAULT__',
                         self.show_volume(volume['id'])['volume_type'])

    def test_types_in_use_keep_their_encryption(self):
        vtype = self.create_type('plain')
        self.create_volume(volume_type='plain')
        resp = self.encrypt(vtype['id'], expect=400)
        self.assertIn('Cannot create encryption specs. Volume type in use.',
                      resp.text)

    def test_openstacksdk(self):
        import openstack
        server = self.useFixture(system.HTTPServer(self.sys.app))
        conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': server.base_url, 'token': 'admin:admin'},
            block_storage_endpoint_override=server.base_url + '/v3',
            region_name='RegionOne')
        self.addCleanup(conn.close)
        bs = conn.block_storage
        vtype = bs.create_type(name='sdk-enc', extra_specs=MA)
        bs.create_type_encryption(vtype, provider='luks',
                                  control_location='front-end')
        self.assertEqual('luks', bs.get_type_encryption(vtype).provider)
        e = self.assertRaises(openstack.exceptions.BadRequestException,
                              bs.create_volume, size=1,
                              volume_type='sdk-enc')
        self.assertIn('Multiattach cannot be used with encrypted', str(e))


class ResetStatusTest(_FakeBackend):
    """Cinder's admin os-reset_status: the way out of any state."""

    def reset(self, volume_id, expect=202, api=None, **body):
        resp = (api or self.admin).post(
            '/v3/volumes/%s/action' % volume_id,
            body={'os-reset_status': body})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def test_admin_only(self):
        volume = self.ma_volume()
        resp = self.reset(volume['id'], api=self.vol, expect=403,
                          status='error')
        self.assertIn('reset_status', resp.text)
        self.assertEqual('available', self.status(volume['id']))

    def test_status_only_keeps_the_attachments(self):
        volume = self.ma_volume()
        attachment = self.attach(volume['id'], 'h1')
        self.reset(volume['id'], status='error')
        self.assertEqual('error', self.status(volume['id']))
        self.assertEqual('attached', self.vol.get(
            '/v3/attachments/%s' % attachment['id']).body['attachment'][
                'status'])
        self.assertEqual([], self.terminated)
        self.reset(volume['id'], status='in-use', migration_status='none')
        self.assertEqual('in-use', self.status(volume['id']))

    def test_detached_ends_every_attachment_and_connection(self):
        volume = self.ma_volume()
        a1 = self.attach(volume['id'], 'h1')
        a2 = self.attach(volume['id'], 'h2')
        self.reset(volume['id'], status='available', attach_status='detached')
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual([], self.hosts(volume['id']))
        self.assertEqual(sorted([(volume['id'], 'h1'), (volume['id'], 'h2')]),
                         sorted(self.terminated))
        for attachment in (a1, a2):
            self.assertEqual(404, self.vol.get(
                '/v3/attachments/%s' % attachment['id']).status)
        # Attachable again.
        self.attach(volume['id'], 'h3')
        self.assertEqual('in-use', self.status(volume['id']))

    def test_freeing_a_volume_a_server_maps_is_refused(self):
        # The reset would leave the server's mapping behind (the volume
        # available, an attach elsewhere "already attached"): refused,
        # naming the command that frees the volume with its mapping.
        volume = self.ma_volume()
        attachment = self.attach(volume['id'], 'h1')
        base.server_holding(attachment)
        for body in ({'status': 'available'},
                     {'attach_status': 'detached'}):
            resp = self.reset(volume['id'], expect=409, **body)
            self.assertIn('nova-lite-manage volume_attachment release %s %s'
                          % (attachment['instance'], volume['id']),
                          resp.text)
        self.assertEqual('in-use', self.status(volume['id']))
        self.assertEqual([], self.terminated)
        # Any other status is still the administrator's to write.
        self.reset(volume['id'], status='error')
        self.assertEqual('error', self.status(volume['id']))

    def test_bad_requests_change_nothing(self):
        volume = self.ma_volume()
        for body in ({}, {'status': 'bogus'}, {'attach_status': 'attaching'},
                     {'migration_status': 'x'}, {'status': 'error', 'x': 1},
                     {'status': 5}):
            resp = self.reset(volume['id'], expect=400, **body)
            self.assertIn('badRequest', resp.body)
        resp = self.reset(volume['id'], expect=400, attach_status='attached')
        self.assertIn('has no attachment', resp.text)
        self.assertEqual('available', self.status(volume['id']))
        self.reset(uuidutils.generate_uuid(), expect=404, status='error')
