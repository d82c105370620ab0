"""The compute host's versioned notifications: built only when they go
somewhere."""

from unittest import mock

import testtools

from nova_lite.compute import notifications
from nova_lite import rpc
from tests.fixtures import conf as conf_fixture


class _Instance(object):
    uuid = '0a7a4b4e-93a8-4a39-a6a1-0d4f5f7d58a1'
    display_name = 'vm'
    project_id = 'p'
    user_id = 'u'
    host = 'compute1'
    availability_zone = 'nova'
    flavor_id = '1'
    image_ref = None
    vm_state = 'active'
    task_state = None
    power_state = 1
    locked = False
    launched_at = None


class NotifierTest(testtools.TestCase):
    def _notifier(self, drivers):
        conf = self.useFixture(conf_fixture.ConfFixture()).conf
        conf.set_override('driver', drivers,
                          group='oslo_messaging_notifications')
        self.addCleanup(rpc.cleanup, conf)
        return notifications.Notifier(conf, 'compute1')

    def test_no_driver_builds_and_sends_nothing(self):
        self.assertFalse(self._notifier(['noop']).enabled)
        notifier = self._notifier([])
        self.assertFalse(notifier.enabled)
        with mock.patch.object(notifications, 'volume_payload') as payload, \
                mock.patch.object(notifier.notifier, 'info') as info:
            notifier.notify_volume(None, _Instance(),
                                   notifications.VOLUME_ATTACH,
                                   notifications.START, 'vol-1')
        payload.assert_not_called()
        info.assert_not_called()

    def test_driver_sends_the_payload(self):
        notifier = self._notifier(['messaging'])
        self.assertTrue(notifier.enabled)
        with mock.patch.object(notifier.notifier, 'info') as info:
            notifier.notify_volume(None, _Instance(),
                                   notifications.VOLUME_ATTACH,
                                   notifications.END, 'vol-1')
        (_ctxt, event_type, payload), _kw = info.call_args
        self.assertEqual('instance.volume_attach.end', event_type)
        self.assertEqual('vol-1', payload['nova_object.data']['volume_id'])
        self.assertEqual(notifications.PAYLOAD_VERSION,
                         payload['nova_object.version'])
