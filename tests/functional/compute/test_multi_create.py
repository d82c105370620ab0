"""Server create at 2.105 (the volume-multiattach-enhancements spec):
``attach_mode`` in ``block_device_mapping_v2`` and multi-create sharing
multiattach volumes, with every refusal leaving nothing behind and every
failure released.

* the request checks (400/409) create nothing: the servers list, the
  volume's status and its attachments are as before;
* a failure while the API creates the servers rolls every server of the
  request back (all or nothing);
* at build time each server succeeds or fails on its own: one that fails
  is ERROR with a fault and gives its volumes back, the others are ACTIVE
  with their attachments ``attached``.
"""

from unittest import mock

import fixtures

from nova_lite.compute import api as compute_api
from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import objects
from tests.fixtures import system
from tests.functional import api_samples
from tests.functional.compute import base
from tests.functional.compute import test_api_samples

V2105 = '2.105'
V2104 = '2.104'


def volume_bdm(volume_id, boot_index=None, **extra):
    bdm = {'source_type': 'volume', 'destination_type': 'volume',
           'uuid': volume_id}
    if boot_index is not None:
        bdm['boot_index'] = boot_index
    bdm.update(extra)
    return bdm


class MultiCreateBase(base.TestCase):
    COMPUTE_HOSTS = ['compute1', 'compute2']

    def post_servers(self, version, bdms, count=1, image=True, api=None,
                     name='ma', **extra):
        server = {'name': name, 'flavorRef': '1', 'networks': 'none',
                  'block_device_mapping_v2': bdms}
        if image:
            server['imageRef'] = base.IMAGE
        if count > 1:
            server['min_count'] = count
        server.update(extra)
        return (api or self.api).as_(compute_version=version).post(
            '/v2.1/servers', body={'server': server})

    def servers(self, name=None):
        servers = self.admin_api.get(
            '/v2.1/servers/detail?all_tenants=1').body['servers']
        return sorted((s for s in servers
                       if name is None or s['name'].startswith(name)),
                      key=lambda s: s['name'])

    def volume_attachments(self, volume_id):
        """Every live block-storage attachment of the volume (any status),
        with its detail at 3.54 (``attach_mode``)."""
        admin = self.admin_api.as_(volume_version='3.54')
        resp = admin.get('/v3/attachments?volume_id=%s&all_tenants=1' %
                         volume_id)
        self.assertEqual(200, resp.status, resp.text)
        details = []
        for summary in resp.body['attachments']:
            shown = admin.get('/v3/attachments/%s' % summary['id'])
            if shown.status == 404:
                # Deleted between the list and the show (a cleanup running
                # while the test polls): no longer live.
                continue
            self.assertEqual(200, shown.status, shown.text)
            details.append(shown.body['attachment'])
        return details

    def mappings(self, volume_id):
        return objects.BlockDeviceMapping.get_all_by_volume(
            nl_context.get_admin_context(), volume_id)

    def guest_device(self, server, mountpoint):
        manager = self.compute_manager(server['OS-EXT-SRV-ATTR:host'])
        return manager.driver.guests[server['id']].devices[mountpoint]

    def snapshot(self, *volume_ids):
        """What a refused request must leave as it was."""
        return {
            'servers': [s['id'] for s in self.servers()],
            'volumes': {v: (self.show_volume(v)['status'],
                            sorted(a['id'] for a in
                                   self.volume_attachments(v)),
                            sorted(b.uuid for b in self.mappings(v)))
                        for v in volume_ids},
        }

    def wait_for_fault(self, server_id):
        return system.wait_for(
            lambda: (lambda s: s if s and s['status'] == 'ERROR' and
                     s.get('fault') else None)(self.show_server(server_id)),
            message='server %s never failed with a fault (last: %s)' % (
                server_id, self.show_server(server_id)))


class MultiCreateTest(MultiCreateBase):

    def test_three_servers_share_multiattach_volumes(self):
        data = self.create_volume(multiattach=True, name='data')
        logs = self.create_volume(multiattach=True, name='logs')
        resp = self.post_servers(V2105, [
            volume_bdm(data, attach_mode='ro'),
            volume_bdm(logs)], count=3)
        self.assertEqual(202, resp.status, resp.text)
        servers = [self.wait_for_server_status(s['id'], 'ACTIVE')
                   for s in self.servers('ma')]
        self.assertEqual(['ma-1', 'ma-2', 'ma-3'],
                         [s['name'] for s in servers])
        ids = {s['id'] for s in servers}
        for volume_id, mode in ((data, 'ro'), (logs, 'rw')):
            volume = self.show_volume(volume_id)
            self.assertEqual('in-use', volume['status'])
            self.assertEqual(ids, {a['server_id']
                                   for a in volume['attachments']})
            attachments = self.volume_attachments(volume_id)
            self.assertEqual(3, len(attachments))
            self.assertEqual(ids, {a['instance'] for a in attachments})
            # Each server its own attachment, attached, in the BDM's mode.
            self.assertEqual([('attached', mode)] * 3,
                             [(a['status'], a['attach_mode'])
                              for a in attachments])
            mappings = self.mappings(volume_id)
            self.assertEqual(ids, {b.instance_uuid for b in mappings})
            self.assertEqual({a['id'] for a in attachments},
                             {b.attachment_id for b in mappings})
            self.assertEqual({mode}, {b.attach_mode for b in mappings})
        for server in servers:
            self.assertEqual(
                {data, logs},
                {v['id'] for v in server[
                    'os-extended-volumes:volumes_attached']})
            by_volume = {b.volume_id: b for b in objects.BlockDeviceMapping
                         .get_all_by_instance(nl_context.get_admin_context(),
                                              server['id'])}
            # The guest got each disk in its mode.
            self.assertEqual('ro', self.guest_device(
                server, by_volume[data].device_name)['mode'])
            self.assertEqual('rw', self.guest_device(
                server, by_volume[logs].device_name)['mode'])
        # Deleting them one by one: the volume stays in-use for the others.
        for i, server in enumerate(servers):
            self.assertEqual(204, self.api.delete(
                '/v2.1/servers/%s' % server['id']).status)
            self.wait_for_server_gone(server['id'])
            left = 2 - i
            self.assertEqual(left, len(self.volume_attachments(data)))
        for volume_id in (data, logs):
            self.wait_for_volume_status(volume_id, 'available')

    def test_boot_many_from_one_read_only_root_volume(self):
        # The Scientific SIG case: one read-only multiattach root volume.
        root = self.create_volume(multiattach=True, name='root')
        resp = self.post_servers(V2105, [
            volume_bdm(root, boot_index=0, attach_mode='ro')],
            count=2, image=False, max_count=3)
        self.assertEqual(202, resp.status, resp.text)
        servers = [self.wait_for_server_status(s['id'], 'ACTIVE')
                   for s in self.servers('ma')]
        self.assertEqual(3, len(servers))
        for server in servers:
            device = self.guest_device(server, '/dev/vda')
            self.assertEqual('ro', device['mode'])
        self.assertEqual([('attached', 'ro')] * 3, [
            (a['status'], a['attach_mode'])
            for a in self.volume_attachments(root)])

    def test_in_use_multiattach_volume_is_shared_further(self):
        volume_id = self.create_volume(multiattach=True)
        first = self.create_server(
            api=self.api.as_(compute_version='2.60'),
            block_device_mapping_v2=[volume_bdm(volume_id)])
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        # One more server of it at 2.60 (upstream: Cinder decides), then
        # two at once at 2.105.
        self.create_server(api=self.api.as_(compute_version='2.60'),
                           name='second',
                           block_device_mapping_v2=[volume_bdm(volume_id)])
        resp = self.post_servers(V2105, [volume_bdm(volume_id)], count=2)
        self.assertEqual(202, resp.status, resp.text)
        for server in self.servers('ma'):
            self.wait_for_server_status(server['id'], 'ACTIVE')
        attachments = self.volume_attachments(volume_id)
        self.assertEqual(4, len(attachments))
        self.assertIn(first, {a['instance'] for a in attachments})
        self.assertEqual({'attached'}, {a['status'] for a in attachments})

    def test_default_attach_mode_is_rw_at_every_version(self):
        volume_id = self.create_volume()
        server_id = self.create_server(
            api=self.api.as_(compute_version='2.37'),
            block_device_mapping_v2=[volume_bdm(volume_id)])
        [attachment] = self.volume_attachments(volume_id)
        self.assertEqual('rw', attachment['attach_mode'])
        [bdm] = self.mappings(volume_id)
        self.assertEqual((server_id, 'rw'), (bdm.instance_uuid,
                                             bdm.attach_mode))

    def test_single_server_attach_mode(self):
        volume_id = self.create_volume()
        resp = self.post_servers(V2105, [
            volume_bdm(volume_id, boot_index=0, attach_mode='ro')],
            image=False)
        self.assertEqual(202, resp.status, resp.text)
        server = self.wait_for_server_status(resp.body['server']['id'],
                                             'ACTIVE')
        self.assertEqual('ro', self.guest_device(server, '/dev/vda')['mode'])
        [attachment] = self.volume_attachments(volume_id)
        self.assertEqual(('attached', 'ro'), (attachment['status'],
                                              attachment['attach_mode']))


class RefusedTest(MultiCreateBase):
    """Each refusal is a 4xx that creates nothing."""

    def setUp(self):
        super().setUp()
        self.existing = self.create_server(name='existing')
        self.ma = self.create_volume(multiattach=True)
        self.plain = self.create_volume()

    def assertRefused(self, status, message, version, bdms, **kwargs):
        before = self.snapshot(self.ma, self.plain)
        resp = self.post_servers(version, bdms, **kwargs)
        self.assertEqual(status, resp.status, resp.text)
        fault = list(resp.body.values())[0]
        self.assertIn(message, fault['message'])
        self.assertEqual(before, self.snapshot(self.ma, self.plain))
        return resp

    def test_multi_create_below_2_105(self):
        for version in (V2104, '2.60'):
            self.assertRefused(
                400, 'Cannot attach one or more volumes to multiple '
                'instances', version, [volume_bdm(self.ma)], count=3)
        self.assertRefused(
            400, 'Cannot attach one or more volumes to multiple instances',
            V2104, [volume_bdm(self.ma)], max_count=2)

    def test_multi_create_with_a_non_multiattach_volume(self):
        resp = self.assertRefused(
            400, 'Cannot attach one or more volumes to multiple instances',
            V2105, [volume_bdm(self.ma), volume_bdm(self.plain)], count=2)
        self.assertIn('volume %s is not multiattach' % self.plain,
                      resp.body['badRequest']['message'])

    def test_attach_mode_needs_2_105(self):
        self.assertRefused(
            400, "Additional properties are not allowed ('attach_mode' was "
            "unexpected)", V2104,
            [volume_bdm(self.plain, attach_mode='rw')])

    def test_attach_mode_values(self):
        self.assertRefused(
            400, "Invalid input for field/attribute "
            "server/block_device_mapping_v2/0/attach_mode", V2105,
            [volume_bdm(self.plain, attach_mode='wo')])
        self.assertRefused(
            400, "attach_mode", V2105,
            [volume_bdm(self.plain, attach_mode=None)])

    def test_attach_mode_with_a_local_destination(self):
        message = ('attach_mode is only supported with '
                   'destination_type=volume')
        self.assertRefused(
            400, message, V2105,
            [{'source_type': 'image', 'uuid': base.IMAGE, 'boot_index': 0,
              'destination_type': 'local', 'attach_mode': 'rw'},
             volume_bdm(self.plain)])
        self.assertRefused(
            400, message, V2105,
            [{'source_type': 'blank', 'destination_type': 'local',
              'attach_mode': 'ro'}])

    def test_read_only_needs_new_compute_hosts(self):
        self.update_compute_services(version=1)
        self.assertRefused(
            409, 'Some compute hosts are too old to attach volumes '
            'read-only', V2105, [volume_bdm(self.ma, attach_mode='ro')],
            count=2)
        self.assertRefused(
            409, 'too old', V2105,
            [volume_bdm(self.plain, boot_index=0, attach_mode='ro')],
            image=False)
        # Read/write is what those hosts do anyway.
        resp = self.post_servers(V2105, [
            volume_bdm(self.ma, attach_mode='rw')], count=2)
        self.assertEqual(202, resp.status, resp.text)
        for server in self.servers('ma'):
            self.wait_for_server_status(server['id'], 'ACTIVE')

    def test_multiattach_needs_2_60(self):
        self.assertRefused(
            400, 'Multiattach volumes are only supported starting with '
            'compute API version 2.60', '2.59', [volume_bdm(self.ma)])

    def test_reserved_multiattach_volume(self):
        # Block storage takes no reservation while another is pending.
        admin = self.admin_api.as_(volume_version='3.27')
        resp = admin.post('/v3/attachments', body={'attachment': {
            'volume_uuid': self.ma,
            'instance_uuid': self.existing}})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual('reserved', self.show_volume(self.ma)['status'])
        self.assertRefused(400, 'the current status is reserved', V2105,
                           [volume_bdm(self.ma)], count=2)


class FailuresTest(MultiCreateBase):

    def setUp(self):
        super().setUp()
        self.volume_id = self.create_volume(multiattach=True)

    def test_api_failure_rolls_every_server_back(self):
        # The volume already serves a server: "unchanged" is in-use with
        # that one attachment.
        other = self.create_server(
            name='other', api=self.api.as_(compute_version='2.60'),
            block_device_mapping_v2=[volume_bdm(self.volume_id)])
        before = self.snapshot(self.volume_id)
        api = compute_api.get_api(self.conf)
        client = api.volume_client
        real = client.attachment_create
        calls = []

        def second_fails(*args, **kwargs):
            calls.append(args[2])  # the server's uuid
            if len(calls) == 2:
                raise exception.InvalidVolume(reason='injected failure')
            return real(*args, **kwargs)
        with mock.patch.object(client, 'attachment_create',
                               side_effect=second_fails):
            resp = self.post_servers(V2105, [volume_bdm(self.volume_id)],
                                     count=3)
        self.assertEqual(400, resp.status, resp.text)
        self.assertIn('injected failure', resp.body['badRequest']['message'])
        self.assertEqual(2, len(calls))
        self.assertEqual(before, self.snapshot(self.volume_id))
        self.assertEqual(['other'], [s['name'] for s in self.servers()])
        self.assertEqual('in-use', self.show_volume(self.volume_id)['status'])
        [attachment] = self.volume_attachments(self.volume_id)
        self.assertEqual(other, attachment['instance'])
        # Neither server of the request kept a mapping.
        ctxt = nl_context.get_admin_context()
        for uuid in calls:
            self.assertEqual(
                [], objects.BlockDeviceMapping.get_all_by_instance(ctxt,
                                                                   uuid))

    def test_api_failure_on_an_available_volume(self):
        before = self.snapshot(self.volume_id)
        client = compute_api.get_api(self.conf).volume_client
        real = client.attachment_complete
        calls = []

        def second_fails(*args, **kwargs):
            calls.append(args[1])
            if len(calls) == 2:
                raise exception.VolumeBackendAPIException(data='injected')
            return real(*args, **kwargs)
        with mock.patch.object(client, 'attachment_complete',
                               side_effect=second_fails):
            resp = self.post_servers(V2105, [volume_bdm(self.volume_id)],
                                     count=3)
        self.assertEqual(500, resp.status, resp.text)
        self.assertEqual(before, self.snapshot(self.volume_id))
        self.assertEqual('available',
                         self.show_volume(self.volume_id)['status'])
        self.assertEqual([], self.servers())

    def fail_spawn_of(self, name):
        """Every host's driver fails to spawn the server named ``name``,
        after it has made the guest and connected its volumes (what a
        guest that crashes while booting leaves)."""
        for host in self.COMPUTE_HOSTS:
            driver = self.compute_manager(host).driver

            def spawn(context, instance, disks, real=driver.spawn):
                real(context, instance, disks)
                if instance.display_name == name:
                    raise exception.NovaLiteException(
                        message='injected: the hypervisor cannot start %s' %
                        name)
            self.useFixture(fixtures.MockPatchObject(driver, 'spawn', spawn))

    def test_one_server_fails_to_build(self):
        self.fail_spawn_of('ma-3')
        resp = self.post_servers(V2105, [
            volume_bdm(self.volume_id, attach_mode='ro')], count=3)
        self.assertEqual(202, resp.status, resp.text)
        servers = {s['name']: s['id'] for s in self.servers('ma')}
        failed = self.wait_for_fault(servers['ma-3'])
        self.assertIn('injected: the hypervisor cannot start ma-3',
                      failed['fault']['message'])
        self.assertEqual([], failed['os-extended-volumes:volumes_attached'])
        good = [self.wait_for_server_status(servers[n], 'ACTIVE')
                for n in ('ma-1', 'ma-2')]
        good_ids = {s['id'] for s in good}
        volume = self.show_volume(self.volume_id)
        self.assertEqual('in-use', volume['status'])
        self.assertEqual(good_ids, {a['server_id']
                                    for a in volume['attachments']})
        attachments = self.volume_attachments(self.volume_id)
        self.assertEqual(good_ids, {a['instance'] for a in attachments})
        self.assertEqual({('attached', 'ro')},
                         {(a['status'], a['attach_mode'])
                          for a in attachments})
        self.assertEqual(good_ids, {b.instance_uuid
                                    for b in self.mappings(self.volume_id)})
        # No guest of the failed server anywhere. It was built on ma-1's
        # host (fewest servers, then registration order): the connection
        # of that host, which ma-1 still uses, was kept.
        for host in self.COMPUTE_HOSTS:
            self.assertNotIn(failed['id'],
                             self.compute_manager(host).driver.guests)
        self.assertEqual(good[0]['OS-EXT-SRV-ATTR:host'],
                         failed['OS-EXT-SRV-ATTR:host'])
        driver = self.compute_manager(good[0]['OS-EXT-SRV-ATTR:host']).driver
        self.assertEqual(b'\0' * 4, driver.read_device(
            objects.Instance.get_by_uuid(nl_context.get_admin_context(),
                                         good[0]['id']), '/dev/vdb', 4))
        # Deleting the failed server works and touches nothing else.
        self.assertEqual(204, self.api.delete(
            '/v2.1/servers/%s' % failed['id']).status)
        self.wait_for_server_gone(failed['id'])
        self.assertEqual(good_ids, {a['instance'] for a in
                                    self.volume_attachments(self.volume_id)})
        self.assertEqual('in-use', self.show_volume(self.volume_id)['status'])

    def test_failed_build_gives_the_volume_back(self):
        # Not shared, delete_on_termination: the volume is released, not
        # deleted, and free for another server at once.
        volume_id = self.create_volume()
        self.fail_spawn_of('lonely')
        resp = self.post_servers(V2105, [
            volume_bdm(volume_id, boot_index=0,
                       delete_on_termination=True)],
            image=False, name='lonely')
        self.assertEqual(202, resp.status, resp.text)
        server_id = resp.body['server']['id']
        server = self.wait_for_fault(server_id)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        # The guest is gone and its host no longer connected to anything.
        driver = self.compute_manager(server['OS-EXT-SRV-ATTR:host']).driver
        self.assertNotIn(server_id, driver.guests)
        self.assertEqual({}, driver.host_connections)
        self.assertEqual([], self.volume_attachments(volume_id))
        self.assertEqual([], self.mappings(volume_id))
        self.assertEqual(204, self.api.delete(
            '/v2.1/servers/%s' % server_id).status)
        self.wait_for_server_gone(server_id)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.create_server(name='again',
                           block_device_mapping_v2=[volume_bdm(volume_id)])
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])

    def test_connect_failure_of_one_server(self):
        # Block storage refuses one server's connection: that attachment
        # (error_attaching) is deleted too.
        client = self.compute_manager('compute1').volume_client
        real = client.attachment_update
        failing = []

        def update(ctxt, attachment_id, connector, mountpoint=None):
            attachment = client.attachment_get(ctxt, attachment_id)
            server = self.show_server(attachment['instance'])
            if server['name'] == 'ma-1':
                failing.append(attachment_id)
                raise exception.VolumeBackendAPIException(
                    data='injected: no export for %s' % server['name'])
            return real(ctxt, attachment_id, connector,
                        mountpoint=mountpoint)
        for host in self.COMPUTE_HOSTS:
            self.useFixture(fixtures.MockPatchObject(
                self.compute_manager(host).volume_client, 'attachment_update',
                update))
        resp = self.post_servers(V2105, [volume_bdm(self.volume_id)],
                                 count=2)
        self.assertEqual(202, resp.status, resp.text)
        servers = {s['name']: s['id'] for s in self.servers('ma')}
        failed = self.wait_for_fault(servers['ma-1'])
        self.assertIn('injected: no export for ma-1',
                      failed['fault']['message'])
        self.wait_for_server_status(servers['ma-2'], 'ACTIVE')
        self.assertEqual(1, len(failing))
        [attachment] = self.volume_attachments(self.volume_id)
        self.assertEqual((servers['ma-2'], 'attached'),
                         (attachment['instance'], attachment['status']))
        self.assertEqual('in-use', self.show_volume(self.volume_id)['status'])


class SamplesTest(api_samples.SampleAssertions, MultiCreateBase):
    """api-ref samples of server create at 2.105 (written with
    NOVA_LITE_WRITE_SAMPLES=1)."""

    def test_samples(self):
        self.scrub = test_api_samples.Scrubber('http://localhost')
        volume_id = self.create_volume(multiattach=True, name='shared')
        body = {'server': {
            'name': 'worker', 'flavorRef': '1', 'imageRef': '',
            'networks': 'none', 'min_count': 3,
            'block_device_mapping_v2': [volume_bdm(
                volume_id, boot_index=0, attach_mode='ro')]}}
        self._sample('servers/v2.105',
                     'server-create-multiattach-multi-create-req.json', body)
        resp = self.api.as_(compute_version=V2105).post('/v2.1/servers',
                                                        body=body)
        self.assertEqual(202, resp.status, resp.text)
        self._sample('servers/v2.105',
                     'server-create-multiattach-multi-create-resp.json',
                     resp.body)
        for server in self.servers('worker'):
            self.wait_for_server_status(server['id'], 'ACTIVE')


class NoValidHostTest(MultiCreateBase):
    def test_unscheduled_servers_give_their_volumes_back(self):
        volume_id = self.create_volume(multiattach=True)
        self.update_compute_services(disabled=True)
        resp = self.post_servers(V2105, [volume_bdm(volume_id)], count=2)
        self.assertEqual(202, resp.status, resp.text)
        for server in self.servers('ma'):
            server = self.wait_for_server_status(server['id'], 'ERROR')
            self.assertIn('No valid host', server['fault']['message'])
        system.wait_for(lambda: not self.volume_attachments(volume_id),
                        message='attachments of unscheduled servers kept')
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], self.mappings(volume_id))
