"""The volume service (``nova-lite-volume``) in the production layout:
the API processes (uWSGI) load no driver and reach the backends over
RabbitMQ; the volume service, SIGKILLed at each of its crash points
(``nova_lite.crashpoint``, process ``volume``), leaves what it was doing
to the rules of doc/source/contributor/crash-safety.rst:

* **create** (``volume.create.after_backend``): the API's call gets no
  answer (``MessagingTimeout`` after ``rpc_response_timeout``): the volume
  is ``error`` at once, and its delete (by the restarted service) removes
  the storage the dead service made;
* **extend** (``volume.extend.after_backend``): no answer: the volume
  stays ``extending``; the restarted service's settling, once it stalled
  (``[recovery] stalled_after``), makes it ``available`` with the size
  the backend holds (the new one);
* **connect** (``volume.connect.after_backend``): no answer: the
  attachment fails, the attach is rolled back (the volume ``available``,
  not on the server) and can be attached again;
* **disconnect** (``volume.disconnect.after_backend``): no answer: the
  detach is rolled back or finished by the compute side's rules, and the
  volume can be detached (again);
* **migrate** (``volume.migrate.mid_copy``): no answer (the request
  answers 503): the migration is rolled back (``migration_status``
  ``error``, the volume on its backend), and the volume migrates again.

Silent is not dead: a volume service stopped (SIGSTOP: alive, its queue
taken, answering nothing and sending no heartbeat) mid connect makes the
host's call fail after ``rpc_response_timeout``, and the attach is rolled
back while it is stopped; resumed (SIGCONT), it works through what was
queued for it (a connect nobody waits for any more), and the volume
attaches and detaches again.

The deployment answers a dead service in ``RPC_TIMEOUT`` seconds and
settles stalled work quickly (``settle_interval`` 1 s, ``stalled_after``
5 s). ``NOVA_LITE_VOLUME_KILL_TIMES=<file>`` appends one line per case
(crash point, seconds from the restart to settled, the disconnect's
outcome).
"""

import os
import signal
import tempfile
import threading
import time

from nova_lite import crashpoint
from tests.integration import base

RPC_TIMEOUT = 10
SETTLE_TIMEOUT = 120
TIMES_ENV = 'NOVA_LITE_VOLUME_KILL_TIMES'

POINTS = (
    crashpoint.VOLUME_SERVICE_CREATE_AFTER_BACKEND,
    crashpoint.VOLUME_SERVICE_EXTEND_AFTER_BACKEND,
    crashpoint.VOLUME_SERVICE_CONNECT_AFTER_BACKEND,
    crashpoint.VOLUME_SERVICE_DISCONNECT_AFTER_BACKEND,
    crashpoint.VOLUME_SERVICE_MIGRATE_MID_COPY,
)


class _VolumeServiceTests(object):
    EXTRA_CONF = {'DEFAULT': {'rpc_response_timeout': RPC_TIMEOUT},
                  'recovery': {'settle_interval': 1, 'stalled_after': 5},
                  # A second backend, for the migration.
                  'volume': {'enabled_backends': 'file,file2'},
                  'file2': {'volume_driver': 'file'}}

    def _kill_at(self, point):
        """Restart the volume service with ``point`` armed; returns the
        mark file (``wait_crashed``)."""
        name = self.deployment.VOLUME
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(name, point, mark)
        self.addCleanup(self.deployment.restart_disarmed, name)
        return mark

    def _restart_after_kill(self, mark):
        name = self.deployment.VOLUME
        self.deployment.wait_crashed(name, mark)
        self.deployment.restart_disarmed(name)
        return time.monotonic()

    def _settled(self, point, restarted, predicate, message, outcome=''):
        self.wait_for(predicate, timeout=SETTLE_TIMEOUT, message=message)
        seconds = time.monotonic() - restarted
        path = os.environ.get(TIMES_ENV)
        if path:
            with open(path, 'a') as f:
                f.write('%s %s %.1f %s\n' % (
                    self.BACKEND, point, seconds,
                    outcome() if callable(outcome) else outcome))

    def _volume_file(self, volume_id):
        return os.path.join(self.deployment.path, 'state', 'volumes',
                            'volume-%s' % volume_id)

    def _status(self, volume_id):
        volume = self.show_volume(volume_id)
        return volume['status'], volume['size']

    def _usable_again(self, server_id, volume_id, api):
        """The volume attaches and detaches again."""
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(202, self.detach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'available')

    def test_every_point_is_covered(self):
        self.assertEqual(
            sorted(p for p, (kind, _d) in crashpoint.POINTS.items()
                   if kind == 'volume'), sorted(POINTS))

    def test_the_api_processes_load_no_driver(self):
        # The volume service's rows are the backends' cinder-volume
        # services, beating.
        services = self.deployment.volume_services()
        for key in self.deployment.expected_volume_services():
            self.assertEqual('up', services[key]['state'])
        # uWSGI's log names no driver: the API processes load none.
        log = self.deployment.processes[self.deployment.API].log_text()
        self.assertNotIn('FileDriver', log)

    def test_killed_mid_create(self):
        point = crashpoint.VOLUME_SERVICE_CREATE_AFTER_BACKEND
        mark = self._kill_at(point)
        resp = self.api.post('/v3/demo/volumes',
                             body={'volume': {'size': 1}})
        self.assertEqual(202, resp.status, resp)
        volume_id = resp.body['volume']['id']
        restarted = self._restart_after_kill(mark)
        self._settled(point, restarted,
                      lambda: self._status(volume_id)[0] == 'error',
                      'volume %s not error' % volume_id)
        # The dead service made the storage; the delete removes it.
        self.assertTrue(os.path.exists(self._volume_file(volume_id)))
        path = '/v3/demo/volumes/%s' % volume_id
        self.assertEqual(202, self.api.delete(path).status)
        self.wait_for(lambda: self.admin_api.get(path).status == 404)
        self.assertFalse(os.path.exists(self._volume_file(volume_id)))

    def test_killed_mid_extend(self):
        point = crashpoint.VOLUME_SERVICE_EXTEND_AFTER_BACKEND
        volume_id = self.create_volume(size=1)
        mark = self._kill_at(point)
        path = '/v3/demo/volumes/%s/action' % volume_id
        resp = self.api.post(path, body={'os-extend': {'new_size': 2}})
        self.assertEqual(202, resp.status, resp)
        restarted = self._restart_after_kill(mark)
        self._settled(point, restarted,
                      lambda: self._status(volume_id) == ('available', 2),
                      'volume %s not available with 2G' % volume_id)
        # Usable again: it grows by one more GiB.
        resp = self.api.post(path, body={'os-extend': {'new_size': 3}})
        self.assertEqual(202, resp.status, resp)
        self.wait_for(lambda: self._status(volume_id) == ('available', 3))
        self.assertEqual(3 * 1024 ** 3,
                         os.path.getsize(self._volume_file(volume_id)))

    def _attached(self, server_id, volume_id):
        ids = [a['volumeId'] for a in self.list_attachments(server_id)]
        volume = self.show_volume(volume_id)
        return volume['status'] == 'in-use' and volume_id in ids

    def _available(self, server_id, volume_id):
        ids = [a['volumeId'] for a in self.list_attachments(server_id)]
        volume = self.show_volume(volume_id)
        return (volume['status'] == 'available' and volume_id not in ids
                and not volume['attachments'])

    def test_killed_mid_connect(self):
        point = crashpoint.VOLUME_SERVICE_CONNECT_AFTER_BACKEND
        server_id = self.create_server()
        self.wait_for_server_status(server_id, 'ACTIVE')
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.101')
        mark = self._kill_at(point)
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=api).status)
        restarted = self._restart_after_kill(mark)
        self._settled(point, restarted,
                      lambda: self._available(server_id, volume_id),
                      'volume %s not rolled back' % volume_id)
        self._usable_again(server_id, volume_id, api)

    def test_killed_mid_disconnect(self):
        point = crashpoint.VOLUME_SERVICE_DISCONNECT_AFTER_BACKEND
        server_id = self.create_server()
        self.wait_for_server_status(server_id, 'ACTIVE')
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.101')
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=api).status)
        self.wait_for_volume_status(volume_id, 'in-use')
        mark = self._kill_at(point)
        self.assertEqual(202, self.detach_volume(server_id, volume_id,
                                                 api=api).status)
        restarted = self._restart_after_kill(mark)
        outcome = []

        def settled():
            for name, check in (('finished', self._available),
                                ('rolled back', self._attached)):
                if check(server_id, volume_id):
                    outcome[:] = [name]
                    return True
            return False
        # Detaching, then either state: wait until it stops moving.
        self._settled(point, restarted,
                      lambda: settled() and self.show_volume(volume_id)[
                          'status'] in ('available', 'in-use'),
                      'volume %s neither detached nor attached' % volume_id,
                      outcome=lambda: outcome[0].replace(' ', '_'))
        if outcome == ['rolled back']:
            self.assertEqual(202, self.detach_volume(
                server_id, volume_id, api=api).status)
            self.wait_for_volume_status(volume_id, 'available')
        self._usable_again(server_id, volume_id, api)

    def test_stopped_mid_connect(self):
        server_id = self.create_server()
        self.wait_for_server_status(server_id, 'ACTIVE')
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.101')
        service = self.deployment.processes[self.deployment.VOLUME]
        service.signal(signal.SIGSTOP)
        self.addCleanup(service.signal, signal.SIGCONT)
        stopped = time.monotonic()
        self.assertEqual(202, self.attach_volume(server_id, volume_id,
                                                 api=api).status)
        # The host waits for the connect (the volume reserved or
        # attaching: at least rpc_response_timeout), then rolls back
        # while the service is still stopped: its call got no heartbeat.
        self.wait_for(lambda: self.show_volume(volume_id)['status'] in (
            'reserved', 'attaching'))
        self.wait_for(lambda: self._available(server_id, volume_id),
                      timeout=SETTLE_TIMEOUT,
                      message='attach of %s not rolled back' % volume_id)
        self.assertGreaterEqual(time.monotonic() - stopped, RPC_TIMEOUT)
        self.assertTrue(service.running)
        service.signal(signal.SIGCONT)
        self._usable_again(server_id, volume_id, api)
        self.assertEqual('available', self.show_volume(volume_id)['status'])

    def test_killed_mid_migration_copy(self):
        point = crashpoint.VOLUME_SERVICE_MIGRATE_MID_COPY
        volume_id = self.create_volume()
        mark = self._kill_at(point)
        path = '/v3/demo/volumes/%s/action' % volume_id
        # The request waits for the copy (on a thread: the service is
        # restarted meanwhile, as its supervisor would): the API answers
        # 503 ("a service did not answer in time") once the call timed
        # out and the migration was rolled back.
        answers = []
        request = threading.Thread(target=lambda: answers.append(
            self.admin_api.post(path, body={'os-migrate_volume': {
                'host': 'file2'}})), daemon=True)
        request.start()
        restarted = self._restart_after_kill(mark)
        request.join(SETTLE_TIMEOUT)
        self.assertEqual(1, len(answers))
        self.assertEqual(503, answers[0].status, answers[0])

        def rolled_back():
            volume = self.admin_api.get('/v3/demo/volumes/%s' %
                                        volume_id).body['volume']
            return (volume['status'] == 'available' and
                    volume['migration_status'] == 'error' and
                    volume['os-vol-host-attr:host'].endswith('@file#file'))
        self._settled(point, restarted, rolled_back,
                      'migration of %s not rolled back' % volume_id)
        # No temporary volume left.
        volumes = self.admin_api.get(
            '/v3/demo/volumes/detail?all_tenants=1').body['volumes']
        self.assertEqual([], [v['id'] for v in volumes if (
            v.get('migration_status') or '').startswith('target:')])
        # Migrates again.
        resp = self.admin_api.post(path, body={'os-migrate_volume': {
            'host': 'file2'}})
        self.assertEqual(202, resp.status, resp)
        self.assertEqual('success', self.show_volume(volume_id)[
            'migration_status'])


class TestVolumeServiceMariaDB(_VolumeServiceTests,
                               base.IntegrationTestCase):
    BACKEND = 'mysql'
