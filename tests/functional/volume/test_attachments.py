"""/v3 attachments through the API: the status machine walked row by row,
microversion gates, concurrency, shared connections, failures and the
OSSA-2023-003 rule."""

import concurrent.futures
import threading
from unittest import mock

import fixtures
from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import requests
import sqlalchemy as sa

from nova_lite import context
from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import fake as fake_driver
from tests.fixtures import system
from tests.functional.volume import base


class StatusMachineTest(base.VolumeTestCase):
    """API-CONTRACT 5.4, each move through the API."""

    def test_walk_available_reserved_attaching_in_use_available(self):
        volume = self.create_volume()
        self.assertEqual('available', self.status(volume['id']))

        attachment = self.reserve(volume['id'])           # reserve
        self.assertEqual('reserved', attachment['status'])
        self.assertEqual({}, attachment['connection_info'])
        self.assertEqual('null', attachment['attach_mode'])
        self.assertEqual('reserved', self.status(volume['id']))

        connected = self.connect(attachment['id'], host='h1',
                                 mountpoint='/dev/vdb')   # connect
        self.assertEqual('attaching', connected['status'])
        self.assertEqual('rw', connected['attach_mode'])
        info = connected['connection_info']
        self.assertEqual('file', info['driver_volume_type'])
        self.assertEqual(attachment['id'], info['attachment_id'])
        self.assertEqual('rw', info['access_mode'])
        self.assertTrue(info['path'].endswith(volume['id']))
        self.assertEqual('attaching', self.status(volume['id']))

        self.complete(attachment['id'])                   # complete
        shown = self.show_volume(volume['id'], api=self.admin)
        self.assertEqual('in-use', shown['status'])
        self.assertEqual([{
            'id': volume['id'], 'attachment_id': attachment['id'],
            'volume_id': volume['id'],
            'server_id': attachment['instance'], 'host_name': 'h1',
            'device': '/dev/vdb',
            'attached_at': connected['attached_at']}], shown['attachments'])
        # Users do not see host names.
        self.assertIsNone(self.show_volume(
            volume['id'])['attachments'][0]['host_name'])

        resp = self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual(200, resp.status, resp.text)             # delete
        self.assertEqual({'attachments': [],
                          'shared_connections_by_attachment': []}, resp.body)
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual(404, self.vol.get(
            '/v3/attachments/%s' % attachment['id']).status)

    def test_second_reservation_of_non_multiattach_is_400(self):
        volume = self.create_volume()
        first = self.reserve(volume['id'])
        for state in ('reserved', 'attaching', 'in-use'):
            if state == 'attaching':
                self.connect(first['id'])
            if state == 'in-use':
                self.complete(first['id'])
            self.assertEqual(state, self.status(volume['id']))
            resp = self.reserve(volume['id'], expect=400)
            self.assertEqual(
                'Invalid volume: Volume %s status must be available or '
                'downloading to reserve, but the current status is %s.'
                % (volume['id'], state),
                resp.body['badRequest']['message'])

    def test_multiattach_reserves_while_in_use_not_while_reserved(self):
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        volume = self.create_volume(volume_type='ma')
        first = self.reserve(volume['id'])
        resp = self.reserve(volume['id'], expect=400)
        self.assertIn('must be available or in-use or downloading',
                      resp.text)
        self.connect(first['id'])
        self.reserve(volume['id'], expect=400)          # attaching
        self.complete(first['id'])
        second = self.reserve(volume['id'])             # in-use -> reserved
        self.assertEqual('reserved', self.status(volume['id']))
        self.connect(second['id'], host='h2')
        self.complete(second['id'])
        self.assertEqual('in-use', self.status(volume['id']))
        self.assertEqual(2, len(self.show_volume(
            volume['id'])['attachments']))
        # Detaching one of two leaves the volume in-use.
        self.vol.delete('/v3/attachments/%s' % first['id'])
        self.assertEqual('in-use', self.status(volume['id']))
        self.vol.delete('/v3/attachments/%s' % second['id'])
        self.assertEqual('available', self.status(volume['id']))

    def test_same_instance_may_reserve_again_while_in_use(self):
        # Live migration: a second attachment for the same instance, made
        # by the compute service.
        service = self.api.as_(token='service:demo', volume_version='3.44')
        volume = self.create_volume()
        instance = uuidutils.generate_uuid()
        first = self.reserve(volume['id'], instance_uuid=instance)
        self.connect(first['id'], host='src')
        self.complete(first['id'])
        second = self.reserve(volume['id'], instance_uuid=instance,
                              api=service)
        self.assertEqual('reserved', self.status(volume['id']))
        # ...but only one at a time.
        self.reserve(volume['id'], instance_uuid=instance, api=service,
                     expect=400)
        # A second connection to the same host is a duplicate.
        resp = self.connect(second['id'], host='src', expect=409)
        self.assertIn('duplicate connectors detected', resp.text)
        self.connect(second['id'], host='dest')
        self.complete(second['id'])
        self.vol.delete('/v3/attachments/%s' % first['id'])
        self.assertEqual('in-use', self.status(volume['id']))

    def test_users_may_not_reserve_an_in_use_volume_again(self):
        # A user's second attachment for the instance would hold the
        # volume reserved, and the Compute API's detach refuse it, until
        # the user deleted it: refused, administrators included.
        volume = self.create_volume()
        instance = uuidutils.generate_uuid()
        first = self.reserve(volume['id'], instance_uuid=instance)
        self.connect(first['id'], host='src')
        self.complete(first['id'])
        for api in (self.vol, self.admin):
            resp = self.reserve(volume['id'], instance_uuid=instance,
                                api=api, expect=400)
            self.assertEqual(
                'Invalid volume: Volume %s is already attached to instance '
                '%s and is not multiattach: only the compute service may '
                'attach it to that instance again.' % (volume['id'],
                                                       instance),
                resp.body['badRequest']['message'])
        self.assertEqual('in-use', self.status(volume['id']))
        self.assertEqual([first['id']], [a['id'] for a in self.vol.get(
            '/v3/attachments?volume_id=%s' % volume['id']).body[
                'attachments']])
        # Another instance: the usual answer.
        resp = self.reserve(volume['id'], expect=400)
        self.assertIn('status must be available', resp.text)

    def test_create_with_connector_connects_at_once(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'],
                                  connector={'host': 'h1', 'mode': 'ro'})
        self.assertEqual('attaching', attachment['status'])
        self.assertEqual('ro', attachment['connection_info']['access_mode'])
        self.assertEqual('attaching', self.status(volume['id']))

    def test_deleting_a_reserved_attachment_frees_the_volume(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual('available', self.status(volume['id']))
        self.reserve(volume['id'])

    def test_connector_is_stored_as_attachment_specs(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'], host='h1', multipath=False,
                     wwpns=['a', 'b'])
        ctxt = context.get_admin_context()
        row = attachment_db.attachment_get(ctxt, attachment['id'])
        self.assertEqual({'host': 'h1', 'initiator': 'iqn.test',
                          'multipath': False, 'wwpns': ['a', 'b'],
                          'mode': 'rw'}, attachment_db.connector_of(row))
        engine = db_api.get_engine()
        with engine.connect() as conn:
            rows = dict(conn.execute(sa.text(
                'SELECT key, value FROM attachment_specs WHERE '
                'attachment_id = :a'), {'a': attachment['id']}).all())
        self.assertEqual('["a", "b"]', rows['wwpns'])
        self.assertEqual('false', rows['multipath'])


class MicroversionTest(base.VolumeTestCase):

    def test_attachments_are_404_below_3_27(self):
        volume = self.create_volume()
        old = self.api.as_(volume_version='3.26')
        body = {'attachment': {'volume_uuid': volume['id']}}
        self.assertEqual(404, old.post('/v3/attachments', body=body).status)
        self.assertEqual(404, old.get('/v3/attachments').status)
        self.assertEqual(404, old.get('/v3/attachments/detail').status)
        attachment = self.reserve(volume['id'])
        path = '/v3/attachments/%s' % attachment['id']
        self.assertEqual(404, old.get(path).status)
        self.assertEqual(404, old.delete(path).status)
        self.assertEqual(404, old.put(path, body={'attachment': {
            'connector': {'host': 'h'}}}).status)
        # No header at all is 3.0.
        self.assertEqual(404, self.api.get('/v3/attachments').status)
        self.assertEqual(200, self.api.as_(volume_version='3.27').get(
            '/v3/attachments').status)

    def test_os_complete_is_404_below_3_44(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.complete(attachment['id'],
                      api=self.api.as_(volume_version='3.43'), expect=404)
        self.complete(attachment['id'],
                      api=self.api.as_(volume_version='3.44'))

    def test_mode_needs_3_54(self):
        volume = self.create_volume()
        resp = self.reserve(volume['id'], mode='ro', expect=400,
                            api=self.api.as_(volume_version='3.53'))
        self.assertIn('mode', resp.text)
        self.assertEqual('available', self.status(volume['id']))
        attachment = self.reserve(volume['id'], mode='ro',
                                  api=self.api.as_(volume_version='3.54'))
        self.assertEqual('ro', attachment['attach_mode'])
        # The stored mode wins over the connector's.
        connected = self.connect(attachment['id'], mode='rw')
        self.assertEqual('ro', connected['attach_mode'])
        self.assertEqual('ro', connected['connection_info']['access_mode'])
        self.reserve(volume['id'], mode='xx', expect=400)

    def test_bad_bodies_and_unknown_ids(self):
        missing = uuidutils.generate_uuid()
        self.assertEqual(404, self.reserve(missing, expect=404).status)
        for body in ({}, {'attachment': {}},
                     {'attachment': {'volume_uuid': 'not-a-uuid'}},
                     {'attachment': {'volume_uuid': missing, 'x': 1}}):
            self.assertEqual(400, self.vol.post('/v3/attachments',
                                                body=body).status, body)
        path = '/v3/attachments/%s' % missing
        self.assertEqual(404, self.vol.get(path).status)
        self.assertEqual(404, self.vol.delete(path).status)
        self.assertEqual(404, self.connect(missing, expect=404).status)
        self.assertEqual(404, self.complete(missing, expect=404).status)
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        path = '/v3/attachments/%s' % attachment['id']
        for body in ({'attachment': {}},
                     {'attachment': {'connector': {}}},
                     {'attachment': {'connector': {'host': 'h'}, 'x': 1}}):
            self.assertEqual(400, self.vol.put(path, body=body).status)


class ListTest(base.VolumeTestCase):

    def test_list_detail_filters_and_projects(self):
        v1 = self.create_volume()
        v2 = self.create_volume()
        instance = uuidutils.generate_uuid()
        a1 = self.reserve(v1['id'], instance_uuid=instance)
        a2 = self.reserve(v2['id'])
        self.connect(a2['id'])
        other = self.api.as_(token='bob:other', volume_version='3.71')
        theirs = self.create_volume(api=other)
        a3 = self.reserve(theirs['id'], api=other)

        listed = self.vol.get('/v3/attachments').body['attachments']
        self.assertEqual(sorted([a1['id'], a2['id']]),
                         sorted(a['id'] for a in listed))
        self.assertEqual({'id', 'status', 'instance', 'volume_id'},
                         set(listed[0]))
        detail = self.vol.get('/v3/attachments/detail').body['attachments']
        self.assertIn('connection_info', detail[0])

        def ids(query):
            return [a['id'] for a in self.vol.get(
                '/v3/attachments?' + query).body['attachments']]
        self.assertEqual([a1['id']], ids('volume_id=%s' % v1['id']))
        self.assertEqual([a1['id']], ids('instance_id=%s' % instance))
        self.assertEqual([a2['id']], ids('status=attaching'))
        self.assertEqual(404, self.vol.get(
            '/v3/attachments/%s' % a3['id']).status)
        everything = self.admin.get(
            '/v3/attachments?all_tenants=true').body['attachments']
        self.assertEqual(3, len(everything))
        self.assertEqual(200, self.admin.get(
            '/v3/attachments/%s' % a3['id']).status)


class SharedConnectionsTest(base.VolumeTestCase):

    def test_show_and_delete_name_the_shared_connections(self):
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        volume = self.create_volume(volume_type='ma')
        ids = []
        for host in ('h1', 'h1', 'h2'):
            attachment = self.reserve(volume['id'])
            self.connect(attachment['id'], host=host)
            self.complete(attachment['id'])
            ids.append(attachment['id'])
        shown = self.vol.get('/v3/attachments/%s' % ids[0]).body[
            'attachment']
        self.assertEqual([ids[1]], shown['shared_connections_by_attachment'])
        shown = self.vol.get('/v3/attachments/%s' % ids[2]).body[
            'attachment']
        self.assertEqual([], shown['shared_connections_by_attachment'])

        resp = self.vol.delete('/v3/attachments/%s' % ids[1])
        self.assertEqual([ids[0]],
                         resp.body['shared_connections_by_attachment'])
        self.assertEqual(sorted([ids[0], ids[2]]),
                         sorted(a['id'] for a in resp.body['attachments']))
        resp = self.vol.delete('/v3/attachments/%s' % ids[0])
        self.assertEqual([], resp.body['shared_connections_by_attachment'])

    def test_only_from_3_72(self):
        # nova_lite's own microversion: Cinder's answers below it.
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'], host='h1')
        cinder = self.api.as_(volume_version='3.71')
        shown = cinder.get('/v3/attachments/%s' % attachment['id'])
        self.assertEqual(200, shown.status, shown.text)
        self.assertNotIn('shared_connections_by_attachment',
                         shown.body['attachment'])
        self.assertIn('shared_connections_by_attachment', self.vol.get(
            '/v3/attachments/%s' % attachment['id']).body['attachment'])
        resp = cinder.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'attachments': []}, resp.body)


class ConcurrencyTest(base.VolumeTestCase):

    def test_twenty_reservations_at_once_one_wins(self):
        volume = self.create_volume()
        server = self.useFixture(system.HTTPServer(self.sys.app))
        url = server.base_url + '/v3/attachments'
        start = threading.Barrier(20)

        def reserve(_n):
            body = {'attachment': {
                'volume_uuid': volume['id'],
                'instance_uuid': uuidutils.generate_uuid()}}
            start.wait(timeout=30)
            return requests.post(url, json=body, timeout=60, headers={
                'X-Auth-Token': 'demo:demo',
                'OpenStack-API-Version': 'volume 3.44'})

        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            responses = list(pool.map(reserve, range(20)))
        statuses = sorted(r.status_code for r in responses)
        self.assertEqual([200] + [400] * 19, statuses)
        for resp in responses:
            if resp.status_code == 400:
                self.assertIn('status must be available or downloading',
                              resp.json()['badRequest']['message'])
        listed = self.vol.get('/v3/attachments?volume_id=%s'
                              % volume['id']).body['attachments']
        self.assertEqual(1, len(listed))
        self.assertEqual('reserved', self.status(volume['id']))


class BackendFailureTest(base.VolumeTestCase):
    CONF = {'volume.enabled_backends': ['fake']}

    def setUp(self):
        super().setUp()
        drivers.register_backend_opts(self.conf)

    def test_failed_connect_is_error_attaching_and_says_why(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.conf.set_override('fail_connect', True, group='fake')
        resp = self.connect(attachment['id'], expect=500)
        self.assertIn('set to fail_connect', resp.text)
        self.assertIn(attachment['id'], resp.text)
        shown = self.vol.get('/v3/attachments/%s' % attachment['id']).body
        self.assertEqual('error_attaching', shown['attachment']['status'])
        self.assertEqual('available', self.status(volume['id']))
        # An errored attachment cannot be connected again...
        self.conf.set_override('fail_connect', False, group='fake')
        self.connect(attachment['id'], expect=400)
        # ...it is deleted (no connection to tear down).
        self.assertEqual(200, self.vol.delete(
            '/v3/attachments/%s' % attachment['id']).status)
        self.assertEqual('available', self.status(volume['id']))

    def test_failed_connect_in_create_undoes_the_reservation(self):
        volume = self.create_volume()
        self.conf.set_override('fail_connect', True, group='fake')
        resp = self.reserve(volume['id'], connector={'host': 'h'},
                            expect=500)
        self.assertIn('fail_connect', resp.text)
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual([], self.vol.get(
            '/v3/attachments?volume_id=%s' % volume['id']).body[
            'attachments'])

    def test_failed_disconnect_leaves_the_attachment(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        self.conf.set_override('fail_connect', True, group='fake')
        resp = self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual(500, resp.status)
        self.assertIn('the attachment is unchanged', resp.text)
        self.assertEqual('in-use', self.status(volume['id']))
        self.conf.set_override('fail_connect', False, group='fake')
        self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual('available', self.status(volume['id']))

    def test_no_backend_for_the_type_makes_an_error_volume(self):
        self.create_type('gold', extra_specs={
            'volume_backend_name': 'nowhere'})
        volume = self.create_volume(volume_type='gold')
        self.assertEqual('error', volume['status'])
        resp = self.reserve(volume['id'], expect=400)
        self.assertIn('error state', resp.text)
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % volume['id']).status)


class ServerAttachmentRuleTest(base.VolumeTestCase):
    """OSSA-2023-003: users may not delete a server's attachment."""

    def test_user_gets_409_service_may_delete(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        base.server_holding(attachment)
        path = '/v3/attachments/%s' % attachment['id']
        for api in (self.vol, self.admin):
            resp = api.delete(path)
            self.assertEqual(409, resp.status)
            self.assertEqual(
                'Detach volume from instance %s using the Compute API'
                % attachment['instance'],
                resp.body['conflictingRequest']['message'])
            self.assertEqual(
                'volume.attachment_of_compute',
                resp.body['conflictingRequest']['error_code'])
        self.assertEqual('in-use', self.status(volume['id']))
        # A service request (noauth2's user "service", or a service
        # token's roles) may.
        service = self.api.as_(token='service:demo', volume_version='3.44')
        self.assertEqual(200, service.delete(path).status)
        self.assertEqual('available', self.status(volume['id']))

    def test_only_a_service_token_counts_as_service(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'])
        base.server_holding(attachment)
        path = '/v3/attachments/%s' % attachment['id']
        before = self.status(volume['id'])
        # Identity headers a user sends are not trusted (a forgery of
        # what keystonemiddleware sets), nor a user's own service token.
        for headers in ({'X-Service-Roles': 'service'},
                        {'X-Roles': 'service,admin'},
                        {'X-Service-Roles': 'service',
                         'X-Service-Identity-Status': 'Confirmed'},
                        {'X-Service-Token': 'demo:demo'}):
            resp = self.vol.delete(path, headers=headers)
            self.assertEqual(409, resp.status, (headers, resp.text))
            self.assertEqual(before, self.status(volume['id']))
        # The service user's token, as the compute side sends it.
        resp = self.vol.delete(path,
                               headers={'X-Service-Token': 'service:service'})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual('available', self.status(volume['id']))

    def test_users_may_not_connect_a_servers_attachment(self):
        # A user's connector on the server's attachment would move its
        # disk to the user's host (and leave the compute host's
        # connection behind): 409, administrators included, whether the
        # attachment is connected yet or not.
        for connected in (True, False):
            volume = self.create_volume()
            attachment = self.reserve(volume['id'])
            if connected:
                self.connect(attachment['id'], host='compute1')
                self.complete(attachment['id'])
            base.server_holding(attachment)
            before = self.status(volume['id'])
            for api in (self.vol, self.admin):
                resp = self.connect(attachment['id'], host='evil',
                                    api=api, expect=409)
                self.assertEqual(
                    'Attachment %s belongs to instance %s: only the compute '
                    'service may change its connection' % (
                        attachment['id'], attachment['instance']),
                    resp.body['conflictingRequest']['message'])
            self.assertEqual(before, self.status(volume['id']))
            self.assertEqual(['compute1'] if connected else [],
                             self.backend_hosts(volume['id']))
            # The compute service connects it.
            service = self.api.as_(token='service:demo',
                                   volume_version='3.44')
            self.connect(attachment['id'], host='compute1', api=service)

    def test_users_may_delete_what_no_server_holds(self):
        volume = self.create_volume()
        # Reserved only (no connection_info): allowed even if held.
        reserved = self.reserve(volume['id'])
        base.server_holding(reserved)
        self.assertEqual(200, self.vol.delete(
            '/v3/attachments/%s' % reserved['id']).status)
        # Connected, but no server holds this attachment id.
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'])
        self.assertEqual(200, self.vol.delete(
            '/v3/attachments/%s' % attachment['id']).status)


class ConnectorTest(base.VolumeTestCase):
    """Connectors are validated as os-brick builds them; the ``file``
    backend keeps a record for any host name the schema admits, and a
    connection whose recording fails is not left behind."""

    def _connections(self, volume_id):
        volume = volume_db.volume_get(context.get_admin_context(), volume_id)
        driver = drivers.get_driver(self.conf, volume.host)
        return driver.connections({'id': volume.id,
                                   'provider_location':
                                       volume.provider_location})

    def test_malformed_connectors_are_400_and_change_nothing(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        path = '/v3/attachments/%s' % attachment['id']
        for connector in ({'host': ['h1']}, {'host': {'h': 1}},
                          {'host': 7}, {'host': ''}, {'host': 'h' * 256},
                          {'host': 'h', 'multipath': 'yes'},
                          {'host': 'h', 'wwpns': 'aa'},
                          {'host': 'h', 'wwpns': ['not hex']},
                          {'host': 'h', 'initiator': 'i' * 224},
                          {'host': 'h', 'mode': 'rx'},
                          {'host': 'h', 'extra': {'nested': 1}},
                          {'host': 'h', 'x' * 65: 1}):
            resp = self.vol.put(path, body={
                'attachment': {'connector': connector}})
            self.assertEqual(400, resp.status, (connector, resp.text))
            self.assertIn('badRequest', resp.body)
            self.assertEqual('reserved', self.vol.get(path).body[
                'attachment']['status'])
            resp = self.vol.post('/v3/attachments', body={'attachment': {
                'volume_uuid': volume['id'], 'connector': connector}})
            self.assertEqual(400, resp.status, (connector, resp.text))
        self.assertEqual({}, self._connections(volume['id']))
        self.assertEqual('reserved', self.status(volume['id']))
        # Transport-specific keys of other connectors pass on.
        connected = self.connect(attachment['id'], host='h',
                                 sdc_guid='abc', nvme_hostid='x' * 36)
        self.assertEqual('attaching', connected['status'])

    def test_long_and_odd_host_names_connect_and_disconnect(self):
        for host in ('h' * 237, 'h' * 255, '\u00e9' * 255, '..', '/etc',
                     'a b%2F'):
            volume = self.create_volume()
            attachment = self.reserve(volume['id'])
            self.connect(attachment['id'], host=host)
            self.assertEqual([host], list(self._connections(volume['id'])))
            self.assertEqual(200, self.vol.delete(
                '/v3/attachments/%s' % attachment['id']).status)
            self.assertEqual({}, self._connections(volume['id']))
            self.assertEqual('available', self.status(volume['id']))

    def test_failed_recording_leaves_no_connection(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        # The database goes away between the backend's connect and the
        # write that records it.
        down = db_exc.DBConnectionError('database unreachable')
        self.useFixture(fixtures.MockPatchObject(
            attachment_db, 'attachment_connect', side_effect=down))
        self.useFixture(fixtures.MockPatchObject(
            attachment_db, 'connection_users', side_effect=down))
        resp = self.connect(attachment['id'], expect=503)
        self.assertIn('serviceUnavailable', resp.body)
        self.assertEqual({}, self._connections(volume['id']))

    def test_failed_recording_keeps_a_shared_connection(self):
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        volume = self.create_volume(volume_type='ma')
        first = self.reserve(volume['id'])
        self.connect(first['id'], host='h1')
        self.complete(first['id'])
        second = self.reserve(volume['id'])
        down = db_exc.DBConnectionError('database unreachable')
        self.useFixture(fixtures.MockPatchObject(
            attachment_db, 'attachment_connect', side_effect=down))
        self.useFixture(fixtures.MockPatchObject(
            attachment_db, 'connection_users', side_effect=down))
        self.connect(second['id'], host='h1', expect=503)
        # The first attachment still uses h1's connection.
        self.assertEqual(['h1'], list(self._connections(volume['id'])))


class NoConnectionLeftBehindTest(base.VolumeTestCase):
    """An ``available`` volume has no export to any host (the backend's
    record), whatever path freed it. ``VolumeTestCase`` checks it after
    every test; these are the paths that used to leave one."""

    def test_connected_again_on_another_host(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'], host='h1')
        self.assertEqual(['h1'], self.backend_hosts(volume['id']))
        self.connect(attachment['id'], host='h2')
        self.assertEqual(['h2'], self.backend_hosts(volume['id']))
        self.assertEqual(200, self.vol.delete(
            '/v3/attachments/%s' % attachment['id']).status)
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual([], self.backend_hosts(volume['id']))

    def test_shared_host_connection_stays_for_its_other_user(self):
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        volume = self.create_volume(volume_type='ma')
        first = self.reserve(volume['id'])
        self.connect(first['id'], host='h1')
        self.complete(first['id'])
        second = self.reserve(volume['id'])
        self.connect(second['id'], host='h1')
        self.complete(second['id'])
        # The first moves to h2: h1 still serves the second.
        self.connect(first['id'], host='h2')
        self.assertEqual(['h1', 'h2'], self.backend_hosts(volume['id']))
        for attachment in (first, second):
            self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual([], self.backend_hosts(volume['id']))

    def test_force_detach_with_another_hosts_connector(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'], host='h1')
        self.complete(attachment['id'])
        resp = self.admin.post('/v3/volumes/%s/action' % volume['id'],
                               body={'os-force_detach': {
                                   'attachment_id': attachment['id'],
                                   'connector': {'host': 'elsewhere'}}})
        self.assertEqual(202, resp.status, resp.text)
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual([], self.backend_hosts(volume['id']))


class ReconnectFailureTest(base.VolumeTestCase):
    CONF = {'volume.enabled_backends': ['fake']}

    def test_failed_reconnect_gives_the_old_connection_up(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'], host='h1')
        self.complete(attachment['id'])
        # The backend refuses the new connection (but may still
        # disconnect).
        with mock.patch.object(
                fake_driver.FakeDriver, 'initialize_connection',
                side_effect=exception.VolumeBackendAPIException(
                    data='no more targets')):
            self.connect(attachment['id'], host='h1', expect=500)
        # error_attaching no longer counts: the volume is available, and
        # exported nowhere.
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual([], self.backend_hosts(volume['id']))
