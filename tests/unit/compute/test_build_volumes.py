"""The volumes of a server being built: connected in their attach mode,
and given back when the build fails."""

from unittest import mock

import fixtures

from nova_lite.compute.host import volume_ops
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import block_device as bdm_obj
from tests.unit.compute import fakes

IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'


class BuildVolumesTest(fakes.HostTestCase):
    def setUp(self):
        super().setUp()
        self.instance = fakes.FakeInstance(vm_state='building')
        self.destroyed = []
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'save'))

        def destroy(bdm):
            self.destroyed.append(bdm.volume_id or bdm.image_id)
            return True
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'destroy', autospec=True,
            side_effect=destroy))

    def reserved(self, device_name, attach_mode=None, **kwargs):
        volume_id = self.volumes.create_volume()
        attachment = self.volumes.attachment_create(
            self.ctxt, volume_id, self.instance.uuid)
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, volume_id,
            device_name=device_name, attach_mode=attach_mode, **kwargs)
        bdm.attachment_id = attachment['id']
        return bdm

    def image_root(self):
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, None, device_name='/dev/vda',
            boot_index=0)
        bdm.source_type = bdm_obj.SOURCE_IMAGE
        bdm.destination_type = bdm_obj.DESTINATION_LOCAL
        bdm.image_id = IMAGE
        return bdm

    def connectors(self):
        return [c[2] for c in self.volumes.calls
                if c[0] == 'attachment_update']

    def test_connector_carries_the_mapping_mode(self):
        bdms = [self.image_root(), self.reserved('/dev/vdb', 'ro'),
                self.reserved('/dev/vdc')]
        disks = volume_ops.connect_for_spawn(self.ctxt, self.driver,
                                             self.volumes, self.instance,
                                             bdms)
        self.assertEqual(['ro', 'rw'], [c['mode'] for c in
                                        self.connectors()])
        self.assertEqual([('/dev/vdb', 'ro'), ('/dev/vdc', 'rw')],
                         [(d['mount_device'], d['mode']) for d in disks])
        self.driver.spawn(self.ctxt, self.instance, disks)
        devices = self.driver.guests[self.instance.uuid].devices
        self.assertEqual({'/dev/vdb': 'ro', '/dev/vdc': 'rw'},
                         {k: v['mode'] for k, v in devices.items()})

    def test_the_mode_block_storage_grants_wins(self):
        # e.g. a volume block storage only exposes read-only.
        bdm = self.reserved('/dev/vdb', 'rw')
        real = self.volumes.attachment_update

        def update(*args, **kwargs):
            return dict(real(*args, **kwargs), attach_mode='ro')
        with mock.patch.object(self.volumes, 'attachment_update',
                               side_effect=update):
            [disk] = volume_ops.connect_for_spawn(
                self.ctxt, self.driver, self.volumes, self.instance, [bdm])
        self.assertEqual('ro', disk['mode'])

    def test_a_legacy_mapping_without_mode_is_rw(self):
        bdm = self.reserved('/dev/vdb')
        bdm.attach_mode = None      # a row from before attach_mode
        real = self.volumes.attachment_update

        def update(*args, **kwargs):
            return dict(real(*args, **kwargs), attach_mode='null')
        with mock.patch.object(self.volumes, 'attachment_update',
                               side_effect=update):
            [disk] = volume_ops.connect_for_spawn(
                self.ctxt, self.driver, self.volumes, self.instance, [bdm])
        self.assertEqual('rw', self.connectors()[0]['mode'])
        self.assertEqual('rw', disk['mode'])

    def test_release_for_failed_build(self):
        root = self.image_root()
        connected = self.reserved('/dev/vdb', 'ro',
                                  delete_on_termination=True)
        reserved = self.reserved('/dev/vdc')
        bdms = [root, connected, reserved]
        disks = volume_ops.connect_for_spawn(
            self.ctxt, self.driver, self.volumes, self.instance,
            [root, connected])
        self.driver.spawn(self.ctxt, self.instance, disks)
        self.assertTrue(self.driver.is_connected(
            connected.get_connection_info()))
        volume_ops.release_for_failed_build(
            self.ctxt, self.driver, self.volumes, self.instance, bdms)
        self.assertNotIn(self.instance.uuid, self.driver.guests)
        self.assertFalse(self.driver.is_connected(
            connected.get_connection_info()))
        for bdm in (connected, reserved):
            # Released, not deleted (delete_on_termination or not).
            self.assertEqual('available',
                             self.volumes.volumes[bdm.volume_id]['status'])
            self.assertEqual([], self.volumes.live_attachments(
                bdm.volume_id))
        self.assertNotIn('delete', [c[0] for c in self.volumes.calls])
        # The volume mappings are gone, the image root's is kept.
        self.assertEqual([connected.volume_id, reserved.volume_id],
                         self.destroyed)

    def test_release_goes_on_after_a_failure(self):
        first = self.reserved('/dev/vdb')
        second = self.reserved('/dev/vdc')
        real = self.volumes.attachment_delete

        def delete(ctxt, attachment_id):
            if attachment_id == first.attachment_id:
                raise exception.ServiceUnavailable(message='unreachable')
            return real(ctxt, attachment_id)
        with mock.patch.object(self.volumes, 'attachment_delete',
                               side_effect=delete):
            volume_ops.release_for_failed_build(
                self.ctxt, self.driver, self.volumes, self.instance,
                [first, second])
        # The one that could not be released keeps its mapping (deleting
        # the server tries again); the other is released.
        self.assertEqual([second.volume_id], self.destroyed)
        self.assertEqual('reserved',
                         self.volumes.volumes[first.volume_id]['status'])
        self.assertEqual('available',
                         self.volumes.volumes[second.volume_id]['status'])
