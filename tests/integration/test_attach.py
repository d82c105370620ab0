"""Volumes attached to servers on both compute hosts, through the real
deployment (uWSGI API -> RabbitMQ -> conductor -> compute host), on
MariaDB and on PostgreSQL.

Modes covered: the synchronous attach (below 2.101: the API waits for the
conductor, which reserves the device name on the server's host), the
asynchronous attach (2.101: 202 at once, the conductor works after), the
asynchronous detach, and a server shelved on one host, given a volume while
offloaded, and unshelved onto the other. Multiattach joins this module as
it lands.
"""

from tests.integration import base

# Attachment views with attachment_id and bdm_uuid.
VERSION = '2.89'
ASYNC_VERSION = '2.101'


class _AttachTests(object):

    def test_attach_list_detach_on_both_hosts(self):
        api = self.api.as_(compute_version=VERSION)
        servers = self.create_server_on_each_host()
        for host, server_id in sorted(servers.items()):
            volume_id = self.create_volume()
            resp = self.attach_volume(server_id, volume_id, api=api)
            self.assertEqual(200, resp.status, resp)
            attachment = resp.body['volumeAttachment']
            self.assertEqual(
                (volume_id, server_id, '/dev/vdb'),
                (attachment['volumeId'], attachment['serverId'],
                 attachment['device']))
            volume = self.wait_for_volume_status(volume_id, 'in-use')
            self.assertEqual(
                [(server_id, host, '/dev/vdb')],
                [(a['server_id'], a['host_name'], a['device'])
                 for a in volume['attachments']])
            listed = self.list_attachments(server_id, api=api)
            self.assertEqual(
                [(volume_id, '/dev/vdb',
                  volume['attachments'][0]['attachment_id'])],
                [(a['volumeId'], a['device'], a['attachment_id'])
                 for a in listed])

            resp = self.detach_volume(server_id, volume_id, api=api)
            self.assertEqual(202, resp.status, resp)
            self.wait_for_attachment(server_id, volume_id, present=False)
            volume = self.wait_for_volume_status(volume_id, 'available')
            self.assertEqual([], volume['attachments'])

    def test_async_attach_poll_detach_on_both_hosts(self):
        api = self.api.as_(compute_version=ASYNC_VERSION)
        servers = self.create_server_on_each_host()
        for host, server_id in sorted(servers.items()):
            volume_id = self.create_volume()
            resp = self.attach_volume(server_id, volume_id, api=api)
            self.assertEqual(202, resp.status, resp)
            self.assertEqual('', resp.text)
            location = resp.headers['Location']
            self.assertTrue(location.endswith(
                '/v2.1/servers/%s/os-volume_attachments/%s' % (
                    server_id, volume_id)), location)
            path = location[len(self.deployment.base_url):]
            # Findable at once: the API wrote the mapping before the 202.
            resp = api.get(path)
            self.assertEqual(200, resp.status, resp)
            self.assertEqual(volume_id,
                             resp.body['volumeAttachment']['volumeId'])

            def attached():
                item = api.get(path).body['volumeAttachment']
                return item if item.get('device') and \
                    item['attachment_id'] else None
            item = self.wait_for(attached, message='attach of %s to %s '
                                 'never completed' % (volume_id, server_id))
            self.assertEqual('/dev/vdb', item['device'])
            volume = self.wait_for_volume_status(volume_id, 'in-use')
            self.assertEqual(
                [(server_id, host, '/dev/vdb', item['attachment_id'])],
                [(a['server_id'], a['host_name'], a['device'],
                  a['attachment_id']) for a in volume['attachments']])

            resp = self.detach_volume(server_id, volume_id, api=api)
            self.assertEqual(202, resp.status, resp)
            self.wait_for_attachment(server_id, volume_id, present=False)
            self.wait_for_volume_status(volume_id, 'available')

    def test_async_failure_is_recorded(self):
        # A second non-multiattach attach of a volume that another server
        # holds, sent past Nova's guard by going straight to block
        # storage first: the conductor's reservation fails after the 202.
        api = self.api.as_(compute_version=ASYNC_VERSION)
        servers = self.create_server_on_each_host()
        first, second = sorted(servers.values())
        volume_id = self.create_volume()
        resp = self.api.as_(volume_version='3.27').post(
            '/v3/demo/attachments', body={'attachment': {
                'volume_uuid': volume_id, 'instance_uuid': first}})
        self.assertEqual(200, resp.status, resp)
        attachment_id = resp.body['attachment']['id']
        resp = self.attach_volume(second, volume_id, api=api)
        self.assertEqual(202, resp.status, resp)
        admin = self.admin_api.as_(compute_version='2.84')
        url = '/v2.1/servers/%s/os-instance-actions' % second

        def failed_event():
            actions = admin.get(url).body['instanceActions']
            for action in actions:
                if action['action'] != 'attach_volume':
                    continue
                detail = admin.get('%s/%s' % (url, action['request_id']))
                for event in detail.body['instanceAction']['events']:
                    if event['result'] == 'Error':
                        return event
            return None
        event = self.wait_for(failed_event)
        self.assertEqual('conductor_attach_volume', event['event'])
        self.assertIn('Invalid volume', event['details'])
        self.wait_for_attachment(second, volume_id, present=False)
        self.assertEqual(404, api.get(
            '/v2.1/servers/%s/os-volume_attachments/%s' % (
                second, volume_id)).status)
        resp = self.api.as_(volume_version='3.27').delete(
            '/v3/demo/attachments/%s' % attachment_id)
        self.assertEqual(200, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'available')

    def test_shelve_attach_while_offloaded_unshelve_on_the_other_host(self):
        # [DEFAULT] shelved_offload_time is 0: shelve offloads at once.
        api = self.api.as_(compute_version=ASYNC_VERSION)
        admin = self.admin_api.as_(compute_version=ASYNC_VERSION)
        servers = self.create_server_on_each_host()
        server_id = servers['compute1']
        before = self.create_volume()
        self.assertEqual(202, self.attach_volume(server_id, before,
                                                 api=api).status)
        self.wait_for_volume_status(before, 'in-use')

        self.server_action(server_id, {'shelve': None})
        server = self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        # Still attached, connected to no host.
        volume = self.show_volume(before)
        self.assertEqual(('in-use', [None]), (
            volume['status'], [a['host_name'] for a in volume['attachments']]))

        during = self.create_volume()
        self.assertEqual(202, self.attach_volume(server_id, during,
                                                 api=api).status)
        self.wait_for_volume_status(during, 'in-use')

        resp = admin.post('/v2.1/servers/%s/action' % server_id,
                          body={'unshelve': {'host': 'compute2'}})
        self.assertEqual(202, resp.status, resp)
        server = self.wait_for_server_status(server_id, 'ACTIVE',
                                             host='compute2')
        devices = {}
        for volume_id in (before, during):
            volume = self.wait_for_volume_status(volume_id, 'in-use')
            [attachment] = volume['attachments']
            self.assertEqual((server_id, 'compute2'),
                             (attachment['server_id'],
                              attachment['host_name']))
            devices[volume_id] = attachment['device']
        self.assertEqual({before: '/dev/vdb', during: '/dev/vdc'}, devices)
        listed = self.list_attachments(server_id, api=api)
        self.assertEqual(devices, {a['volumeId']: a['device']
                                   for a in listed})

        for volume_id in (before, during):
            self.assertEqual(202, self.detach_volume(
                server_id, volume_id, api=api).status)
            self.wait_for_volume_status(volume_id, 'available')

    def test_detach_needs_the_host_up(self):
        d = self.deployment
        server_id = self.create_server_on_each_host()['compute2']
        volume_id = self.create_volume()
        resp = self.attach_volume(server_id, volume_id)
        self.assertEqual(200, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'in-use')

        self.assertTrue(d.stop('compute2'))
        self.wait_for_service_state('nova-lite-compute', 'compute2', 'down')
        resp = self.detach_volume(server_id, volume_id)
        self.assertEqual(409, resp.status, resp)
        self.assertIn('compute2', resp.body['conflictingRequest']['message'])
        # Refused before anything moved.
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        self.assertEqual([volume_id], [
            a['volumeId'] for a in self.list_attachments(server_id)])

        d.start('compute2')
        self.wait_for_service_state('nova-lite-compute', 'compute2', 'up')
        resp = self.detach_volume(server_id, volume_id)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_attachment(server_id, volume_id, present=False)
        self.wait_for_volume_status(volume_id, 'available')


class TestAttachMariaDB(_AttachTests, base.IntegrationTestCase):
    BACKEND = 'mysql'


class TestAttachPostgreSQL(_AttachTests, base.IntegrationTestCase):
    BACKEND = 'postgresql'
