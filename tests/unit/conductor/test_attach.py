"""The conductor's attach workflow with an in-memory VolumeClient and a
fake compute RPC API: it returns the device name, and every failure leaves
nothing reserved."""

from unittest import mock

import fixtures
import oslo_messaging as messaging

from nova_lite.conductor import attach
from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import instance_action
from tests import base
from tests.unit.compute import fakes


class FakeComputeRPC(object):
    def __init__(self, test):
        self.test = test
        self.reserve_error = None
        self.cast_error = None
        self.casts = []

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  **kwargs):
        if self.reserve_error:
            raise self.reserve_error
        bdm = objects.BlockDeviceMapping.new_volume(
            ctxt, instance.uuid, volume_id, device_name=device or '/dev/vdb',
            tag=kwargs.get('tag'))
        self.test.bdms.append(bdm)
        return bdm

    def attach_volume(self, ctxt, instance, bdm):
        if self.cast_error:
            raise self.cast_error
        self.casts.append(bdm)


class AttachWorkflowTest(base.TestCase):
    def setUp(self):
        super().setUp()
        objects.register_all()
        self.ctxt = nl_context.RequestContext('demo', 'demo',
                                              roles=['member'])
        self.volumes = fakes.FakeVolumeClient()
        self.compute = FakeComputeRPC(self)
        self.instance = fakes.FakeInstance()
        self.bdms = []
        self.destroyed = []
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'save'))
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'destroy', autospec=True,
            side_effect=lambda bdm: self.destroyed.append(bdm)))
        self.action_start = self.useFixture(fixtures.MockPatchObject(
            instance_action.InstanceAction, 'action_start')).mock
        self.record_failure = self.useFixture(fixtures.MockPatchObject(
            instance_action, 'record_failure', return_value=False)).mock

    def run_attach(self, volume_id, **kwargs):
        return attach.attach_volume(self.ctxt, self.compute, self.volumes,
                                    self.instance, volume_id, **kwargs)

    def test_success(self):
        vol = self.volumes.create_volume()
        device = self.run_attach(vol, device='/dev/vdc', tag='t')
        self.assertEqual('/dev/vdc', device)
        self.assertEqual('reserved', self.volumes.volumes[vol]['status'])
        [bdm] = self.compute.casts
        self.assertEqual(self.volumes.live_attachments(vol)[0]['id'],
                         bdm.attachment_id)
        self.action_start.assert_called_once_with(
            self.ctxt, self.instance.uuid, 'attach_volume')
        self.assertEqual([], self.destroyed)

    def test_reserve_failure(self):
        vol = self.volumes.create_volume()
        self.compute.reserve_error = exception.InvalidVolume(reason='x')
        self.assertRaises(exception.InvalidVolume, self.run_attach, vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertFalse(self.action_start.called)
        self.assertEqual(1, self.record_failure.call_count)

    def test_volume_not_reservable_destroys_the_bdm(self):
        vol = self.volumes.create_volume(status='in-use')
        self.assertRaises(exception.InvalidVolume, self.run_attach, vol)
        self.assertEqual(self.bdms, self.destroyed)
        self.assertFalse(self.action_start.called)
        self.assertEqual([], self.compute.casts)

    def test_cast_failure_deletes_the_attachment(self):
        vol = self.volumes.create_volume()
        self.compute.cast_error = messaging.MessageDeliveryFailure('down')
        self.assertRaises(messaging.MessageDeliveryFailure, self.run_attach,
                          vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertEqual([], self.volumes.live_attachments(vol))
        self.assertEqual(self.bdms, self.destroyed)
        # The attachment of a server is deleted as the service.
        delete = [c for c in self.volumes.calls
                  if c[0] == 'attachment_delete']
        self.assertEqual(1, len(delete))

    def test_timeout_removes_the_orphan_bdm(self):
        vol = self.volumes.create_volume()
        self.compute.reserve_error = messaging.MessagingTimeout('slow')
        orphan = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, vol, device_name='/dev/vdb')
        with mock.patch.object(objects.BlockDeviceMapping,
                               'get_by_volume_and_instance',
                               return_value=orphan) as get:
            self.assertRaises(messaging.MessagingTimeout, self.run_attach,
                              vol)
        get.assert_called_once_with(self.ctxt, vol, self.instance.uuid)
        self.assertEqual([orphan], self.destroyed)

    def test_timeout_without_bdm(self):
        vol = self.volumes.create_volume()
        self.compute.reserve_error = messaging.MessagingTimeout('slow')
        with mock.patch.object(
                objects.BlockDeviceMapping, 'get_by_volume_and_instance',
                side_effect=exception.VolumeBDMNotFound(
                    instance_uuid='i', volume_id=vol)):
            self.assertRaises(messaging.MessagingTimeout, self.run_attach,
                              vol)
        self.assertEqual([], self.destroyed)

    def test_failure_recorded_when_the_request_has_an_action(self):
        vol = self.volumes.create_volume(status='in-use')
        self.record_failure.return_value = True
        with mock.patch.object(objects.InstanceFault, 'record') as record:
            self.assertRaises(exception.InvalidVolume, self.run_attach, vol)
        self.assertEqual(1, record.call_count)
        args = self.record_failure.call_args[0]
        self.assertEqual((self.instance.uuid, 'conductor_attach_volume'),
                         args[1:3])
