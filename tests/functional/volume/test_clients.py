"""Real clients against nova_lite's own /v3: the ``cinder`` VolumeClient
(python-cinderclient + keystoneauth1), openstacksdk and the ``openstack``
CLI; and the ``local`` VolumeClient, which must answer exactly as the
``cinder`` one does."""

import json
import os
import subprocess
import sys
from unittest import mock

import fixtures
import openstack
from oslo_utils import uuidutils

from nova_lite.api import microversion
from nova_lite import context
from nova_lite import exception
from nova_lite import volume_client as block_storage
from nova_lite.volume_client import cinder as cinder_client
from nova_lite.volume_client import local as local_client
from tests.fixtures import system
from tests.functional.volume import base
from tests.unit.compute import fakes


# Values compared by _shape; of the others only the type is.
_SHAPE_VALUES = ('status', 'attach_status', 'attach_mode', 'access_mode',
                 'multiattach', 'bootable')
# connection_info's keys of the contract; the others are the driver's.
_CONNECTION_KEYS = ('driver_volume_type', 'access_mode', 'attachment_id')


def _shape(value, key=None):
    """The keys at every level (of connection_info, the contract's), the
    values of _SHAPE_VALUES, the types of the others; errors as (class,
    code)."""
    if isinstance(value, dict):
        if key == 'connection_info':
            value = {k: v for k, v in value.items() if k in _CONNECTION_KEYS}
        return {k: _shape(v, k) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) == 3 and isinstance(value[0], str) and \
                isinstance(value[1], int):
            return value[:2]        # an error: class, code, message
        return [_shape(v) for v in value]
    if key in _SHAPE_VALUES or key is None:
        return value
    return type(value).__name__


class VolumeClientTest(base.VolumeTestCase):
    """The VolumeClient contract, through both implementations."""

    def setUp(self):
        super().setUp()
        server = self.useFixture(system.HTTPServer(self.sys.app))
        self.conf.set_override('endpoint_override', server.base_url + '/v3',
                               group='volume')
        self.ctxt = context.RequestContext(
            'demo', 'demo', auth_token='demo:demo',
            roles=['member', 'reader'])
        self.clients = {
            'local': local_client.LocalClient(self.conf),
            'cinder': cinder_client.CinderClient(self.conf),
        }

    def test_get_client_follows_config(self):
        self.assertIsInstance(block_storage.get_client(self.conf),
                              local_client.LocalClient)
        self.conf.set_override('client', 'cinder', group='volume')
        self.assertIsInstance(block_storage.get_client(self.conf),
                              cinder_client.CinderClient)

    def _walk(self, client, volume_id=None):
        """The attach and detach sequence Nova makes; returns what the
        client returned, with ids and times masked."""
        volume_id = volume_id or self.create_volume()['id']
        instance = uuidutils.generate_uuid()
        svc = block_storage.service_context(self.ctxt)
        seen = [client.get(self.ctxt, volume_id)]
        attachment = client.attachment_create(self.ctxt, volume_id, instance)
        seen.append(attachment)
        seen.append(client.get(self.ctxt, volume_id))
        seen.append(client.attachment_update(
            svc, attachment['id'], {'host': 'compute1', 'mode': 'ro'},
            mountpoint='/dev/vdb'))
        client.attachment_complete(svc, attachment['id'])
        seen.append(client.get(self.ctxt, volume_id))
        seen.append(client.get(svc, volume_id))
        seen.append(client.attachment_get(self.ctxt, attachment['id']))
        seen.append(client.attachment_get_all(self.ctxt, instance_id=instance,
                                              volume_id=volume_id))
        seen.append(client.attachment_get_all(
            self.ctxt, instance_id=uuidutils.generate_uuid()))
        client.begin_detaching(svc, volume_id)
        seen.append(client.get(self.ctxt, volume_id)['status'])
        client.roll_detaching(svc, volume_id)
        seen.append(client.get(self.ctxt, volume_id)['status'])
        seen.append(client.attachment_delete(svc, attachment['id']))
        seen.append(client.get(self.ctxt, volume_id))
        client.delete(self.ctxt, volume_id)
        errors = []
        for call in (lambda: client.get(self.ctxt, volume_id),
                     lambda: client.attachment_get(self.ctxt, instance),
                     lambda: client.attachment_create(
                         self.ctxt, volume_id, instance)):
            e = self.assertRaises(exception.NovaLiteException, call)
            errors.append((type(e).__name__, e.code,
                           e.format_message().replace(volume_id, 'V')
                           .replace(instance, 'I')))
        seen.append(errors)
        text = json.dumps(seen, sort_keys=True)
        for value, mask in ((volume_id, 'VOLUME'), (instance, 'SERVER'),
                            (attachment['id'], 'ATTACHMENT')):
            text = text.replace(value, mask)
        return json.loads(text), seen

    def test_local_and_cinder_answer_alike(self):
        results = {}
        for name, client in self.clients.items():
            results[name], raw = self._walk(client)
        local, cinder = results['local'], results['cinder']
        # Times differ between the two runs; mask them too.
        for result in (local, cinder):
            items = [i for item in result
                     for i in (item if isinstance(item, list) else [item])]
            for item in items:
                if isinstance(item, dict):
                    for key in ('attached_at', 'created_at'):
                        if item.get(key):
                            item[key] = 'T'
                    for att in item.get('attachments', []):
                        att['attached_at'] = 'T'
        self.assertEqual(local, cinder)

        # And what they say is the contract.
        (before, reserved, volume_reserved, updated, in_use, in_use_svc,
         shown, listed, none_listed, detaching, rolled, deleted, after,
         errors) = local
        self.assertEqual('available', before['status'])
        self.assertEqual('detached', before['attach_status'])
        self.assertEqual('reserved', reserved['status'])
        self.assertEqual('reserved', volume_reserved['status'])
        self.assertEqual('attaching', updated['status'])
        self.assertEqual('ro', updated['attach_mode'])
        self.assertEqual({'driver_volume_type': 'file', 'access_mode': 'ro',
                          'attachment_id': 'ATTACHMENT',
                          'path': updated['connection_info']['path']},
                         updated['connection_info'])
        self.assertEqual('in-use', in_use['status'])
        self.assertEqual('attached', in_use['attach_status'])
        self.assertEqual([{'attachment_id': 'ATTACHMENT',
                           'server_id': 'SERVER', 'host_name': None,
                           'device': '/dev/vdb', 'attached_at': 'T'}],
                         in_use['attachments'])
        self.assertEqual('compute1',
                         in_use_svc['attachments'][0]['host_name'])
        self.assertEqual([], shown['shared_connections_by_attachment'])
        shown.pop('shared_connections_by_attachment')
        self.assertEqual(([shown], []), (listed, none_listed))
        self.assertEqual(('detaching', 'in-use'), (detaching, rolled))
        self.assertEqual({'shared_connections': []}, deleted)
        self.assertEqual('available', after['status'])
        self.assertEqual([
            ['VolumeNotFound', 404, 'Volume V could not be found.'],
            ['VolumeAttachmentNotFound', 404,
             'Volume attachment I could not be found.'],
            ['VolumeNotFound', 404, 'Volume V could not be found.'],
        ], errors)

    def test_compute_unit_tests_fake_answers_in_the_same_shape(self):
        # tests/unit/compute/fakes.FakeVolumeClient stands for the block
        # storage in the compute unit tests: the same keys at every level,
        # the same statuses and modes, the same errors (not messages).
        fake = fakes.FakeVolumeClient(self.conf)
        fake_shape = _shape(self._walk(fake, fake.create_volume())[0])
        local_shape = _shape(self._walk(self.clients['local'])[0])
        self.assertEqual(local_shape, fake_shape)

    def _create_and_list(self, client):
        """The compute API's os-volumes calls; returns what the client
        returned (times masked) and the errors it raised."""
        created = [client.create(self.ctxt, size, name='v%d' % size,
                                 description='d', metadata={})
                   for size in (1, 2, 3)]
        seen = [created, client.get_all(self.ctxt, limit=10),
                client.get_all(self.ctxt, limit=1, offset=1),
                client.get_all(self.ctxt, limit=5, offset=3)]
        errors = []
        # (A size below 1 never gets here: /v3's schema and the local
        # service word it differently, so the compute API checks it.)
        for kwargs in ({'size': 1, 'volume_type': 'gold'},
                       {'size': 1, 'snapshot_id': 'snap'},
                       {'size': 1, 'availability_zone': 'zone9'},
                       {'size': 5000}):
            e = self.assertRaises(exception.NovaLiteException,
                                  client.create, self.ctxt, **kwargs)
            errors.append((e.code, e.format_message()))
        seen.append(errors)
        for volume in created:
            client.delete(self.ctxt, volume['id'])
        seen.append(client.get_all(self.ctxt, limit=10))
        text = json.dumps(seen, sort_keys=True)
        for n, volume in enumerate(created):
            text = text.replace(volume['id'], 'VOLUME%d' % n).replace(
                volume['created_at'], 'T%d' % n)
        return json.loads(text)

    def test_create_and_list_alike(self):
        results = {name: self._create_and_list(client)
                   for name, client in self.clients.items()}
        self.assertEqual(results['local'], results['cinder'])
        (created, every, second, none, errors,
         after) = results['local']
        self.assertEqual(
            [('VOLUME%d' % n, 'available', n + 1, 'v%d' % (n + 1), 'd',
              'T%d' % n, None, {}, 'nova', 'detached', [])
             for n in range(3)],
            [(v['id'], v['status'], v['size'], v['name'],
              v['description'], v['created_at'], v['snapshot_id'],
              v['metadata'], v['availability_zone'], v['attach_status'],
              v['attachments']) for v in created])
        # Newest first.
        self.assertEqual(list(reversed(created)), every)
        self.assertEqual([created[1]], second)
        self.assertEqual([], none)
        self.assertEqual([
            (404, 'Volume type gold could not be found.'),
            (404, 'Snapshot snap could not be found.'),
            (400, "Invalid input received: Availability zone 'zone9' is "
                  "invalid."),
            (413, 'Requested volume or snapshot exceeds allowed gigabytes '
                  'quota. Requested 5000G, quota is 1000G and 6G has been '
                  'consumed.')], [tuple(e) for e in errors])
        self.assertEqual([], after)

    def test_same_errors(self):
        for name, client in self.clients.items():
            volume_id = self.create_volume()['id']
            client.attachment_create(self.ctxt, volume_id,
                                     uuidutils.generate_uuid())
            e = self.assertRaises(
                exception.InvalidVolume, client.attachment_create,
                self.ctxt, volume_id, uuidutils.generate_uuid())
            self.assertEqual(
                'Invalid volume: Volume %s status must be available or '
                'downloading to reserve, but the current status is '
                'reserved.' % volume_id, e.format_message(), name)
            self.assertEqual(400, e.code)

    def test_service_context_may_delete_a_servers_attachment(self):
        test = ServerRule()
        for name, client in self.clients.items():
            volume_id = self.create_volume()['id']
            attachment = client.attachment_create(
                self.ctxt, volume_id, uuidutils.generate_uuid())
            client.attachment_update(self.ctxt, attachment['id'],
                                     {'host': 'h'})
            test.hold(attachment)
            e = self.assertRaises(exception.ConflictNovaUsingAttachment,
                                  client.attachment_delete, self.ctxt,
                                  attachment['id'])
            self.assertEqual(409, e.code, name)
            client.attachment_delete(
                block_storage.service_context(self.ctxt), attachment['id'])
            self.assertEqual('available',
                             client.get(self.ctxt, volume_id)['status'])

    def test_multiattach_mode_and_shared_connections(self):
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        for name, client in self.clients.items():
            volume_id = self.create_volume(volume_type='ma')['id']
            ids = []
            for _i in range(2):
                att = client.attachment_create(
                    self.ctxt, volume_id, uuidutils.generate_uuid(),
                    connector={'host': 'h1'}, mode='ro')
                self.assertEqual('ro', att['attach_mode'], name)
                client.attachment_complete(self.ctxt, att['id'])
                ids.append(att['id'])
            volume = client.get(self.ctxt, volume_id)
            self.assertTrue(volume['multiattach'])
            self.assertEqual(2, len(volume['attachments']))
            self.assertEqual([ids[1]], client.attachment_get(
                self.ctxt, ids[0])['shared_connections_by_attachment'])
            svc = block_storage.service_context(self.ctxt)
            self.assertEqual({'shared_connections': [ids[1]]},
                             client.attachment_delete(svc, ids[0]))

    def test_cinder_client_against_a_block_storage_without_3_72(self):
        # A real Cinder's newest is 3.71: 406 at 3.72. The client asks
        # once, then as Nova does; shared connections are not known.
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        volume_id = self.create_volume(volume_type='ma')['id']
        client = self.clients['cinder']
        svc = block_storage.service_context(self.ctxt)
        ids = []
        for _i in range(2):
            att = client.attachment_create(
                self.ctxt, volume_id, uuidutils.generate_uuid(),
                connector={'host': 'h1'})
            client.attachment_complete(self.ctxt, att['id'])
            ids.append(att['id'])
        asked = []
        real_client = client._client

        def spy(ctxt, version):
            asked.append(version)
            return real_client(ctxt, version)
        with mock.patch.object(microversion.VOLUME, 'max',
                               microversion.APIVersion(3, 71)), \
                mock.patch.object(client, '_client', spy):
            self.assertIsNone(client.attachment_get(
                self.ctxt, ids[0])['shared_connections_by_attachment'])
            self.assertEqual({'shared_connections': None},
                             client.attachment_delete(svc, ids[0]))
        self.assertEqual(['3.72', '3.44', '3.44'], asked)
        # Against nova_lite's /v3 the answer is known.
        fresh = cinder_client.CinderClient(self.conf)
        self.assertEqual({'shared_connections': []},
                         fresh.attachment_delete(svc, ids[1]))


class ServerRule(object):
    """Make a server hold an attachment (its block device mapping)."""

    def hold(self, attachment):
        from oslo_utils import timeutils

        from nova_lite.db import api as db_api
        from nova_lite.db import models

        @db_api.context_manager.writer
        def insert(ctxt):
            ctxt.session.add(models.Instance(
                uuid=attachment['instance'], display_name='s',
                project_id='demo', user_id='demo', flavor_id='1',
                vm_state='active', launched_at=timeutils.utcnow()))
            ctxt.session.add(models.BlockDeviceMapping(
                uuid=uuidutils.generate_uuid(),
                instance_uuid=attachment['instance'], source_type='volume',
                destination_type='volume', volume_id=attachment['volume_id'],
                attachment_id=attachment['id']))
        insert(context.get_admin_context())


class OpenStackSDKTest(base.VolumeTestCase):

    def setUp(self):
        super().setUp()
        self.server = self.useFixture(system.HTTPServer(self.sys.app))
        base_url = self.server.base_url
        self.conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': base_url, 'token': 'demo:demo'},
            block_storage_endpoint_override=base_url + '/v3',
            compute_endpoint_override=base_url + '/v2.1',
            region_name='RegionOne')
        self.addCleanup(self.conn.close)
        self.bs = self.conn.block_storage

    def test_volumes(self):
        volume = self.bs.create_volume(size=1, name='sdk-vol')
        self.assertEqual('available', volume.status)
        self.assertFalse(volume.is_bootable)
        self.assertFalse(volume.is_multiattach)
        found = self.bs.get_volume(volume.id)
        self.assertEqual('sdk-vol', found.name)
        # As from Cinder: the owner is in show, not in the create answer.
        self.assertEqual('demo', found.project_id)
        self.assertEqual([volume.id], [v.id for v in self.bs.volumes(
            name='sdk-vol')])
        self.assertEqual([], list(self.bs.volumes(status='in-use')))
        self.assertEqual(volume.id, self.bs.find_volume('sdk-vol').id)
        self.bs.delete_volume(volume)
        self.assertIsNone(self.bs.find_volume(volume.id))

    def test_attachments(self):
        volume = self.bs.create_volume(size=1)
        instance = uuidutils.generate_uuid()
        attachment = self.bs.create_attachment(volume.id, instance=instance,
                                               connector={})
        self.assertEqual('reserved', attachment.status)
        self.assertEqual('reserved', self.bs.get_volume(volume.id).status)
        self.bs.update_attachment(attachment.id,
                                  connector={'host': 'h1', 'mode': 'rw'})
        self.assertEqual('attaching', self.bs.get_volume(volume.id).status)
        self.bs.complete_attachment(attachment.id)
        volume = self.bs.get_volume(volume.id)
        self.assertEqual('in-use', volume.status)
        self.assertEqual(attachment.id, volume.attachments[0][
            'attachment_id'])
        shown = self.bs.get_attachment(attachment.id)
        self.assertEqual('attached', shown.status)
        self.assertEqual('file', shown.connection_info['driver_volume_type'])
        listed = list(self.bs.attachments(volume_id=volume.id))
        self.assertEqual([attachment.id], [a.id for a in listed])
        self.bs.delete_attachment(attachment.id)
        self.assertEqual('available', self.bs.get_volume(volume.id).status)

    def test_types(self):
        admin = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': self.server.base_url, 'token': 'admin:admin'},
            block_storage_endpoint_override=self.server.base_url + '/v3',
            region_name='RegionOne')
        self.addCleanup(admin.close)
        vtype = admin.block_storage.create_type(
            name='sdk-type', extra_specs={'multiattach': '<is> True'})
        self.assertTrue(vtype.is_public)
        self.assertEqual(['__DEFAULT__', 'sdk-type'],
                         [t.name for t in self.bs.types()])
        # The default type, as openstacksdk asks for it.
        self.assertEqual('__DEFAULT__', self.bs.get_type('default').name)
        volume = self.bs.create_volume(size=1, volume_type='sdk-type')
        self.assertTrue(volume.is_multiattach)


class OpenStackCLITest(base.VolumeTestCase):

    def setUp(self):
        super().setUp()
        server = self.useFixture(system.HTTPServer(self.sys.app))
        tmp = self.useFixture(fixtures.TempDir()).path
        clouds = os.path.join(tmp, 'clouds.yaml')
        with open(clouds, 'w') as f:
            json.dump({'clouds': {'test': {
                'auth_type': 'admin_token',
                'auth': {'endpoint': server.base_url, 'token': 'demo:demo'},
                'block_storage_endpoint_override': server.base_url + '/v3',
                'volume_endpoint_override': server.base_url + '/v3',
                'compute_endpoint_override': server.base_url + '/v2.1',
                # As nova-lite-all writes it: identity version
                # discovery is served at /identity.
                'identity_api_version': '3',
                'identity_endpoint_override':
                    server.base_url + '/identity/v3',
                'region_name': 'RegionOne'}}}, f)
        self.env = dict(os.environ, OS_CLIENT_CONFIG_FILE=clouds,
                        OS_CLOUD='test', HOME=tmp)
        for key in list(self.env):
            if key.startswith('OS_') and key not in ('OS_CLIENT_CONFIG_FILE',
                                                     'OS_CLOUD'):
                del self.env[key]

    def openstack(self, *args):
        cmd = [os.path.join(os.path.dirname(sys.executable), 'openstack'),
               '--os-volume-api-version', '3.71'] + list(args)
        proc = subprocess.run(cmd, env=self.env, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(0, proc.returncode, '%s\n%s%s' % (
            ' '.join(args), proc.stdout, proc.stderr))
        if '-f' in args and 'json' in args:
            return json.loads(proc.stdout)
        return proc.stdout

    def _server(self):
        # `volume attachment create --server` looks the server up in the
        # compute API: a real one.
        compute = self.api.as_(compute_version='2.60')
        resp = compute.post('/v2.1/servers', body={'server': {
            'name': 'cli-server', 'flavorRef': '1',
            'imageRef': '70a599e0-31e7-49b7-b260-868f441e862b',
            'networks': 'none'}})
        self.assertEqual(202, resp.status, resp.text)
        server_id = resp.body['server']['id']
        system.wait_for(lambda: compute.get(
            '/v2.1/servers/%s' % server_id).body['server']['status'] ==
            'ACTIVE', timeout=30)
        return server_id

    def test_volume_and_attachment_commands(self):
        volume = self.openstack('volume', 'create', '--size', '1',
                                'cli-vol', '-f', 'json')
        self.assertEqual('available', volume['status'])
        listed = self.openstack('volume', 'list', '-f', 'json')
        self.assertEqual(['cli-vol'], [v['Name'] for v in listed])
        shown = self.openstack('volume', 'show', 'cli-vol', '-f', 'json')
        self.assertEqual(volume['id'], shown['id'])

        server = self._server()
        attachment = self.openstack(
            'volume', 'attachment', 'create', volume['id'], '--server',
            server, '-f', 'json')
        self.assertEqual('reserved', attachment['Status'])
        attachment_id = attachment['ID']
        updated = self.openstack(
            'volume', 'attachment', 'set', attachment_id, '--host',
            'compute1', '--initiator', 'iqn.test', '-f', 'json')
        self.assertEqual('attaching', updated['Status'])
        self.openstack('volume', 'attachment', 'complete', attachment_id)
        self.assertEqual('in-use', self.openstack(
            'volume', 'show', volume['id'], '-f', 'json')['status'])
        listed = self.openstack('volume', 'attachment', 'list', '-f', 'json')
        self.assertEqual([attachment_id], [a['ID'] for a in listed])
        shown = self.openstack('volume', 'attachment', 'show',
                               attachment_id, '-f', 'json')
        self.assertEqual('attached', shown['Status'])
        self.assertEqual(server, shown['Instance ID'])
        self.openstack('volume', 'attachment', 'delete', attachment_id)
        self.assertEqual('available', self.openstack(
            'volume', 'show', volume['id'], '-f', 'json')['status'])
        self.openstack('volume', 'delete', volume['id'])
        self.assertEqual([], self.openstack('volume', 'list', '-f', 'json'))
