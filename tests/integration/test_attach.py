"""Volumes attached to servers on both compute hosts, through the real
deployment (uWSGI API -> RabbitMQ -> conductor -> compute host), on
MariaDB and on PostgreSQL.

Modes covered: the synchronous attach (below 2.101: the API waits for the
conductor, which reserves the device name on the server's host) and the
asynchronous detach. The asynchronous attach (2.101), multiattach and
shelve/unshelve between hosts join this module as those features land.
"""

from tests.integration import base

# Attachment views with attachment_id and bdm_uuid.
VERSION = '2.89'


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
