"""The hypervisor's truth on real libvirt guests (issue 37).

* A guest destroyed behind nova_lite's back (``virsh destroy``, through
  libvirt-python) makes its server ``SHUTOFF`` within one power-state sync
  (here every ``SYNC_INTERVAL`` seconds; libvirt's lifecycle event does it
  too, ``LIFECYCLE_DELAY`` after the stop), and ``os-start`` brings the
  guest back: its agent answers again.
* A compute host restarted under a running and a stopped guest keeps
  both as they are: its syncs after the start neither stop the running
  one nor start the stopped one.
* A second deployment on the same libvirtd with the same ``[DEFAULT]
  host`` leaves the first one's guest running: the domain names that host,
  but the second deployment's database does not know its server (logged,
  left alone); the first deployment still reads the server ``ACTIVE``.
"""

from tests.integration.realdata import base

SYNC_INTERVAL = 5


class HypervisorTruthTest(base.RealDataTestCase):
    EXTRA_CONF = {'DEFAULT': {'sync_power_state_interval': SYNC_INTERVAL}}

    def host_of(self, server_id):
        return self.show_server(server_id)['OS-EXT-SRV-ATTR:host']

    def host_log(self, host):
        return self.deployment.processes[host].log_text()

    def wait_for_syncs(self, host, count=2):
        """Wait until ``host`` began ``count`` more periodic syncs (each
        logs its start; a sync's work is done before the next begins
        ``SYNC_INTERVAL`` seconds later)."""
        marker = 'Syncing the power states of the'
        seen = self.host_log(host).count(marker)
        self.wait_for(lambda: self.host_log(host).count(marker) >=
                      seen + count,
                      message='%s made no %d more power-state syncs' % (
                          host, count))

    def test_a_guest_destroyed_behind_our_back_is_shutoff_then_starts(self):
        server_id = self.active_server()
        self.guest(server_id).disks()
        dom = self._domain(server_id)
        dom.destroy()
        server = self.wait_for_server_status(server_id, 'SHUTOFF')
        self.assertEqual(4, server['OS-EXT-STS:power_state'])
        self.assertFalse(dom.isActive())
        self.server_action(server_id, {'os-start': None})
        server = self.wait_for_server_status(server_id, 'ACTIVE')
        self.assertEqual(1, server['OS-EXT-STS:power_state'])
        self.assertTrue(dom.isActive())
        # The guest runs again, its agent answers.
        self.guest(server_id, reconnect=True).disks()

    def test_a_restarted_host_keeps_running_and_stopped_guests(self):
        running = self.active_server()
        stopped = self.active_server()
        self.server_action(stopped, {'os-stop': None})
        self.wait_for_server_status(stopped, 'SHUTOFF')
        hosts = sorted({self.host_of(running), self.host_of(stopped)})
        self.deployment.restart_disarmed(*hosts)
        for host in hosts:
            self.wait_for_syncs(host)
        self.assertEqual(('ACTIVE', 1), self._state(running))
        self.assertEqual(('SHUTOFF', 4), self._state(stopped))
        self.assertTrue(self._domain(running).isActive())
        self.assertFalse(self._domain(stopped).isActive())
        self.guest(running).disks()

    def _state(self, server_id):
        server = self.show_server(server_id)
        return server['status'], server['OS-EXT-STS:power_state']

    def test_a_second_deployment_leaves_the_first_ones_guest(self):
        server_id = self.active_server()
        host = self.host_of(server_id)
        second = self.useFixture(base.RealDataDeployment(
            self.BACKEND, compute_hosts=(host,), all_in_one=True,
            extra_conf={'DEFAULT': {
                'sync_power_state_interval': SYNC_INTERVAL,
                'running_deleted_instance_poll_interval': 1}}))

        def second_log():
            return ''.join(p.log_text() for p in second.processes.values())
        # It looked at the guest (at start, then every second) and left
        # it alone.
        self.wait_for(lambda: 'a guest of server %s, which the database '
                      'does not know' % server_id in second_log(),
                      message='the second deployment never looked at the '
                              'first one\'s guest')
        self.assertNotIn('Reaping the guest of server %s' % server_id,
                         second_log())
        self.wait_for_syncs(host)
        self.assertTrue(self._domain(server_id).isActive())
        self.assertEqual(('ACTIVE', 1), self._state(server_id))
        self.guest(server_id).disks()
