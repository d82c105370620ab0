"""Server states and the API status."""

import testtools

from nova_lite.compute import checks
from nova_lite import exception
from nova_lite import states
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


class RecordingInstance(object):
    """Records the fields set and the compare-and-swap ``save`` asked."""

    def __init__(self, **fields):
        self.__dict__.update(fields)
        self.saved = None

    def save(self, **expected):
        self.saved = expected


class MovesTest(testtools.TestCase):
    def test_every_move_names_known_states(self):
        tasks = states.DELETABLE_TASK_STATES + (states.DELETING,)
        for name, (from_tasks, vm_state, task_state) in states.MOVES.items():
            if from_tasks not in (states.ANY, states.GIVEN):
                self.assertTrue(set(from_tasks) <= set(tasks), name)
            self.assertIn(vm_state, states.VM_STATES + (states.KEEP,), name)
            self.assertIn(task_state, tasks + (states.GIVEN,), name)

    def test_move_is_a_compare_and_swap_on_the_task(self):
        instance = RecordingInstance(vm_state='active', task_state='pausing')
        states.move(instance, 'paused', power_state=states.POWER_PAUSED)
        self.assertEqual(('paused', None, states.POWER_PAUSED),
                         (instance.vm_state, instance.task_state,
                          instance.power_state))
        self.assertEqual({'expected_task_state': ['pausing']},
                         instance.saved)

    def test_given_states_and_host(self):
        instance = RecordingInstance(vm_state='active', task_state=None)
        states.move(instance, 'begin', to_task=states.POWERING_OFF)
        self.assertEqual(('active', 'powering-off'),
                         (instance.vm_state, instance.task_state))
        self.assertEqual({'expected_task_state': [None]}, instance.saved)
        states.move(instance, 'abandon', from_task=states.POWERING_OFF)
        self.assertEqual({'expected_task_state': ['powering-off']},
                         instance.saved)
        self.assertIsNone(instance.task_state)
        states.move(instance, 'begin_delete', expected_host=None)
        self.assertEqual(list(states.DELETABLE_TASK_STATES),
                         instance.saved['expected_task_state'])
        self.assertIsNone(instance.saved['expected_host'])

    def test_any_compares_nothing(self):
        instance = RecordingInstance(vm_state='building',
                                     task_state='spawning')
        states.move(instance, 'build_interrupted')
        self.assertEqual(('error', None),
                         (instance.vm_state, instance.task_state))
        self.assertEqual({}, instance.saved)
