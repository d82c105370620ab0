"""Crash a real process at each named step of the attach and detach
workflows (and of block storage's extend, delete and clone) and check
that the volume is settled after the process is back.

For every crash point of ``nova_lite.crashpoint`` (the process it is in
and the workflow its name says): the process is restarted with the point
armed, the workflow is driven through the REST API, the test waits for the
SIGKILL, starts the process again without the point, and polls (deadline
``SETTLE_TIMEOUT``) until the volume is settled as
doc/source/contributor/crash-safety.rst says: ``in-use`` with its
attachment on the server, or ``available`` with none; the request's
instance action has no event left open (an ``Error`` one when it was
rolled back); and the volume can be attached and detached again. Work
the API had accepted before it died is re-driven, not rolled back: it
ends as if the API had lived. An interrupted extend ends ``available``
with the size the backend holds and can be extended again; an
interrupted delete is finished. The cases without a host force the
server's host down first (fenced): a host that is only down is not
detached or deleted without.

The deployment settles stalled work quickly (``[recovery]
settle_interval`` 1 s, ``stalled_after`` 5 s) so the cases that wait for a
periodic task (a dead API process's work) finish in seconds; the defaults
(20 s, 60 s) settle them within 80 s.

Each point runs on one database server, MariaDB and PostgreSQL taking
every other point in turn (the compare-and-swaps of the settling are the
same statements on both, and the database tier runs them on each): the
whole matrix on both would be a third of CI's time budget.
``NOVA_LITE_RECOVERY_BACKENDS=both`` runs every point on both.

``NOVA_LITE_RECOVERY_MATRIX=<file>`` (implies ``both``) appends one line
per case (backend, crash point, outcome, seconds from the restart to
settled) to that file: doc/source/admin/recovery-matrix.inc is made from
it.
"""

import json
import os
import tempfile
import time

import requests
import testtools

from nova_lite import crashpoint
from tests.integration import base

SETTLE_TIMEOUT = 120
MATRIX_ENV = 'NOVA_LITE_RECOVERY_MATRIX'
BACKENDS_ENV = 'NOVA_LITE_RECOVERY_BACKENDS'

FINISHED = 'finished'
ROLLED_BACK = 'rolled back'

# crash point -> (the outcome it must settle to, the workflow that reaches
# it). Every declared point must be here (test_every_point_is_covered).
CASES = {
    # Accepted by the API (the mapping and its task written): re-driven
    # by the conductor once stalled, as if the message had been sent.
    crashpoint.API_ATTACH_AFTER_ACCEPT: (FINISHED, 'attach'),
    crashpoint.API_DETACH_AFTER_BEGIN: (FINISHED, 'detach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_TAKE: (ROLLED_BACK, 'attach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_RESERVE_DEVICE: (ROLLED_BACK,
                                                       'attach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_RESERVE: (ROLLED_BACK, 'attach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_ATTACHMENT_CREATE: (ROLLED_BACK,
                                                          'attach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_HANDOVER: (ROLLED_BACK, 'attach'),
    crashpoint.COMPUTE_ATTACH_AFTER_TAKE: (ROLLED_BACK, 'attach'),
    crashpoint.COMPUTE_ATTACH_AFTER_CONNECT: (FINISHED, 'attach'),
    crashpoint.COMPUTE_ATTACH_AFTER_GUEST_ATTACH: (FINISHED, 'attach'),
    crashpoint.COMPUTE_DETACH_AFTER_TAKE: (FINISHED, 'detach'),
    crashpoint.COMPUTE_DETACH_AFTER_GUEST_DETACH: (FINISHED, 'detach'),
    crashpoint.COMPUTE_DETACH_AFTER_STEP_ASIDE: (FINISHED, 'detach'),
    # The server's host is forced down: the API detaches or deletes
    # without it.
    crashpoint.API_LOCAL_DETACH_AFTER_ACCEPT: (FINISHED, 'local_detach'),
    crashpoint.API_LOCAL_DETACH_AFTER_DECIDE: (FINISHED, 'local_detach'),
    crashpoint.API_LOCAL_DELETE_AFTER_DECIDE: (FINISHED, 'local_delete'),
    # A volume migration (os-migrate_volume to the other backend) of an
    # available volume: block storage copies the data (and the volume
    # service's block-storage settling settles it).
    crashpoint.VOLUME_MIGRATE_AFTER_START: (ROLLED_BACK, 'migrate'),
    crashpoint.VOLUME_MIGRATE_AFTER_TARGET: (ROLLED_BACK, 'migrate'),
    crashpoint.VOLUME_MIGRATE_AFTER_COPY: (FINISHED, 'migrate'),
    crashpoint.VOLUME_MIGRATE_AFTER_FINISH: (FINISHED, 'migrate'),
    # ... of an attached volume: the compute swap it drives (PUT
    # os-volume_attachments/{volume} as the service; the only swap).
    crashpoint.API_SWAP_AFTER_RESERVE: (FINISHED, 'swap'),
    crashpoint.COMPUTE_SWAP_AFTER_CONNECT: (ROLLED_BACK, 'swap'),
    crashpoint.COMPUTE_SWAP_AFTER_GUEST_SWAP: (FINISHED, 'swap'),
    crashpoint.COMPUTE_SWAP_AFTER_MOVE: (FINISHED, 'swap'),
    crashpoint.COMPUTE_SWAP_AFTER_RELEASE: (FINISHED, 'swap'),
    # ... of a shelved-offloaded server: the API swaps without a host.
    crashpoint.API_SWAP_OFFLOADED_AFTER_RESERVE: (ROLLED_BACK,
                                                  'swap_offloaded'),
    crashpoint.API_SWAP_OFFLOADED_AFTER_COMPLETE: (ROLLED_BACK,
                                                   'swap_offloaded'),
    crashpoint.API_SWAP_OFFLOADED_AFTER_MOVE: (FINISHED, 'swap_offloaded'),
    # The volumes a build or an unshelve connects: the host's restart
    # settles the server's state (compute.host.manager._recover).
    crashpoint.COMPUTE_BUILD_AFTER_CONNECT: (ROLLED_BACK, 'build'),
    crashpoint.COMPUTE_UNSHELVE_AFTER_CONNECT: (ROLLED_BACK, 'unshelve'),
    # nova-lite-manage volume_attachment refresh, killed: the conductor
    # settles the refresh task it leaves.
    crashpoint.MANAGE_REFRESH_AFTER_CREATE: (ROLLED_BACK, 'refresh'),
    crashpoint.MANAGE_REFRESH_AFTER_MOVE: (FINISHED, 'refresh'),
    # Block storage's own two-step operations (/v3, in the API process),
    # settled by block storage's settling in the volume service.
    crashpoint.VOLUME_EXTEND_AFTER_START: (ROLLED_BACK, 'extend'),
    crashpoint.VOLUME_EXTEND_AFTER_BACKEND: (FINISHED, 'extend'),
    crashpoint.VOLUME_DELETE_AFTER_START: (FINISHED, 'delete'),
    # A volume created from another (source_volid): the clone is settled
    # error (Cinder's rule for a volume stuck creating), its source free
    # to be deleted again.
    crashpoint.VOLUME_CLONE_AFTER_CREATE: (ROLLED_BACK, 'clone'),
}

# Faults of a real Cinder beside nova_lite (no crash point of nova_lite's:
# Cinder's processes, or Ceph's OSD, are stopped or killed) -> (how the
# attach settles, the test of tests.integration.realdata.
# test_cinder_faults that drives it; CinderFaultsCoveredTest checks it is
# there).
CINDER_FAULTS = {
    # cinder-volume SIGKILLed with Cinder's attachment_update RPC call in
    # flight (queued for it), started again before the call timed out:
    # the restarted service answers the queued call.
    'cinder-volume killed in attachment_update, back in time': (
        FINISHED,
        'test_volume_service_killed_in_the_update_and_back_finishes'),
    # ... and left dead past Cinder's rpc_response_timeout: Cinder fails
    # the update, the compute host rolls the attach back.
    'cinder-volume killed in attachment_update, dead past the timeout': (
        ROLLED_BACK, 'test_volume_service_dead_past_the_update_rolls_back'),
    # Cinder's attachment_complete is its API's alone: cinder-volume
    # dead does not stop it.
    'cinder-volume dead at attachment_complete': (
        FINISHED, 'test_complete_needs_no_volume_service'),
    # cinder-api down: the attach and the detach asked meanwhile are
    # refused at once, nothing changes.
    'cinder-api down at attach and detach': (
        ROLLED_BACK,
        'test_api_down_refuses_attach_and_detach_then_attach_works'),
    # cinder-api stopped under the host's attachment_update: the update
    # and the roll back's delete fail; the host keeps the mapping and its
    # settling deletes Cinder's attachment once Cinder answers.
    'cinder-api stopped in attachment_update': (
        ROLLED_BACK, 'test_api_stopped_in_the_update_is_settled_once_back'),
    # A Ceph OSD stopped (TestCinderCephOutage): Cinder connects without
    # it, the host's open of the image waits for it.
    'Ceph OSD stopped during an attach': (
        FINISHED, 'test_osd_stopped_the_attach_waits_for_it_and_finishes'),
}

# The size of the volume the extend cases grow, and the size they ask.
SIZE, NEW_SIZE = 1, 2


def stopped_server_with_volume(test):
    """A stopped server with a volume attached, and a connector file of
    its host: what ``volume_attachment refresh`` needs."""
    server_id = test.create_server()
    host = test.wait_for_server_status(server_id, 'ACTIVE')[
        'OS-EXT-SRV-ATTR:host']
    volume_id = test.create_volume()
    api = test.api.as_(compute_version='2.101')
    test.assertEqual(202, test.attach_volume(server_id, volume_id,
                                             api=api).status)
    test.wait_for_volume_status(volume_id, 'in-use')
    test.server_action(server_id, {'os-stop': None})
    test.wait_for_server_status(server_id, 'SHUTOFF')
    connector = os.path.join(tempfile.mkdtemp(), 'connector.json')
    with open(connector, 'w') as f:
        json.dump({'host': host, 'ip': '127.0.0.1', 'platform': 'x86_64',
                   'os_type': 'linux', 'multipath': False,
                   'initiator': 'iqn.2010-10.org.openstack:%s' % host}, f)
    return server_id, volume_id, connector


def locked(test, server_id):
    return test.show_server(server_id, api=test.admin_api.as_(
        compute_version='2.9'))['locked']


class _CrashRecoveryTests(object):
    EXTRA_CONF = {'recovery': {'settle_interval': 1, 'stalled_after': 5},
                  # A second backend, for the migrations.
                  'volume': {'enabled_backends': 'file,file2'},
                  'file2': {'volume_driver': 'file'}}

    def _process(self, point, server_host):
        kind = crashpoint.POINTS[point][0]
        if kind == 'api':
            return self.deployment.API
        if kind == 'conductor':
            return self.deployment.CONDUCTOR
        return server_host

    def _server(self):
        server_id = self.create_server()
        server = self.wait_for_server_status(server_id, 'ACTIVE')
        return server_id, server['OS-EXT-SRV-ATTR:host']

    def _attached(self, server_id, volume_id):
        volume = self.show_volume(volume_id)
        ids = [a['volumeId'] for a in self.list_attachments(server_id)]
        return volume['status'] == 'in-use' and volume_id in ids and \
            len(volume['attachments']) == 1

    def _available(self, server_id, volume_id):
        volume = self.show_volume(volume_id)
        ids = [a['volumeId'] for a in self.list_attachments(server_id)]
        return volume['status'] == 'available' and volume_id not in ids \
            and not volume['attachments']

    def _events(self, server_id, action):
        """The events of the server's latest ``action``."""
        api = self.admin_api.as_(compute_version='2.51')
        actions = api.get('/v2.1/servers/%s/os-instance-actions' %
                          server_id).body['instanceActions']
        latest = [a for a in actions if a['action'] == action][0]
        return api.get('/v2.1/servers/%s/os-instance-actions/%s' % (
            server_id, latest['request_id'])).body['instanceAction'][
                'events']

    def _volume_is(self, volume_id, status, size):
        volume = self.show_volume(volume_id)
        return (volume['status'], volume['size']) == (status, size)

    def _server_settled(self, server_id, volume_id, workflow):
        server = self.admin_api.get('/v2.1/servers/%s' % server_id).body[
            'server']
        if workflow == 'build':
            # ERROR, the volume free and not mapped to the server.
            if server['status'] != 'ERROR' or \
                    not self._available(server_id, volume_id):
                return False
            action = 'create'
        else:
            # Offloaded again, the volume attached to it and connected to
            # no host.
            if (server['status'], server['OS-EXT-SRV-ATTR:host'],
                    server['OS-EXT-STS:task_state']) != (
                        'SHELVED_OFFLOADED', None, None) or \
                    not self._attached(server_id, volume_id):
                return False
            action = 'unshelve'
        events = self._events(server_id, action)
        return all(e['finish_time'] is not None for e in events) and any(
            e['result'] == 'Error' for e in events)

    def _settled(self, server_id, volume_id, outcome, workflow):
        if workflow in ('build', 'unshelve'):
            return self._server_settled(server_id, volume_id, workflow)
        if workflow in ('migrate', 'swap', 'swap_offloaded'):
            return self._migration_settled(server_id, volume_id, outcome,
                                           workflow)
        if workflow == 'extend':
            return self._volume_is(volume_id, 'available',
                                   NEW_SIZE if outcome == FINISHED else SIZE)
        if workflow == 'delete':
            return self.admin_api.get(
                '/v3/demo/volumes/%s' % volume_id).status == 404
        if workflow == 'clone':
            return self.show_volume(volume_id)['status'] == 'error'
        if workflow == 'local_delete':
            gone = self.admin_api.get('/v2.1/servers/%s' % server_id)
            return gone.status == 404 and \
                self.show_volume(volume_id)['status'] == 'available'
        if workflow == 'local_detach':
            return self._available(server_id, volume_id)
        if workflow == 'attach':
            done = self._attached if outcome == FINISHED else \
                self._available
        else:
            done = self._available if outcome == FINISHED else \
                self._attached
        if not done(server_id, volume_id):
            return False
        events = self._events(server_id, '%s_volume' % workflow)
        if any(e['finish_time'] is None for e in events):
            return False
        if outcome == ROLLED_BACK:
            return any(e['result'] == 'Error' for e in events)
        return True

    def _crash(self, point):
        outcome, workflow = CASES[point]
        if workflow.startswith('local_'):
            return self._crash_without_host(point)
        if workflow in ('extend', 'delete'):
            return self._crash_volume_operation(point)
        if workflow == 'clone':
            return self._crash_clone(point)
        if workflow in ('migrate', 'swap', 'swap_offloaded'):
            return self._crash_migration(point)
        if workflow in ('build', 'unshelve'):
            return self._crash_server_operation(point)
        if workflow == 'refresh':
            return self._crash_refresh(point)
        server_id, host = self._server()
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.101')
        if workflow == 'detach':
            self.assertEqual(202, self.attach_volume(
                server_id, volume_id, api=api).status)
            self.wait_for_volume_status(volume_id, 'in-use')
        name = self._process(point, host)
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(name, point, mark)
        self.addCleanup(self.deployment.restart_disarmed, name)
        if workflow == 'attach':
            request = (self.attach_volume, server_id, volume_id)
        else:
            request = (self.detach_volume, server_id, volume_id)
        if name == self.deployment.API:
            # The API worker dies with the request: no answer.
            self.assertRaises(requests.ConnectionError, *request, api=api)
        else:
            # The API answered before the other process died.
            resp = request[0](*request[1:], api=api)
            self.assertEqual(202, resp.status, resp)
        self.deployment.wait_crashed(name, mark)
        self.deployment.restart_disarmed(name)
        self._wait_settled(point, server_id, volume_id)
        # The volume is usable again: attach and detach it.
        if self._available(server_id, volume_id):
            self.assertEqual(202, self.attach_volume(
                server_id, volume_id, api=api).status)
            self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(202, self.detach_volume(
            server_id, volume_id, api=api).status)
        self.wait_for_volume_status(volume_id, 'available')
        self.wait_for_attachment(server_id, volume_id, present=False)

    def force_down(self, host, forced=True):
        """PUT /os-services/{id} with ``forced_down`` (2.53). Clearing it
        answers 409 until the host, back, removed the disks freed without
        it: polled until it is cleared."""
        admin = self.admin_api.as_(compute_version='2.53')
        [svc] = [s for s in admin.get('/v2.1/os-services').body[
            'services'] if s['host'] == host and
            s['binary'] == 'nova-lite-compute']

        def put():
            resp = admin.put('/v2.1/os-services/%s' % svc['id'],
                             body={'forced_down': forced})
            if not forced and resp.status == 409:
                self.assertEqual(
                    'compute.host_holds_stale_disks',
                    resp.body['conflictingRequest']['error_code'], resp)
                return False
            self.assertEqual(200, resp.status, resp)
            return True
        self.wait_for(put, message='%s still holds disks freed without it'
                      % host)

    def _crash_without_host(self, point):
        """The server's host is down and forced down (fenced); the API,
        detaching the volume (or deleting the server) without it, dies
        after deciding to."""
        workflow = CASES[point][1]
        server_id, host = self._server()
        volume_id = self.create_volume()
        async_api = self.api.as_(compute_version='2.101')
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=async_api).status)
        self.wait_for_volume_status(volume_id, 'in-use')
        api = self.deployment.API
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(api, point, mark)
        self.addCleanup(self.deployment.restart_disarmed, api)
        self.deployment.stop(host)
        self.addCleanup(self.deployment.ensure_running)
        self.wait_for_service_state('nova-lite-compute', host, 'down')
        self.force_down(host)
        self.addCleanup(self.force_down, host, False)
        if workflow == 'local_detach':
            self.assertRaises(requests.ConnectionError, self.detach_volume,
                              server_id, volume_id)
        else:
            self.assertRaises(requests.ConnectionError,
                              self.api.delete, '/v2.1/servers/%s' % server_id)
        self.deployment.wait_crashed(api, mark)
        self.deployment.start(host)
        self.force_down(host, False)
        self.deployment.restart_disarmed(api)
        self._wait_settled(point, server_id, volume_id)
        # The volume is usable again, on a server of another host.
        other = self.create_server()
        self.wait_for_server_status(other, 'ACTIVE')
        self.assertEqual(202, self.attach_volume(other, volume_id,
                                                 api=async_api).status)
        self.wait_for_volume_status(volume_id, 'in-use')

    def _migration_settled(self, server_id, volume_id, outcome, workflow):
        """The volume's migration ended (``success`` on the other backend,
        or ``error`` on its own), its temporary volume gone, the volume
        available (``migrate``) or attached to the server with the swap's
        events closed (an ``Error`` one when it was rolled back)."""
        volume = self.show_volume(volume_id)
        expected = ('success', '#file2') if outcome == FINISHED else (
            'error', '#file')
        if (volume['migration_status'],
                '#' + volume['os-vol-host-attr:host'].split('#')[-1]) != \
                expected:
            return False
        same_name = self.admin_api.get(
            '/v3/demo/volumes?all_tenants=1&name=%s' % volume['name']).body[
                'volumes']
        if len(same_name) != 1:
            return False        # the temporary volume is still there
        if workflow == 'migrate':
            return self._available(server_id, volume_id)
        if not self._attached(server_id, volume_id):
            return False
        events = self._events(server_id, 'swap_volume')
        if any(e['finish_time'] is None for e in events):
            return False
        return outcome == FINISHED or any(
            e['result'] == 'Error' for e in events)

    def _crash_migration(self, point):
        """An administrator migrates a volume to the other backend
        (``os-migrate_volume``): available (``migrate``: block storage
        copies it), or attached to an active server (``swap``: the compute
        swap) or to a shelved-offloaded one (``swap_offloaded``: the API
        swaps without a host). The API or the host dies at the point; the
        migration is finished (the volume on the other backend) or rolled
        back (on its own, ``error``), and the volume is used again."""
        outcome, workflow = CASES[point]
        server_id, host = self._server()
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.101')
        if workflow != 'migrate':
            self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                     api=api).status)
            self.wait_for_volume_status(volume_id, 'in-use')
        if workflow == 'swap_offloaded':
            self.server_action(server_id, {'shelve': None})
            self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')
        name = self._process(point, host)
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(name, point, mark)
        self.addCleanup(self.deployment.restart_disarmed, name)
        path = '/v3/demo/volumes/%s/action' % volume_id
        body = {'os-migrate_volume': {'host': 'file2'}}
        if name == self.deployment.API:
            self.assertRaises(requests.ConnectionError, self.admin_api.post,
                              path, body=body)
        else:
            resp = self.admin_api.post(path, body=body)
            self.assertEqual(202, resp.status, resp)
        self.deployment.wait_crashed(name, mark)
        self.deployment.restart_disarmed(name)
        self._wait_settled(point, server_id, volume_id)
        # Used again: detached (attached first if it was not), and
        # migrated again.
        if workflow == 'swap_offloaded':
            self.server_action(server_id, {'unshelve': None})
            self.wait_for_server_status(server_id, 'ACTIVE')
        if workflow == 'migrate':
            self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                     api=api).status)
            self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(202, self.detach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'available')
        back = 'file' if outcome == FINISHED else 'file2'
        resp = self.admin_api.post(path, body={'os-migrate_volume': {
            'host': back}})
        self.assertEqual(202, resp.status, resp)
        self.assertEqual('success', self.show_volume(volume_id)[
            'migration_status'])

    def _crash_server_operation(self, point):
        """The compute host dies after it connected the server's volume
        for a build (block_device_mapping_v2) or an unshelve from
        offloaded, before the guest is spawned."""
        workflow = CASES[point][1]
        volume_id = self.create_volume()
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        if workflow == 'build':
            # Either host may get the build: both are armed, the first to
            # reach the point dies.
            for host in self.deployment.compute_hosts:
                self.deployment.restart_armed(host, point, mark)
                self.addCleanup(self.deployment.restart_disarmed, host)
            server_id = self.create_server(block_device_mapping_v2=[{
                'source_type': 'volume', 'destination_type': 'volume',
                'uuid': volume_id}])
            self.wait_for(lambda: os.path.exists(mark))
            host = self.show_server(server_id)['OS-EXT-SRV-ATTR:host']
        else:
            server_id, host = self._server()
            api = self.api.as_(compute_version='2.101')
            self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                     api=api).status)
            self.wait_for_volume_status(volume_id, 'in-use')
            self.server_action(server_id, {'shelve': None})
            self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')
            self.deployment.restart_armed(host, point, mark)
            self.addCleanup(self.deployment.restart_disarmed, host)
            resp = self.admin_api.as_(compute_version='2.91').post(
                '/v2.1/servers/%s/action' % server_id,
                body={'unshelve': {'host': host}})
            self.assertEqual(202, resp.status, resp)
        self.deployment.wait_crashed(host, mark)
        self.deployment.restart_disarmed(*self.deployment.compute_hosts)
        self._wait_settled(point, server_id, volume_id)
        if workflow == 'unshelve':
            # Unshelved again, with its volume.
            self.server_action(server_id, {'unshelve': None})
            self.wait_for_server_status(server_id, 'ACTIVE')
            self.assertTrue(self._attached(server_id, volume_id))

    def _attachment(self, server_id, volume_id):
        return json.loads(self.deployment.manage(
            'volume_attachment', 'show', server_id, volume_id, '--json'))

    def _refresh_settled(self, server_id, volume_id, old_attachment_id,
                         outcome):
        shown = self._attachment(server_id, volume_id)
        mapping = shown['mapping']
        replaced = mapping['attachment_id'] != old_attachment_id
        return (mapping['task'] is None and
                replaced == (outcome == FINISHED) and
                shown['attachment']['status'] == 'attached' and
                len(self.show_volume(volume_id)['attachments']) == 1 and
                not locked(self, server_id))

    def _crash_refresh(self, point):
        """``nova-lite-manage volume_attachment refresh`` dies at the
        point; the conductor's settling finishes or rolls back the task it
        left, and unlocks the server."""
        outcome = CASES[point][0]
        server_id, volume_id, connector = stopped_server_with_volume(self)
        old = self._attachment(server_id, volume_id)['mapping'][
            'attachment_id']
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.manage(
            'volume_attachment', 'refresh', server_id, volume_id, connector,
            exit_code=-9, env={'NOVA_LITE_CRASH_AT': point,
                               'NOVA_LITE_CRASH_MARK': mark})
        self.assertTrue(os.path.exists(mark))
        restarted = time.monotonic()
        self.wait_for(
            lambda: self._refresh_settled(server_id, volume_id, old, outcome),
            timeout=SETTLE_TIMEOUT,
            message=lambda: '%s: not %s within %ss: %s' % (
                point, outcome, SETTLE_TIMEOUT,
                self._attachment(server_id, volume_id)))
        self._record(point, outcome, time.monotonic() - restarted)
        # The server starts with its volume, which detaches.
        self.server_action(server_id, {'os-start': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.assertEqual(202, self.detach_volume(server_id, volume_id).status)
        self.wait_for_volume_status(volume_id, 'available')

    def _crash_volume_operation(self, point):
        """The API process dies between the move of the volume's row
        (extending, deleting) and the backend's answer; block storage's
        settling in the volume service (``volume_service.periodic``)
        finishes or rolls the operation back."""
        workflow = CASES[point][1]
        volume_id = self.create_volume(size=SIZE)
        path = '/v3/demo/volumes/%s' % volume_id
        api = self.deployment.API
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(api, point, mark)
        self.addCleanup(self.deployment.restart_disarmed, api)
        if workflow == 'extend':
            self.assertRaises(requests.ConnectionError, self.api.post,
                              path + '/action',
                              body={'os-extend': {'new_size': NEW_SIZE}})
        else:
            self.assertRaises(requests.ConnectionError, self.api.delete,
                              path)
        self.deployment.wait_crashed(api, mark)
        self.deployment.restart_disarmed(api)
        self._wait_settled(point, None, volume_id)
        if workflow == 'delete':
            return
        # The volume is usable again: it grows by one more GiB.
        size = self.show_volume(volume_id)['size']
        resp = self.api.post(path + '/action',
                             body={'os-extend': {'new_size': size + 1}})
        self.assertEqual(202, resp.status, resp)
        self.wait_for(lambda: self._volume_is(volume_id, 'available',
                                              size + 1))

    def _crash_clone(self, point):
        """The API process dies once the clone's row is made (the source
        can no longer be deleted), before the backend clones: the
        volume service's settling makes the clone ``error``; the
        source, then the clone, can be deleted."""
        source_id = self.create_volume(size=SIZE)
        api = self.deployment.API
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(api, point, mark)
        self.addCleanup(self.deployment.restart_disarmed, api)
        self.assertRaises(requests.ConnectionError, self.api.post,
                          '/v3/demo/volumes',
                          body={'volume': {'source_volid': source_id}})
        self.deployment.wait_crashed(api, mark)
        self.deployment.restart_disarmed(api)
        [clone_id] = [v['id'] for v in self.api.as_(
            volume_version='3.0').get('/v3/demo/volumes/detail').body[
                'volumes'] if v['source_volid'] == source_id]
        self.addCleanup(self._delete_volume, clone_id, 'demo')
        self._wait_settled(point, None, clone_id)
        for volume_id in (source_id, clone_id):
            path = '/v3/demo/volumes/%s' % volume_id
            self.assertEqual(202, self.api.delete(path).status)
            self.wait_for(lambda: self.admin_api.get(path).status == 404)

    def _wait_settled(self, point, server_id, volume_id):
        outcome, workflow = CASES[point]
        restarted = time.monotonic()
        self.wait_for(
            lambda: self._settled(server_id, volume_id, outcome, workflow),
            timeout=SETTLE_TIMEOUT,
            message=lambda: '%s: not %s within %ss: volume %s' % (
                point, outcome, SETTLE_TIMEOUT, [
                    self.show_volume(v) for v in (
                        volume_id if isinstance(volume_id, tuple)
                        else (volume_id,))]))
        self._record(point, outcome, time.monotonic() - restarted)

    def _record(self, point, outcome, seconds):
        path = os.environ.get(MATRIX_ENV)
        if path:
            with open(path, 'a') as f:
                f.write('%s %s %s %s %.1f\n' % (
                    self.BACKEND, point, crashpoint.POINTS[point][0],
                    outcome.replace(' ', '_'), seconds))

    def test_every_point_is_covered(self):
        # The volume service's own (nova-lite-volume) are
        # tests/integration/test_volume_service.py's.
        self.assertEqual(sorted(p for p, (kind, _d) in
                                crashpoint.POINTS.items()
                                if kind != 'volume'), sorted(CASES))


class CinderFaultsCoveredTest(testtools.TestCase):
    """Every fault of ``CINDER_FAULTS`` names a test that exists (no
    deployment: the tests run in their own class)."""

    def test_every_cinder_fault_is_tested(self):
        from tests.integration.realdata import test_cinder_faults
        tests = {name for cls in (test_cinder_faults.TestCinderFaults,
                                  test_cinder_faults.TestCinderCephOutage)
                 for name in dir(cls) if name.startswith('test_')}
        self.assertEqual(set(), {
            test for _outcome, test in CINDER_FAULTS.values()} - tests)


def _points(share):
    """The crash points a backend's class runs: share 0 or 1 of them
    (every other point, in sorted order), or all of them."""
    points = sorted(CASES)
    if (os.environ.get(BACKENDS_ENV) == 'both' or
            os.environ.get(MATRIX_ENV)):
        return points
    return points[share::2]


def _add_cases(cls, points):
    for point in points:
        def test(self, point=point):
            self._crash(point)
        name = 'test_crash_at_%s' % point.replace('.', '_')
        test.__name__ = name
        setattr(cls, name, test)
    return cls


class TestCrashRecoveryMariaDB(_CrashRecoveryTests, base.IntegrationTestCase):
    BACKEND = 'mysql'


class TestCrashRecoveryPostgreSQL(_CrashRecoveryTests,
                                  base.IntegrationTestCase):
    BACKEND = 'postgresql'


_add_cases(TestCrashRecoveryMariaDB, _points(0))
_add_cases(TestCrashRecoveryPostgreSQL, _points(1))


class TestManageVolumeAttachment(base.IntegrationTestCase):
    """``nova-lite-manage volume_attachment show|reconcile`` against the
    running deployment."""
    BACKEND = 'mysql'
    EXTRA_CONF = _CrashRecoveryTests.EXTRA_CONF

    def test_show_and_reconcile(self):
        server_id = self.create_server()
        host = self.wait_for_server_status(
            server_id, 'ACTIVE')['OS-EXT-SRV-ATTR:host']
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.101')
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'in-use')
        shown = json.loads(self.deployment.manage(
            'volume_attachment', 'show', server_id, volume_id, '--json'))
        self.assertEqual('/dev/vdb', shown['mapping']['device_name'])
        self.assertIsNone(shown['mapping']['task'])
        self.assertEqual((shown['mapping']['attachment_id'], 'attached'),
                         (shown['attachment']['id'],
                          shown['attachment']['status']))
        self.assertIn('Nothing to settle.', self.deployment.manage(
            'volume_attachment', 'reconcile'))
        # A detach the host took and died in: it waits for that host.
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(
            host, crashpoint.COMPUTE_DETACH_AFTER_TAKE, mark)
        self.addCleanup(self.deployment.restart_disarmed, host)
        self.assertEqual(202, self.detach_volume(server_id, volume_id,
                                                 api=api).status)
        self.deployment.wait_crashed(host, mark)
        report = json.loads(self.deployment.manage(
            'volume_attachment', 'reconcile', '--json', exit_code=2))
        [waiting] = report['waiting_for_host']
        self.assertEqual(
            (server_id, volume_id, 'detaching', 'guest_detaching',
             'nova-lite-compute:%s' % host),
            (waiting['server'], waiting['volume'], waiting['operation'],
             waiting['step'], waiting['owner']))
        self.deployment.restart_disarmed(host)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertIn('Nothing to settle.', self.deployment.manage(
            'volume_attachment', 'reconcile'))
        self.assertIn('not attached', self.deployment.manage(
            'volume_attachment', 'show', server_id, volume_id, exit_code=1))

    def test_refresh(self):
        server_id, volume_id, connector = stopped_server_with_volume(self)
        before = json.loads(self.deployment.manage(
            'volume_attachment', 'show', server_id, volume_id, '--json'))
        # Refused while the server runs, or with a bad connector file.
        self.server_action(server_id, {'os-start': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.assertIn('must be stopped', self.deployment.manage(
            'volume_attachment', 'refresh', server_id, volume_id, connector,
            exit_code=3))
        self.server_action(server_id, {'os-stop': None})
        self.wait_for_server_status(server_id, 'SHUTOFF')
        self.assertIn('Cannot read the connector', self.deployment.manage(
            'volume_attachment', 'refresh', server_id, volume_id,
            connector + '.missing', exit_code=4))
        self.assertIn('replaced by', self.deployment.manage(
            'volume_attachment', 'refresh', server_id, volume_id, connector))
        after = json.loads(self.deployment.manage(
            'volume_attachment', 'show', server_id, volume_id, '--json'))
        self.assertNotEqual(before['mapping']['attachment_id'],
                            after['mapping']['attachment_id'])
        self.assertEqual(('attached', None),
                         (after['attachment']['status'],
                          after['mapping']['task']))
        self.assertEqual([after['mapping']['attachment_id']],
                         [a['attachment_id'] for a in
                          self.show_volume(volume_id)['attachments']])
        self.assertFalse(locked(self, server_id))
        self.server_action(server_id, {'os-start': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.assertEqual(202, self.detach_volume(server_id, volume_id).status)
        self.wait_for_volume_status(volume_id, 'available')
