"""The conductor's unshelve workflow: back to the host of a shelved
server, or a host chosen (or requested) for an offloaded one; a failure
leaves the server idle where it was, with a fault."""

from unittest import mock

import fixtures
import oslo_messaging as messaging

from nova_lite.conductor import build
from nova_lite.conductor import unshelve
from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from tests import base
from tests.unit.compute import fakes


class FakeInstance(fakes.FakeInstance):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.saves = []
        self.save_error = None

    def save(self, **expected):
        if self.save_error:
            raise self.save_error
        self.saves.append((dict(task_state=self.task_state,
                                host=self.host), expected))


class UnshelveWorkflowTest(base.TestCase):
    def setUp(self):
        super().setUp()
        objects.register_all()
        self.ctxt = nl_context.RequestContext('demo', 'demo')
        self.compute = mock.Mock()
        self.useFixture(fixtures.MockPatchObject(
            instance_action, 'EventReporter'))
        self.fault = self.useFixture(fixtures.MockPatchObject(
            objects.InstanceFault, 'record')).mock
        self.up = self.useFixture(fixtures.MockPatchObject(
            service_obj, 'up_hosts', return_value=['c1', 'c2'])).mock

    def run_unshelve(self, instance, host=None):
        unshelve.unshelve_instance(self.ctxt, self.conf, self.compute,
                                   instance, host=host)

    def test_shelved_server_goes_back_to_its_host(self):
        instance = FakeInstance(vm_state='shelved', host='c1',
                                task_state='unshelving')
        self.run_unshelve(instance)
        self.compute.unshelve_instance.assert_called_once_with(
            self.ctxt, instance)
        self.assertEqual([], instance.saves)

    def test_offloaded_server_is_scheduled(self):
        instance = FakeInstance(vm_state='shelved_offloaded', host=None,
                                task_state='unshelving')
        with mock.patch.object(build, 'select_host',
                               return_value='c2') as select:
            self.run_unshelve(instance)
        select.assert_called_once_with(self.ctxt, self.conf)
        self.assertEqual(
            [({'task_state': 'unshelving', 'host': 'c2'},
              {'expected_task_state': ['unshelving'],
               'expected_host': None})], instance.saves)
        self.compute.unshelve_instance.assert_called_once_with(
            self.ctxt, instance)

    def test_requested_host(self):
        instance = FakeInstance(vm_state='shelved_offloaded', host=None,
                                task_state='unshelving')
        self.run_unshelve(instance, host='c1')
        self.assertEqual('c1', instance.host)

    def test_requested_host_down(self):
        instance = FakeInstance(vm_state='shelved_offloaded', host=None,
                                task_state='unshelving')
        self.run_unshelve(instance, host='c3')
        self.assertFalse(self.compute.unshelve_instance.called)
        self.assertEqual((None, None), (instance.task_state, instance.host))
        exc = self.fault.call_args[0][2]
        self.assertIsInstance(exc, exception.NoValidHost)
        self.assertIn('c3', exc.format_message())

    def test_cast_failure_puts_it_back(self):
        instance = FakeInstance(vm_state='shelved_offloaded', host=None,
                                task_state='unshelving')
        self.compute.unshelve_instance.side_effect = \
            messaging.MessageDeliveryFailure('down')
        self.run_unshelve(instance, host='c2')
        self.assertEqual((None, None), (instance.task_state, instance.host))
        self.assertEqual({'task_state': None, 'host': None},
                         instance.saves[-1][0])
        self.assertTrue(self.fault.called)

    def test_server_changed_meanwhile(self):
        instance = FakeInstance(vm_state='shelved_offloaded', host=None,
                                task_state='unshelving')
        instance.save_error = exception.UnexpectedTaskStateError(
            instance_uuid=instance.uuid, expected=['unshelving'],
            actual='deleting')
        self.run_unshelve(instance, host='c1')
        self.assertFalse(self.compute.unshelve_instance.called)
        self.assertFalse(self.fault.called)
