"""The libvirt driver's removal of a stale disk (a volume freed without
the host while it was fenced): one unplug request with a bounded wait,
then the persistent definition; and the hard power-off that stops a
guest that does not let go."""

from unittest import mock

from tests.fixtures import fakelibvirt
from tests.unit.virt.libvirt import test_driver

VOL1 = test_driver.VOL1


class RemoveStaleDiskTest(test_driver.DriverTestCase):
    def setUp(self):
        super().setUp()
        self.spawn()
        self.driver.attach_volume(None, self.file_info(), self.instance,
                                  '/dev/vdb')

    def test_a_guest_that_lets_go(self):
        self.assertTrue(self.driver.remove_stale_disk(self.instance,
                                                      '/dev/vdb'))
        self.assertEqual({}, self.live_disks())
        self.assertEqual({}, self.defined_disks())

    def test_a_guest_that_never_answers_is_asked_once(self):
        dom = self.dom()
        dom.unplug = 'ignore'
        with mock.patch.object(dom, 'detachDeviceFlags',
                               wraps=dom.detachDeviceFlags) as detach:
            self.assertFalse(self.driver.remove_stale_disk(self.instance,
                                                           '/dev/vdb'))
        # One live request, then the definition, whatever the guest said.
        self.assertEqual(
            [fakelibvirt.VIR_DOMAIN_AFFECT_LIVE,
             fakelibvirt.VIR_DOMAIN_AFFECT_CONFIG],
            [c.args[1] for c in detach.call_args_list])
        self.assertEqual(VOL1, self.live_disks()['vdb']['serial'])
        self.assertEqual({}, self.defined_disks())
        # Powered off at once (no clean shutdown asked): the guest no
        # longer has the disk, and starts again without it.
        self.conf.set_override('shutdown_timeout', 60)
        dom.obeys_shutdown = False
        self.driver.power_off(self.instance, timeout=0)
        self.assertFalse(dom.isActive())
        self.assertEqual({}, self.driver.volume_devices(self.instance))
        self.driver.power_on(self.instance)
        self.assertEqual({}, self.driver.volume_devices(self.instance))

    def test_a_refusal_is_an_answer(self):
        self.dom().unplug = 'fail'
        self.assertFalse(self.driver.remove_stale_disk(self.instance,
                                                       '/dev/vdb'))
        self.assertEqual({}, self.defined_disks())

    def test_a_stopped_guest_or_none(self):
        self.driver.power_off(self.instance, timeout=0)
        self.assertTrue(self.driver.remove_stale_disk(self.instance,
                                                      '/dev/vdb'))
        self.assertEqual({}, self.defined_disks())
        self.driver.destroy(None, self.instance, None)
        self.assertTrue(self.driver.remove_stale_disk(self.instance,
                                                      '/dev/vdb'))
