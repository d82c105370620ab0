"""/v2.1/os-server-external-events (Nova's API for other services), and
block storage's extend of an in-use volume, which sends the same
``volume-extended`` event: the server's host resizes the guest's disk
(the fake driver records the size it was given)."""

import datetime

from oslo_utils import units
from oslo_utils import uuidutils

from nova_lite import context as nl_context
from nova_lite.db import models
from nova_lite.objects import instance_action
from nova_lite import utils
from nova_lite.volume_service import drivers
from nova_lite.volume_service import periodic as volume_periodic
from tests.fixtures import system
from tests.functional.compute import base
from tests.functional.compute import test_volume_attachments as tva

URL = '/v2.1/os-server-external-events'
SERVICE = 'service:demo'


class ExternalEventsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.service = self.api.as_(token=SERVICE, compute_version='2.93')
        self.server_id = self.create_server()

    def post(self, events, api=None, expect=200):
        resp = (api or self.service).post(URL, body={'events': events})
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body

    @staticmethod
    def extended(server_id, volume_id):
        return {'name': 'volume-extended', 'server_uuid': server_id,
                'tag': volume_id}

    def guest_device(self, server_id, volume_id):
        guest = self.compute_manager().driver.guests[server_id]
        for device in guest.devices.values():
            if device['connection_info'].get('serial') == volume_id:
                return device
        raise AssertionError('no device of %s on %s' % (volume_id,
                                                        server_id))

    def wait_for_device_size(self, server_id, volume_id, size_gb):
        system.wait_for(
            lambda: self.guest_device(server_id, volume_id).get('size') ==
            size_gb * units.Gi,
            message='the guest of %s never got %sG for volume %s (has %s)'
            % (server_id, size_gb, volume_id,
               self.guest_device(server_id, volume_id).get('size')))

    def extend_action(self, server_id):
        """The server's ``extend_volume`` action once its host's event
        ended."""
        ctxt = nl_context.get_admin_context()

        def done():
            for action in instance_action.InstanceAction.get_all_by_instance(
                    ctxt, server_id):
                if action.action != 'extend_volume':
                    continue
                resp = self.admin_api.get(
                    '/v2.1/servers/%s/os-instance-actions/%s' % (
                        server_id, action.request_id))
                events = resp.body['instanceAction']['events']
                if events and all(e['finish_time'] for e in events):
                    return events
            return None
        return system.wait_for(done, message='no finished extend_volume '
                               'action of %s' % server_id)

    # -- volume-extended ----------------------------------------------------
    def test_volume_extended_resizes_the_guest_disk(self):
        volume_id = self.create_volume(size=1)
        resp = self.volume_api().as_(volume_version='3.0').post(
            '/v3/volumes/%s/action' % volume_id,
            body={'os-extend': {'new_size': 3}})
        self.assertEqual(202, resp.status, resp.text)
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        event = self.extended(self.server_id, volume_id)
        body = self.post([event])
        self.assertEqual([dict(event, status='completed', code=200)],
                         body['events'])
        self.wait_for_device_size(self.server_id, volume_id, 3)
        [step] = self.extend_action(self.server_id)
        self.assertEqual(('compute_extend_volume', 'Success'),
                         (step['event'], step['result']))
        # Sent again (a retry): the same size, nothing else changes.
        self.post([event])
        self.assertEqual(2, len([
            a for a in instance_action.InstanceAction.get_all_by_instance(
                nl_context.get_admin_context(), self.server_id)
            if a.action == 'extend_volume']))
        self.wait_for_device_size(self.server_id, volume_id, 3)

    def test_a_volume_not_attached_is_logged_and_left(self):
        other = self.create_volume()
        self.post([self.extended(self.server_id, other)])
        [step] = self.extend_action(self.server_id)
        self.assertEqual('Success', step['result'])
        self.assertEqual({}, self.compute_manager().driver.guests[
            self.server_id].devices)

    def test_extend_of_an_in_use_volume_reaches_the_guest(self):
        volume_id = self.create_volume(size=1)
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        url = '/v3/volumes/%s/action' % volume_id
        body = {'os-extend': {'new_size': 2}}
        # Below 3.42 an in-use volume is not extended (Cinder's 400).
        resp = self.volume_api().as_(volume_version='3.41').post(url,
                                                                 body=body)
        self.assertEqual(400, resp.status, resp.text)
        self.assertEqual(1, self.show_volume(volume_id)['size'])
        resp = self.volume_api().as_(volume_version='3.42').post(url,
                                                                 body=body)
        self.assertEqual(202, resp.status, resp.text)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(2, volume['size'])
        self.assertEqual([self.server_id],
                         [a['server_id'] for a in volume['attachments']])
        self.wait_for_device_size(self.server_id, volume_id, 2)
        [step] = self.extend_action(self.server_id)
        self.assertEqual('Success', step['result'])

    def test_an_interrupted_in_use_extend_is_settled_and_sent(self):
        # The process died after the backend grew the volume: block
        # storage's settling finishes it, in-use, and tells the host.
        volume_id = self.create_volume(size=1)
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        drivers.get_driver(self.conf, 'file').extend_volume(
            {'id': volume_id, 'size': 1, 'provider_location': None}, 3)
        tva.set_rows(models.Volume, models.Volume.id == volume_id,
                     status='extending', size=3,
                     updated_at=utils.utcnow() - datetime.timedelta(
                         seconds=self.conf.recovery.stalled_after + 60))
        settled = volume_periodic.settle(nl_context.get_admin_context(),
                                         self.conf)
        self.assertIn(({'volume': volume_id, 'operation': 'extend'},
                       'in-use'), settled)
        self.assertEqual(('in-use', 3), (
            self.show_volume(volume_id)['status'],
            self.show_volume(volume_id)['size']))
        self.wait_for_device_size(self.server_id, volume_id, 3)

    def test_extend_of_an_available_volume_sends_nothing(self):
        volume_id = self.create_volume(size=1)
        resp = self.volume_api().as_(volume_version='3.42').post(
            '/v3/volumes/%s/action' % volume_id,
            body={'os-extend': {'new_size': 2}})
        self.assertEqual(202, resp.status, resp.text)
        volume = self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual(2, volume['size'])
        self.assertEqual([], [
            a for a in instance_action.InstanceAction.get_all_by_instance(
                nl_context.get_admin_context(), self.server_id)
            if a.action == 'extend_volume'])

    # -- per-event codes ----------------------------------------------------
    def test_mixed_events_answer_207_with_each_code(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        offloaded = self.create_server(name='offloaded')
        resp = self.api.post('/v2.1/servers/%s/action' % offloaded,
                             body={'shelve': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(offloaded, 'SHELVED_OFFLOADED')
        unknown = uuidutils.generate_uuid()
        events = [
            self.extended(self.server_id, volume_id),
            self.extended(unknown, volume_id),
            {'name': 'volume-extended', 'server_uuid': self.server_id},
            self.extended(offloaded, volume_id),
        ]
        body = self.post(events, expect=207)
        self.assertEqual(
            [(200, 'completed'), (404, 'failed'), (400, 'failed'),
             (422, 'failed')],
            [(e['code'], e['status']) for e in body['events']])
        self.assertNotIn('tag', body['events'][2])
        self.assertEqual(volume_id, body['events'][3]['tag'])
        # Only the accepted one made an action.
        self.extend_action(self.server_id)
        self.assertEqual([], [
            a.action for a in
            instance_action.InstanceAction.get_all_by_instance(
                nl_context.get_admin_context(), offloaded)
            if a.action == 'extend_volume'])

    def test_none_accepted_is_207_not_404(self):
        # Nova answers 207 with each event's 404 (its 404 for "none
        # found" went in 2019).
        body = self.post([self.extended(uuidutils.generate_uuid(),
                                        uuidutils.generate_uuid())],
                         expect=207)
        self.assertEqual([404], [e['code'] for e in body['events']])

    def test_a_deleted_server_is_404(self):
        resp = self.api.delete('/v2.1/servers/%s' % self.server_id)
        self.assertEqual(204, resp.status, resp.text)
        self.wait_for_server_gone(self.server_id)
        body = self.post([{'name': 'volume-reimaged',
                           'server_uuid': self.server_id}], expect=207)
        self.assertEqual(404, body['events'][0]['code'])

    def test_other_events_are_accepted_and_dropped_by_the_host(self):
        # Nothing in nova_lite waits for them (Nova hands volume-reimaged
        # to a rebuild of a volume-backed server, which nova_lite has
        # not): 200, and the server is as it was.
        events = [{'name': name, 'server_uuid': self.server_id,
                   'status': 'completed'}
                  for name in ('volume-reimaged', 'network-changed',
                               'power-update')]
        body = self.post(events)
        self.assertEqual([200] * 3, [e['code'] for e in body['events']])
        server = self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertEqual(1, server['OS-EXT-STS:power_state'])
        self.assertEqual(['create'], [
            a.action for a in
            instance_action.InstanceAction.get_all_by_instance(
                nl_context.get_admin_context(), self.server_id)])

    # -- validation and policy ---------------------------------------------
    def test_event_names_by_microversion(self):
        for version, name in (('2.50', 'volume-extended'),
                              ('2.75', 'power-update'),
                              ('2.81', 'accelerator-request-bound'),
                              ('2.92', 'volume-reimaged')):
            event = {'name': name, 'server_uuid': self.server_id,
                     'tag': 'x'}
            self.post([event], api=self.service.as_(compute_version=version),
                      expect=400)
            newer = self.service.as_(compute_version='%s.%d' % (
                version.split('.')[0], int(version.split('.')[1]) + 1))
            self.assertEqual(
                200, self.post([event], api=newer)['events'][0]['code'])

    def test_bad_bodies_are_400_and_change_nothing(self):
        good = {'name': 'network-changed', 'server_uuid': self.server_id}
        for body in ({}, {'events': []}, {'events': {}},
                     {'events': [dict(good, name='nope')]},
                     {'events': [dict(good, server_uuid='nope')]},
                     {'events': [dict(good, status='done')]},
                     {'events': [dict(good, tag='x' * 256)]},
                     {'events': [dict(good, code=200)]},
                     {'events': [{'name': 'network-changed'}]},
                     dict(events=[good], extra=1)):
            resp = self.service.post(URL, body=body)
            self.assertEqual(400, resp.status, (body, resp.text))
            self.assertIn('badRequest', resp.body)
        self.assertEqual(['create'], [
            a.action for a in
            instance_action.InstanceAction.get_all_by_instance(
                nl_context.get_admin_context(), self.server_id)])

    def test_service_or_admin_only(self):
        event = {'name': 'network-changed', 'server_uuid': self.server_id}
        resp = self.api.as_(compute_version='2.93').post(
            URL, body={'events': [event]})
        self.assertEqual(403, resp.status, resp.text)
        self.assertIn('forbidden', resp.body)
        self.post([event], api=self.admin_api)
        self.post([event])
