"""The power-state sync's rules (Nova's ``_sync_instance_power_state``),
server by server, with the fake driver's guests; and which guests the
host deals with when their server is gone (``recovery.reap_guests``,
Nova's ``running_deleted_instance_action``)."""

import datetime

import fixtures

from nova_lite.compute.host import power_sync
from nova_lite.compute.host import recovery
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import instance_action
from nova_lite import states
from nova_lite import utils
from nova_lite.virt import driver as virt_driver
from nova_lite.virt import fake as virt_fake
from tests.unit.compute import fakes


class FakeInstance(fakes.FakeInstance):
    """Records each compare-and-swap save; ``refuse`` makes the next one
    fail (a task began meanwhile)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.saves = []
        self.refuse = False

    def save(self, **expected):
        if self.refuse:
            raise exception.UnexpectedTaskStateError(
                instance_uuid=self.uuid, expected=None, actual='deleting')
        self.saves.append((self.vm_state, self.task_state,
                           self.power_state, expected))


class PowerSyncTest(fakes.HostTestCase):
    def setUp(self):
        super().setUp()
        self.actions = self.useFixture(fixtures.MockPatchObject(
            instance_action.InstanceAction, 'action_start')).mock

    def server(self, guest=states.RUNNING, **fields):
        """A server of compute1 (``fields``) whose guest is in power
        state ``guest`` (None: the hypervisor has no guest)."""
        instance = FakeInstance(**fields)
        if guest is not None:
            self.driver.spawn(self.ctxt, instance, [])
            self.driver.set_power_state_behind(instance.uuid, guest,
                                               event=False)
        self.useFixture(fixtures.MockPatchObject(
            objects.Instance, 'get_by_uuid',
            side_effect=lambda ctxt, uuid: instance))
        return instance

    def sync(self, instance):
        outcome, synced = power_sync.sync(self.ctxt, self.driver,
                                          'compute1', instance.uuid)
        self.assertIs(instance, synced)
        return outcome

    def test_active_server_whose_guest_stopped_is_stopped(self):
        instance = self.server(guest=states.SHUTDOWN)
        self.assertEqual(power_sync.STOP, self.sync(instance))
        # The power state first, then the stop begins as the API's does:
        # both compare-and-swaps on the idle task.
        self.assertEqual([
            ('active', None, states.SHUTDOWN,
             {'expected_task_state': [None]}),
            ('active', states.POWERING_OFF, states.SHUTDOWN,
             {'expected_task_state': [None]}),
        ], instance.saves)
        self.actions.assert_called_once_with(self.ctxt, instance.uuid,
                                             instance_action.STOP)

    def test_stopped_server_whose_guest_runs_gets_its_guest_stopped(self):
        instance = self.server(guest=states.RUNNING, vm_state='stopped',
                               power_state=states.SHUTDOWN)
        self.assertEqual(power_sync.STOP, self.sync(instance))
        self.assertEqual(('stopped', states.POWERING_OFF, states.RUNNING),
                         instance.saves[-1][:3])
        # The sync itself never touched the guest: the stop does.
        self.assertEqual(states.RUNNING,
                         self.driver.get_info(instance)['power_state'])

    def test_paused_server_whose_guest_stopped_is_stopped(self):
        instance = self.server(guest=states.SHUTDOWN, vm_state='paused',
                               power_state=states.POWER_PAUSED)
        self.assertEqual(power_sync.STOP, self.sync(instance))

    def test_states_that_only_take_the_power_state(self):
        for vm_state, guest, db_power in (
                ('active', states.POWER_PAUSED, states.RUNNING),
                ('active', None, states.RUNNING),
                ('stopped', None, states.SHUTDOWN),
                ('error', states.SHUTDOWN, states.RUNNING),
                ('building', states.SHUTDOWN, states.NOSTATE),
                ('soft-delete', states.RUNNING, states.SHUTDOWN),
                ('shelved', states.RUNNING, states.SHUTDOWN)):
            instance = self.server(guest=guest, vm_state=vm_state,
                                   power_state=db_power)
            self.assertEqual(power_sync.IN_SYNC, self.sync(instance),
                             vm_state)
            expected = states.NOSTATE if guest is None else guest
            self.assertEqual(
                [(vm_state, None, expected,
                  {'expected_task_state': [None]})],
                instance.saves, (vm_state, guest))
        self.actions.assert_not_called()

    def test_a_server_in_sync_is_not_written(self):
        instance = self.server(guest=states.RUNNING)
        self.assertEqual(power_sync.IN_SYNC, self.sync(instance))
        self.assertEqual([], instance.saves)

    def test_a_task_in_progress_or_another_host_is_skipped(self):
        for fields in ({'task_state': states.POWERING_ON},
                       {'host': 'compute2'}):
            instance = self.server(guest=states.SHUTDOWN, **fields)
            self.assertEqual(power_sync.SKIPPED, self.sync(instance))
            self.assertEqual([], instance.saves)
        self.actions.assert_not_called()

    def test_a_task_begun_meanwhile_wins(self):
        instance = self.server(guest=states.SHUTDOWN)
        instance.refuse = True
        self.assertEqual(power_sync.SKIPPED, self.sync(instance))
        self.assertEqual('active', instance.vm_state)
        self.actions.assert_not_called()

    def test_a_driver_that_cannot_tell_changes_nothing(self):
        instance = self.server(guest=states.SHUTDOWN)
        self.useFixture(fixtures.MockPatchObject(
            self.driver, 'get_info', side_effect=NotImplementedError))
        self.assertEqual(power_sync.SKIPPED, self.sync(instance))
        self.assertEqual([], instance.saves)


class ReapGuestsTest(fakes.HostTestCase):
    def setUp(self):
        super().setUp()
        self.rows = {}
        self.useFixture(fixtures.MockPatchObject(
            objects.Instance, 'get_by_uuid', side_effect=self._get))

    def _get(self, ctxt, uuid, read_deleted=False):
        if uuid not in self.rows:
            raise exception.InstanceNotFound(instance_id=uuid)
        return self.rows[uuid]

    def guest(self, row=True, **fields):
        instance = FakeInstance(**fields)
        instance.terminated_at = fields.get('terminated_at')
        instance.deleted_at = None
        self.driver.spawn(self.ctxt, instance, [])
        if row:
            self.rows[instance.uuid] = instance
        return instance

    def reap(self, action='reap', timeout=0):
        self.conf.set_override('running_deleted_instance_action', action)
        self.conf.set_override('running_deleted_instance_timeout', timeout)
        return recovery.reap_guests(self.ctxt, self.driver, 'compute1',
                                    instances=[])

    def test_only_the_guests_of_deleted_servers_are_reaped(self):
        deleted = self.guest(vm_state='deleted')
        unknown = self.guest(row=False)
        elsewhere = self.guest(host='compute2')
        logs = self.useFixture(fixtures.FakeLogger(
            name='nova_lite.compute.host.recovery'))
        self.assertEqual([deleted.uuid], self.reap())
        self.assertEqual({unknown.uuid, elsewhere.uuid},
                         self.driver.list_instance_uuids())
        self.assertIn('server %s, which the database does not know' %
                      unknown.uuid, logs.output)
        self.assertIn('server %s, which is on host compute2' %
                      elsewhere.uuid, logs.output)

    def test_the_action_decides(self):
        deleted = self.guest(vm_state='deleted')
        for action in ('noop', 'log'):
            self.assertEqual([], self.reap(action))
            self.assertEqual(states.RUNNING,
                             self.driver.get_info(deleted)['power_state'])
        self.assertEqual([deleted.uuid], self.reap('shutdown'))
        self.assertEqual(states.SHUTDOWN,
                         self.driver.get_info(deleted)['power_state'])
        self.assertEqual([deleted.uuid], self.reap('reap'))
        self.assertEqual(set(), self.driver.list_instance_uuids())

    def test_a_server_deleted_within_the_timeout_keeps_its_guest(self):
        now = utils.utcnow()
        recent = self.guest(vm_state='deleted', terminated_at=now)
        old = self.guest(vm_state='deleted',
                         terminated_at=now - datetime.timedelta(hours=1))
        self.assertEqual([old.uuid], self.reap(timeout=600))
        self.assertEqual({recent.uuid}, self.driver.list_instance_uuids())


class FakeDriverEventsTest(fakes.HostTestCase):
    def test_a_change_behind_the_back_is_an_event(self):
        seen = []
        instance = FakeInstance()
        self.driver.spawn(self.ctxt, instance, [])
        self.driver.set_power_state_behind(instance.uuid, states.SHUTDOWN)
        self.driver.register_event_listener(seen.append)
        self.driver.set_power_state_behind(instance.uuid, states.SHUTDOWN,
                                           event=False)
        self.driver.set_power_state_behind(instance.uuid, states.RUNNING)
        self.assertEqual([instance.uuid], seen)

    def test_get_info(self):
        instance = FakeInstance()
        self.assertRaises(exception.InstanceNotFound, self.driver.get_info,
                          instance)
        self.driver.spawn(self.ctxt, instance, [])
        self.assertEqual({'power_state': states.RUNNING},
                         self.driver.get_info(instance))

    def test_a_driver_without_get_info(self):
        class Minimal(virt_fake.FakeDriver):
            get_info = virt_driver.ComputeDriver.get_info
        driver = Minimal(self.conf, 'compute1')
        self.assertRaises(NotImplementedError, driver.get_info,
                          FakeInstance())
