"""Host-side volume steps with an in-memory VolumeClient: each step undoes
what it did when a later one fails."""

from unittest import mock

from nova_lite.compute.host import volume_ops
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import instance_action
from tests.unit.compute import fakes


class VolumeOpsTestBase(fakes.HostTestCase):
    def setUp(self):
        super().setUp()
        self.notifier = mock.Mock()
        self.instance = fakes.FakeInstance()
        self.driver.spawn(self.ctxt, self.instance, [])
        self.destroyed = []
        self.useFixture(mockpatch(objects.BlockDeviceMapping, 'save'))
        self.useFixture(mockpatch(
            objects.BlockDeviceMapping, 'destroy',
            side_effect=lambda *a: self.destroyed.append(True)))
        # The database transaction the mapping's delete and the event's
        # end share (the mapping's writes are mocked: no database here).
        self.transaction = self.useFixture(mockpatch(
            instance_action, 'transaction')).mock

    def reserved_bdm(self, volume_id=None, multiattach=False):
        volume_id = volume_id or self.volumes.create_volume(
            multiattach=multiattach)
        attachment = self.volumes.attachment_create(self.ctxt, volume_id,
                                                    self.instance.uuid)
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, volume_id, device_name='/dev/vdb')
        bdm.attachment_id = attachment['id']
        return bdm

    def events(self):
        return [c[0][3] for c in self.notifier.notify_volume.call_args_list]


def mockpatch(obj, attr, **kwargs):
    import fixtures
    return fixtures.MockPatchObject(obj, attr, **kwargs)


class ConnectTest(VolumeOpsTestBase):
    def _connector_sent(self):
        [call] = [c for c in self.volumes.calls
                  if c[0] == 'attachment_update']
        return call[2]

    def test_connects_the_mapping_in_its_mode(self):
        bdm = self.reserved_bdm()
        bdm.attach_mode = 'ro'
        info, mode = volume_ops.connect(self.ctxt, self.driver, self.volumes,
                                        self.instance, bdm)
        self.assertEqual('ro', self._connector_sent()['mode'])
        self.assertEqual(('ro', 'ro', bdm.attachment_id),
                         (mode, info['access_mode'], info['attachment_id']))
        self.assertEqual('attaching', self.volumes.attachments[
            bdm.attachment_id]['status'])

    def test_connection_info_carries_the_volume_id_as_serial(self):
        bdm = self.reserved_bdm()
        info, _mode = volume_ops.connect(self.ctxt, self.driver,
                                         self.volumes, self.instance, bdm)
        self.assertEqual(bdm.volume_id, info['serial'])
        new = self.volumes.create_volume()
        other = volume_ops.connect(self.ctxt, self.driver, self.volumes,
                                   self.instance, bdm, volume_id=new)[0]
        self.assertEqual(new, other['serial'])

    def test_multiattach_volume_is_flagged_for_the_hypervisor(self):
        bdm = self.reserved_bdm(multiattach=True)
        info, _mode = volume_ops.connect(self.ctxt, self.driver,
                                         self.volumes, self.instance, bdm)
        self.assertIs(True, info['multiattach'])
        single = volume_ops.connect(self.ctxt, self.driver, self.volumes,
                                    self.instance, self.reserved_bdm())[0]
        self.assertNotIn('multiattach', single)

    def test_mode_asked_wins_over_the_mappings(self):
        bdm = self.reserved_bdm()
        bdm.attach_mode = 'ro'
        info, mode = volume_ops.connect(self.ctxt, self.driver, self.volumes,
                                        self.instance, bdm, mode='rw')
        self.assertEqual(('rw', 'rw'), (self._connector_sent()['mode'], mode))

    def test_no_mode_asked_is_rw_without_mode_in_the_connector(self):
        bdm = self.reserved_bdm()
        bdm.attach_mode = None      # a mapping made before 2.105
        info, mode = volume_ops.connect(self.ctxt, self.driver, self.volumes,
                                        self.instance, bdm)
        self.assertNotIn('mode', self._connector_sent())
        self.assertEqual('rw', mode)

    def test_the_mode_block_storage_granted_is_the_guests(self):
        bdm = self.reserved_bdm()
        update = self.volumes.attachment_update

        def read_only_volume(*args, **kwargs):
            return dict(update(*args, **kwargs), attach_mode='ro')
        self.volumes.attachment_update = read_only_volume
        info, mode = volume_ops.connect(self.ctxt, self.driver, self.volumes,
                                        self.instance, bdm, mode='rw')
        self.assertEqual('ro', mode)

    def test_another_attachment_of_the_mapping(self):
        # A swap connects the new volume's attachment at the mapping's
        # device; the mapping's own attachment is left alone.
        bdm = self.reserved_bdm()
        new = self.volumes.attachment_create(
            self.ctxt, self.volumes.create_volume(), self.instance.uuid)
        info, mode = volume_ops.connect(self.ctxt, self.driver, self.volumes,
                                        self.instance, bdm,
                                        attachment_id=new['id'])
        self.assertEqual(new['id'], info['attachment_id'])
        self.assertEqual(('attaching', 'reserved'), (
            self.volumes.attachments[new['id']]['status'],
            self.volumes.attachments[bdm.attachment_id]['status']))
        self.assertEqual('/dev/vdb',
                         self.volumes.attachments[new['id']]['mountpoint'])


class AttachTest(VolumeOpsTestBase):
    def test_attach(self):
        bdm = self.reserved_bdm()
        volume_ops.attach(self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        volume = self.volumes.volumes[bdm.volume_id]
        self.assertEqual('in-use', volume['status'])
        self.assertIn('/dev/vdb',
                      self.driver.guests[self.instance.uuid].devices)
        self.assertEqual({'driver_volume_type': 'fake', 'access_mode': 'rw',
                          'attachment_id': bdm.attachment_id,
                          'volume_id': bdm.volume_id,
                          'serial': bdm.volume_id},
                         bdm.get_connection_info())
        self.assertEqual(['start', 'end'], self.events())
        update = [c for c in self.volumes.calls
                  if c[0] == 'attachment_update'][0]
        self.assertEqual('compute1', update[2]['host'])
        self.assertEqual('/dev/vdb', update[3])

    def _assert_rolled_back(self, bdm):
        volume = self.volumes.volumes[bdm.volume_id]
        self.assertEqual('available', volume['status'])
        self.assertEqual([], self.volumes.live_attachments(bdm.volume_id))
        self.assertEqual([True], self.destroyed)
        self.assertNotIn('/dev/vdb',
                         self.driver.guests[self.instance.uuid].devices)
        self.assertEqual(['start', 'error'], self.events())
        error = self.notifier.notify_volume.call_args_list[-1]
        self.assertIsInstance(error[1]['exc'], Exception)

    def test_backend_connect_failure_rolls_back(self):
        bdm = self.reserved_bdm()
        self.volumes.fail['attachment_update'] = (
            exception.VolumeBackendAPIException(data='no export'))
        self.assertRaises(exception.VolumeBackendAPIException,
                          volume_ops.attach, self.ctxt, self.driver,
                          self.volumes, self.notifier, self.instance, bdm)
        self._assert_rolled_back(bdm)

    def test_driver_failure_rolls_back(self):
        bdm = self.reserved_bdm()
        with mock.patch.object(self.driver, 'attach_volume',
                               side_effect=RuntimeError('hypervisor')):
            self.assertRaises(RuntimeError, volume_ops.attach, self.ctxt,
                              self.driver, self.volumes, self.notifier,
                              self.instance, bdm)
        self._assert_rolled_back(bdm)

    def test_complete_failure_undoes_the_guest_attach(self):
        bdm = self.reserved_bdm()
        self.volumes.fail['attachment_complete'] = RuntimeError('boom')
        self.assertRaises(RuntimeError, volume_ops.attach, self.ctxt,
                          self.driver, self.volumes, self.notifier,
                          self.instance, bdm)
        self._assert_rolled_back(bdm)

    def test_a_detach_that_took_over_the_completed_attach_is_left(self):
        # The volume was in-use for the server, so the API handed the
        # attach's task to a detach before this host cleared it.
        bdm = self.reserved_bdm()
        bdm.task, bdm.task_owner, bdm.task_step = (
            'attaching', 'nova-lite-conductor:c1', 'cast')
        self.useFixture(mockpatch(objects.BlockDeviceMapping, 'move_task'))
        self.useFixture(mockpatch(
            objects.BlockDeviceMapping, 'end_task',
            side_effect=exception.TaskOwnerChanged(
                task='attaching', volume_id=bdm.volume_id,
                instance_uuid=self.instance.uuid)))
        volume_ops.attach(self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        self.assertEqual('in-use',
                         self.volumes.volumes[bdm.volume_id]['status'])
        self.assertIn('/dev/vdb',
                      self.driver.guests[self.instance.uuid].devices)
        self.assertEqual([], self.destroyed)
        self.assertEqual(['start', 'end'], self.events())

    def test_a_disk_already_at_the_device_is_never_adopted(self):
        # The guest has a disk of the same volume at the name this attach
        # reserved: one this host did not remove (the volume was freed
        # without it), not this attach's. Refused, and left as it was.
        bdm = self.reserved_bdm()
        bdm.task, bdm.task_owner, bdm.task_step = (
            'attaching', 'nova-lite-conductor:c1', 'cast')
        self.useFixture(mockpatch(objects.BlockDeviceMapping, 'move_task'))
        stale = {'connection_info': {'serial': bdm.volume_id},
                 'mode': 'rw'}
        devices = self.driver.guests[self.instance.uuid].devices
        devices['/dev/vdb'] = stale
        self.assertRaises(exception.DevicePathInUse, volume_ops.attach,
                          self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        self.assertIs(stale, devices['/dev/vdb'])
        self.assertEqual([True], self.destroyed)
        self.assertEqual([], self.volumes.live_attachments(bdm.volume_id))
        self.assertEqual('available',
                         self.volumes.volumes[bdm.volume_id]['status'])
        self.assertEqual(['start', 'error'], self.events())

    def tracked_bdm(self):
        """A reserved mapping whose attach task the conductor handed to
        this host (its moves recorded on the object: no database)."""
        bdm = self.reserved_bdm()
        bdm.task, bdm.task_owner, bdm.task_step = (
            'attaching', 'nova-lite-conductor:c1', 'cast')

        def move(step, owner=None, data=None, **changes):
            bdm.task_step = step
            for name, value in changes.items():
                setattr(bdm, name, value)
        self.useFixture(mockpatch(objects.BlockDeviceMapping, 'move_task',
                                  side_effect=move))
        return bdm

    def test_unreachable_block_storage_leaves_the_roll_back_to_settling(self):
        # The connect failed (block storage could not be reached), and so
        # did the delete of its attachment: the mapping keeps its task at
        # ``connecting`` for the host's settling, which rolls it back.
        bdm = self.tracked_bdm()
        down = exception.ServiceUnavailable(message='cannot be reached')
        self.volumes.fail['attachment_update'] = down
        self.volumes.fail['attachment_delete'] = down
        self.assertRaises(exception.ServiceUnavailable, volume_ops.attach,
                          self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        self.assertEqual([], self.destroyed)
        self.assertEqual('connecting', bdm.task_step)
        self.assertEqual(['reserved'], [
            a['status'] for a in self.volumes.live_attachments(
                bdm.volume_id)])
        self.assertEqual(['start', 'error'], self.events())

    def test_a_failed_connect_block_storage_undid_is_rolled_back(self):
        bdm = self.tracked_bdm()
        self.volumes.fail['attachment_update'] = (
            exception.ServiceUnavailable(message='cannot be reached'))
        self.assertRaises(exception.ServiceUnavailable, volume_ops.attach,
                          self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        self._assert_rolled_back(bdm)

    def test_a_connected_attach_is_never_left_to_settling(self):
        # Past ``connected`` the settling would finish the attach: the
        # mapping goes even when block storage keeps its attachment.
        bdm = self.tracked_bdm()
        self.volumes.fail['attachment_delete'] = (
            exception.ServiceUnavailable(message='cannot be reached'))
        with mock.patch.object(self.driver, 'attach_volume',
                               side_effect=RuntimeError('hypervisor')):
            self.assertRaises(RuntimeError, volume_ops.attach, self.ctxt,
                              self.driver, self.volumes, self.notifier,
                              self.instance, bdm)
        self.assertEqual('connected', bdm.task_step)
        self.assertEqual([True], self.destroyed)

    def test_attach_mode_travels_in_the_connector(self):
        bdm = self.reserved_bdm()
        bdm.attach_mode = 'ro'
        volume_ops.attach(self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        self.assertEqual(
            'ro', self.driver.guests[self.instance.uuid].devices[
                '/dev/vdb']['mode'])


class DetachTest(VolumeOpsTestBase):
    def attached_bdm(self):
        bdm = self.reserved_bdm()
        volume_ops.attach(self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        self.notifier.reset_mock()
        self.volumes.begin_detaching(self.ctxt, bdm.volume_id)
        return bdm

    def test_detach(self):
        bdm = self.attached_bdm()
        volume_ops.detach(self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        self.assertEqual('available',
                         self.volumes.volumes[bdm.volume_id]['status'])
        self.assertEqual([True], self.destroyed)
        self.assertEqual({}, self.driver.guests[self.instance.uuid].devices)
        self.assertEqual(['start', 'end'], self.events())

    def test_mapping_deleted_and_event_finished_in_one_transaction(self):
        bdm = self.attached_bdm()
        order = []
        txn = self.transaction.return_value
        txn.__enter__.side_effect = lambda: order.append('begin')
        txn.__exit__.side_effect = lambda *a: order.append('commit')
        objects.BlockDeviceMapping.destroy.side_effect = (
            lambda *a: order.append('destroy'))
        event = mock.Mock()
        event.finish.side_effect = lambda: order.append('finish')
        self.notifier.notify_volume.side_effect = (
            lambda *a, **kw: order.append(a[3]))
        volume_ops.detach(self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm, event=event)
        self.transaction.assert_called_once_with(self.ctxt)
        self.assertEqual(['start', 'begin', 'destroy', 'finish', 'commit',
                          'end'], order)
        self.assertEqual('available',
                         self.volumes.volumes[bdm.volume_id]['status'])

    def test_driver_failure_keeps_the_volume_in_use(self):
        bdm = self.attached_bdm()
        with mock.patch.object(self.driver, 'detach_volume',
                               side_effect=RuntimeError('busy')):
            self.assertRaises(RuntimeError, volume_ops.detach, self.ctxt,
                              self.driver, self.volumes, self.notifier,
                              self.instance, bdm)
        self.assertEqual('in-use',
                         self.volumes.volumes[bdm.volume_id]['status'])
        self.assertEqual([], self.destroyed)
        self.transaction.assert_not_called()


class SwapTest(VolumeOpsTestBase):
    def test_swap_and_its_rollback(self):
        bdm = self.reserved_bdm()
        volume_ops.attach(self.ctxt, self.driver, self.volumes,
                          self.notifier, self.instance, bdm)
        old = bdm.volume_id
        new = self.volumes.create_volume()
        self.volumes.begin_detaching(self.ctxt, old)
        new_att = self.volumes.attachment_create(self.ctxt, new,
                                                 self.instance.uuid)
        volume_ops.swap(self.ctxt, self.driver, self.volumes, self.instance,
                        bdm, new, new_att['id'])
        self.assertEqual('available', self.volumes.volumes[old]['status'])
        self.assertEqual('in-use', self.volumes.volumes[new]['status'])
        self.assertEqual((new, new_att['id']),
                         (bdm.volume_id, bdm.attachment_id))
        # And a failing swap puts everything back.
        third = self.volumes.create_volume()
        self.volumes.begin_detaching(self.ctxt, new)
        third_att = self.volumes.attachment_create(self.ctxt, third,
                                                   self.instance.uuid)
        with mock.patch.object(self.driver, 'swap_volume',
                               side_effect=RuntimeError('no')):
            self.assertRaises(RuntimeError, volume_ops.swap, self.ctxt,
                              self.driver, self.volumes, self.instance, bdm,
                              third, third_att['id'])
        self.assertEqual('in-use', self.volumes.volumes[new]['status'])
        self.assertEqual('available', self.volumes.volumes[third]['status'])
        self.assertEqual(new, bdm.volume_id)


class ReserveTest(VolumeOpsTestBase):
    def setUp(self):
        super().setUp()
        self.existing = []
        self.useFixture(mockpatch(
            objects.BlockDeviceMapping, 'get_all_by_instance',
            side_effect=lambda ctxt, uuid: list(self.existing)))
        self.created = []

        def create(bdm):
            if any(b.device_name == bdm.device_name for b in self.existing):
                raise exception.DevicePathInUse(path=bdm.device_name)
            self.created.append(bdm)
        self.useFixture(mockpatch(objects.BlockDeviceMapping, 'create',
                                  autospec=True, side_effect=create))

    def _bdm(self, device, volume_id=None):
        return objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid,
            volume_id or self.volumes.create_volume(), device_name=device)

    def reserve(self, volume_id='8d0a4d4c-1b2a-4f8e-9a44-000000000001',
                **kwargs):
        return volume_ops.reserve_device_name(
            self.ctxt, self.conf, self.driver, self.instance, volume_id,
            **kwargs)

    def test_picks_the_next_free_name(self):
        self.existing = [self._bdm('/dev/vda')]
        bdm = self.reserve(tag='t', delete_on_termination=True)
        self.assertEqual('/dev/vdb', bdm.device_name)
        self.assertEqual('t', bdm.tag)
        self.assertTrue(bdm.delete_on_termination)
        self.assertIsNone(bdm.boot_index)

    def test_a_name_the_guest_still_uses_is_not_given(self):
        # A disk no mapping names (one this host could not remove).
        self.existing = [self._bdm('/dev/vda')]
        self.driver.guests[self.instance.uuid].devices['/dev/vdb'] = {
            'connection_info': {'serial': 'stale'}, 'mode': 'rw'}
        self.assertEqual('/dev/vdc',
                         self.reserve(device='/dev/vdb').device_name)

    def test_already_attached(self):
        vol = self.volumes.create_volume()
        self.existing = [self._bdm('/dev/vdb', volume_id=vol)]
        exc = self.assertRaises(exception.InvalidVolume, self.reserve,
                                volume_id=vol)
        self.assertEqual('Invalid volume: volume %s already attached' % vol,
                         exc.format_message())

    def test_too_many_devices(self):
        self.conf.set_override('max_disk_devices_to_attach', 2,
                               group='compute')
        self.existing = [self._bdm('/dev/vda'), self._bdm('/dev/vdb')]
        exc = self.assertRaises(exception.TooManyDiskDevices, self.reserve)
        self.assertEqual(403, exc.code)

    def test_lost_race_takes_another_name(self):
        racer = self._bdm('/dev/vdb')
        calls = []

        def get_all(ctxt, uuid):
            # First read: only the root; by the insert another process
            # has taken /dev/vdb.
            calls.append(1)
            return [self._bdm('/dev/vda')] + ([racer] if len(calls) > 1
                                              else [])
        self.existing = [racer]
        with mock.patch.object(objects.BlockDeviceMapping,
                               'get_all_by_instance', side_effect=get_all):
            bdm = self.reserve()
        self.assertEqual('/dev/vdc', bdm.device_name)

    def test_driver_capabilities(self):
        with mock.patch.dict(self.driver.capabilities,
                             {'supports_tagged_attach_volume': False,
                              'supports_multiattach': False}):
            self.assertRaises(exception.VolumeTaggedAttachNotSupported,
                              self.reserve, tag='x')
            self.assertRaises(exception.MultiattachNotSupportedByVirtDriver,
                              self.reserve, multiattach=True)


class ReserveExistingMappingTest(ReserveTest):
    """Since compute RPC 1.2 the API creates the mapping (no device name)
    and the host only names it."""

    def setUp(self):
        super().setUp()
        self.ids = iter(range(1, 1000))
        self.saved = []
        self.save_error = None

        def save(bdm):
            if self.save_error:
                error, self.save_error = self.save_error, None
                raise error
            self.saved.append((bdm, bdm.device_name))
        self.useFixture(mockpatch(objects.BlockDeviceMapping, 'save',
                                  new=save))

    def _bdm(self, device, volume_id=None):
        bdm = super()._bdm(device, volume_id=volume_id)
        bdm.id = next(self.ids)
        return bdm

    def api_bdm(self, tag=None):
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, self.volumes.create_volume(),
            tag=tag)
        bdm.id = 1000
        return bdm

    def test_names_the_given_mapping(self):
        bdm = self.api_bdm(tag='t')
        self.existing = [self._bdm('/dev/vda'), bdm]
        named = self.reserve(volume_id=bdm.volume_id, bdm=bdm)
        self.assertIs(bdm, named)
        self.assertEqual([(bdm, '/dev/vdb')], self.saved)
        self.assertEqual([], self.created)

    def test_counts_the_mapping_once(self):
        self.conf.set_override('max_disk_devices_to_attach', 2,
                               group='compute')
        bdm = self.api_bdm()
        self.existing = [self._bdm('/dev/vda'), bdm]
        self.assertEqual('/dev/vdb', self.reserve(
            volume_id=bdm.volume_id, bdm=bdm).device_name)
        self.conf.set_override('max_disk_devices_to_attach', 1,
                               group='compute')
        self.assertRaises(exception.TooManyDiskDevices, self.reserve,
                          volume_id=bdm.volume_id, bdm=bdm)

    def test_tag_of_the_mapping_is_checked(self):
        bdm = self.api_bdm(tag='x')
        self.existing = [bdm]
        with mock.patch.dict(self.driver.capabilities,
                             {'supports_tagged_attach_volume': False}):
            self.assertRaises(exception.VolumeTaggedAttachNotSupported,
                              self.reserve, volume_id=bdm.volume_id, bdm=bdm)

    def test_lost_race_on_the_name_takes_another(self):
        bdm = self.api_bdm()
        racer = self._bdm('/dev/vda')
        reads = []

        def get_all(ctxt, uuid):
            reads.append(1)
            return [bdm] + ([racer] if len(reads) > 1 else [])

        # Another process takes /dev/vda between the read and the write.
        self.save_error = exception.DevicePathInUse(path='/dev/vda')
        with mock.patch.object(objects.BlockDeviceMapping,
                               'get_all_by_instance', side_effect=get_all):
            named = self.reserve(volume_id=bdm.volume_id, bdm=bdm)
        self.assertEqual([(bdm, '/dev/vdb')], self.saved)
        self.assertEqual('/dev/vdb', named.device_name)
        self.assertEqual(2, len(reads))
