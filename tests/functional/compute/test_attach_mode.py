"""Microversion 2.105 on os-volume_attachments: ``attach_mode`` ro/rw
(volume-multiattach-enhancements), end to end on the whole system
in-process with the ``file`` backend: the mode is stored on the mapping,
reserved on the block-storage attachment, connected in, enforced by the
virt driver (a write through a read-only device is refused; the file is
really written through a read/write one) and kept by swap; and the
compute host keeps a connection that another attachment on the host still
uses (multiattach)."""

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import objects
from tests.fixtures import system
from tests.functional.compute import base
from tests.functional.compute import test_attach_failures as taf

V = '2.105'


class AttachModeTestCase(base.TestCase):
    def setUp(self):
        super().setUp()
        self.server_id = self.create_server()

    def at(self, version=V, api=None):
        return (api or self.api).as_(compute_version=version)

    def url(self, server_id, volume_id=None):
        url = '/v2.1/servers/%s/os-volume_attachments' % server_id
        return url + ('/%s' % volume_id if volume_id else '')

    def attach_in(self, server_id, volume_id, mode=None, version=V,
                  expect=202):
        extra = {'attach_mode': mode} if mode else {}
        return self.attach(server_id, volume_id, api=self.at(version),
                           expect=expect, **extra)

    def wait_attached(self, server_id, volume_id):
        """The mapping of ``volume_id`` on ``server_id`` once the host has
        completed it (its attachment ``attached``)."""
        def done():
            resp = self.at().get(self.url(server_id, volume_id))
            if resp.status != 200 or not resp.body['volumeAttachment'][
                    'attachment_id']:
                return None
            item = resp.body['volumeAttachment']
            att = self.block_attachment(item['attachment_id'])
            return item if att['status'] == 'attached' else None
        return system.wait_for(done, message='%s never attached to %s' % (
            volume_id, server_id))

    def block_attachment(self, attachment_id):
        resp = self.volume_api(self.admin_api).as_(
            volume_version='3.54').get('/v3/attachments/%s' % attachment_id)
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['attachment']

    def instance(self, server_id):
        return objects.Instance.get_by_uuid(
            nl_context.get_admin_context(), server_id)

    def device(self, server_id, mountpoint, host='compute1'):
        driver = self.compute_manager(host).driver
        return driver.guests[server_id].devices[mountpoint]

    def message(self, resp):
        return list(resp.body.values())[0]['message']


class AttachModeTest(AttachModeTestCase):
    def test_read_only_attach_end_to_end(self):
        volume_id = self.create_volume()
        self.attach_in(self.server_id, volume_id, 'ro')
        item = self.wait_attached(self.server_id, volume_id)
        self.assertEqual('ro', item['attach_mode'])
        [listed] = self.attachments(self.server_id, api=self.at())
        self.assertEqual('ro', listed['attach_mode'])
        # Block storage reserved and connected the attachment read-only.
        att = self.block_attachment(item['attachment_id'])
        self.assertEqual('ro', att['attach_mode'])
        self.assertEqual('ro', att['connection_info']['access_mode'])
        # The guest device is read-only: a write is refused, reads work.
        driver = self.compute_manager().driver
        instance = self.instance(self.server_id)
        self.assertEqual('ro', self.device(self.server_id,
                                           item['device'])['mode'])
        self.assertRaises(exception.DeviceIsReadOnly, driver.write_device,
                          instance, item['device'], b'data')
        self.assertEqual(b'\0' * 4, driver.read_device(
            instance, item['device'], 4))

    def test_default_is_read_write(self):
        volume_id = self.create_volume()
        self.attach_in(self.server_id, volume_id)
        item = self.wait_attached(self.server_id, volume_id)
        self.assertEqual('rw', item['attach_mode'])
        self.assertEqual('rw', self.block_attachment(
            item['attachment_id'])['attach_mode'])
        driver = self.compute_manager().driver
        instance = self.instance(self.server_id)
        driver.write_device(instance, item['device'], b'nova', offset=512)
        self.assertEqual(b'nova', driver.read_device(
            instance, item['device'], 4, offset=512))
        # Written into the volume's file, not kept in memory.
        path = self.device(self.server_id, item['device'])[
            'connection_info']['path']
        with open(path, 'rb') as f:
            f.seek(512)
            self.assertEqual(b'nova', f.read(4))

    def test_views_show_the_mode_from_2_105_only(self):
        volume_id = self.create_volume()
        self.attach_in(self.server_id, volume_id, 'ro')
        self.wait_attached(self.server_id, volume_id)
        for version in ('2.89', '2.101', '2.104'):
            [item] = self.attachments(self.server_id,
                                      api=self.at(version))
            self.assertNotIn('attach_mode', item)
            resp = self.at(version).get(self.url(self.server_id, volume_id))
            self.assertNotIn('attach_mode', resp.body['volumeAttachment'])
        resp = self.at('latest').get(self.url(self.server_id, volume_id))
        self.assertEqual('ro', resp.body['volumeAttachment']['attach_mode'])

    def test_pending_attach_shows_its_mode(self):
        volume_id = self.create_volume()
        with self.reservations_held() as waiting:
            self.attach_in(self.server_id, volume_id, 'ro')
            system.wait_for(lambda: waiting)
            resp = self.at().get(self.url(self.server_id, volume_id))
            item = resp.body['volumeAttachment']
            self.assertEqual((None, 'ro'), (item['attachment_id'],
                                            item['attach_mode']))
        self.wait_attached(self.server_id, volume_id)

    def assert_nothing_attached(self, volume_id):
        self.assertEqual([], self.attachments(self.server_id,
                                              api=self.at()))
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))

    def test_bad_requests_change_nothing(self):
        volume_id = self.create_volume()
        for version, body, text in (
                ('2.104', {'attach_mode': 'ro'}, 'attach_mode'),
                ('2.101', {'attach_mode': 'rw'}, 'attach_mode'),
                (V, {'attach_mode': 'wo'}, "'wo' is not one of"),
                (V, {'attach_mode': 'RO'}, "'RO' is not one of"),
                (V, {'attach_mode': None}, "None is not of type 'string'"),
                (V, {'attach_mode': ''}, "'' is not one of")):
            resp = self.attach(self.server_id, volume_id,
                               api=self.at(version), expect=400, **body)
            self.assertIn(text, self.message(resp))
            self.assert_nothing_attached(volume_id)

    def test_read_only_on_a_host_too_old_is_409(self):
        self.update_compute_services(host='compute1', version=1)
        volume_id = self.create_volume()
        resp = self.attach_in(self.server_id, volume_id, 'ro', expect=409)
        self.assertIn('too old to attach volumes read-only',
                      self.message(resp))
        self.assert_nothing_attached(volume_id)
        # Read/write is what such a host always did.
        self.attach_in(self.server_id, volume_id, 'rw')
        self.wait_attached(self.server_id, volume_id)

    def test_synchronous_attach_below_2_101_is_read_write(self):
        volume_id = self.create_volume()
        resp = self.attach(self.server_id, volume_id, api=self.at('2.100'))
        self.assertNotIn('attach_mode', resp.body['volumeAttachment'])
        item = self.wait_attached(self.server_id, volume_id)
        self.assertEqual('rw', item['attach_mode'])

    def test_shelved_offloaded_attach_keeps_the_mode_for_unshelve(self):
        volume_id = self.create_volume()
        api = self.at()
        resp = api.post('/v2.1/servers/%s/action' % self.server_id,
                        body={'shelve': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(self.server_id, 'SHELVED_OFFLOADED')
        self.attach_in(self.server_id, volume_id, 'ro')
        self.wait_for_volume_status(volume_id, 'in-use')
        resp = api.post('/v2.1/servers/%s/action' % self.server_id,
                        body={'unshelve': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(self.server_id, 'ACTIVE')
        item = self.wait_attached(self.server_id, volume_id)
        host = self.show_server(self.server_id)['OS-EXT-SRV-ATTR:host']
        self.assertEqual(('ro', 'ro'), (
            item['attach_mode'],
            self.device(self.server_id, item['device'], host)['mode']))


class SharedConnectionTest(AttachModeTestCase):
    """Two servers on one host attach one multiattach volume: the host has
    one connection to it, which detaching one of them must not close."""

    def test_detach_keeps_a_shared_host_connection(self):
        other = self.create_server(name='other')
        self.assertEqual('compute1', self.instance(other).host)
        volume_id = self.create_volume(multiattach=True)
        self.attach_in(self.server_id, volume_id, 'rw')
        first = self.wait_attached(self.server_id, volume_id)
        self.attach_in(other, volume_id, 'ro')
        second = self.wait_attached(other, volume_id)
        driver = self.compute_manager().driver
        info = self.device(other, second['device'])['connection_info']
        self.assertTrue(driver.is_connected(info))

        self.detach(self.server_id, volume_id)
        system.wait_for(lambda: len(self.show_volume(volume_id)[
            'attachments']) == 1)
        # The other server's device still works: the host kept the
        # connection, and block storage still records this host.
        self.assertTrue(driver.is_connected(info))
        self.assertEqual(b'\0\0', driver.read_device(
            self.instance(other), second['device'], 2))
        self.assertNotIn(first['device'],
                         driver.guests[self.server_id].devices)
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])

        self.detach(other, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        system.wait_for(lambda: not driver.is_connected(info),
                        message='host still connected after the last '
                                'detach')

    def test_without_the_block_storage_answer_the_host_counts(self):
        """A real Cinder does not report shared connections: the host
        counts the volume's attachments on itself, as Nova does."""
        other = self.create_server(name='other')
        volume_id = self.create_volume(multiattach=True)
        self.attach_in(self.server_id, volume_id)
        self.wait_attached(self.server_id, volume_id)
        self.attach_in(other, volume_id)
        second = self.wait_attached(other, volume_id)
        manager = self.compute_manager()
        client = manager.volume_client
        original = client.attachment_delete

        def like_cinder(ctxt, attachment_id):
            original(ctxt, attachment_id)
            return {'shared_connections': None}
        self.patch(client, 'attachment_delete', like_cinder)
        info = self.device(other, second['device'])['connection_info']
        self.detach(self.server_id, volume_id)
        system.wait_for(lambda: len(self.show_volume(volume_id)[
            'attachments']) == 1)
        self.assertTrue(manager.driver.is_connected(info))
        self.detach(other, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        system.wait_for(lambda: not manager.driver.is_connected(info))


class DoneWhenTest(AttachModeTestCase):
    """The issue's scenario: one multiattach volume on three servers (two
    read-only, one read/write)."""

    def test_three_servers_two_read_only_one_read_write(self):
        servers = [self.server_id, self.create_server(name='b'),
                   self.create_server(name='c')]
        modes = ['ro', 'rw', 'ro']
        volume_id = self.create_volume(multiattach=True)
        for server_id, mode in zip(servers, modes):
            self.attach_in(server_id, volume_id, mode)
        items = [self.wait_attached(s, volume_id) for s in servers]
        self.assertEqual(modes, [i['attach_mode'] for i in items])
        for server_id, mode in zip(servers, modes):
            [listed] = self.attachments(server_id, api=self.at())
            self.assertEqual(mode, listed['attach_mode'])
        volume = self.show_volume(volume_id)
        self.assertEqual(('in-use', 3),
                         (volume['status'], len(volume['attachments'])))

        driver = self.compute_manager().driver
        ro_server, rw_server = servers[0], servers[1]
        self.assertRaises(exception.DeviceIsReadOnly, driver.write_device,
                          self.instance(ro_server), items[0]['device'],
                          b'shared')
        driver.write_device(self.instance(rw_server), items[1]['device'],
                            b'shared')
        # The read-only servers see what the read/write one wrote.
        for server_id, item in ((servers[0], items[0]),
                                (servers[2], items[2])):
            self.assertEqual(b'shared', driver.read_device(
                self.instance(server_id), item['device'], 6))

        self.detach(servers[0], volume_id)
        self.detach(servers[1], volume_id)
        system.wait_for(lambda: len(self.show_volume(volume_id)[
            'attachments']) == 1)
        volume = self.show_volume(volume_id)
        self.assertEqual('in-use', volume['status'])
        self.assertEqual([servers[2]],
                         [a['server_id'] for a in volume['attachments']])
        self.assertEqual(b'shared', driver.read_device(
            self.instance(servers[2]), items[2]['device'], 6))


class NotificationTest(AttachModeTestCase):
    def test_payload_carries_the_mode(self):
        collector = taf.NotificationCollector(self.conf)
        collector.listener.start()
        self.addCleanup(collector.listener.wait)
        self.addCleanup(collector.listener.stop)
        volume_id = self.create_volume()
        self.attach_in(self.server_id, volume_id, 'ro')
        end = collector.wait_for(volume_id, 'instance.volume_attach.end')
        payload = end[3]
        self.assertEqual('1.1', payload['nova_object.version'])
        device = payload['nova_object.data']['block_device']
        self.assertEqual('BlockDevicePayload', device['nova_object.name'])
        data = device['nova_object.data']
        self.assertEqual((volume_id, 'ro', '/dev/vdb', None, False),
                         (data['volume_id'], data['attach_mode'],
                          data['device_name'], data['boot_index'],
                          data['delete_on_termination']))
        self.detach(self.server_id, volume_id)
        end = collector.wait_for(volume_id, 'instance.volume_detach.end')
        self.assertEqual('ro', end[3]['nova_object.data']['block_device'][
            'nova_object.data']['attach_mode'])
