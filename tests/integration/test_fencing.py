"""A silent compute host is not a dead one; a fenced one is (issue 27).

On the production layout (uWSGI, RabbitMQ, MariaDB or PostgreSQL), a
compute host is stopped with SIGSTOP: alive, only silent. Past
``service_down_time`` it shows ``down``, and:

* a detach of one of its servers' volumes answers 409 and the volume
  stays with its server; after SIGCONT it is still attached, and a detach
  then works through the host;
* once an administrator forces the host down (``PUT /os-services/{id}``
  with ``forced_down: true``, 2.53) it is fenced: a detach is done
  without it, the attach in flight on it is rolled back at once (here
  ``stalled_after`` is 60 s and the rollback is waited for 20 s), the
  delete cast to it is done without it, and when the host returns
  (SIGCONT, or a restart) it removes the disk and reaps the guest of the
  server deleted meanwhile before the volume is attached there again;
  it cannot be let go (``forced_down: false`` answers 409) until then.

The host's fake hypervisor keeps its guests in its own process: what it
reaped after SIGCONT is read from its log; after a restart the guests are
rebuilt from the database and the proof is the same device name given
again.
"""

import signal

from tests.integration import base

# Well above the waits of these tests: what is settled here is settled
# because the host is fenced, not because it stalled.
STALLED_AFTER = 60
AT_ONCE = 20


class FenceHelpers(object):
    """Silence, fence and resume a compute host of the deployment (also
    used by the real-data tier's fencing tests)."""

    def service_id(self, host):
        admin = self.admin_api.as_(compute_version='2.53')
        [svc] = [s for s in admin.get('/v2.1/os-services').body[
            'services'] if s['host'] == host and
            s['binary'] == 'nova-lite-compute']
        return svc['id']

    def force_down(self, host, forced=True):
        resp = self.admin_api.as_(compute_version='2.53').put(
            '/v2.1/os-services/%s' % self.service_id(host),
            body={'forced_down': forced})
        self.assertEqual(200, resp.status, resp)
        self.assertEqual(forced, resp.body['service']['forced_down'])

    def let_go(self, host, timeout=AT_ONCE):
        """Clear the host's ``forced_down`` once it removed the disks
        freed without it: 409 (naming the servers) until then."""
        def cleared():
            resp = self.admin_api.as_(compute_version='2.53').put(
                '/v2.1/os-services/%s' % self.service_id(host),
                body={'forced_down': False})
            if resp.status == 409:
                self.assertEqual(
                    'compute.host_holds_stale_disks',
                    resp.body['conflictingRequest']['error_code'], resp)
                return False
            self.assertEqual(200, resp.status, resp)
            return True
        self.wait_for(cleared, timeout=timeout,
                      message='%s still holds disks freed without it' %
                      host)

    def unfence_quietly(self, host):
        """A cleanup: clear ``forced_down`` if the host lets it."""
        self.admin_api.as_(compute_version='2.53').put(
            '/v2.1/os-services/%s' % self.service_id(host),
            body={'forced_down': False})

    def sigstop(self, host):
        proc = self.deployment.processes[host]
        proc.signal(signal.SIGSTOP)
        self.addCleanup(self._resume, host)
        self.wait_for_service_state('nova-lite-compute', host, 'down')

    def _resume(self, host):
        proc = self.deployment.processes[host]
        if proc.running:
            proc.signal(signal.SIGCONT)

    def sigcont(self, host):
        self.deployment.processes[host].signal(signal.SIGCONT)

    def host_log(self, host):
        return self.deployment.processes[host].log_text()


class _FencingTests(FenceHelpers):
    EXTRA_CONF = {'recovery': {'settle_interval': 1,
                               'stalled_after': STALLED_AFTER}}

    def attached(self, server_id, volume_id):
        volume = self.show_volume(volume_id)
        return volume['status'] == 'in-use' and [server_id] == [
            a['server_id'] for a in volume['attachments']] and volume_id in [
            a['volumeId'] for a in self.list_attachments(server_id)]

    def test_silent_host_keeps_the_disk_with_its_server(self):
        server_id = self.create_server_on_each_host()['compute1']
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.101')
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.sigstop('compute1')
        resp = self.detach_volume(server_id, volume_id)
        self.assertEqual(409, resp.status, resp)
        self.assertEqual('Service is unavailable at this time.',
                         resp.body['conflictingRequest']['message'])
        self.assertTrue(self.attached(server_id, volume_id))
        self.sigcont('compute1')
        self.wait_for_service_state('nova-lite-compute', 'compute1', 'up')
        # Still attached, through the settling runs of the pause.
        self.assertTrue(self.attached(server_id, volume_id))
        # A detach now goes through the host.
        self.assertEqual(202, self.detach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'available')
        self.wait_for_attachment(server_id, volume_id, present=False)

    def _fence_with_work_in_flight(self):
        """compute1 stopped (SIGSTOP) with: a server and its attached
        volume, a server whose delete is cast to it (and its volume), an
        attach in flight; then forced down: its work is settled, another
        server deleted without it. Returns (server, its volume, the
        server deleted once the host was fenced, the attach's volume)."""
        # Placement is "fewest servers": one per host, twice.
        server_id = self.create_server_on_each_host()['compute1']
        doomed = self.create_server_on_each_host()['compute1']
        gone = self.create_server_on_each_host()['compute1']
        api = self.api.as_(compute_version='2.101')
        kept, doomed_volume, pending = [self.create_volume()
                                        for _ in range(3)]
        for server, volume in ((server_id, kept), (doomed, doomed_volume)):
            self.assertEqual(202, self.attach_volume(server, volume,
                                                     api=api).status)
            self.wait_for_volume_status(volume, 'in-use')
        self.sigstop('compute1')
        # Silent: the attach waits for the host (the conductor's
        # reservation call), the delete is cast to it and waits, and the
        # server keeps its volume.
        self.assertEqual(202, self.attach_volume(server_id, pending,
                                                 api=api).status)
        self.assertEqual(204, self.admin_api.delete(
            '/v2.1/servers/%s' % doomed).status)
        self.assertEqual('in-use', self.show_volume(doomed_volume)['status'])
        self.assertEqual(409, self.detach_volume(server_id, kept).status)

        self.force_down('compute1')
        self.addCleanup(self.unfence_quietly, 'compute1')
        # Fenced: settled at once, not after stalled_after.
        self.wait_for(lambda: self.show_volume(pending)['status'] ==
                      'available' and pending not in [
                          a['volumeId'] for a in self.list_attachments(
                              server_id)], timeout=AT_ONCE,
                      message='the attach in flight was not rolled back')
        self.wait_for(lambda: self.admin_api.get(
            '/v2.1/servers/%s' % doomed).status == 404, timeout=AT_ONCE,
            message='the delete was not done without the host')
        self.assertEqual('available',
                         self.show_volume(doomed_volume)['status'])
        resp = self.detach_volume(server_id, kept)
        self.assertEqual(202, resp.status, resp)
        self.assertEqual('available', self.show_volume(kept)['status'])
        self.assertEqual([], self.list_attachments(server_id))
        # Deleted without the host at once (no message for it waits).
        self.assertEqual(204, self.admin_api.delete(
            '/v2.1/servers/%s' % gone).status)
        self.assertEqual(404, self.admin_api.get(
            '/v2.1/servers/%s' % gone).status)
        return server_id, kept, gone, pending

    def _attach_again(self, server_id, volume_id):
        api = self.api.as_(compute_version='2.101')
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'in-use')
        [item] = self.list_attachments(server_id)
        self.assertEqual((volume_id, '/dev/vdb'),
                         (item['volumeId'], item['device']))

    def test_fenced_host_returns_by_sigcont(self):
        server_id, kept, gone, pending = self._fence_with_work_in_flight()
        # Back while still fenced: it removes what it no longer owns.
        self.sigcont('compute1')
        self.wait_for(lambda: 'Reaping the guest of server %s' % gone in
                      self.host_log('compute1'),
                      message='the guest of the deleted server was not '
                              'reaped')
        self.wait_for(lambda: 'Removing volume %s (/dev/vdb) from the '
                      'guest of server %s' % (kept, server_id) in
                      self.host_log('compute1'),
                      message='the detached disk was not removed')
        self.let_go('compute1')
        self.wait_for_service_state('nova-lite-compute', 'compute1', 'up')
        # The device name is free on the guest as in the database.
        self._attach_again(server_id, kept)
        self._attach_again_elsewhere(pending)

    def test_fenced_host_returns_by_restart(self):
        server_id, kept, _gone, pending = self._fence_with_work_in_flight()
        proc = self.deployment.processes['compute1']
        proc.signal(signal.SIGKILL)
        proc.wait_stopped()
        # Not while it is away: it may still have the disks.
        resp = self.admin_api.as_(compute_version='2.53').put(
            '/v2.1/os-services/%s' % self.service_id('compute1'),
            body={'forced_down': False})
        self.assertEqual(409, resp.status, resp)
        self.assertIn(server_id, resp.body['conflictingRequest']['message'])
        self.deployment.start('compute1')
        self.let_go('compute1')
        self.wait_for_service_state('nova-lite-compute', 'compute1', 'up')
        self._attach_again(server_id, kept)
        self._attach_again_elsewhere(pending)

    def _attach_again_elsewhere(self, volume_id):
        other = self.create_server()
        self.wait_for_server_status(other, 'ACTIVE')
        api = self.api.as_(compute_version='2.101')
        self.assertEqual(202, self.attach_volume(other, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'in-use')


class TestFencingMariaDB(_FencingTests, base.IntegrationTestCase):
    BACKEND = 'mysql'


class TestFencingPostgreSQL(_FencingTests, base.IntegrationTestCase):
    BACKEND = 'postgresql'
