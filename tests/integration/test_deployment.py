"""nova_lite deployed as operators run it: the API under uWSGI (the shipped
``etc/nova-lite/nova-lite-api-uwsgi.ini``), one conductor and two compute
hosts as separate processes over RabbitMQ, on MariaDB and on PostgreSQL.

What this module proves, on each database:

* every service registers and heartbeats (``GET /v2.1/os-services``), the
  schema is at head (``nova-lite-manage``);
* RPC crosses RabbitMQ to the conductor and to each compute host by name,
  and notifications travel over it;
* restart safety: a conductor or compute stopped while idle and started
  again loses nothing (a call sent while it was down is answered) and the
  system serves again without manual steps; a compute whose heartbeat
  stops shows ``down`` after ``service_down_time``;
* the API keeps serving through a uWSGI chain reload and a graceful
  reload, and stops cleanly on SIGTERM.

The attach scenarios (create servers on both hosts, attach, detach and
list through each supported mode: synchronous, asynchronous, multiattach,
shelve and unshelve moving a server between hosts, 409 when a server's
compute host is down) join this tier as those features land, as new
modules built on ``tests.integration.base.IntegrationTestCase`` and its
HTTP helpers.
"""

import signal
import threading

from alembic import script as alembic_script
import oslo_messaging as messaging
from oslo_utils import uuidutils

from nova_lite import context as nl_context
from nova_lite.db import migration
from nova_lite.objects import service as service_obj
from nova_lite import rpc
from tests.integration import base
from tests.integration import deployment as deploy

COMPUTE = service_obj.COMPUTE_BINARY
CONDUCTOR = service_obj.CONDUCTOR_BINARY


class _ServiceTests(object):
    """Services, schema, RPC and notifications."""

    def test_services_up_on_both_hosts(self):
        services = self.deployment.wait_for_services()
        self.assertEqual(
            {(CONDUCTOR, deploy.Deployment.CONDUCTOR_HOST),
             (COMPUTE, 'compute1'), (COMPUTE, 'compute2')}, set(services))
        for service in services.values():
            self.assertEqual(('up', 'enabled'),
                             (service['state'], service['status']))
            self.assertTrue(uuidutils.is_uuid_like(service['id']))
        # The compute filter of the API, answered by either uWSGI worker.
        resp = self.admin_api.get('/v2.1/os-services?binary=%s' % COMPUTE)
        self.assertEqual(200, resp.status, resp)
        self.assertEqual(
            [('compute1', 'nova'), ('compute2', 'nova')],
            sorted((s['host'], s['zone']) for s in resp.body['services']))
        # Only an admin may list services, under uWSGI as anywhere.
        self.assertEqual(403, self.api.get('/v2.1/os-services').status)

    def test_schema_at_head(self):
        head = alembic_script.ScriptDirectory.from_config(
            migration.alembic_config()).get_current_head()
        self.assertEqual(head, self.deployment.manage(
            'db', 'version').strip().splitlines()[-1])
        # A second sync at head changes nothing and succeeds.
        self.assertIn(head, self.deployment.manage('db', 'sync'))

    def test_ping_over_rabbitmq(self):
        self.assertTrue(
            self.deployment.conf.transport_url.startswith('rabbit://'))
        arg = uuidutils.generate_uuid()
        self.assertEqual({'service': CONDUCTOR, 'arg': arg},
                         self.deployment.ping('conductor', arg=arg))
        for host in ('compute1', 'compute2'):
            self.assertEqual({'service': COMPUTE, 'arg': host},
                             self.deployment.ping('compute', server=host,
                                                  arg=host))

    def test_notifications_over_rabbitmq(self):
        conf = self.deployment.conf
        transport = rpc.init(conf).notification_transport
        self.assertEqual('RabbitDriver', type(transport._driver).__name__)
        received = []
        got = threading.Event()
        marker = uuidutils.generate_uuid()

        class Endpoint(object):
            def info(self, ctxt, publisher_id, event_type, payload,
                     metadata):
                if payload.get('marker') == marker:
                    received.append((publisher_id, event_type, payload))
                    got.set()

        listener = messaging.get_notification_listener(
            transport, [messaging.Target(topic='versioned_notifications')],
            [Endpoint()], executor='threading')
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)
        notifier = rpc.get_notifier(conf, 'nova-lite-compute:compute1')
        notifier.info(nl_context.get_admin_context(), 'integration.check',
                      {'marker': marker})
        self.assertTrue(got.wait(deploy.START_TIMEOUT))
        self.assertEqual(
            [('nova-lite-compute:compute1', 'integration.check',
              {'marker': marker})], received)


class _RestartTests(object):
    """Stopping and starting services while idle."""

    def test_conductor_restart_loses_nothing(self):
        d = self.deployment
        before = d.services()[(CONDUCTOR, d.CONDUCTOR_HOST)]
        self.assertTrue(d.stop(d.CONDUCTOR),
                        'the conductor did not stop on SIGTERM')
        # Sent while no conductor runs: the message waits in its queue.
        thread, results = d.ping_in_background('conductor', arg='queued')
        d.start(d.CONDUCTOR)
        thread.join(deploy.START_TIMEOUT)
        self.assertEqual([{'service': CONDUCTOR, 'arg': 'queued'}], results)
        services = d.wait_for_services()
        after = services[(CONDUCTOR, d.CONDUCTOR_HOST)]
        # The same row, refreshed: a restart is not a new service.
        self.assertEqual(before['id'], after['id'])
        self.assertGreater(after['updated_at'], before['updated_at'])
        self.assertEqual({'service': CONDUCTOR, 'arg': 'again'},
                         d.ping('conductor', arg='again'))

    def test_compute_down_then_back(self):
        d = self.deployment
        before = d.services()[(COMPUTE, 'compute2')]
        self.assertTrue(d.stop('compute2'),
                        'compute2 did not stop on SIGTERM')
        # Its heartbeat stops: down after service_down_time, while
        # compute1 stays up.
        d.wait_for_services({(COMPUTE, 'compute2'): 'down',
                             (COMPUTE, 'compute1'): 'up',
                             (CONDUCTOR, d.CONDUCTOR_HOST): 'up'})
        thread, results = d.ping_in_background('compute', server='compute2',
                                               arg='queued')
        # The other host is unaffected.
        self.assertEqual({'service': COMPUTE, 'arg': 'compute1'},
                         d.ping('compute', server='compute1',
                                arg='compute1'))
        d.start('compute2')
        thread.join(deploy.START_TIMEOUT)
        self.assertEqual([{'service': COMPUTE, 'arg': 'queued'}], results)
        after = d.wait_for_services()[(COMPUTE, 'compute2')]
        self.assertEqual(before['id'], after['id'])


class _UWSGITests(object):
    """The API under the shipped uWSGI configuration."""

    def _workers_ready(self, old_pids):
        """The new workers, once every worker is new and has loaded the
        application (lazy-apps: each worker loads its own)."""
        workers = self.deployment.uwsgi_workers()
        if (len(workers) == self.deployment.api_processes and
                not set(workers) & set(old_pids) and
                all(w.get('apps') for w in workers.values())):
            return workers
        return None

    def _reload_while_serving(self, reload):
        """Requests from two clients without pause while ``reload()``
        replaces the workers; every request must succeed."""
        old = self.deployment.uwsgi_workers()
        self.assertEqual(self.deployment.api_processes, len(old))
        statuses = []
        stop = threading.Event()

        def client():
            api = self.admin_api.as_()
            while not stop.is_set():
                try:
                    statuses.append(api.get('/v2.1/os-services').status)
                except Exception as e:
                    statuses.append(repr(e))

        threads = [threading.Thread(target=client, daemon=True)
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        self.addCleanup(stop.set)
        self.wait_for(lambda: len(statuses) >= 4)
        reload()
        new = self.wait_for(lambda: self._workers_ready(old),
                            timeout=deploy.START_TIMEOUT)
        served = len(statuses)
        self.wait_for(lambda: len(statuses) >= served + 10)
        stop.set()
        for thread in threads:
            thread.join(deploy.HTTP_TIMEOUT)
        self.assertEqual([], [s for s in statuses if s != 200])
        # The new workers answered some of them.
        self.assertTrue(self.wait_for(lambda: sum(
            w['requests'] for w in self.deployment.uwsgi_workers().values()
            if w['pid'] in new)))

    def test_shipped_ini_processes_and_threads(self):
        workers = self.deployment.uwsgi_workers()
        self.assertEqual(2, len(workers))
        for worker in workers.values():
            self.assertEqual(2, len(worker['cores']))
            # lazy-apps: the application was loaded in the worker.
            self.assertEqual(1, len(worker['apps']))

    def test_chain_reload_keeps_serving(self):
        # touch-chain-reload in the shipped ini: one worker at a time.
        self._reload_while_serving(self.deployment.touch_reload_file)

    def test_graceful_reload_keeps_serving(self):
        # SIGHUP: all workers at once; requests wait in the backlog.
        api = self.deployment.processes[self.deployment.API]
        self._reload_while_serving(lambda: api.signal(signal.SIGHUP))

    def test_sigterm_stops_then_restart_serves(self):
        d = self.deployment
        self.assertTrue(d.stop(d.API), 'uWSGI did not stop on SIGTERM')
        self.assertEqual(0, d.processes[d.API].proc.returncode)
        d.start(d.API)
        resp = self.admin_api.get('/v2.1/os-services')
        self.assertEqual(200, resp.status, resp)


class _DeploymentTests(_ServiceTests, _RestartTests, _UWSGITests):
    pass


class TestDeploymentMariaDB(_DeploymentTests, base.IntegrationTestCase):
    BACKEND = 'mysql'


class TestDeploymentPostgreSQL(_DeploymentTests, base.IntegrationTestCase):
    BACKEND = 'postgresql'
