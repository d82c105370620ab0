"""The conductor's attach workflow with an in-memory VolumeClient and a
fake compute RPC API: it gives the API's mapping a device name and returns
it, a shelved-offloaded server needs no host, and every failure leaves
nothing reserved and is recorded (event, fault, notification)."""

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
    def __init__(self, test, new_hosts=True):
        self.test = test
        self.new_hosts = new_hosts
        self.reserve_error = None
        self.cast_error = None
        self.reserve_calls = []
        self.casts = []

    def can_reserve_existing_bdm(self):
        return self.new_hosts

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  **kwargs):
        self.reserve_calls.append(kwargs)
        if self.reserve_error:
            raise self.reserve_error
        bdm = kwargs.get('bdm')
        if bdm is None:
            bdm = objects.BlockDeviceMapping.new_volume(
                ctxt, instance.uuid, volume_id, tag=kwargs.get('tag'))
            bdm.id = 2
        bdm.device_name = device or '/dev/vdb'
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
        self.notifier = mock.Mock()
        self.instance = fakes.FakeInstance()
        self.destroyed = []
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'save'))
        # Task moves write the database (tests/functional/db covers them):
        # here they only change the object.
        self.task_moves = []

        self.on_move = None

        def move(_context, _bdm_id, values, *_expected):
            self.task_moves.append(values.get('task_step'))
            if self.on_move:
                self.on_move(values.get('task_step'))
            return 1
        self.useFixture(fixtures.MockPatch(
            'nova_lite.objects.block_device._move_task', side_effect=move))
        self.created = self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'create', autospec=True,
            side_effect=lambda bdm: setattr(bdm, 'id', 3))).mock
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'destroy', autospec=True,
            side_effect=lambda bdm: self.destroyed.append(bdm)))
        self.action_start = self.useFixture(fixtures.MockPatchObject(
            instance_action.InstanceAction, 'action_start')).mock
        self.event_start = self.useFixture(fixtures.MockPatchObject(
            instance_action.InstanceActionEvent, 'event_start')).mock
        self.event_finish = self.useFixture(fixtures.MockPatchObject(
            instance_action.InstanceActionEvent, 'event_finish')).mock
        self.fault = self.useFixture(fixtures.MockPatchObject(
            objects.InstanceFault, 'record')).mock
        # The database transaction the mapping's save and the event's end
        # share (the functional tests run it for real).
        self.transaction = self.useFixture(fixtures.MockPatchObject(
            instance_action, 'transaction')).mock

    def api_bdm(self, volume_id, **kwargs):
        """The mapping the API creates: no device name, no attachment,
        owned by the API."""
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, volume_id, **kwargs)
        bdm.id = 1
        bdm.set_task('attaching', 'nova-lite-api:api1', 'accepted',
                     {'request_id': self.ctxt.request_id})
        return bdm

    def run_attach(self, volume_id, bdm=None, **kwargs):
        if bdm is None:
            bdm = self.api_bdm(volume_id, tag=kwargs.pop('tag', None))
        self.bdm = bdm
        return attach.attach_volume(
            self.ctxt, self.compute, self.volumes, self.instance, volume_id,
            bdm=bdm, host='conductor1', notifier=self.notifier, **kwargs)

    def assert_failure_recorded(self, exc_class):
        self.event_start.assert_called_once_with(
            self.ctxt, self.instance.uuid, attach.EVENT, 'conductor1')
        exc = self.event_finish.call_args[1]['exc']
        self.assertIsInstance(exc, exc_class)
        self.assertIsInstance(self.fault.call_args[0][2], exc_class)
        args = self.notifier.notify_volume.call_args[0]
        self.assertEqual(('volume_attach', 'error'), args[2:4])

    def test_success(self):
        vol = self.volumes.create_volume()
        device = self.run_attach(vol, device='/dev/vdc')
        self.assertEqual('/dev/vdc', device)
        self.assertEqual('reserved', self.volumes.volumes[vol]['status'])
        [bdm] = self.compute.casts
        self.assertIs(self.bdm, bdm)
        self.assertEqual(self.volumes.live_attachments(vol)[0]['id'],
                         bdm.attachment_id)
        # The API created the mapping and recorded the action.
        self.assertFalse(self.created.called)
        self.assertFalse(self.action_start.called)
        self.assertEqual(self.bdm, self.compute.reserve_calls[0]['bdm'])
        self.assertIsNone(self.event_finish.call_args[1]['exc'])
        self.assertEqual([], self.destroyed)
        self.assertFalse(self.fault.called)
        self.assertFalse(self.notifier.notify_volume.called)

    def test_event_finished_in_the_save_transaction_before_the_cast(self):
        order = []
        txn = self.transaction.return_value
        txn.__enter__.side_effect = lambda: order.append('begin')
        txn.__exit__.side_effect = lambda *a: order.append('commit')
        self.on_move = lambda step: order.append(('move', step))
        self.event_finish.side_effect = (
            lambda *a, **kw: order.append(('finish', kw['exc'])))
        cast = self.compute.attach_volume
        self.compute.attach_volume = lambda *a: (order.append('cast'),
                                                 cast(*a))
        self.run_attach(self.volumes.create_volume())
        self.transaction.assert_called_once_with(self.ctxt)
        # The conductor took the attach and recorded the attachment; the
        # hand-over to the host (with the mapping's attachment id) and the
        # event's end are one transaction, before the cast.
        self.assertEqual([('move', 'reserving'), ('move', 'reserved'),
                          'begin', ('move', 'cast'), ('finish', None),
                          'commit', 'cast'], order)
        self.assertEqual('nova-lite-compute:%s' % self.instance.host,
                         self.bdm.task_owner)

    def test_shelved_offloaded_needs_no_host(self):
        self.instance.vm_state = 'shelved_offloaded'
        self.instance.host = None
        vol = self.volumes.create_volume()
        self.assertIsNone(self.run_attach(vol))
        self.assertEqual([], self.compute.reserve_calls)
        self.assertEqual([], self.compute.casts)
        # Completed without a connector: in-use at once.
        self.assertEqual('in-use', self.volumes.volumes[vol]['status'])
        self.assertIsNone(self.bdm.device_name)
        names = [c[0] for c in self.volumes.calls]
        self.assertEqual(['attachment_create', 'attachment_complete'], names)

    def test_older_api_without_mapping(self):
        vol = self.volumes.create_volume()
        device = attach.attach_volume(
            self.ctxt, self.compute, self.volumes, self.instance, vol,
            tag='t', host='conductor1', notifier=self.notifier)
        self.assertEqual('/dev/vdb', device)
        self.assertEqual(1, self.created.call_count)
        self.action_start.assert_called_once_with(
            self.ctxt, self.instance.uuid, 'attach_volume')
        self.assertEqual('t', self.compute.casts[0].tag)

    def test_older_hosts_create_the_mapping(self):
        self.compute.new_hosts = False
        vol = self.volumes.create_volume()
        bdm = self.api_bdm(vol, tag='t', delete_on_termination=True)
        self.assertEqual('/dev/vdb', self.run_attach(vol, bdm=bdm))
        # The API's mapping gives way to the one the host creates.
        self.assertEqual([bdm], self.destroyed)
        call = self.compute.reserve_calls[0]
        self.assertNotIn('bdm', call)
        self.assertEqual(('t', True), (call['tag'],
                                       call['delete_on_termination']))
        self.assertIsNot(bdm, self.compute.casts[0])

    def test_reserve_failure(self):
        vol = self.volumes.create_volume()
        self.compute.reserve_error = exception.TooManyDiskDevices(maximum=1)
        self.assertRaises(exception.TooManyDiskDevices, self.run_attach, vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertEqual([self.bdm], self.destroyed)
        self.assert_failure_recorded(exception.TooManyDiskDevices)

    def test_volume_not_reservable_destroys_the_bdm(self):
        vol = self.volumes.create_volume(status='in-use')
        self.assertRaises(exception.InvalidVolume, self.run_attach, vol)
        self.assertEqual([self.bdm], self.destroyed)
        self.assertEqual([], self.compute.casts)
        self.assert_failure_recorded(exception.InvalidVolume)

    def test_cast_failure_deletes_the_attachment(self):
        vol = self.volumes.create_volume()
        self.compute.cast_error = messaging.MessageDeliveryFailure('down')
        self.assertRaises(messaging.MessageDeliveryFailure, self.run_attach,
                          vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertEqual([], self.volumes.live_attachments(vol))
        self.assertEqual([self.bdm], self.destroyed)
        # The attachment of a server is deleted as the service.
        delete = [c for c in self.volumes.calls
                  if c[0] == 'attachment_delete']
        self.assertEqual(1, len(delete))
        self.assert_failure_recorded(messaging.MessageDeliveryFailure)
        # The event had been finished before the cast; the failure
        # finished it again, as an error.
        self.assertEqual([None, self.compute.cast_error],
                         [c[1]['exc'] for c in
                          self.event_finish.call_args_list])

    def test_offloaded_completion_failure_deletes_the_attachment(self):
        self.instance.vm_state = 'shelved_offloaded'
        vol = self.volumes.create_volume()
        self.volumes.fail['attachment_complete'] = (
            exception.VolumeBackendAPIException(data='x'))
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.run_attach, vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertEqual([self.bdm], self.destroyed)

    def test_timeout_removes_the_orphan_bdm(self):
        # A host older than RPC 1.2 may create its own mapping after all.
        self.compute.new_hosts = False
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
        self.assertIn(orphan, self.destroyed)
        self.assert_failure_recorded(messaging.MessagingTimeout)

    def test_timeout_without_orphan(self):
        vol = self.volumes.create_volume()
        self.compute.reserve_error = messaging.MessagingTimeout('slow')
        with mock.patch.object(
                objects.BlockDeviceMapping, 'get_by_volume_and_instance',
                side_effect=exception.VolumeBDMNotFound(
                    instance_uuid='i', volume_id=vol)):
            self.assertRaises(messaging.MessagingTimeout, self.run_attach,
                              vol)
        self.assertEqual([self.bdm], self.destroyed)
