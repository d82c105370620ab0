"""Failures at any step of an attach roll back: the mapping is gone, the
attachment deleted, the volume ``available`` again, and the server's
instance action, fault and notifications say what happened."""

import threading

from unittest import mock

import oslo_messaging as messaging

from nova_lite import context as nl_context
from nova_lite import objects
from nova_lite import rpc
from nova_lite.volume_service import drivers
from tests.fixtures import system
from tests.functional.compute import base


class NotificationCollector(object):
    """Collects versioned notifications from the in-process transport."""

    def __init__(self, conf):
        self.received = []
        self.lock = threading.Lock()
        self.listener = messaging.get_notification_listener(
            rpc.init(conf).notification_transport,
            [messaging.Target(topic='versioned_notifications')],
            [self], executor='threading')

    def _add(self, priority, publisher_id, event_type, payload):
        with self.lock:
            self.received.append((priority, publisher_id, event_type,
                                  payload))

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self._add('INFO', publisher_id, event_type, payload)

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self._add('ERROR', publisher_id, event_type, payload)

    def event_types(self, volume_id):
        with self.lock:
            return [n[2] for n in self.received
                    if n[3]['nova_object.data']['volume_id'] == volume_id]

    def wait_for(self, volume_id, event_type):
        system.wait_for(lambda: event_type in self.event_types(volume_id),
                        message='no %s notification' % event_type)
        with self.lock:
            return [n for n in self.received if n[2] == event_type and
                    n[3]['nova_object.data']['volume_id'] == volume_id][-1]


class FailureTestCase(base.TestCase):
    # The fake backend: its connections can be made to fail at run time.
    CONF = {'volume.enabled_backends': ['fake']}

    def setUp(self):
        super().setUp()
        self.notifications = NotificationCollector(self.conf)
        self.notifications.listener.start()
        self.addCleanup(self.notifications.listener.wait)
        self.addCleanup(self.notifications.listener.stop)
        drivers.register_backend_opts(self.conf)
        self.server_id = self.create_server()

    def last_action(self, api=None, version='2.84'):
        api = (api or self.admin_api).as_(compute_version=version)
        actions = api.get('/v2.1/servers/%s/os-instance-actions' %
                          self.server_id).body['instanceActions']
        return api.get('/v2.1/servers/%s/os-instance-actions/%s' % (
            self.server_id, actions[0]['request_id'])).body[
                'instanceAction']

    def assert_rolled_back(self, volume_id):
        self.wait_for_volume_status(volume_id, 'available')
        system.wait_for(lambda: self.attachments(self.server_id) == [])
        resp = self.admin_api.as_(volume_version='3.27').get(
            '/v3/attachments?volume_id=%s&all_tenants=1' % volume_id)
        self.assertEqual([], resp.body['attachments'])
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))

    def assert_action_failed(self, expected_detail,
                             event_name='compute_attach_volume',
                             host='compute1', api=None, version='2.84'):
        def failed():
            action = self.last_action(api=api, version=version)
            events = {e['event']: e for e in action['events']}
            event = events.get(event_name)
            return (action, events) if event and event['finish_time'] \
                else None
        action, events = system.wait_for(failed)
        self.assertEqual(('attach_volume', 'Error'),
                         (action['action'], action['message']))
        event = events[event_name]
        self.assertEqual((event_name, 'Error', host),
                         (event['event'], event['result'], event['host']))
        self.assertIn(expected_detail, event['details'])
        self.assertIn('Traceback', event['traceback'])
        # The owner sees the failed step, without traceback or host.
        mine = self.last_action(api=self.api)
        self.assertEqual({'event', 'start_time', 'finish_time', 'result',
                          'hostId'}, set(mine['events'][0]))
        if event_name == 'compute_attach_volume':
            # The conductor's part had worked.
            self.assertEqual('Success',
                             events['conductor_attach_volume']['result'])
        return event
        faults = objects.InstanceFault.get_latest_for_instances(
            nl_context.get_admin_context(), [self.server_id])
        self.assertIn(expected_detail, faults[self.server_id].message)


class AttachFailureTest(FailureTestCase):
    def test_backend_fails_to_connect(self):
        volume_id = self.create_volume()
        self.conf.set_override('fail_connect', True, group='fake')
        resp = self.attach(self.server_id, volume_id)
        self.assertEqual('/dev/vdb', resp.body['volumeAttachment']['device'])
        self.assert_rolled_back(volume_id)
        self.assert_action_failed('could not connect volume')
        error = self.notifications.wait_for(volume_id,
                                            'instance.volume_attach.error')
        self.assertEqual('ERROR', error[0])
        self.assertEqual('nova-lite-compute:compute1', error[1])
        fault = error[3]['nova_object.data']['fault']['nova_object.data']
        self.assertEqual('VolumeBackendAPIException', fault['exception'])
        self.assertEqual(['instance.volume_attach.start',
                          'instance.volume_attach.error'],
                         self.notifications.event_types(volume_id))
        # The next attach, with a healthy backend, works and reuses the
        # device name.
        self.conf.set_override('fail_connect', False, group='fake')
        resp = self.attach(self.server_id, volume_id)
        self.assertEqual('/dev/vdb', resp.body['volumeAttachment']['device'])
        self.wait_for_volume_status(volume_id, 'in-use')

    def test_virt_driver_fails_to_attach(self):
        volume_id = self.create_volume()
        driver = self.compute_manager().driver
        with mock.patch.object(driver, 'attach_volume',
                               side_effect=RuntimeError('no bus slot')):
            self.attach(self.server_id, volume_id)
            self.assert_rolled_back(volume_id)
        # Not a nova_lite error: only its class name is shown.
        self.assert_action_failed('RuntimeError')
        self.assertEqual({}, driver.guests[self.server_id].devices)

    def test_failure_before_the_host_attaches_is_returned(self):
        volume_id = self.create_volume(multiattach=True)
        driver = self.compute_manager().driver
        with mock.patch.dict(driver.capabilities,
                             {'supports_multiattach': False}):
            resp = self.attach(self.server_id, volume_id,
                               api=self.api.as_(compute_version='2.60'),
                               expect=400)
        self.assertIn("has 'multiattach' set", resp.text)
        self.assert_rolled_back(volume_id)
        # Also recorded, as for an attach nobody waits for.
        self.assert_action_failed("has 'multiattach' set",
                                  event_name='conductor_attach_volume',
                                  host=self.conf.host)


class NotificationsTest(FailureTestCase):
    def test_attach_and_detach_notifications(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        end = self.notifications.wait_for(volume_id,
                                          'instance.volume_attach.end')
        self.assertEqual(('INFO', 'nova-lite-compute:compute1'), end[:2])
        payload = end[3]
        self.assertEqual('InstanceActionVolumePayload',
                         payload['nova_object.name'])
        data = payload['nova_object.data']
        self.assertEqual((self.server_id, 'active', 'demo', None),
                         (data['uuid'], data['state'], data['tenant_id'],
                          data['fault']))
        self.wait_for_volume_status(volume_id, 'in-use')
        self.detach(self.server_id, volume_id)
        self.notifications.wait_for(volume_id, 'instance.volume_detach.end')
        self.assertEqual(['instance.volume_attach.start',
                          'instance.volume_attach.end',
                          'instance.volume_detach.start',
                          'instance.volume_detach.end'],
                         self.notifications.event_types(volume_id))
