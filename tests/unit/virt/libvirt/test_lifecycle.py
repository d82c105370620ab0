"""libvirt's lifecycle events reach the compute manager's listener (a
"stopped" event held a moment, dropped when the domain starts again
meanwhile), and ``get_info`` reads the domain's power state."""

import fixtures

from nova_lite import exception
from nova_lite import states
from nova_lite.virt.libvirt import host as vhost
from tests.fixtures import fakelibvirt
from tests.unit.compute import fakes
from tests.unit.virt.libvirt import test_driver


class FakeTimer(object):
    """A ``threading.Timer`` the test fires (``fire``) instead of time."""

    made = []

    def __init__(self, interval, function, args=()):
        self.interval = interval
        self.function = function
        self.args = args
        self.cancelled = False
        self.daemon = False
        FakeTimer.made.append(self)

    def start(self):
        pass

    def cancel(self):
        self.cancelled = True

    def fire(self):
        # What the timer's own thread runs: ``_emit_delayed`` finds the
        # timer by the current thread.
        real = vhost.threading.current_thread
        vhost.threading.current_thread = lambda: self
        try:
            if not self.cancelled:
                self.function(*self.args)
        finally:
            vhost.threading.current_thread = real


class LifecycleEventsTest(test_driver.DriverTestCase):
    def setUp(self):
        super().setUp()
        FakeTimer.made = []
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.virt.libvirt.host.threading.Timer', FakeTimer))
        self.seen = []
        self.driver.register_event_listener(self.seen.append)
        self.driver.spawn(None, self.instance, [])

    def emit(self, event):
        self.libvirt.libvirtd.emit_lifecycle(self.dom(), event)

    def test_started_paused_resumed_go_at_once(self):
        for event in (fakelibvirt.VIR_DOMAIN_EVENT_STARTED,
                      fakelibvirt.VIR_DOMAIN_EVENT_SUSPENDED,
                      fakelibvirt.VIR_DOMAIN_EVENT_RESUMED):
            self.emit(event)
        self.assertEqual([self.instance.uuid] * 3, self.seen)
        # Others (defined, undefined...) are not power changes.
        self.emit(fakelibvirt.VIR_DOMAIN_EVENT_DEFINED)
        self.assertEqual(3, len(self.seen))

    def test_stopped_is_held_then_reported(self):
        self.emit(fakelibvirt.VIR_DOMAIN_EVENT_STOPPED)
        self.assertEqual([], self.seen)
        [timer] = FakeTimer.made
        self.assertEqual(vhost.LIFECYCLE_DELAY, timer.interval)
        timer.fire()
        self.assertEqual([self.instance.uuid], self.seen)

    def test_a_start_meanwhile_drops_the_stop(self):
        # A reboot: stopped, then started again.
        self.emit(fakelibvirt.VIR_DOMAIN_EVENT_STOPPED)
        self.emit(fakelibvirt.VIR_DOMAIN_EVENT_STARTED)
        [timer] = FakeTimer.made
        timer.fire()
        self.assertTrue(timer.cancelled)
        self.assertEqual([self.instance.uuid], self.seen)

    def test_a_listener_that_fails_does_not_stop_the_events(self):
        self.driver.register_event_listener(self._fail)
        self.emit(fakelibvirt.VIR_DOMAIN_EVENT_STARTED)
        self.driver.register_event_listener(self.seen.append)
        self.emit(fakelibvirt.VIR_DOMAIN_EVENT_STARTED)
        self.assertEqual([self.instance.uuid], self.seen)

    @staticmethod
    def _fail(uuid):
        raise RuntimeError('listener failed')


class GetInfoTest(test_driver.DriverTestCase):
    def test_power_state_of_the_domain(self):
        self.assertRaises(exception.InstanceNotFound, self.driver.get_info,
                          self.instance)
        self.driver.spawn(None, self.instance, [])
        self.assertEqual(states.RUNNING,
                         self.driver.get_info(self.instance)['power_state'])
        self.dom().suspend()
        self.assertEqual(states.POWER_PAUSED,
                         self.driver.get_info(self.instance)['power_state'])
        # Destroyed behind the driver's back: shut off, still defined.
        self.dom().destroy()
        self.assertEqual(states.SHUTDOWN,
                         self.driver.get_info(self.instance)['power_state'])
        self.assertEqual(states.NOSTATE, test_driver.libvirt_driver.
                         _power_state(99))
        other = fakes.FakeInstance()
        self.assertRaises(exception.InstanceNotFound, self.driver.get_info,
                          other)


class DomainNameTest(test_driver.DriverTestCase):
    def setUp(self):
        super().setUp()
        self.instance.id = 42

    def test_the_domain_is_named_by_the_template(self):
        self.driver.spawn(None, self.instance, [])
        self.assertEqual('instance-0000002a', self.dom().name())
        self.conf.set_override('instance_name_template', 'vm-%(uuid)s')
        self.assertEqual('vm-%s' % self.instance.uuid,
                         self.driver.domain_name(self.instance))

    def test_a_domain_of_another_name_is_renamed_when_off(self):
        # Named the old way (or by an older template): found by its uuid
        # all along, renamed the next time it starts.
        self.conf.set_override('instance_name_template', 'old-%08x')
        self.driver.spawn(None, self.instance, [])
        self.conf.set_override('instance_name_template', 'instance-%08x')
        self.assertEqual(states.RUNNING,
                         self.driver.get_info(self.instance)['power_state'])
        # Running: libvirt cannot rename it; it keeps its name.
        self.driver.restore_guest(None, self.instance, [])
        self.assertEqual('old-0000002a', self.dom().name())
        self.driver.power_off(self.instance)
        self.driver.power_on(self.instance)
        self.assertEqual('instance-0000002a', self.dom().name())
        self.assertTrue(self.dom().isActive())

    def test_a_shut_off_domain_is_renamed_at_service_start(self):
        self.conf.set_override('instance_name_template', 'old-%08x')
        self.driver.spawn(None, self.instance, [])
        self.driver.power_off(self.instance)
        self.conf.set_override('instance_name_template', 'instance-%08x')
        self.instance.power_state = states.SHUTDOWN
        self.driver.restore_guest(None, self.instance, [])
        self.assertEqual('instance-0000002a', self.dom().name())
        self.assertFalse(self.dom().isActive())
