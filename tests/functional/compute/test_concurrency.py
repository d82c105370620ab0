"""Races are settled by the database, not by luck: concurrent attaches of
one volume to many servers leave exactly one attachment, and concurrent
attaches of many volumes to one server get distinct device names."""

import collections
import concurrent.futures
import threading

import sqlalchemy as sa

from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite.db import models
from tests.fixtures import system
from tests.functional.compute import base

N = 20


@db_api.context_manager.reader
def _mappings_of(context, volume_id):
    return context.session.execute(
        sa.select(models.BlockDeviceMapping.instance_uuid)
        .filter_by(volume_id=volume_id)).scalars().all()


class ConcurrentAttachTest(base.TestCase):
    COMPUTE_HOSTS = ['compute1', 'compute2']
    # Widen the window in which attaches overlap on a compute host; more
    # servers and volumes than the default quotas take.
    CONF = {'fake_driver.reserve_delay': 0.005, 'quota.instances': -1,
            'quota.cores': -1, 'quota.ram': -1, 'quota.volumes': -1}

    def _all_at_once(self, calls):
        barrier = threading.Barrier(len(calls))

        def run(call):
            barrier.wait()
            return call()
        with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
            return list(pool.map(run, calls))

    def _post(self, server_id, volume_id):
        return lambda: self.api.post(
            '/v2.1/servers/%s/os-volume_attachments' % server_id,
            body={'volumeAttachment': {'volumeId': volume_id}})

    def test_one_volume_to_many_servers(self):
        servers = [self.create_server(name='s%d' % i, wait=False)
                   for i in range(N)]
        for server_id in servers:
            self.wait_for_server_status(server_id, 'ACTIVE')
        volume_id = self.create_volume()
        responses = self._all_at_once(
            [self._post(s, volume_id) for s in servers])
        statuses = collections.Counter(r.status for r in responses)
        # The losers find the winner's attach pending (409 naming it) or
        # lose the unique (server, volume) race (400 "already attached").
        self.assertEqual(1, statuses[200], statuses)
        self.assertLessEqual(set(statuses), {200, 400, 409}, statuses)
        winner = [s for s, r in zip(servers, responses)
                  if r.status == 200][0]
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual([winner],
                         [a['server_id'] for a in volume['attachments']])
        self.assertEqual(
            [winner], _mappings_of(nl_context.get_admin_context(),
                                   volume_id))
        resp = self.admin_api.as_(volume_version='3.27').get(
            '/v3/attachments?volume_id=%s&all_tenants=1' % volume_id)
        self.assertEqual(1, len(resp.body['attachments']))
        for server_id in servers:
            expected = [volume_id] if server_id == winner else []
            self.assertEqual(expected, [
                a['volumeId'] for a in self.attachments(server_id)])

    def test_many_volumes_to_one_server(self):
        server_id = self.create_server()
        volumes = [self.create_volume() for _ in range(N)]
        responses = self._all_at_once(
            [self._post(server_id, v) for v in volumes])
        self.assertEqual([200] * N, [r.status for r in responses],
                         [r.text for r in responses if r.status != 200])
        devices = [r.body['volumeAttachment']['device'] for r in responses]
        self.assertEqual(N, len(set(devices)))
        self.assertNotIn('/dev/vda', devices)
        for volume_id in volumes:
            self.wait_for_volume_status(volume_id, 'in-use')
        listed = {a['volumeId']: a['device']
                  for a in self.attachments(server_id)}
        self.assertEqual(dict(zip(volumes, devices)), listed)
        guest = self.compute_manager(
            self.show_server(server_id)['OS-EXT-SRV-ATTR:host']
        ).driver.guests[server_id]
        self.assertEqual(set(devices), set(guest.devices))

    def test_many_volumes_asking_for_the_same_device(self):
        server_id = self.create_server()
        volumes = [self.create_volume() for _ in range(5)]

        def post(volume_id):
            return lambda: self.api.post(
                '/v2.1/servers/%s/os-volume_attachments' % server_id,
                body={'volumeAttachment': {'volumeId': volume_id,
                                           'device': '/dev/vdc'}})
        calls = [post(v) for v in volumes]
        responses = self._all_at_once(calls)
        devices = [r.body['volumeAttachment']['device'] for r in responses]
        self.assertEqual(5, len(set(devices)))
        self.assertEqual(1, devices.count('/dev/vdc'))
        system.wait_for(lambda: len(self.attachments(server_id)) == 5)
