"""Silent hosts, fenced hosts, rolled-back messages and read-your-writes,
on the whole system in-process (issue 27).

* A compute host that only misses its heartbeats is silent, not dead: a
  detach answers 409 (as Nova), a delete waits for the host, keeping the
  server's volumes.
* Once an administrator forces it down (``PUT /os-services/{id}``, 2.53),
  it is fenced: detaches and deletes are done without it, the conductor
  settles its work in flight at once, and the host, back, removes the
  guests of servers deleted meanwhile and the disks whose mapping is gone
  before an attach uses their device name.
* A detach the API rolled back (its cast raised after the message left)
  is dropped by the host, not run.
* A volume reads ``available`` only once its server's mapping is gone: an
  attach right after is accepted.
"""

import datetime
import threading
from unittest import mock

import fixtures
import oslo_messaging as messaging
from oslo_utils import uuidutils

from nova_lite.compute import api as compute_api
from nova_lite import context as nl_context
from nova_lite.db import models
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import stale_disk
from tests.fixtures import system
from tests.functional.compute import test_volume_attachments as base

ASYNC = '2.101'


class RolledBackDetachTest(base.AttachmentTestCase):
    def test_a_rolled_back_detach_no_longer_runs(self):
        # The cast of the detach reaches the host, but the API sees it
        # fail (a publisher confirm that timed out) and rolls the detach
        # back: the user is told it failed. The host, taking the message
        # afterwards (here: once the server's lock is free), must not
        # detach: the message is for a task that no longer exists.
        volume_id = self.attached_volume()
        api = compute_api.get_api(self.conf)
        manager = self.compute_manager()
        logs = self.useFixture(fixtures.FakeLogger(
            name='nova_lite.compute.host.manager'))
        send = api.compute_rpcapi.detach_volume
        handled = threading.Event()
        handle = manager.detach_volume

        def cast_then_fail(*args, **kwargs):
            send(*args, **kwargs)
            raise messaging.MessageDeliveryFailure('confirm timed out')

        def handler(*args, **kwargs):
            try:
                return handle(*args, **kwargs)
            finally:
                handled.set()
        with mock.patch.object(manager, 'detach_volume',
                               side_effect=handler), \
                mock.patch.object(api.compute_rpcapi, 'detach_volume',
                                  side_effect=cast_then_fail):
            with manager.instance_lock(self.server_id):
                resp = self.api.delete(self.url(volume_id))
                self.assertEqual(503, resp.status, resp.text)
                bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                    nl_context.get_admin_context(), volume_id,
                    self.server_id)
                self.assertIsNone(bdm.task)
            self.assertTrue(handled.wait(10))
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        self.assertEqual([volume_id], [a['volumeId'] for a in
                                       self.attachments(self.server_id)])
        guest = manager.driver.guests[self.server_id]
        self.assertIn('/dev/vdb', guest.devices)
        self.assertIn('Dropping the detach of volume %s' % volume_id,
                      logs.output)
        # The detach can be asked again, and runs.
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertNotIn('/dev/vdb', guest.devices)


class ReadYourWritesTest(base.AttachmentTestCase):
    def test_attach_right_after_available_is_accepted(self):
        # Hold the detach on the host just after block storage deleted the
        # attachment (the volume reads available): the server's mapping
        # is already out of the way, so the attach a client sends as soon
        # as it sees ``available`` is accepted (it was a 400 "already
        # attached to instances: <this server>" when the mapping went
        # last).
        volume_id = self.attached_volume()
        manager = self.compute_manager()
        client = manager.volume_client
        delete = client.attachment_delete
        deleted = threading.Event()
        go = threading.Event()

        def attachment_delete(ctxt, attachment_id):
            result = delete(ctxt, attachment_id)
            deleted.set()
            go.wait(30)
            return result
        with mock.patch.object(client, 'attachment_delete',
                               side_effect=attachment_delete):
            self.detach(self.server_id, volume_id)
            self.assertTrue(deleted.wait(10))
            self.assertEqual('available',
                             self.show_volume(volume_id)['status'])
            self.assertEqual([], self.attachments(self.server_id))
            self.attach(self.server_id, volume_id, api=self.at(ASYNC),
                        expect=202)
            go.set()
        self.wait_for_volume_status(volume_id, 'in-use')
        [item] = self.attachments(self.server_id, api=self.at(ASYNC))
        self.assertEqual((volume_id, '/dev/vdb'),
                         (item['volumeId'], item['device']))

    def test_attach_detach_cycles(self):
        # What a client cycling attach and detach does, waiting for
        # in-use and available between: every request is accepted.
        volume_id = self.create_volume()
        for cycle in range(12):
            api = self.at(ASYNC if cycle % 2 else '2.100')
            self.attach(self.server_id, volume_id, api=api,
                        expect=202 if cycle % 2 else 200)
            self.wait_for_volume_status(volume_id, 'in-use')
            self.detach(self.server_id, volume_id)
            self.wait_for_volume_status(volume_id, 'available')


class FencingTestCase(base.AttachmentTestCase):
    """A server on compute1 and the means to silence and fence its host
    (no tests here)."""

    def setUp(self):
        super().setUp()
        self.manager = self.compute_manager()
        self.service = [s for s in self.sys.system.services
                        if s.binary == 'nova-lite-compute'][0]
        self.admin = self.admin_api.as_(compute_version='2.53')

    def _patch(self, obj, name):
        patcher = mock.patch.object(obj, name)
        self.mocks[name] = patcher.start()
        self.patchers.append(patcher)

    def silence(self):
        """compute1 stops answering (as a SIGSTOPped process): no more
        heartbeats, no periodic task, and the deletes cast to it are
        taken but never done. Its last heartbeat is long ago."""
        self.patchers = []
        self.mocks = {}
        self.addCleanup(self.answer)
        self._patch(self.service.service_ref, 'heartbeat')
        self._patch(self.manager, 'periodic_tasks')
        self._patch(self.manager, 'terminate_instance')
        base.set_rows(models.Service, models.Service.host == 'compute1',
                      last_seen_up=datetime.datetime(2026, 1, 1))

    def answer(self):
        """compute1 answers again (its threads run, its heartbeat is
        fresh)."""
        while self.patchers:
            self.patchers.pop().stop()
        self.service.service_ref.heartbeat(self.service.conf.report_interval)

    def service_view(self):
        [svc] = [s for s in self.admin.get('/v2.1/os-services').body[
            'services'] if s['host'] == 'compute1' and
            s['binary'] == 'nova-lite-compute']
        return svc

    def force_down(self, forced=True):
        svc = self.service_view()
        resp = self.admin.put('/v2.1/os-services/%s' % svc['id'],
                              body={'forced_down': forced})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(forced, resp.body['service']['forced_down'])
        return resp.body['service']

    def conductor_settles(self):
        for svc in self.sys.system.services:
            if svc.binary == 'nova-lite-conductor':
                return svc.manager.periodic_tasks(
                    nl_context.get_admin_context())
        raise AssertionError('no conductor')

    def show(self, volume_id):
        return self.at(ASYNC).get(self.url(volume_id))


class FencingTest(FencingTestCase):
    def test_silent_then_fenced_then_back(self):
        kept = self.attached_volume()
        doomed = self.create_server(name='doomed')
        doomed_volume = self.attached_volume(server_id=doomed)
        guest = self.manager.driver.guests[self.server_id]
        # An attach in flight on the host: its device-name reservation
        # waits (the host is busy with the server).
        pending = self.create_volume()
        with self.reservations_held() as waiting:
            self.attach(self.server_id, pending, api=self.at(ASYNC),
                        expect=202)
            system.wait_for(lambda: waiting)
            self.silence()

            # Silent: the detach answers 409 and changes nothing; the
            # delete is accepted and waits for the host, the server
            # keeping its volume.
            resp = self.detach(self.server_id, kept, expect=409)
            self.assertEqual('Service is unavailable at this time.',
                             self.message(resp))
            self.assertEqual(204, self.api.delete(
                '/v2.1/servers/%s' % doomed).status)
            self.assertEqual('deleting', self.show_server(doomed)[
                'OS-EXT-STS:task_state'])
            self.assertEqual('in-use',
                             self.show_volume(doomed_volume)['status'])
            self.assertEqual([], self.conductor_settles())
            self.assertEqual('down', self.service_view()['state'])

            # Fenced: the conductor settles the host's work at once (the
            # attach rolled back, the delete done), and a detach is done
            # without the host.
            view = self.force_down()
            self.assertEqual('down', view['state'])
            settled = self.conductor_settles()
            self.assertEqual(
                sorted(['rolled back', 'finished']),
                sorted(outcome for _item, outcome in settled))
            self.assertEqual(404, self.show(pending).status)
            self.assertEqual('available',
                             self.show_volume(pending)['status'])
            self.wait_for_server_gone(doomed)
            self.assertEqual('available',
                             self.show_volume(doomed_volume)['status'])
            self.detach(self.server_id, kept)
            self.assertEqual('available', self.show_volume(kept)['status'])
            self.assertEqual([], self.attachments(self.server_id))
        attach_event = [e for e in self.events_of(pending)
                        if e['event'] == 'conductor_attach_volume']
        self.assertTrue(any('compute1 was forced down' in (
            e.get('details') or '') for e in attach_event), attach_event)
        # What the host did not do while it was away: its guests still
        # have the server deleted meanwhile and the detached disk.
        self.assertIn(doomed, self.manager.driver.guests)
        self.assertIn('/dev/vdb', guest.devices)

        # The host may still give both guests volumes freed without it:
        # it cannot be let go yet, and the refusal changes nothing.
        resp = self.admin.put('/v2.1/os-services/%s' % self.service_view()[
            'id'], body={'forced_down': False, 'status': 'disabled'})
        self.assertEqual(409, resp.status, resp.text)
        self.assertEqual('compute.host_holds_stale_disks',
                         resp.body['conflictingRequest']['error_code'])
        for server in (self.server_id, doomed):
            self.assertIn(server, self.message(resp))
        self.assertEqual((True, 'enabled'),
                         (self.service_view()['forced_down'],
                          self.service_view()['status']))

        # Back (the process continues): it reaps what it no longer owns,
        # and then the administrator can clear the fence.
        self.answer()
        self.manager.periodic_tasks(nl_context.get_admin_context())
        self.assertNotIn(doomed, self.manager.driver.guests)
        self.assertNotIn('/dev/vdb', guest.devices)
        self.force_down(False)
        # The device name is free on the guest too: the volume attaches
        # there again.
        self.attach(self.server_id, kept, api=self.at(ASYNC), expect=202)
        self.wait_for_volume_status(kept, 'in-use')
        [item] = self.attachments(self.server_id, api=self.at(ASYNC))
        self.assertEqual('/dev/vdb', item['device'])
        self.assertIn('/dev/vdb', guest.devices)

    def test_a_delete_whose_message_was_lost_is_done_once_stalled(self):
        # Cast to a silent host and lost there: the server stays
        # deleting with its volume (never deleted without the host); the
        # host, answering again, deletes it once the delete stalled.
        volume_id = self.attached_volume()
        self.silence()
        self.assertEqual(204, self.api.delete(
            '/v2.1/servers/%s' % self.server_id).status)
        # The host took the message, and did nothing with it.
        system.wait_for(lambda: self.mocks['terminate_instance'].called)
        self.answer()
        self.manager.periodic_tasks(nl_context.get_admin_context())
        self.assertEqual('deleting', self.show_server(self.server_id)[
            'OS-EXT-STS:task_state'])
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        base.set_rows(models.Instance,
                      models.Instance.uuid == self.server_id,
                      task_updated_at=datetime.datetime(2026, 1, 1))
        self.manager.periodic_tasks(nl_context.get_admin_context())
        self.wait_for_server_gone(self.server_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertNotIn(self.server_id, self.manager.driver.guests)

    def test_only_volume_disks_without_a_mapping_are_removed(self):
        # A disk that is no volume's (no serial: a config drive, say) is
        # never touched; a volume's disk with no mapping is.
        kept = self.attached_volume()
        guest = self.manager.driver.guests[self.server_id]
        guest.devices['/dev/vdy'] = {'connection_info': {}, 'mode': 'rw'}
        guest.devices['/dev/vdz'] = {
            'connection_info': {'serial': uuidutils.generate_uuid()},
            'mode': 'rw'}
        self.manager.periodic_tasks(nl_context.get_admin_context())
        self.assertEqual(['/dev/vdb', '/dev/vdy'], sorted(guest.devices))
        self.assertEqual('in-use', self.show_volume(kept)['status'])

    def test_reservation_removes_a_disk_whose_mapping_is_gone(self):
        # The host was fenced and came back without noticing (stopped
        # while fenced, the fence cleared before it resumed, its stale
        # disk known to nobody: a database restored, say): the first
        # attach to the server clears the stale disk before it names the
        # device.
        kept = self.attached_volume()
        guest = self.manager.driver.guests[self.server_id]
        self.silence()
        self.force_down()
        self.detach(self.server_id, kept)
        self.assertIn('/dev/vdb', guest.devices)
        ctxt = nl_context.get_admin_context()
        stale_disk.forget(ctxt, [d.id for d in stale_disk.get_by_host(
            ctxt, 'compute1')])
        self.force_down(False)
        self.answer()
        self.attach(self.server_id, kept, api=self.at(ASYNC), expect=202)
        self.wait_for_volume_status(kept, 'in-use')
        [item] = self.attachments(self.server_id, api=self.at(ASYNC))
        self.assertEqual('/dev/vdb', item['device'])

    def events_of(self, volume_id):
        api = self.admin_api.as_(compute_version='2.84')
        events = []
        for action in api.get('/v2.1/servers/%s/os-instance-actions' %
                              self.server_id).body['instanceActions']:
            events += api.get('/v2.1/servers/%s/os-instance-actions/%s' % (
                self.server_id, action['request_id'])).body[
                    'instanceAction']['events']
        return events


class ServiceUpdateTest(base.AttachmentTestCase):
    """PUT /v2.1/os-services/{id} (2.53): Nova's update."""

    def compute_id(self, api):
        return [s for s in api.get('/v2.1/os-services').body['services']
                if s['binary'] == 'nova-lite-compute'][0]['id']

    def test_status_and_forced_down(self):
        admin = self.admin_api.as_(compute_version='2.53')
        service_id = self.compute_id(admin)
        url = '/v2.1/os-services/%s' % service_id
        resp = admin.put(url, body={'status': 'disabled',
                                    'disabled_reason': 'maintenance'})
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(('disabled', 'maintenance', False),
                         (resp.body['service']['status'],
                          resp.body['service']['disabled_reason'],
                          resp.body['service']['forced_down']))
        resp = admin.put(url, body={'status': 'enabled', 'forced_down': True})
        self.assertEqual(('enabled', None, True, 'down'),
                         (resp.body['service']['status'],
                          resp.body['service']['disabled_reason'],
                          resp.body['service']['forced_down'],
                          resp.body['service']['state']))
        resp = admin.put(url, body={'forced_down': False})
        self.assertEqual((False, 'up'), (resp.body['service']['forced_down'],
                                         resp.body['service']['state']))

    def test_refusals(self):
        admin = self.admin_api.as_(compute_version='2.53')
        service_id = self.compute_id(admin)
        url = '/v2.1/os-services/%s' % service_id
        for body in ({}, {'status': 'enabled', 'disabled_reason': 'x'},
                     {'forced_down': 'maybe'}, {'host': 'compute1'}):
            self.assertEqual(400, admin.put(url, body=body).status, body)
        self.assertEqual(400, admin.put('/v2.1/os-services/1',
                                        body={'forced_down': True}).status)
        conductor = [s for s in admin.get('/v2.1/os-services').body[
            'services'] if s['binary'] == 'nova-lite-conductor'][0]['id']
        resp = admin.put('/v2.1/os-services/%s' % conductor,
                         body={'forced_down': True})
        self.assertEqual(400, resp.status)
        self.assertIn('Only nova-lite-compute services', resp.text)
        self.assertEqual(404, admin.put(
            '/v2.1/os-services/%s' % uuidutils.generate_uuid(),
            body={'forced_down': True}).status)
        self.assertEqual(403, self.api.as_(compute_version='2.53').put(
            url, body={'forced_down': True}).status)
        # Before 2.53 the route does not exist.
        self.assertEqual(404, self.admin_api.as_(
            compute_version='2.52').put(url, body={'forced_down': True})
            .status)
        self.assertFalse([s for s in admin.get('/v2.1/os-services').body[
            'services'] if s['forced_down']])
