"""Volumes attached to servers on both compute hosts, through the real
deployment (uWSGI API -> RabbitMQ -> conductor -> compute host), on
MariaDB and on PostgreSQL.

Modes covered: the synchronous attach (below 2.101: the API waits for the
conductor, which reserves the device name on the server's host), the
asynchronous attach (2.101: 202 at once, the conductor works after), the
asynchronous detach, and a server shelved on one host, given a volume while
offloaded, and unshelved onto the other; a multiattach volume shared by
servers on both hosts in read-only and read/write modes (2.105), detached
from two at once, and a multi-create of three servers sharing one.
"""

from tests.integration import base

# Attachment views with attachment_id and bdm_uuid.
VERSION = '2.89'
ASYNC_VERSION = '2.101'
ATTACH_MODE_VERSION = '2.105'


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
            # Findable at once at 2.105: the API wrote the mapping before
            # the 202 (2.89 to 2.104 hide it until it has an attachment).
            resp = self.api.as_(compute_version=ATTACH_MODE_VERSION).get(
                path)
            self.assertEqual(200, resp.status, resp)
            self.assertEqual(volume_id,
                             resp.body['volumeAttachment']['volumeId'])

            def attached():
                resp = api.get(path)
                if resp.status == 404:
                    return None
                item = resp.body['volumeAttachment']
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

    def test_detach_on_a_down_host_waits_for_it_unless_forced_down(self):
        # Nova's rule: a host that is only down answers 409 (silent is not
        # dead); once an administrator forces it down, the API detaches
        # without it (block storage's attachment deleted, the mapping
        # removed), and the host, when it comes back, no longer has the
        # volume.
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
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])

        admin = self.admin_api.as_(compute_version='2.53')
        [service_id] = [s['id'] for s in admin.get(
            '/v2.1/os-services').body['services']
            if s['host'] == 'compute2' and s['binary'] == 'nova-lite-compute']
        url = '/v2.1/os-services/%s' % service_id
        self.assertEqual(200, admin.put(url, body={
            'forced_down': True}).status)
        self.addCleanup(admin.put, url, body={'forced_down': False})
        resp = self.detach_volume(server_id, volume_id)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([], self.list_attachments(server_id))
        self.assertEqual([], self.show_volume(volume_id)['attachments'])

        # Let go once it is back and removed the disk (409 before).
        self.assertEqual(409, admin.put(url, body={
            'forced_down': False}).status)
        d.start('compute2')
        self.wait_for(lambda: admin.put(url, body={
            'forced_down': False}).status == 200,
            message='compute2 still holds the disk freed without it')
        self.wait_for_service_state('nova-lite-compute', 'compute2', 'up')
        self.assertEqual([], self.list_attachments(server_id))
        # The same volume attaches to the server again.
        resp = self.attach_volume(server_id, volume_id)
        self.assertEqual(200, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'in-use')

    # -- multiattach, attach modes (2.105) ---------------------------------
    def _multiattach_volume(self):
        resp = self.admin_api.post('/v3/demo/types', body={'volume_type': {
            'name': 'multiattach-%s' % self.getUniqueString(),
            'extra_specs': {'multiattach': '<is> True'}}})
        self.assertEqual(200, resp.status, resp)
        type_id = resp.body['volume_type']['id']
        self.addCleanup(self.admin_api.delete, '/v3/demo/types/%s' % type_id)
        return self.create_volume(volume_type=type_id)

    def _attachments_of(self, volume_id, moving=False):
        """{server id: (host, attach_mode)} of the volume's attachments,
        as block storage (3.54) records them. ``moving``: detaches are in
        flight, so an attachment the volume listed may be deleted before
        it is read (left out)."""
        api = self.admin_api.as_(volume_version='3.54')
        result = {}
        for item in self.show_volume(volume_id)['attachments']:
            att = api.get('/v3/demo/attachments/%s' % item['attachment_id'])
            if moving and att.status == 404:
                continue
            self.assertEqual(200, att.status, att)
            result[item['server_id']] = (item['host_name'],
                                         att.body['attachment'][
                                             'attach_mode'])
        return result

    def test_multiattach_modes_on_both_hosts(self):
        api = self.api.as_(compute_version=ATTACH_MODE_VERSION)
        by_host = self.create_server_on_each_host()
        third = self.create_server()
        self.wait_for_server_status(third, 'ACTIVE')
        third_host = self.show_server(third)['OS-EXT-SRV-ATTR:host']
        volume_id = self._multiattach_volume()
        modes = {by_host['compute1']: 'ro', by_host['compute2']: 'rw',
                 third: 'ro'}
        # All at once: the later reservations wait for the earlier ones.
        for server_id, mode in modes.items():
            resp = self.attach_volume(server_id, volume_id, api=api,
                                      attach_mode=mode)
            self.assertEqual(202, resp.status, resp)
        self.wait_for(lambda: len(self._attachments_of(volume_id)) == 3 and
                      self.show_volume(volume_id)['status'] == 'in-use',
                      message='three attachments never completed')
        for server_id in modes:
            self.wait_for_attachment(server_id, volume_id)
        hosts = {by_host['compute1']: 'compute1',
                 by_host['compute2']: 'compute2', third: third_host}
        self.assertEqual(
            {s: (hosts[s], modes[s]) for s in modes},
            self._attachments_of(volume_id))
        for server_id, mode in modes.items():
            [item] = self.list_attachments(server_id, api=api)
            self.assertEqual((volume_id, mode),
                             (item['volumeId'], item['attach_mode']))

        # Two detached at once; the third keeps the volume.
        for server_id in (by_host['compute1'], by_host['compute2']):
            resp = self.detach_volume(server_id, volume_id, api=api)
            self.assertEqual(202, resp.status, resp)
        for server_id in (by_host['compute1'], by_host['compute2']):
            self.wait_for_attachment(server_id, volume_id, present=False)
        self.wait_for(
            lambda: len(self._attachments_of(volume_id, moving=True)) == 1)
        self.assertEqual({third: (third_host, 'ro')},
                         self._attachments_of(volume_id))
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])

    def test_multi_create_sharing_a_multiattach_volume(self):
        api = self.api.as_(compute_version=ATTACH_MODE_VERSION)
        volume_id = self._multiattach_volume()
        name = 'shared-%s' % self.getUniqueString()
        resp = api.post('/v2.1/servers', body={'server': {
            'name': name, 'flavorRef': '1', 'imageRef': self.IMAGE_REF,
            'min_count': 3, 'networks': 'none',
            'block_device_mapping_v2': [
                {'source_type': 'image', 'destination_type': 'local',
                 'uuid': self.IMAGE_REF, 'boot_index': 0},
                {'source_type': 'volume', 'destination_type': 'volume',
                 'uuid': volume_id, 'attach_mode': 'ro'}]}})
        self.assertEqual(202, resp.status, resp)
        servers = [s for s in self.admin_api.get(
            '/v2.1/servers?all_tenants=1').body['servers']
            if s['name'].startswith(name)]
        self.assertEqual(3, len(servers))
        for server in servers:
            self.addCleanup(self._delete_server, server['id'])
        for server in servers:
            self.wait_for_server_status(server['id'], 'ACTIVE')
        attachments = self._attachments_of(volume_id)
        self.assertEqual({s['id'] for s in servers}, set(attachments))
        self.assertEqual({'ro'}, {m for _h, m in attachments.values()})
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])


class TestAttachMariaDB(_AttachTests, base.IntegrationTestCase):
    BACKEND = 'mysql'


class TestAttachPostgreSQL(_AttachTests, base.IntegrationTestCase):
    BACKEND = 'postgresql'
