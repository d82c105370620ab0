"""Host-side shelve steps with an in-memory VolumeClient and the fake
driver: offload closes connections but keeps attachments, unshelve names
and connects every volume, and a failed connection rolls back to
shelved_offloaded without leaving anything half-attached."""

import fixtures

from nova_lite.compute.host import shelve_ops
from nova_lite import exception
from nova_lite import objects
from tests.unit.compute import fakes


class FakeInstance(fakes.FakeInstance):
    def save(self, **expected):
        self.saved = (self.vm_state, self.task_state, self.host, expected)


class ShelveOpsTest(fakes.HostTestCase):
    def setUp(self):
        super().setUp()
        self.instance = FakeInstance()
        root = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, None, device_name='/dev/vda',
            boot_index=0)
        root.source_type = root.destination_type = 'local'
        self.bdms = [root]
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'save'))
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'get_all_by_instance',
            side_effect=lambda ctxt, uuid: list(self.bdms)))

    def attached(self, device=None, connected=True):
        """A volume attached to the server: connected to this host, or
        (offloaded) completed without a connector."""
        volume_id = self.volumes.create_volume()
        attachment = self.volumes.attachment_create(
            self.ctxt, volume_id, self.instance.uuid)
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, volume_id, device_name=device)
        bdm.attachment_id = attachment['id']
        if connected:
            info = self.volumes.attachment_update(
                self.ctxt, attachment['id'], {'host': 'compute1'},
                mountpoint=device)['connection_info']
            bdm.set_connection_info(info)
        self.volumes.attachment_complete(self.ctxt, attachment['id'])
        self.bdms.append(bdm)
        return bdm

    def live(self, bdm):
        return self.volumes.live_attachments(bdm.volume_id)

    def test_disconnect_keeping_attachment(self):
        bdm = self.attached('/dev/vdb')
        old = bdm.attachment_id
        shelve_ops.disconnect_keeping_attachment(self.ctxt, self.volumes,
                                                 bdm, self.driver)
        [attachment] = self.live(bdm)
        self.assertNotEqual(old, attachment['id'])
        self.assertEqual((attachment['id'], 'attached', {}),
                         (bdm.attachment_id, attachment['status'],
                          attachment['connection_info']))
        self.assertIsNone(bdm.connection_info)
        self.assertEqual('in-use',
                         self.volumes.volumes[bdm.volume_id]['status'])

    def test_offload(self):
        connected = self.attached('/dev/vdb')
        offloaded = self.attached(connected=False)
        self.driver.spawn(self.ctxt, self.instance, [])
        self.instance.task_state = 'shelving_offloading'
        shelve_ops.offload(self.ctxt, self.driver, self.volumes,
                           self.instance)
        self.assertNotIn(self.instance.uuid, self.driver.guests)
        self.assertEqual(('shelved_offloaded', None, None,
                          {'expected_task_state': ['shelving_offloading']}),
                         self.instance.saved)
        self.assertIsNone(connected.connection_info)
        # Only the connected volume's attachment was replaced.
        deleted = [c[1] for c in self.volumes.calls
                   if c[0] == 'attachment_delete']
        self.assertEqual(1, len(deleted))
        for bdm in (connected, offloaded):
            self.assertEqual('in-use',
                             self.volumes.volumes[bdm.volume_id]['status'])

    def test_unshelve_offloaded(self):
        named = self.attached('/dev/vdb', connected=False)
        unnamed = self.attached(connected=False)
        self.instance.vm_state = 'shelved_offloaded'
        self.instance.task_state = 'unshelving'
        shelve_ops.unshelve(self.ctxt, self.driver, self.volumes,
                            'compute1', self.instance)
        self.assertEqual('/dev/vdc', unnamed.device_name)
        guest = self.driver.guests[self.instance.uuid]
        self.assertEqual({'/dev/vdb', '/dev/vdc'}, set(guest.devices))
        for bdm in (named, unnamed):
            [attachment] = self.live(bdm)
            self.assertEqual('attached', attachment['status'])
            self.assertTrue(bdm.connection_info)
        self.assertEqual(('active', None), self.instance.saved[:2])

    def test_failed_connection_rolls_back(self):
        first = self.attached('/dev/vdb', connected=False)
        second = self.attached(connected=False)
        self.instance.vm_state = 'shelved_offloaded'
        self.instance.task_state = 'unshelving'
        real_update = self.volumes.attachment_update

        def update(ctxt, attachment_id, connector, mountpoint=None):
            if attachment_id == second.attachment_id:
                raise exception.VolumeBackendAPIException(data='no path')
            return real_update(ctxt, attachment_id, connector, mountpoint)
        self.volumes.attachment_update = update
        exc = self.assertRaises(
            exception.UnshelveVolumeConnectFailed, shelve_ops.unshelve,
            self.ctxt, self.driver, self.volumes, 'compute1', self.instance)
        self.assertIn(second.volume_id, exc.format_message())
        self.assertIn('no path', exc.format_message())
        self.assertNotIn(self.instance.uuid, self.driver.guests)
        self.assertEqual(('shelved_offloaded', None, None),
                         self.instance.saved[:3])
        for bdm in (first, second):
            [attachment] = self.live(bdm)
            self.assertEqual(('attached', {}),
                             (attachment['status'],
                              attachment['connection_info']))
            self.assertIsNone(bdm.connection_info)
            self.assertEqual('in-use',
                             self.volumes.volumes[bdm.volume_id]['status'])
