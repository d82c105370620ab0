"""Microversion 2.101: the asynchronous attach (async-volume-attachments).

One test class per guarantee of the issue:

1. 202, empty body, ``Location`` at once, and below 2.101 the same
   conductor workflow is called;
2. the API never waits on a compute host or on block storage;
3. the attachment is findable right after the 202, and a failure after it
   is visible (instance action event, fault) and leaves nothing behind;
4. concurrent asynchronous attaches keep the guarantees of the synchronous
   ones.

A busy compute host is made with ``reservations_held`` (its reservations
wait until the test lets them go); everything else polls with a deadline.
"""

import collections
import concurrent.futures
import threading
from unittest import mock

import oslo_messaging as messaging

from nova_lite.compute import api as compute_api
from nova_lite import context as nl_context
from nova_lite import objects
from nova_lite.volume_service import drivers
from tests.fixtures import system
from tests.functional.compute import base
from tests.functional.compute import test_servers

ASYNC = '2.101'
# The first view that shows an attach before block storage reserved the
# volume (attachment_id null): nova_lite's 2.105.
PENDING_VIEW = '2.105'


class AsyncTestCase(base.TestCase):
    # A test that fails while the conductor waits on a host would otherwise
    # hang its teardown for the default 30 minutes.
    CONF = {'long_rpc_timeout': 20}

    def setUp(self):
        super().setUp()
        self.server_id = self.create_server()

    def url(self, volume_id=None, server_id=None):
        url = '/v2.1/servers/%s/os-volume_attachments' % (
            server_id or self.server_id)
        return url + ('/%s' % volume_id if volume_id else '')

    def at(self, version, api=None):
        return (api or self.api).as_(compute_version=version)

    def attach_async(self, volume_id, server_id=None, api=None, expect=202,
                     **extra):
        return self.attach(server_id or self.server_id, volume_id,
                           api=self.at(ASYNC, api), expect=expect, **extra)

    def show(self, volume_id, version=ASYNC, server_id=None):
        return self.at(version).get(self.url(volume_id, server_id))

    def wait_attached(self, volume_id, server_id=None):
        """The attachment once it is complete (device and attachment)."""
        def done():
            resp = self.show(volume_id, server_id=server_id)
            item = resp.body['volumeAttachment'] if resp.status == 200 \
                else {}
            return item if item.get('device') and item.get(
                'attachment_id') else None
        item = system.wait_for(done, message='attach of %s never '
                               'completed' % volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        return item

    def attach_actions(self, server_id=None):
        resp = self.admin_api.as_(compute_version='2.84').get(
            '/v2.1/servers/%s/os-instance-actions' % (
                server_id or self.server_id))
        return [a for a in resp.body['instanceActions']
                if a['action'] == 'attach_volume']

    def action(self, request_id, server_id=None):
        return self.admin_api.as_(compute_version='2.84').get(
            '/v2.1/servers/%s/os-instance-actions/%s' % (
                server_id or self.server_id, request_id)).body[
                    'instanceAction']

    def wait_failed(self, event_name):
        """The attach action once its ``event_name`` event failed."""
        def failed():
            for action in self.attach_actions():
                detail = self.action(action['request_id'])
                for event in detail['events']:
                    if event['event'] == event_name and \
                            event['result'] == 'Error':
                        return detail, event
            return None
        return system.wait_for(failed, message='no failed %s event' %
                               event_name)

    def assert_nothing_left(self, volume_id):
        self.wait_for_volume_status(volume_id, 'available')
        system.wait_for(lambda: self.show(volume_id).status == 404)
        self.assertEqual(404, self.show(volume_id, '2.1').status)
        resp = self.admin_api.as_(volume_version='3.27').get(
            '/v3/attachments?volume_id=%s&all_tenants=1' % volume_id)
        self.assertEqual([], resp.body['attachments'])
        self.assertEqual([], self.show_volume(volume_id)['attachments'])


class ResponseTest(AsyncTestCase):
    def test_202_empty_body_and_location(self):
        volume_id = self.create_volume()
        resp = self.attach_async(volume_id)
        self.assertEqual('', resp.text)
        self.assertIsNone(resp.body)
        self.assertEqual('http://localhost' + self.url(volume_id),
                         resp.headers['Location'])
        self.assertEqual('compute 2.101',
                         resp.headers['OpenStack-API-Version'])
        item = self.wait_attached(volume_id)
        self.assertEqual('/dev/vdb', item['device'])

    def test_location_keeps_the_project_segment(self):
        volume_id = self.create_volume()
        resp = self.at(ASYNC).post(
            '/v2.1/demo/servers/%s/os-volume_attachments' % self.server_id,
            body={'volumeAttachment': {'volumeId': volume_id}})
        self.assertEqual(202, resp.status, resp.text)
        self.assertTrue(resp.headers['Location'].endswith(
            '/v2.1/demo/servers/%s/os-volume_attachments/%s' % (
                self.server_id, volume_id)))
        self.wait_attached(volume_id)

    def test_fast_checks_still_answer_at_once(self):
        volume_id = self.create_volume()
        self.attach_async(base.IMAGE, expect=404)
        self.attach_async(volume_id, server_id=base.IMAGE, expect=404)
        self.attach_async(volume_id, device='vdc', expect=400)
        self.attach_async(volume_id, expect=400, bogus=1)
        self.api.post('/v2.1/servers/%s/action' % self.server_id,
                      body={'lock': None})
        self.attach_async(volume_id, expect=409)
        self.attach_async(volume_id, api=self.admin_api)
        self.wait_attached(volume_id)
        resp = self.attach_async(volume_id, api=self.admin_api, expect=400)
        self.assertIn('already attached', resp.text)
        # None of the refused requests left a mapping behind.
        self.assertEqual([volume_id], [
            a['volumeId'] for a in self.attachments(self.server_id)])

    def test_shelved_offloaded_server(self):
        test_servers.set_instance(self.server_id,
                                  vm_state='shelved_offloaded', host=None)
        volume_id = self.create_volume()
        self.attach_async(volume_id)
        # No host to ask: the conductor reserves and completes the
        # attachment without a connector.
        self.wait_for_volume_status(volume_id, 'in-use')
        item = system.wait_for(lambda: (lambda r: r.body[
            'volumeAttachment'] if r.status == 200 and r.body[
                'volumeAttachment']['attachment_id'] else None)(
                    self.show(volume_id)))
        self.assertNotIn('device', item)
        self.attach_async(self.create_volume(), tag='x', expect=400)

    def test_sync_below_2_101_runs_the_same_workflow(self):
        volume_id = self.create_volume()
        resp = self.attach(self.server_id, volume_id,
                           api=self.at('2.100'))
        self.assertEqual('/dev/vdb', resp.body['volumeAttachment']['device'])
        self.wait_for_volume_status(volume_id, 'in-use')
        async_volume = self.create_volume()
        self.attach_async(async_volume)
        self.wait_attached(async_volume)
        # Both attaches went through the conductor's workflow, recorded
        # with the same events.
        for action in self.attach_actions():
            events = self.action(action['request_id'])['events']
            self.assertEqual(
                ['compute_attach_volume', 'conductor_attach_volume'],
                [e['event'] for e in events])

    def test_sync_request_is_listed_while_the_host_works(self):
        # The mapping exists before the conductor runs, in both modes: a
        # synchronous request waiting on a busy host is visible at 2.101.
        volume_id = self.create_volume()
        results = []
        with self.reservations_held() as waiting:
            thread = threading.Thread(target=lambda: results.append(
                self.attach(self.server_id, volume_id,
                            api=self.at('2.100'))))
            thread.start()
            system.wait_for(lambda: waiting)
            item = self.show(volume_id, PENDING_VIEW).body[
                'volumeAttachment']
            self.assertIsNone(item['attachment_id'])
        thread.join(30)
        self.assertEqual(200, results[0].status)
        self.wait_attached(volume_id)


class NoWaitTest(AsyncTestCase):
    """Nothing on the 2.101 path waits on a compute host or storage."""

    def test_answers_while_the_host_is_busy(self):
        volume_id = self.create_volume()
        with self.reservations_held() as waiting:
            self.attach_async(volume_id)
            # The host has not even chosen a device name.
            system.wait_for(lambda: waiting)
            item = self.show(volume_id, PENDING_VIEW).body[
                'volumeAttachment']
            self.assertNotIn('device', item)
        self.wait_attached(volume_id)

    def test_no_rpc_call_and_no_storage_change_in_the_api(self):
        volumes = compute_api.get_api(self.conf).volumes
        volume_id = self.create_volume()
        storage_calls = []
        real_volume_client = volumes.volume_client

        class Recorder(object):
            def __getattr__(self, name):
                storage_calls.append(name)
                return getattr(real_volume_client, name)
        # The in-process API serves the request on this thread; the
        # services have threads of their own.
        request_thread = threading.current_thread()
        sent = []
        context_class = messaging.rpc.client._BaseCallContext

        def spy(kind):
            real = getattr(context_class, kind)

            def send(context, ctxt, method, **kwargs):
                if threading.current_thread() is request_thread:
                    sent.append((kind, context.target.topic, method))
                return real(context, ctxt, method, **kwargs)
            return send
        with mock.patch.object(volumes, 'volume_client', Recorder()), \
                mock.patch.object(context_class, 'call', spy('call')), \
                mock.patch.object(context_class, 'cast', spy('cast')):
            self.attach_async(volume_id)
        # One cast to the conductor: no call, nothing to a compute host.
        self.assertEqual([('cast', 'conductor', 'attach_volume')], sent)
        # Block storage: only the volume was read.
        self.assertEqual(['get'], storage_calls)
        self.wait_attached(volume_id)


class FindableTest(AsyncTestCase):
    def test_views_while_in_progress(self):
        volume_id = self.create_volume()
        with self.reservations_held() as waiting:
            self.attach_async(volume_id)
            system.wait_for(lambda: waiting)
            shown = self.show(volume_id, PENDING_VIEW)
            self.assertEqual(200, shown.status)
            item = shown.body['volumeAttachment']
            self.assertEqual(
                {'volumeId': volume_id, 'serverId': self.server_id,
                 'tag': None, 'delete_on_termination': False,
                 'attachment_id': None, 'attach_mode': 'rw'},
                {k: v for k, v in item.items() if k != 'bdm_uuid'})
            self.assertEqual([item], self.attachments(
                self.server_id, api=self.at(PENDING_VIEW)))
            # 2.89 to 2.104 require an attachment id: hidden there, as
            # Nova hides mappings without one (404 on show, left out of
            # the list), the URL a 2.101 attach returns included.
            for version in ('2.89', '2.100', ASYNC, '2.104'):
                self.assertEqual(404, self.show(volume_id, version).status)
                self.assertEqual([], self.attachments(
                    self.server_id, api=self.at(version)))
            # Below 2.89: listed, without a device yet.
            old = self.show(volume_id, '2.1').body['volumeAttachment']
            self.assertEqual({'id', 'volumeId', 'serverId'}, set(old))
            # A second request for the same pair finds its attach
            # pending: 409 naming it.
            resp = self.attach_async(volume_id, expect=409)
            self.assertIn('busy with another operation (attaching)',
                          resp.text)
        item = self.wait_attached(volume_id)
        self.assertEqual('/dev/vdb', item['device'])
        self.assertEqual(
            self.show_volume(volume_id)['attachments'][0]['attachment_id'],
            item['attachment_id'])
        self.assertEqual(item, self.show(volume_id, '2.100').body[
            'volumeAttachment'])

    def test_detach_after_async_attach(self):
        volume_id = self.create_volume()
        self.attach_async(volume_id)
        self.wait_attached(volume_id)
        self.detach(self.server_id, volume_id, api=self.at(ASYNC))
        self.wait_for_volume_status(volume_id, 'available')
        system.wait_for(lambda: self.show(volume_id).status == 404)


class FailureAfter202Test(AsyncTestCase):
    # The fake backend: its connections can be made to fail at run time.
    CONF = dict(AsyncTestCase.CONF, **{'volume.enabled_backends': ['fake']})

    def setUp(self):
        super().setUp()
        drivers.register_backend_opts(self.conf)

    def latest_fault(self):
        faults = objects.InstanceFault.get_latest_for_instances(
            nl_context.get_admin_context(), [self.server_id])
        return faults[self.server_id]

    def test_host_refuses_the_reservation(self):
        self.conf.set_override('max_disk_devices_to_attach', 1,
                               group='compute')
        volume_id = self.create_volume()
        self.attach_async(volume_id)
        action, event = self.wait_failed('conductor_attach_volume')
        self.assertEqual('Error', action['message'])
        self.assertIn('number of disk devices (1)',
                      event['details'])
        self.assertIn('TooManyDiskDevices', event['traceback'])
        self.assert_nothing_left(volume_id)
        self.assertEqual(403, self.latest_fault().code)
        # The owner sees the failed step too (without the traceback).
        mine = self.at('2.84').get(
            '/v2.1/servers/%s/os-instance-actions/%s' % (
                self.server_id, action['request_id'])).body[
                    'instanceAction']
        self.assertEqual(('conductor_attach_volume', 'Error'),
                         (mine['events'][0]['event'],
                          mine['events'][0]['result']))

    def test_driver_cannot_multiattach(self):
        volume_id = self.create_volume(multiattach=True)
        driver = self.compute_manager().driver
        with mock.patch.dict(driver.capabilities,
                             {'supports_multiattach': False}):
            self.attach_async(volume_id)
            _action, event = self.wait_failed('conductor_attach_volume')
        self.assertIn("has 'multiattach' set", event['details'])
        self.assert_nothing_left(volume_id)

    def test_backend_fails_to_connect(self):
        volume_id = self.create_volume()
        self.conf.set_override('fail_connect', True, group='fake')
        self.attach_async(volume_id)
        _action, event = self.wait_failed('compute_attach_volume')
        self.assertIn('could not connect volume', event['details'])
        self.assert_nothing_left(volume_id)
        self.assertIn('could not connect volume',
                      self.latest_fault().message)
        # A healthy backend: the same volume attaches.
        self.conf.set_override('fail_connect', False, group='fake')
        self.attach_async(volume_id)
        self.wait_attached(volume_id)

    def test_volume_taken_meanwhile(self):
        # The volume is reserved by someone else between the API's check
        # and the conductor's reservation.
        volume_id = self.create_volume()
        other = self.create_server(name='other')
        with self.reservations_held() as waiting:
            self.attach_async(volume_id)
            system.wait_for(lambda: waiting)
            # Straight to block storage, past Nova's duplicate guard.
            resp = self.volume_api().post('/v3/attachments', body={
                'attachment': {'volume_uuid': volume_id,
                               'instance_uuid': other}})
            self.assertEqual(200, resp.status, resp.text)
        _action, event = self.wait_failed('conductor_attach_volume')
        self.assertIn('Invalid volume', event['details'])
        system.wait_for(lambda: self.show(volume_id).status == 404)
        self.assertEqual('reserved', self.show_volume(volume_id)['status'])


class CancelTest(AsyncTestCase):
    """DELETE of an attach still in progress cancels it: the way out of an
    attach whose message was lost, and no leftovers when the workflow
    races with it."""

    def test_detach_while_the_host_is_busy(self):
        volume_id = self.create_volume()
        with self.reservations_held() as waiting:
            self.attach_async(volume_id)
            system.wait_for(lambda: waiting)
            self.detach(self.server_id, volume_id, api=self.at(ASYNC))
            self.assertEqual(404, self.show(volume_id).status)
        # The host's reservation finds the mapping gone: the workflow
        # undoes its part and says so.
        _action, event = self.wait_failed('conductor_attach_volume')
        self.assertIn('is not attached to volume', event['details'])
        self.assert_nothing_left(volume_id)
        actions = [a['action'] for a in self.at('2.84', self.admin_api).get(
            '/v2.1/servers/%s/os-instance-actions' % self.server_id).body[
                'instanceActions']]
        self.assertEqual(['detach_volume', 'attach_volume'], actions[:2])

    def test_lost_attach_can_be_cancelled(self):
        api = compute_api.get_api(self.conf)
        volume_id = self.create_volume()
        # The cast never reaches a conductor (e.g. one that died with it).
        with mock.patch.object(api.conductor_rpcapi.client,
                               'prepare'):
            self.attach_async(volume_id)
        self.assertEqual(404, self.show(volume_id).status)
        item = self.show(volume_id, PENDING_VIEW).body['volumeAttachment']
        self.assertIsNone(item['attachment_id'])
        # It blocks another attach of the volume until it is cancelled
        # (409 naming it: the volume itself reads available).
        other = self.create_server(name='other')
        resp = self.attach_async(volume_id, server_id=other, expect=409)
        self.assertIn('busy with another operation (attaching)', resp.text)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.detach(self.server_id, volume_id, api=self.at(ASYNC))
        self.assertEqual(404, self.show(volume_id).status)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.attach_async(volume_id, server_id=other)
        self.wait_attached(volume_id, server_id=other)


class ConcurrencyTest(AsyncTestCase):
    COMPUTE_HOSTS = ['compute1', 'compute2']
    # Widen the window in which attaches overlap on a compute host.
    CONF = dict(AsyncTestCase.CONF, **{
        'fake_driver.reserve_delay': 0.005, 'quota.instances': -1,
        'quota.cores': -1, 'quota.ram': -1, 'quota.volumes': -1})
    N = 10

    def _all_at_once(self, calls):
        barrier = threading.Barrier(len(calls))

        def run(call):
            barrier.wait()
            return call()
        with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
            return list(pool.map(run, calls))

    def _post(self, server_id, volume_id):
        return lambda: self.at(ASYNC).post(
            self.url(server_id=server_id),
            body={'volumeAttachment': {'volumeId': volume_id}})

    def test_one_volume_to_many_servers(self):
        servers = [self.create_server(name='s%d' % i, wait=False)
                   for i in range(self.N)]
        for server_id in servers:
            self.wait_for_server_status(server_id, 'ACTIVE')
        volume_id = self.create_volume()
        responses = self._all_at_once(
            [self._post(s, volume_id) for s in servers])
        statuses = collections.Counter(r.status for r in responses)
        self.assertLessEqual(set(statuses), {202, 400, 409}, statuses)
        accepted = [s for s, r in zip(servers, responses) if r.status == 202]
        self.assertTrue(accepted)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        [winner] = [a['server_id'] for a in volume['attachments']]
        self.assertIn(winner, accepted)
        # Every other accepted request failed visibly and left nothing.
        for server_id in accepted:
            expected = [volume_id] if server_id == winner else []
            system.wait_for(lambda: expected == [
                a['volumeId'] for a in self.attachments(
                    server_id, api=self.at(ASYNC))])
            if server_id != winner:
                [action] = self.attach_actions(server_id)
                system.wait_for(lambda: self.action(
                    action['request_id'], server_id)['message'] == 'Error')
        resp = self.admin_api.as_(volume_version='3.27').get(
            '/v3/attachments?volume_id=%s&all_tenants=1' % volume_id)
        self.assertEqual(1, len(resp.body['attachments']))

    def test_many_volumes_to_one_server(self):
        volumes = [self.create_volume() for _ in range(self.N)]
        responses = self._all_at_once(
            [self._post(self.server_id, v) for v in volumes])
        self.assertEqual([202] * self.N, [r.status for r in responses])
        devices = [self.wait_attached(v)['device'] for v in volumes]
        self.assertEqual(self.N, len(set(devices)))
        self.assertNotIn('/dev/vda', devices)
        guest = self.compute_manager(
            self.show_server(self.server_id)['OS-EXT-SRV-ATTR:host']
        ).driver.guests[self.server_id]
        self.assertEqual(set(devices), set(guest.devices))

    def test_same_pair_many_times(self):
        volume_id = self.create_volume()
        responses = self._all_at_once(
            [self._post(self.server_id, volume_id)] * self.N)
        statuses = collections.Counter(r.status for r in responses)
        # The losers find the winner's attach pending: 409 naming it (a
        # loser of the unique constraint itself: 400 "already attached").
        self.assertEqual(self.N, statuses[202] + statuses[409] +
                         statuses[400], statuses)
        self.assertEqual(1, statuses[202], statuses)
        self.wait_attached(volume_id)
        self.assertEqual(1, len(self.attach_actions()))
