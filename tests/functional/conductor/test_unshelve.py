"""The conductor's unshelve workflow on a real database: a shelved server
goes back to its host; an offloaded one to a host chosen among the
compute services that are up (or the one requested, if it is up); a
failure leaves the server idle where it was, with a fault."""

import oslo_messaging as messaging

from nova_lite.conductor import unshelve
from nova_lite import exception
from nova_lite.objects import instance_action
from nova_lite import states
from tests.functional.conductor import base

# Longer ago than service_down_time.
LONG_AGO = 3600


class UnshelveWorkflowTest(base.TestCase):
    def setUp(self):
        super().setUp()
        # Two compute hosts up; c1 runs a server already, so c2 has the
        # fewest. c0 runs none but its heartbeat stopped: it is down.
        self.register_service('c0', seen_ago=LONG_AGO)
        self.register_service('c1')
        self.register_service('c2')
        self.register_service('c3', seen_ago=LONG_AGO)
        self.create_instance(host='c1')

        def observe(method, ctxt, instance):
            # The server as the host that gets the cast reads it.
            return self.reload(instance)
        self.compute.observe = observe

    def shelved(self, vm_state=states.SHELVED_OFFLOADED, host=None):
        instance = self.create_instance(vm_state=vm_state, host=host,
                                        task_state=states.UNSHELVING,
                                        power_state=states.SHUTDOWN)
        self.start_action(instance, instance_action.UNSHELVE)
        return instance

    def run_unshelve(self, instance, host=None):
        unshelve.unshelve_instance(self.ctxt, self.conf, self.compute,
                                   instance, host=host)

    def assert_cast_to(self, instance, host):
        [(method, cast)] = self.compute.casts
        self.assertEqual(('unshelve_instance', instance.uuid, host),
                         (method, cast['instance'].uuid,
                          cast['instance'].host))
        # Written before the cast: the host finds it in the database.
        [(_method, seen)] = self.compute.observed
        self.assertEqual((host, states.UNSHELVING),
                         (seen.host, seen.task_state))
        self.assertEqual((host, states.UNSHELVING),
                         (self.reload(instance).host,
                          self.reload(instance).task_state))
        [event] = self.events(instance)[unshelve.EVENT]
        self.assertEqual((self.CONDUCTOR, instance_action.RESULT_SUCCESS),
                         (event.host, event.result))
        self.assertIsNone(self.fault(instance))

    def assert_put_back(self, instance, exc_class):
        """Idle and offloaded again, with the fault and the event's
        error."""
        again = self.reload(instance)
        self.assertEqual((states.SHELVED_OFFLOADED, None, None),
                         (again.vm_state, again.task_state, again.host))
        fault = self.fault(instance)
        self.assertIn(exc_class.__name__, fault.details)
        [event] = self.events(instance)[unshelve.EVENT]
        self.assertEqual((instance_action.RESULT_ERROR, fault.message),
                         (event.result, event.details))
        return fault

    def test_shelved_server_goes_back_to_its_host(self):
        instance = self.shelved(vm_state=states.SHELVED, host='c1')
        before = self.reload(instance)
        self.run_unshelve(instance)
        self.assert_cast_to(instance, 'c1')
        # Nothing was written on the server: the host powers it on.
        after = self.reload(instance)
        self.assertEqual(before.obj_to_primitive(), after.obj_to_primitive())

    def test_offloaded_server_is_scheduled(self):
        instance = self.shelved()
        self.run_unshelve(instance)
        self.assert_cast_to(instance, 'c2')

    def test_requested_host(self):
        instance = self.shelved()
        # Not the least loaded one, but up: taken.
        self.run_unshelve(instance, host='c1')
        self.assert_cast_to(instance, 'c1')

    def test_requested_host_down(self):
        instance = self.shelved()
        self.run_unshelve(instance, host='c3')
        self.assertEqual([], self.compute.casts)
        fault = self.assert_put_back(instance, exception.NoValidHost)
        self.assertIn('c3', fault.message)

    def test_no_host_up(self):
        for host in ('c1', 'c2'):
            self.register_service(host, seen_ago=LONG_AGO)
        instance = self.shelved()
        self.run_unshelve(instance)
        self.assertEqual([], self.compute.casts)
        self.assert_put_back(instance, exception.NoValidHost)

    def test_cast_failure_puts_it_back(self):
        instance = self.shelved()
        self.compute.cast_error = messaging.MessageDeliveryFailure('down')
        self.run_unshelve(instance, host='c2')
        # The host had been written before the cast, and is taken back.
        [(_method, seen)] = self.compute.observed
        self.assertEqual('c2', seen.host)
        self.assertEqual([], self.compute.casts)
        fault = self.assert_put_back(instance,
                                     messaging.MessageDeliveryFailure)
        self.assertEqual('MessageDeliveryFailure', fault.message)

    def test_server_changed_meanwhile(self):
        instance = self.shelved()
        # Another request deletes the server after the conductor read it.
        other = self.reload(instance)
        other.task_state = states.DELETING
        other.save(expected_task_state=[states.UNSHELVING])
        self.run_unshelve(instance, host='c1')
        self.assertEqual([], self.compute.casts)
        self.assertIsNone(self.fault(instance))
        again = self.reload(instance)
        self.assertEqual((states.DELETING, None),
                         (again.task_state, again.host))
