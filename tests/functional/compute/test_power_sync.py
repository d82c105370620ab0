"""The hypervisor's truth, on the whole system in-process (issue 37): a
guest that stops behind the control plane's back (the fake driver's
``set_power_state_behind``) makes its server ``SHUTOFF``, through its
lifecycle event or the periodic sync; ``os-start`` brings it back; a
stopped server whose guest runs has its guest stopped, never the server
started; a server with a task in progress is left to its task; and a
guest the database does not know is left alone."""

import os

import fixtures

from nova_lite.compute.host import power_sync
from nova_lite.compute.host import recovery
from nova_lite import context as nl_context
from nova_lite.db import models
from nova_lite import states
from nova_lite.virt import fake as virt_fake
from tests.fixtures import fakelibvirt
from tests.fixtures import system
from tests.functional.compute import base
from tests.functional.compute import test_volume_attachments as tva


class PowerSyncTestCase(base.TestCase):
    def setUp(self):
        super().setUp()
        self.manager = self.compute_manager()
        self.driver = self.manager.driver
        self.server_id = self.create_server()

    def guest_power_state(self):
        return self.driver.guests[self.server_id].power_state

    def action(self, action):
        resp = self.api.post('/v2.1/servers/%s/action' % self.server_id,
                             body={action: None})
        self.assertEqual(202, resp.status, resp.text)

    def actions(self):
        resp = self.api.get('/v2.1/servers/%s/os-instance-actions' %
                            self.server_id)
        return [a['action'] for a in resp.body['instanceActions']]


class LifecycleEventTest(PowerSyncTestCase):
    """The default interval (600 s): only the events sync here."""

    def test_a_guest_stopped_behind_our_back_is_shutoff_then_starts(self):
        self.driver.set_power_state_behind(self.server_id, states.SHUTDOWN)
        server = self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.assertEqual(states.SHUTDOWN, server['OS-EXT-STS:power_state'])
        # The stop is in the server's history, as the API's would be.
        self.assertEqual('stop', self.actions()[0])
        # os-start acts on what the hypervisor says.
        self.action('os-start')
        server = self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertEqual(states.RUNNING, server['OS-EXT-STS:power_state'])
        self.assertEqual(states.RUNNING, self.guest_power_state())

    def test_a_stopped_server_whose_guest_runs_is_not_started(self):
        self.action('os-stop')
        self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.driver.set_power_state_behind(self.server_id, states.RUNNING)
        # The sync stops the guest (Nova's force_stop) and the server
        # stays stopped.
        system.wait_for(lambda: self.guest_power_state() == states.SHUTDOWN,
                        message='the guest was not stopped')
        server = self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.assertEqual(states.SHUTDOWN, server['OS-EXT-STS:power_state'])

    def test_a_paused_guest_is_only_recorded(self):
        self.driver.set_power_state_behind(self.server_id,
                                           states.POWER_PAUSED)
        system.wait_for(lambda: self.show_server(self.server_id)[
            'OS-EXT-STS:power_state'] == states.POWER_PAUSED)
        self.assertEqual('ACTIVE', self.show_server(self.server_id)['status'])
        self.assertEqual(states.POWER_PAUSED, self.guest_power_state())

    def test_a_server_with_a_task_in_progress_is_left_to_it(self):
        tva.set_rows(models.Instance, models.Instance.uuid == self.server_id,
                     task_state=states.POWERING_ON)
        self.driver.set_power_state_behind(self.server_id, states.SHUTDOWN,
                                           event=False)
        self.assertEqual(power_sync.SKIPPED,
                         self.manager.sync_power_state(self.server_id))
        server = self.show_server(self.server_id)
        self.assertEqual(('ACTIVE', states.RUNNING),
                         (server['status'], server['OS-EXT-STS:power_state']))
        # Idle again: the next sync stops it; a second one has nothing
        # to do (idempotent).
        tva.set_rows(models.Instance, models.Instance.uuid == self.server_id,
                     task_state=None)
        self.assertEqual(power_sync.STOP,
                         self.manager.sync_power_state(self.server_id))
        self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.assertEqual(power_sync.IN_SYNC,
                         self.manager.sync_power_state(self.server_id))
        self.assertEqual(['stop', 'create'], self.actions())


class PeriodicSyncTest(PowerSyncTestCase):
    CONF = {'sync_power_state_interval': 1}

    def test_a_guest_stopped_without_an_event_is_shutoff_by_the_sync(self):
        self.driver.set_power_state_behind(self.server_id, states.SHUTDOWN,
                                           event=False)
        self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.action('os-start')
        self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertEqual(states.RUNNING, self.guest_power_state())


class UnknownGuestTest(PowerSyncTestCase):
    def test_a_guest_the_database_does_not_know_is_left_alone(self):
        # Another deployment's guest on the same hypervisor and host name.
        stranger = 'b0b0b0b0-1111-4222-8333-444444444444'
        self.driver.guests[stranger] = virt_fake.FakeGuest(stranger)
        self.manager.periodic_tasks(nl_context.get_admin_context())
        self.assertEqual([], recovery.reap_guests(
            nl_context.get_admin_context(), self.driver, 'compute1'))
        self.assertIn(stranger, self.driver.guests)
        # A deleted server's guest (left by a host that was fenced) is
        # reaped.
        self.assertEqual(204, self.api.delete(
            '/v2.1/servers/%s' % self.server_id).status)
        self.wait_for_server_gone(self.server_id)
        self.driver.guests[self.server_id] = virt_fake.FakeGuest(
            self.server_id)
        self.assertEqual([self.server_id], recovery.reap_guests(
            nl_context.get_admin_context(), self.driver, 'compute1'))
        self.assertNotIn(self.server_id, self.driver.guests)
        self.assertIn(stranger, self.driver.guests)


class LibvirtTest(base.TestCase):
    """With the libvirt driver (libvirtd played by ``fakelibvirt``): the
    domain's name is the API's instance name, and a domain destroyed
    behind our back, with its lifecycle event, makes the server
    ``SHUTOFF``."""

    def setUp(self):
        self.libvirt = self.useFixture(fakelibvirt.LibvirtFixture())
        # The "stopped" event is not held here.
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.virt.libvirt.host.LIFECYCLE_DELAY', 0))
        self.CONF = {'compute_driver': 'libvirt',
                     'libvirt.kernel_path': os.devnull,
                     'libvirt.virt_type': 'qemu',
                     'shutdown_timeout': 0}
        super().setUp()
        self.server_id = self.create_server()

    def domain(self):
        return self.libvirt.libvirtd.domains[self.server_id]

    def test_the_instance_name_is_the_domain_name(self):
        server = self.show_server(self.server_id)
        self.assertEqual(self.domain().name(),
                         server['OS-EXT-SRV-ATTR:instance_name'])
        self.assertRegex(self.domain().name(), '^instance-[0-9a-f]{8}$')

    def test_a_domain_destroyed_behind_our_back(self):
        self.domain().destroy()
        self.libvirt.libvirtd.emit_lifecycle(
            self.domain(), fakelibvirt.VIR_DOMAIN_EVENT_STOPPED)
        server = self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.assertEqual(states.SHUTDOWN, server['OS-EXT-STS:power_state'])
        resp = self.api.post('/v2.1/servers/%s/action' % self.server_id,
                             body={'os-start': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertTrue(self.domain().isActive())
