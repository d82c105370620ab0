"""A real nova_lite deployment, in processes, for the integration tier.

``Deployment(backend)`` builds what an operator runs, on this machine:

* a RabbitMQ virtual host of its own (``RabbitVhost``, below);
* a database of its own on MariaDB (``backend='mysql'``) or PostgreSQL
  (``'postgresql'``), from ``tests.fixtures.database.opportunistic_url``;
* a ``nova-lite.conf`` pointing at both, with short heartbeats
  (``report_interval`` 1 s, ``service_down_time`` 4 s) so that a stopped
  service shows ``down`` within seconds;
* ``nova-lite-manage db sync``;
* the API under uWSGI, from the shipped
  ``etc/nova-lite/nova-lite-api-uwsgi.ini`` with only its listen address,
  paths and size changed (2 processes x 2 threads on a free loopback port;
  a stats socket and a master FIFO added);
* ``nova-lite-volume --host storage1`` (the volume service: the
  block-storage backends' drivers and their settling; the API processes
  load no driver), ``nova-lite-conductor`` and ``nova-lite-compute --host
  compute1`` and ``--host compute2``, all with the same configuration
  file.

``Deployment(backend, api_nodes=2)`` is the production layout's
controller with two API nodes behind a load balancer: a second, separate
uWSGI instance of the same ini and ``nova-lite.conf``, on a port, with
paths and a log of its own (process ``api2``); ``api_urls`` maps each API
process to its base URL (``base_url`` is the first's, ``api``). With
``api_storage_shims=True`` the API processes run without storage rights:
their ``PATH`` starts with a directory whose ``tgtadm``, ``tgt-admin`` and
``rbd`` record each call (the caller's pid and the arguments) in
``storage_calls_log`` and exit 1, so ``storage_calls()`` lists every
storage command an API process ran (none, in the production layout); the
other processes, the volume service among them, keep the test runner's
``PATH``.

``Deployment(backend, all_in_one=True)`` is the embedded default instead:
one ``nova-lite-all`` process (its SQLite database and the in-process
transport; ``backend`` is not used) serving on a free loopback port, its
conductor and its one compute host named ``compute_hosts[0]``; the
process is ``processes[API]``.

It waits (polling with a deadline) until ``GET /v2.1/os-services`` shows
every service up, and ``GET /v3/demo/os-services`` the volume service's
``cinder-volume`` row of each enabled backend (not with Keystone). At
cleanup it stops the processes (SIGTERM, then SIGKILL after
``STOP_TIMEOUT``), drops the database and deletes the vhost. Every
process logs to its own file in the deployment's directory;
``log_details()`` returns them as testtools details for a failing test.

Names are unique per deployment (database ``nova_lite_test_<hex>``, vhost
``nova_lite_it_<hex>``), so concurrent runs never share state.

When RabbitMQ, MariaDB/PostgreSQL or the uWSGI binary is missing, starting
a deployment raises ``unittest.SkipTest`` saying what is needed, or, with
``NOVA_LITE_REQUIRE_INTEGRATION=1`` (CI),
``tests.fixtures.required.Unavailable``.

RabbitMQ vhost strategies, first that works:

1. ``rabbitmqctl add_vhost`` (the broker is on this machine and we may
   administer it: root or the rabbitmq user). This is what runs on the
   project's CI machine: the tests run as root next to the broker, and the
   management plugin is not enabled there.
2. The management HTTP API (``PUT /api/vhosts/<name>``) on
   ``NOVA_LITE_TEST_RABBIT_MANAGEMENT_URL`` (default: port 15672 of the
   broker), for a remote broker or an unprivileged user.
3. Neither: the vhost of ``NOVA_LITE_TEST_RABBIT_URL`` as given, with a
   unique ``control_exchange``. That alone does not isolate runs:
   oslo.messaging names its queues after the topics (``conductor``,
   ``compute.compute1``...) and its fanout exchanges after the topic too,
   whatever the control exchange. So this mode also takes an exclusive
   lock file (one deployment at a time on this machine) and deletes those
   queues and the exchange at cleanup (reply and fanout queues expire by
   themselves: ``rabbit_transient_queues_ttl``).

``NOVA_LITE_TEST_RABBIT_URL`` (default
``rabbit://guest:guest@127.0.0.1:5672/``) names the broker and the
administrator account;
``NOVA_LITE_TEST_RABBIT_VHOST_STRATEGY`` forces one strategy.
"""

import configparser
import contextlib
import ctypes
import errno
import fcntl
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import uuid

import fixtures
from oslo_config import cfg
import oslo_messaging as messaging
import requests
import sqlalchemy as sa
from testtools import content

from nova_lite import baserpc
from nova_lite import config
from nova_lite import context as nl_context
from nova_lite import objects
from nova_lite.objects import service as service_obj
from nova_lite import rpc
from tests.fixtures import conf as conf_fixture
from tests.fixtures import database as db_fixture
from tests.fixtures import required
from tests.fixtures import system

REQUIRE_ENV = 'NOVA_LITE_REQUIRE_INTEGRATION'
RABBIT_URL_ENV = 'NOVA_LITE_TEST_RABBIT_URL'
RABBIT_MANAGEMENT_URL_ENV = 'NOVA_LITE_TEST_RABBIT_MANAGEMENT_URL'
# Force one vhost strategy: rabbitmqctl, management or shared.
RABBIT_STRATEGY_ENV = 'NOVA_LITE_TEST_RABBIT_VHOST_STRATEGY'
DEFAULT_RABBIT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
UWSGI_INI = os.path.join(ROOT, 'etc', 'nova-lite', 'nova-lite-api-uwsgi.ini')

# Deadlines (seconds). Generous: the machine may be busy with other tests.
START_TIMEOUT = 90      # a process started until the API shows it up
# SIGTERM until SIGKILL. An idle oslo.messaging rabbit listener takes up to
# 5 s to notice a stop (its poll backs off to ACK_REQUEUE_EVERY_SECONDS_MAX).
STOP_TIMEOUT = 30
COMMAND_TIMEOUT = 120   # nova-lite-manage, rabbitmqctl
HTTP_TIMEOUT = 60       # one HTTP request to the API

REPORT_INTERVAL = 1
SERVICE_DOWN_TIME = 4

ADMIN_TOKEN = 'admin:admin'

_PR_SET_PDEATHSIG = 1


def unavailable(message):
    """Skip (or, when the tier is required, fail) saying what is missing."""
    required.unavailable(message, REQUIRE_ENV)


def wait_for(predicate, timeout, interval=0.1, message=None):
    """Poll ``predicate`` until it returns something truthy; fail at the
    deadline with ``message`` (a string or a callable giving one)."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            if callable(message):
                message = message()
            raise AssertionError(
                message or 'condition not met within %ss' % timeout)
        time.sleep(interval)


def _die_with_parent():
    # Runs in the child before exec: if the test process dies (killed
    # runner), the kernel sends SIGTERM to the service instead of leaving it
    # behind. Linux only; harmless to skip elsewhere.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def executable(name):
    """A console script of this Python environment (``bin/`` beside the
    interpreter), else from PATH; None if missing."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    if os.access(candidate, os.X_OK):
        return candidate
    return shutil.which(name)


# --------------------------------------------------------------------------
# RabbitMQ


class RabbitVhost(fixtures.Fixture):
    """A RabbitMQ vhost for one deployment (see the module docstring).

    After setUp: ``transport_url`` (rabbit://, with the new vhost),
    ``control_exchange`` and ``strategy`` ('rabbitmqctl', 'management' or
    'shared').
    """

    # Queues oslo.messaging declares for nova_lite's topics (fanout queues
    # expire by themselves: rabbit_transient_queues_ttl).
    SHARED_QUEUES = ('conductor', 'compute', 'nova-lite-volume',
                     'versioned_notifications.info',
                     'versioned_notifications.error')
    # The volume service's queues are per backend, not per host.
    BACKEND_QUEUES = ('file', 'file2', 'fake', 'iscsi', 'rbd')

    def __init__(self, hosts=()):
        super().__init__()
        self.hosts = hosts

    def _setUp(self):
        self.url = os.environ.get(RABBIT_URL_ENV) or DEFAULT_RABBIT_URL
        parsed = urllib.parse.urlsplit(self.url)
        self.host = parsed.hostname or '127.0.0.1'
        self.port = parsed.port or 5672
        self.user = urllib.parse.unquote(parsed.username or 'guest')
        self.password = urllib.parse.unquote(parsed.password or 'guest')
        self.given_vhost = urllib.parse.unquote(
            parsed.path[1:]) if len(parsed.path) > 1 else '/'
        self._check_reachable()
        self.name = 'nova_lite_it_%s' % uuid.uuid4().hex[:12]
        self.control_exchange = 'nova_lite'
        strategies = {'rabbitmqctl': self._rabbitmqctl,
                      'management': self._management,
                      'shared': self._shared}
        forced = os.environ.get(RABBIT_STRATEGY_ENV)
        if forced:
            strategies = {forced: strategies[forced]}
        for strategy in strategies.values():
            vhost = strategy()
            if vhost is not None:
                break
        else:
            unavailable('could not create a RabbitMQ vhost at %s:%s (tried: '
                        '%s)' % (self.host, self.port, ', '.join(strategies)))
        self.vhost = vhost
        self.transport_url = 'rabbit://%s:%s@%s:%s/%s' % (
            urllib.parse.quote(self.user, safe=''),
            urllib.parse.quote(self.password, safe=''), self.host, self.port,
            urllib.parse.quote(vhost, safe=''))

    def _amqp_connection(self, vhost):
        import kombu
        return kombu.Connection(
            hostname=self.host, port=self.port, userid=self.user,
            password=self.password, virtual_host=vhost, connect_timeout=5)

    def _check_reachable(self):
        try:
            with self._amqp_connection(self.given_vhost) as conn:
                conn.connect()
        except Exception as e:
            unavailable('RabbitMQ is not available at %s:%s as %s (%s: %s); '
                        'set %s to another rabbit:// URL' % (
                            self.host, self.port, self.user,
                            type(e).__name__, e, RABBIT_URL_ENV))

    # Strategy 1: rabbitmqctl on this machine.
    def _rabbitmqctl(self):
        if self.host not in ('127.0.0.1', 'localhost', '::1'):
            return None
        ctl = shutil.which('rabbitmqctl') or next(
            (p for p in ('/usr/sbin/rabbitmqctl', '/usr/lib/rabbitmq/bin/'
                         'rabbitmqctl') if os.access(p, os.X_OK)), None)
        if ctl is None:
            return None

        def run(*args):
            return subprocess.run(
                [ctl, '-q'] + list(args), stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True,
                timeout=COMMAND_TIMEOUT).returncode == 0

        if not run('add_vhost', self.name):
            return None
        self.addCleanup(run, 'delete_vhost', self.name)
        if not run('set_permissions', '-p', self.name, self.user,
                   '.*', '.*', '.*'):
            return None
        self.strategy = 'rabbitmqctl'
        return self.name

    # Strategy 2: the management plugin's HTTP API.
    def _management(self):
        base = (os.environ.get(RABBIT_MANAGEMENT_URL_ENV) or
                'http://%s:15672' % self.host).rstrip('/')
        auth = (self.user, self.password)
        vhost_url = '%s/api/vhosts/%s' % (
            base, urllib.parse.quote(self.name, safe=''))
        try:
            resp = requests.put(vhost_url, auth=auth, timeout=5)
        except requests.RequestException:
            return None
        if resp.status_code not in (201, 204):
            return None
        self.addCleanup(requests.delete, vhost_url, auth=auth,
                        timeout=HTTP_TIMEOUT)
        resp = requests.put(
            '%s/api/permissions/%s/%s' % (
                base, urllib.parse.quote(self.name, safe=''),
                urllib.parse.quote(self.user, safe='')),
            json={'configure': '.*', 'write': '.*', 'read': '.*'},
            auth=auth, timeout=HTTP_TIMEOUT)
        if resp.status_code not in (201, 204):
            return None
        self.strategy = 'management'
        return self.name

    # Strategy 3: the given vhost, one deployment at a time.
    def _shared(self):
        path = os.path.join(tempfile.gettempdir(),
                            'nova-lite-integration-rabbit.lock')
        lock = open(path, 'w')
        self.addCleanup(lock.close)

        def locked():
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                return False

        wait_for(locked, timeout=600, interval=0.5, message=(
            'another integration run holds %s for RabbitMQ vhost %r' % (
                path, self.given_vhost)))
        self.addCleanup(fcntl.flock, lock, fcntl.LOCK_UN)
        self.addCleanup(self._delete_queues)
        self.control_exchange = self.name
        self.strategy = 'shared'
        return self.given_vhost

    def _delete_queues(self):
        names = list(self.SHARED_QUEUES) + [
            '%s.%s' % (topic, host) for topic in ('conductor', 'compute')
            for host in self.hosts] + [
            'nova-lite-volume.%s' % b for b in self.BACKEND_QUEUES]
        with self._amqp_connection(self.given_vhost) as conn:
            # A failed delete closes its channel: one channel per delete.
            for name in names:
                with contextlib.suppress(Exception), conn.channel() as chan:
                    chan.queue_delete(name)
            with contextlib.suppress(Exception), conn.channel() as chan:
                chan.exchange_delete(self.control_exchange)


# --------------------------------------------------------------------------
# Processes


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ServiceProcess(object):
    """One long-running process of the deployment, restartable, logging
    (stdout and stderr, every run appended) to ``log_path``."""

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.proc = None

    def start(self):
        assert not self.running, '%s is already running' % self.name
        with open(self.log_path, 'a') as log:
            log.write('\n===== %s: starting %s\n' % (
                time.strftime('%H:%M:%S'), ' '.join(self.argv)))
            log.flush()
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=self.env, cwd=ROOT,
                start_new_session=True, preexec_fn=_die_with_parent)
        return self

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, signum):
        self.proc.send_signal(signum)

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM, then SIGKILL (of its process group) at the deadline.
        Returns True if it stopped by itself."""
        if not self.running:
            return True
        self.proc.terminate()
        return self.wait_stopped(timeout)

    def wait_stopped(self, timeout=STOP_TIMEOUT):
        try:
            self.proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                # Its own session: the group id is its pid; this reaches
                # the uWSGI workers too.
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(STOP_TIMEOUT)
            # The leader is reaped; its workers may still be exiting and
            # holding the listening socket (a restart on the same port
            # then fails with "Address already in use").
            wait_for(lambda: not _group_alive(self.proc.pid), STOP_TIMEOUT,
                     message='process group %s outlived SIGKILL' %
                     self.proc.pid)
            return False

    def log_text(self, limit=200000):
        try:
            with open(self.log_path, errors='replace') as f:
                text = f.read()
        except OSError:
            return ''
        return text[-limit:]


class Response(object):
    def __init__(self, resp):
        self.status = resp.status_code
        self.headers = resp.headers
        self.text = resp.text
        try:
            self.body = resp.json() if resp.content else None
        except ValueError:
            self.body = None

    def __repr__(self):
        return '<Response %s %s>' % (self.status, self.text[:300])


class HTTPClient(system.ClientBase):
    """JSON over HTTP to the deployed API."""

    def __init__(self, base_url, token=ADMIN_TOKEN, compute_version=None,
                 volume_version=None):
        super().__init__(token, compute_version, volume_version)
        self.base_url = base_url
        self.session = requests.Session()

    def _copy(self, token, compute_version, volume_version):
        return HTTPClient(self.base_url, token=token,
                          compute_version=compute_version,
                          volume_version=volume_version)

    def request(self, method, path, body=None, headers=None):
        all_headers = {'Accept': 'application/json'}
        all_headers.update(self.base_headers())
        all_headers.update(headers or {})
        resp = self.session.request(
            method, self.base_url + path, headers=all_headers,
            json=body, timeout=HTTP_TIMEOUT)
        return Response(resp)


# --------------------------------------------------------------------------
# The deployment


class Deployment(fixtures.Fixture):
    """uWSGI API + conductor + compute hosts on RabbitMQ and a real SQL
    database. See the module docstring."""

    API = 'api'
    CONDUCTOR = 'conductor'
    CONDUCTOR_HOST = 'conductor1'
    VOLUME = 'volume'
    VOLUME_HOST = 'storage1'

    def __init__(self, backend, compute_hosts=('compute1', 'compute2'),
                 api_processes=2, api_threads=2, extra_conf=None,
                 database=None, broker=None, keystone=None,
                 all_in_one=False, api_nodes=1, api_storage_shims=False):
        """``extra_conf``: {section: {option: value}} added to the
        generated nova-lite.conf (e.g. the fake drivers' delays for a
        benchmark). ``database``: a fixture with a ``url`` (a private
        server, ``tests.integration.faults``) instead of a database on the
        machine's server; ``broker``: the same for RabbitMQ (with
        ``transport_url`` and ``control_exchange``); ``keystone``: a
        ``tests.fixtures.keystone.KeystoneServer`` (not started: the
        deployment starts and stops it) to authenticate with
        (``auth_strategy = keystone``, block storage reached through its
        catalog with a service token) instead of noauth2. ``all_in_one``:
        one ``nova-lite-all`` process instead (see the module
        docstring). ``api_nodes``: how many separate uWSGI instances serve
        the API (processes ``api``, ``api2``...); ``api_storage_shims``:
        they run without storage rights (see the module docstring)."""
        assert api_nodes == 1 or not all_in_one, 'one nova-lite-all only'
        super().__init__()
        self.all_in_one = all_in_one
        self.keystone = keystone
        self.admin_token = ADMIN_TOKEN
        self.backend = backend
        self.database = database
        self.broker = broker
        self.extra_conf = extra_conf or {}
        self.compute_hosts = tuple(compute_hosts)
        self.api_processes = api_processes
        self.api_threads = api_threads
        self.api_names = (self.API,) + tuple(
            'api%d' % n for n in range(2, api_nodes + 1))
        self.api_urls = {}
        self.api_storage_shims = api_storage_shims
        self.processes = {}
        self._conf = None

    # -- setup ----------------------------------------------------------------

    def _setUp(self):
        if self.all_in_one:
            return self._set_up_all_in_one()
        self.uwsgi = executable('uwsgi')
        if self.uwsgi is None:
            unavailable('uWSGI is not installed: pip install '
                        'nova_lite[deploy] (or uWSGI)')
        if self.keystone is not None:
            self.useFixture(self.keystone)
        self.rabbit = self.useFixture(self.broker or RabbitVhost(
            hosts=(self.CONDUCTOR_HOST, self.VOLUME_HOST) +
            self.compute_hosts))
        self.connection_url = self._database()
        self.path = self.useFixture(fixtures.TempDir()).path
        # Runs after the processes stopped, before the directory goes.
        self.addCleanup(self._snapshot_logs)
        self.conf_file = self._write_conf()
        self._db_sync()
        if self.api_storage_shims:
            self._write_storage_shims()
        self.addCleanup(self._stop_all)
        self._start_api()
        if self.keystone is not None:
            self.keystone.add_nova_lite(self.base_url)
            self.admin_token = self.keystone.token()
        self.processes[self.VOLUME] = self._service(
            self.VOLUME, 'nova-lite-volume', self.VOLUME_HOST)
        self.processes[self.CONDUCTOR] = self._service(
            self.CONDUCTOR, 'nova-lite-conductor', self.CONDUCTOR_HOST)
        for host in self.compute_hosts:
            self.processes[host] = self._service(
                host, 'nova-lite-compute', host)
        for name, proc in self.processes.items():
            if not proc.running:
                proc.start()
        self.wait_for_api()
        self.wait_for_services()

    def _set_up_all_in_one(self):
        host = self.compute_hosts[0]
        self.compute_hosts = (host,)
        self.CONDUCTOR_HOST = host
        self.path = self.useFixture(fixtures.TempDir()).path
        self.addCleanup(self._snapshot_logs)
        self.addCleanup(self._stop_all)

        def argv(port):
            self.conf_file = self._write_conf()
            return self._command('nova-lite-all', 'nova_lite.cmd.all') + [
                '--config-file', self.conf_file]

        self._start_api_on_a_free_port('nova-lite-all', argv)
        self.VOLUME_HOST = host
        self.wait_for_services()

    def _database(self):
        if self.database is not None:
            return self.useFixture(self.database).url
        try:
            url, drop = db_fixture.opportunistic_url(self.backend)
        except (unittest.SkipTest, required.Unavailable) as e:
            unavailable(str(e))
        self.addCleanup(drop)
        return url

    def _write_conf(self):
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_dict({
            'DEFAULT': {
                'state_path': os.path.join(self.path, 'state'),
                'report_interval': str(REPORT_INTERVAL),
                'service_down_time': str(SERVICE_DOWN_TIME),
                'debug': 'false',
            },
            'api': {'auth_strategy': 'noauth2',
                    'response_validation': 'error'},
            'oslo_messaging_notifications': {'driver': 'messagingv2'},
            # A deployment serves every test of its class in one project:
            # more servers and volumes than the default quotas take.
            'quota': {'instances': -1, 'cores': -1, 'ram': -1,
                      'volumes': -1, 'gigabytes': -1},
        })
        if self.all_in_one:
            # The embedded default: SQLite under state_path, the
            # in-process transport; only where it serves and its host.
            parser['DEFAULT']['host'] = self.compute_hosts[0]
            parser.read_dict({'wsgi': {'bind_host': '127.0.0.1',
                                       'bind_port': str(self.port)}})
        else:
            parser['DEFAULT']['transport_url'] = self.rabbit.transport_url
            parser['DEFAULT']['control_exchange'] = (
                self.rabbit.control_exchange)
            # Credentials at rest encrypted, as in production.
            parser.read_dict({'database': {
                'connection': self.connection_url,
                'secret_keys': conf_fixture.SECRET_KEY}})
        sections = [self.extra_conf]
        if self.keystone is not None:
            sections.insert(0, self.keystone.nova_lite_conf())
        for section, options in [item for conf in sections
                                 for item in conf.items()]:
            if not parser.has_section(section) and section != 'DEFAULT':
                parser.add_section(section)
            for name, value in options.items():
                parser.set(section, name, str(value))
        path = os.path.join(self.path, 'nova-lite.conf')
        with open(path, 'w') as f:
            parser.write(f)
        return path

    def _db_sync(self):
        self.manage('db', 'sync')

    def manage(self, *args, **kwargs):
        """Run ``nova-lite-manage --config-file <conf> args``; its standard
        output. Fails the test with both outputs if it exits with another
        code than ``exit_code`` (0; -9 for a SIGKILL). ``env``: variables
        to add (a crash point)."""
        exit_code = kwargs.pop('exit_code', 0)
        env = dict(self._env(), **kwargs.pop('env', {}))
        argv = self._command('nova-lite-manage', 'nova_lite.cmd.manage') + [
            '--config-file', self.conf_file] + list(args)
        result = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, timeout=COMMAND_TIMEOUT, cwd=ROOT, env=env)
        if result.returncode != exit_code:
            raise AssertionError('%s failed (%s):\n%s\n%s' % (
                ' '.join(argv), result.returncode, result.stdout[-10000:],
                result.stderr[-10000:]))
        return result.stdout

    @staticmethod
    def _command(script, module):
        path = executable(script)
        if path is not None:
            return [path]
        return [sys.executable, '-m', module]

    @staticmethod
    def _env():
        env = dict(os.environ)
        env['PYTHONUNBUFFERED'] = '1'
        # The services read --config-file; the API reads the env var set by
        # its uWSGI ini. Nothing inherited from the test runner may win.
        env.pop('OS_NOVA_LITE_CONFIG_FILE', None)
        return env

    def _service(self, name, script, host):
        module = {'nova-lite-conductor': 'nova_lite.cmd.conductor',
                  'nova-lite-compute': 'nova_lite.cmd.compute',
                  'nova-lite-volume': 'nova_lite.cmd.volume_service'}[
                      script]
        argv = self._command(script, module) + [
            '--config-file', self.conf_file, '--host', host]
        return ServiceProcess(name, argv, self._log_path(name), self._env())

    def _env_of(self, name):
        """The environment process ``name`` starts with: an API process's
        ``PATH`` starts with the storage shims, when there are some."""
        env = self._env()
        if self.api_storage_shims and name in self.api_names:
            env['PATH'] = os.pathsep.join([self.shim_dir, env['PATH']])
        return env

    def _log_path(self, name):
        return os.path.join(self.path, '%s.log' % name)

    # -- storage shims --------------------------------------------------------

    STORAGE_TOOLS = ('tgtadm', 'tgt-admin', 'rbd')

    def _write_storage_shims(self):
        self.shim_dir = os.path.join(self.path, 'no-storage-bin')
        self.storage_calls_log = os.path.join(self.path, 'storage-calls.log')
        os.mkdir(self.shim_dir)
        open(self.storage_calls_log, 'w').close()
        for tool in self.STORAGE_TOOLS:
            path = os.path.join(self.shim_dir, tool)
            with open(path, 'w') as f:
                f.write('#!/bin/sh\n'
                        'echo "pid $PPID ran %s $*" >> %s\n'
                        'echo "%s: no storage rights here" >&2\n'
                        'exit 1\n' % (tool, shlex.quote(
                            self.storage_calls_log), tool))
            os.chmod(path, 0o755)

    def storage_calls(self):
        """The storage commands the API processes ran (a line each: the
        caller's pid, the command); [] when none did."""
        with open(self.storage_calls_log) as f:
            return f.read().splitlines()

    # -- uWSGI ----------------------------------------------------------------

    def _api_file(self, name, suffix):
        """A file of API process ``name`` (``api.fifo``, ``api2.fifo``)."""
        return os.path.join(self.path, name + suffix)

    def uwsgi_ini(self, port, name=API):
        """The shipped ini with this deployment's address, size and paths
        (those of API process ``name``)."""
        parser = configparser.ConfigParser(interpolation=None, strict=True)
        parser.optionxform = str
        with open(UWSGI_INI) as f:
            parser.read_file(f)
        section = parser['uwsgi']
        section.update({
            'env': 'OS_NOVA_LITE_CONFIG_FILE=%s' % self.conf_file,
            'http-socket': '127.0.0.1:%d' % port,
            'processes': str(self.api_processes),
            'threads': str(self.api_threads),
            'touch-chain-reload': self._api_file(name, '.reload'),
            'master-fifo': self._api_file(name, '.fifo'),
            'stats': self._api_file(name, '-stats.sock'),
            'virtualenv': sys.prefix,
        })
        if name == self.API:
            self.reload_file = section['touch-chain-reload']
            self.fifo = section['master-fifo']
            self.stats_socket = section['stats']
        path = os.path.join(self.path, 'nova-lite-%s-uwsgi.ini' % name)
        with open(path, 'w') as f:
            parser.write(f)
        return path

    def _start_api(self):
        for name in self.api_names:
            self._start_api_on_a_free_port(
                'uWSGI', lambda port, name=name: [
                    self.uwsgi, '--ini', self.uwsgi_ini(port, name)], name)

    def _start_api_on_a_free_port(self, what, argv, name=API):
        """Start API process ``name`` (``argv(port)``: its command line,
        which writes what it needs for the port) on a free loopback port
        and wait until it answers; another port when another process took
        that one between ``free_port()`` and the bind, three times. The
        first API process's port is ``self.port``, its URL
        ``self.base_url``."""
        log_path = self._log_path(name)
        for attempt in range(3):
            port = required.free_port()
            self.api_urls[name] = 'http://127.0.0.1:%d' % port
            if name == self.API:
                self.port, self.base_url = port, self.api_urls[name]
            proc = ServiceProcess(name, argv(port), log_path,
                                  self._env_of(name)).start()
            self.processes[name] = proc
            try:
                self.wait_for_api(name=name)
                return
            except AssertionError:
                if proc.running or 'Address already in use' not in (
                        proc.log_text()[-2000:]):
                    raise
        raise AssertionError('%s could not bind a free port 3 times' % what)

    def _api_answers(self, name=API):
        try:
            return requests.get(self.api_urls[name] + '/',
                                timeout=5).status_code == 200
        except requests.RequestException:
            return False

    def wait_for_api(self, timeout=START_TIMEOUT, name=None):
        """Wait until API process ``name`` (default: each) answers."""
        for name in [name] if name else self.api_names:
            proc = self.processes[name]

            def ready():
                if not proc.running:
                    raise AssertionError(
                        'the API process %s (%s) exited (%s):\n%s' % (
                            name, proc.argv[0], proc.proc.returncode,
                            proc.log_text()[-5000:]))
                return self._api_answers(name)

            wait_for(ready, timeout, message='the API process %s did not '
                     'answer within %ss' % (name, timeout))

    def uwsgi_stats(self, name=API):
        """uWSGI's stats server JSON (workers, their pids and requests) of
        API process ``name``."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(self._api_file(name, '-stats.sock'))
            chunks = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return json.loads(b''.join(chunks))

    def uwsgi_workers(self, name=API):
        """{pid: worker stats} of the running uWSGI workers (of API process
        ``name``), or {} while the stats server is not answering (during a
        reload)."""
        try:
            stats = self.uwsgi_stats(name)
        except (OSError, ValueError):
            return {}
        return {w['pid']: w for w in stats['workers'] if w['pid']}

    def write_master_fifo(self, command):
        """Send uWSGI's master a one-letter command (``c`` chain reload,
        ``r`` graceful reload, ``q`` graceful stop)."""
        with open(self.fifo, 'w') as f:
            f.write(command)

    def touch_reload_file(self):
        """What an operator does to reload the API gracefully
        (``touch-chain-reload`` in the shipped ini)."""
        with open(self.reload_file, 'a'):
            pass
        os.utime(self.reload_file)

    # -- processes ------------------------------------------------------------

    def stop(self, name):
        """Stop one process (SIGTERM); True if it exited by itself."""
        return self.processes[name].stop()

    def start(self, name):
        self.processes[name].start()
        if name in self.api_names:
            self.wait_for_api(name=name)

    def restart_armed(self, name, point, mark):
        """Restart process ``name`` with crash point ``point`` armed
        (``nova_lite.crashpoint``): the first process to reach it creates
        the file ``mark`` and dies with SIGKILL. Returns once the process
        (the API, or every service) answers again."""
        proc = self.processes[name]
        proc.stop()
        proc.env = dict(self._env_of(name), NOVA_LITE_CRASH_AT=point,
                        NOVA_LITE_CRASH_MARK=mark)
        self.start(name)
        self.wait_for_services()

    def wait_crashed(self, name, mark, timeout=START_TIMEOUT):
        """Wait until the armed point was reached (the mark file exists)
        and, for a service, until its process died of SIGKILL (under
        uWSGI the master respawns the killed worker)."""
        wait_for(lambda: os.path.exists(mark), timeout,
                 message='crash point not reached within %ss' % timeout)
        if name in self.api_names:
            return
        proc = self.processes[name]
        wait_for(lambda: not proc.running, timeout,
                 message='%s did not die within %ss' % (name, timeout))
        assert proc.proc.returncode == -signal.SIGKILL, (
            '%s exited with %s' % (name, proc.proc.returncode))

    def restart_disarmed(self, *names):
        """Start each of ``names`` again without a crash point (as an
        operator would after the crash), then wait until every service is
        up (once all are started: a crashed one started last would
        otherwise be waited for before it is started)."""
        for name in names:
            proc = self.processes[name]
            if proc.running:
                proc.stop()
            proc.env = self._env_of(name)
            self.start(name)
        self.wait_for_services()

    def _stop_all(self):
        # All at once: each idle service takes seconds to notice SIGTERM.
        running = [p for p in self.processes.values() if p.running]
        for proc in running:
            proc.proc.terminate()
        for proc in running:
            proc.wait_stopped()

    def ensure_running(self):
        """Start whatever is not running (a test stopped it and failed
        before starting it again) and wait until every service is up."""
        for server in (self.database, self.broker):
            if server is not None:
                server.ensure_running()
        for name, proc in self.processes.items():
            if not proc.running:
                self.start(name)
        self.wait_for_api()
        self.wait_for_services()

    # -- API ------------------------------------------------------------------

    @property
    def admin_api(self):
        return HTTPClient(self.base_url, token=self.admin_token)

    def services(self):
        """{(binary, host): service view} from GET /v2.1/os-services."""
        resp = self.admin_api.as_(compute_version='2.53').get(
            '/v2.1/os-services')
        if resp.status != 200:
            raise AssertionError('os-services: %r' % resp)
        return {(s['binary'], s['host']): s
                for s in resp.body['services']}

    def expected_services(self):
        keys = [(service_obj.CONDUCTOR_BINARY, self.CONDUCTOR_HOST)]
        keys += [(service_obj.COMPUTE_BINARY, h) for h in self.compute_hosts]
        return keys

    def volume_services(self):
        """{(binary, host): service view} from GET /v3/demo/os-services
        (the ``cinder-volume`` rows only)."""
        resp = self.admin_api.get('/v3/demo/os-services?binary=cinder-volume')
        if resp.status != 200:
            raise AssertionError('/v3 os-services: %r' % resp)
        return {(s['binary'], s['host']): s
                for s in resp.body['services']}

    def registered_volume_services(self):
        """{(binary, host)} of the ``cinder-volume`` rows in the
        deployment's database: what the volume service registered once
        it consumed its backends' queues."""
        services = sa.table('services', sa.column('binary'),
                            sa.column('host'))
        engine = sa.create_engine(self.connection_url,
                                  poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                hosts = conn.execute(sa.select(services.c.host).where(
                    services.c.binary == service_obj.VOLUME_BINARY)
                ).scalars().all()
        finally:
            engine.dispose()
        return {(service_obj.VOLUME_BINARY, host) for host in hosts}

    def expected_volume_services(self):
        """The ``cinder-volume`` rows of the volume service: one per
        enabled backend (``[volume] enabled_backends`` of the
        configuration file, ``file`` by default)."""
        backends = self.extra_conf.get('volume', {}).get(
            'enabled_backends', 'file')
        return [(service_obj.VOLUME_BINARY, '%s@%s' % (
            self.extra_conf.get(b.strip(), {}).get('backend_host') or
            self.VOLUME_HOST, b.strip()))
            for b in backends.split(',') if b.strip()]

    def wait_for_services(self, states=None, timeout=START_TIMEOUT):
        """Poll os-services until each (binary, host) in ``states`` has its
        state ('up'/'down'); default: every service of the deployment up."""
        volume = states is None and self.keystone is None
        # Behind Keystone /v3/demo is not the admin's project: the volume
        # service's rows are read from the database instead.
        volume_in_db = states is None and self.keystone is not None
        if states is None:
            states = {key: 'up' for key in self.expected_services()}
        last = {}

        def check():
            last['services'] = self.services()
            if not all(key in last['services'] and
                       last['services'][key]['state'] == state
                       for key, state in states.items()):
                return False
            if volume:
                # Waited for, not returned: the callers' services are
                # the compute API's (os-services of /v2.1).
                last['volume'] = self.volume_services()
                return all(
                    key in last['volume'] and
                    last['volume'][key]['state'] == 'up'
                    for key in self.expected_volume_services())
            if volume_in_db:
                return set(self.expected_volume_services()) <= (
                    self.registered_volume_services())
            return True

        wait_for(check, timeout, interval=0.2, message=lambda: (
            'services did not reach %s within %ss; last seen: %s' % (
                states, timeout, json.dumps(
                    [v for v in last.get('services', {}).values()] +
                    [v for v in last.get('volume', {}).values()]))))
        return last['services']

    # -- RPC from the test process --------------------------------------------

    @property
    def conf(self):
        """A ConfigOpts read from the deployment's nova-lite.conf, for RPC
        clients and notifiers in the test process."""
        if self._conf is None:
            conf = cfg.ConfigOpts()
            config.prepare(conf)
            conf([], project='nova-lite', default_config_files=[
                self.conf_file])
            objects.register_all()
            self.addCleanup(rpc.cleanup, conf)
            self._conf = conf
        return self._conf

    def ping(self, topic, server=None, arg=None, timeout=30):
        """baserpc ``ping`` over RabbitMQ to ``topic`` (``conductor`` or
        ``compute``), to one ``server`` (host) if given."""
        target = messaging.Target(topic=topic, server=server,
                                  namespace='baseapi',
                                  version=baserpc.RPC_API_VERSION)
        client = rpc.get_client(self.conf, target)
        return client.prepare(timeout=timeout).call(
            nl_context.get_admin_context(), 'ping', arg=arg)

    def ping_in_background(self, topic, server=None, arg=None,
                           timeout=START_TIMEOUT):
        """Send a ping now and collect its answer on a thread: returns
        ``(thread, results)``; ``results`` gets the answer or the error."""
        results = []

        def call():
            try:
                results.append(self.ping(topic, server, arg, timeout))
            except Exception as e:
                results.append(e)

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        return thread, results

    # -- diagnostics ----------------------------------------------------------

    def _read_logs(self):
        texts = {}
        for name in list(self.api_names) + [
                self.VOLUME, self.CONDUCTOR] + list(self.compute_hosts):
            proc = self.processes.get(name)
            if proc is not None:
                texts['%s.log' % name] = proc.log_text()
        with contextlib.suppress(AttributeError, OSError), open(
                self.conf_file) as f:
            texts['nova-lite.conf'] = f.read()
        if self.api_storage_shims:
            with contextlib.suppress(AttributeError, OSError):
                texts['storage-calls.log'] = '\n'.join(self.storage_calls())
        if self.keystone is not None and hasattr(self.keystone, 'path'):
            with contextlib.suppress(OSError):
                texts['keystone.log'] = self.keystone.log_text()
        return texts

    def _snapshot_logs(self):
        self._final_logs = self._read_logs()

    def log_details(self):
        """The log of every process and the config file, as testtools
        details (also after cleanup, from a snapshot taken then)."""
        texts = getattr(self, '_final_logs', None) or self._read_logs()
        return {'%s-%s' % (self.backend, name): content.text_content(text)
                for name, text in texts.items()}
