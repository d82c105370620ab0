"""Server states and the API status."""

import testtools

from nova_lite.compute import checks
from nova_lite.compute import states
from nova_lite import exception
from tests.unit.compute import fakes


class StatusTest(testtools.TestCase):
    def test_status_of(self):
        self.assertEqual('ACTIVE', states.status_of('active', None))
        self.assertEqual('BUILD', states.status_of('building', 'spawning'))
        self.assertEqual('SHUTOFF', states.status_of('stopped', None))
        self.assertEqual('REBOOT', states.status_of('active', 'rebooting'))
        self.assertEqual('SHELVED_OFFLOADED',
                         states.status_of('shelved_offloaded', None))

    def test_vm_states_of_status(self):
        self.assertEqual(['active'], states.vm_states_of_status('active'))
        self.assertEqual(['stopped'], states.vm_states_of_status('SHUTOFF'))
        self.assertEqual([], states.vm_states_of_status('NOPE'))


class ChecksTest(testtools.TestCase):
    def test_state_order_and_messages(self):
        instance = fakes.FakeInstance(vm_state='building', task_state='x',
                                      launched_at=None)
        exc = self.assertRaises(
            exception.InstanceInvalidState, checks.check_instance_state,
            instance, 'attach_volume', states.ATTACH_VOLUME_VM_STATES)
        self.assertEqual(
            "Cannot 'attach_volume' instance %s while it is in vm_state "
            "building" % instance.uuid, exc.format_message())
        self.assertEqual(409, exc.code)
        instance.vm_state = 'active'
        exc = self.assertRaises(
            exception.InstanceInvalidState, checks.check_instance_state,
            instance, 'attach_volume', states.ATTACH_VOLUME_VM_STATES)
        self.assertIn('while it is in task_state x', exc.format_message())
        instance.task_state = None
        exc = self.assertRaises(
            exception.InstanceInvalidState, checks.check_instance_state,
            instance, 'attach_volume', states.ATTACH_VOLUME_VM_STATES)
        self.assertIn('while it is in launched_at None',
                      exc.format_message())
        instance.launched_at = '2026-01-01'
        checks.check_instance_state(instance, 'attach_volume',
                                    states.ATTACH_VOLUME_VM_STATES)

    def test_lock(self):
        instance = fakes.FakeInstance(locked=True)
        user = mock_context(is_admin=False)
        exc = self.assertRaises(exception.InstanceIsLocked,
                                checks.check_instance_lock, user, instance)
        self.assertEqual('Instance %s is locked' % instance.uuid,
                         exc.format_message())
        checks.check_instance_lock(mock_context(is_admin=True), instance)

    def test_host(self):
        self.assertRaises(exception.InstanceNotReady,
                          checks.check_instance_host,
                          fakes.FakeInstance(host=None))

    def test_match_device(self):
        for good in ('/dev/vdb', '/dev/sdc', '/dev/xvdb', '/dev/vdaa',
                     '/dev/hda1'):
            self.assertTrue(checks.match_device(good), good)
        for bad in ('vdb', '/dev/', '/dev/1', 'foo', ''):
            self.assertFalse(checks.match_device(bad), bad)


def mock_context(is_admin):
    class Ctxt(object):
        pass
    ctxt = Ctxt()
    ctxt.is_admin = is_admin
    return ctxt
