"""Crash a real process at each named step of the attach and detach
workflows and check that the volume is settled after the process is back.

For every crash point of ``nova_lite.crashpoint`` (the process it is in
and the workflow its name says): the process is restarted with the point
armed, the workflow is driven through the REST API, the test waits for the
SIGKILL, starts the process again without the point, and polls (deadline
``SETTLE_TIMEOUT``) until the volume is settled as
doc/source/contributor/crash-safety.rst says: ``in-use`` with its
attachment on the server, or ``available`` with none; the request's
instance action has no event left open (an ``Error`` one when it was
rolled back); and the volume can be attached and detached again.

The deployment settles stalled work quickly (``[recovery]
settle_interval`` 1 s, ``stalled_after`` 5 s) so the cases that wait for a
periodic task (a dead API process's work) finish in seconds; the defaults
(20 s, 60 s) settle them within 80 s.

``NOVA_LITE_RECOVERY_MATRIX=<file>`` appends one line per case (backend,
crash point, outcome, seconds from the restart to settled) to that file:
doc/source/admin/recovery-matrix.inc is made from it.
"""

import os
import tempfile
import time

import requests

from nova_lite import crashpoint
from tests.integration import base

SETTLE_TIMEOUT = 120
MATRIX_ENV = 'NOVA_LITE_RECOVERY_MATRIX'

FINISHED = 'finished'
ROLLED_BACK = 'rolled back'

# crash point -> (the outcome it must settle to, the workflow that reaches
# it). Every declared point must be here (test_every_point_is_covered).
CASES = {
    crashpoint.API_ATTACH_AFTER_ACCEPT: (ROLLED_BACK, 'attach'),
    crashpoint.API_DETACH_AFTER_BEGIN: (ROLLED_BACK, 'detach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_TAKE: (ROLLED_BACK, 'attach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_RESERVE_DEVICE: (ROLLED_BACK,
                                                       'attach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_ATTACHMENT_CREATE: (ROLLED_BACK,
                                                          'attach'),
    crashpoint.CONDUCTOR_ATTACH_AFTER_HANDOVER: (ROLLED_BACK, 'attach'),
    crashpoint.COMPUTE_ATTACH_AFTER_TAKE: (ROLLED_BACK, 'attach'),
    crashpoint.COMPUTE_ATTACH_AFTER_CONNECT: (FINISHED, 'attach'),
    crashpoint.COMPUTE_ATTACH_AFTER_GUEST_ATTACH: (FINISHED, 'attach'),
    crashpoint.COMPUTE_DETACH_AFTER_TAKE: (FINISHED, 'detach'),
    crashpoint.COMPUTE_DETACH_AFTER_GUEST_DETACH: (FINISHED, 'detach'),
}


class _CrashRecoveryTests(object):
    EXTRA_CONF = {'recovery': {'settle_interval': 1, 'stalled_after': 5}}

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

    def _settled(self, server_id, volume_id, outcome, workflow):
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
        restarted = time.monotonic()
        self.wait_for(
            lambda: self._settled(server_id, volume_id, outcome, workflow),
            timeout=SETTLE_TIMEOUT,
            message=lambda: '%s: not %s within %ss: volume %s, events %s'
            % (point, outcome, SETTLE_TIMEOUT, self.show_volume(volume_id),
               self._events(server_id, '%s_volume' % workflow)))
        seconds = time.monotonic() - restarted
        self._record(point, outcome, seconds)
        # The volume is usable again: attach and detach it.
        if self._available(server_id, volume_id):
            self.assertEqual(202, self.attach_volume(
                server_id, volume_id, api=api).status)
            self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(202, self.detach_volume(
            server_id, volume_id, api=api).status)
        self.wait_for_volume_status(volume_id, 'available')
        self.wait_for_attachment(server_id, volume_id, present=False)

    def _record(self, point, outcome, seconds):
        path = os.environ.get(MATRIX_ENV)
        if path:
            with open(path, 'a') as f:
                f.write('%s %s %s %s %.1f\n' % (
                    self.BACKEND, point, crashpoint.POINTS[point][0],
                    outcome.replace(' ', '_'), seconds))

    def test_every_point_is_covered(self):
        self.assertEqual(sorted(crashpoint.POINTS), sorted(CASES))


def _add_cases(cls):
    for point in CASES:
        def test(self, point=point):
            self._crash(point)
        name = 'test_crash_at_%s' % point.replace('.', '_')
        test.__name__ = name
        setattr(cls, name, test)
    return cls


_add_cases(_CrashRecoveryTests)


class TestCrashRecoveryMariaDB(_CrashRecoveryTests, base.IntegrationTestCase):
    BACKEND = 'mysql'


class TestCrashRecoveryPostgreSQL(_CrashRecoveryTests,
                                  base.IntegrationTestCase):
    BACKEND = 'postgresql'
