"""The libvirt driver's extend of a volume disk: ``blockResize`` of the
running guest's disk, found by its serial (the volume id), in bytes."""

from oslo_utils import units

from nova_lite import exception
from tests.unit.virt.libvirt import test_driver as base

VOL1 = base.VOL1
VOL2 = base.VOL2


class ExtendVolumeTest(base.DriverTestCase):
    def setUp(self):
        super().setUp()
        self.spawn()
        self.info = self.base_info = self.file_info(VOL1)
        self.driver.attach_volume(None, self.info, self.instance, '/dev/vdb')
        self.driver.attach_volume(None, self.iscsi_info(VOL2),
                                  self.instance, '/dev/vdc')

    def test_capability(self):
        self.assertTrue(self.driver.capabilities['supports_extend_volume'])

    def test_the_disk_of_the_volume_gets_the_size_in_bytes(self):
        self.driver.extend_volume(None, self.iscsi_info(VOL2),
                                  self.instance, 3 * units.Gi)
        self.assertEqual({'vdc': 3 * units.Gi}, self.dom().sizes)
        # Asked again: the same call, the same size.
        self.driver.extend_volume(None, self.iscsi_info(VOL2),
                                  self.instance, 3 * units.Gi)
        self.assertEqual({'vdc': 3 * units.Gi}, self.dom().sizes)

    def test_a_volume_the_guest_lacks_is_volume_not_found(self):
        self.assertRaises(exception.VolumeNotFound,
                          self.driver.extend_volume, None,
                          self.file_info(base.VOL3), self.instance,
                          units.Gi)
        self.assertEqual({}, self.dom().sizes)

    def test_a_guest_that_does_not_run_is_left(self):
        self.driver.power_off(self.instance)
        self.driver.extend_volume(None, self.info, self.instance,
                                  2 * units.Gi)
        self.assertEqual({}, self.dom().sizes)

    def test_no_domain_is_instance_not_found(self):
        self.driver.destroy(None, self.instance, [])
        self.assertRaises(exception.InstanceNotFound,
                          self.driver.extend_volume, None, self.info,
                          self.instance, units.Gi)
