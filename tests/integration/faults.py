"""Servers of the test's own, for fault tests: a private MariaDB, a
private PostgreSQL and a private RabbitMQ node that a test may kill, pause
(SIGSTOP: alive, accepting TCP in its kernel, answering nothing) or stop
the application of, and start again. The machine's servers are never
stopped by a test.
"""

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess

import fixtures

from tests.fixtures import required
from tests.integration import deployment as deploy


class _PrivateServer(fixtures.Fixture):
    """What the private servers below share: ``start()`` (the process,
    then a wait until it answers), ``pause()``/``resume()`` (SIGSTOP and
    SIGCONT of the server and every process under it) and
    ``ensure_running()``. A subclass names itself (``NAME``), makes
    ``self.process`` (a ``deploy.ServiceProcess``) and says when the
    server answers (``_answers``)."""

    NAME = None
    START_TIMEOUT = 60

    def start(self):
        self.process.start()
        deploy.wait_for(self._answers, self.START_TIMEOUT,
                        message='the private %s did not start:\n%s' % (
                            self.NAME, self.process.log_text(5000)))

    def ensure_running(self):
        if not self.process.running:
            self.start()
        else:
            self.resume()

    def pause(self):
        """SIGSTOP: a stalled server (``_pause``)."""
        _pause(self.process)
        self.addCleanup(_resume, self.process)

    def resume(self):
        _resume(self.process)


class _PrivateDatabase(_PrivateServer):
    """A private database server: it answers once ``SELECT 1`` does."""

    def _answers(self):
        try:
            self._sql('SELECT 1')
            return True
        except Exception:
            return False


class PrivateMariaDB(_PrivateDatabase):
    """A MariaDB server of this test alone: its own data directory and
    free loopback port, root without a password, database ``nova_lite``.
    ``stop()`` kills it (SIGKILL: the database host is gone), ``start()``
    brings it back on the same port and data; ``pause()``/``resume()``
    SIGSTOP and SIGCONT it; ``url`` is its SQLAlchemy URL."""

    NAME = 'MariaDB'

    def _setUp(self):
        self.mariadbd = shutil.which('mariadbd') or shutil.which(
            'mariadbd', path='/usr/sbin:/usr/local/sbin')
        install = shutil.which('mariadb-install-db')
        if not (self.mariadbd and install):
            deploy.unavailable('a private MariaDB needs mariadbd and '
                               'mariadb-install-db')
        self.path = self.useFixture(fixtures.TempDir()).path
        self.data = os.path.join(self.path, 'data')
        self.port = required.free_port()
        result = subprocess.run(
            [install, '--no-defaults', '--datadir=%s' % self.data,
             '--user=%s' % _user(), '--auth-root-authentication-method=normal',
             '--skip-test-db'], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, timeout=120)
        if result.returncode != 0:
            raise AssertionError('mariadb-install-db failed:\n%s' %
                                 result.stdout[-5000:])
        self.process = deploy.ServiceProcess(
            'private-mariadb',
            [self.mariadbd, '--no-defaults', '--datadir=%s' % self.data,
             '--user=%s' % _user(), '--port=%d' % self.port,
             '--bind-address=127.0.0.1',
             '--socket=%s' % os.path.join(self.path, 'mysqld.sock'),
             '--pid-file=%s' % os.path.join(self.path, 'mysqld.pid'),
             '--skip-log-bin', '--innodb-buffer-pool-size=32M'],
            os.path.join(self.path, 'mariadb.log'))
        self.addCleanup(self.process.stop)
        self.start()
        self._sql('CREATE DATABASE nova_lite CHARACTER SET utf8mb4')
        self.url = ('mysql+pymysql://root@127.0.0.1:%d/nova_lite'
                    '?charset=utf8mb4' % self.port)

    def _sql(self, statement):
        import pymysql
        conn = pymysql.connect(host='127.0.0.1', port=self.port,
                               user='root', connect_timeout=2)
        try:
            with conn.cursor() as cursor:
                cursor.execute(statement)
        finally:
            conn.close()

    def stop(self):
        self.process.proc.kill()
        self.process.wait_stopped()


def _pause(process):
    """SIGSTOP the server and every process under it (PostgreSQL's
    backends are each their own process group): the kernel still completes
    TCP handshakes and acknowledges what clients send, the server answers
    nothing (a paused VM, a stuck disk)."""
    os.killpg(process.pid, signal.SIGSTOP)
    for pid in _descendants(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)


def _resume(process):
    for pid in [process.pid] + _descendants(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGCONT)


def _alive(pid):
    """True if ``pid`` runs (a zombie does not)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def _descendants(pid):
    """Every process under ``pid`` (from /proc)."""
    children = {}
    for stat in glob.glob('/proc/[0-9]*/stat'):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(
            int(stat.split('/')[2]))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _user():
    return pwd.getpwuid(os.getuid()).pw_name


class PrivatePostgreSQL(_PrivateDatabase):
    """A PostgreSQL server of this test alone: its own data directory and
    free loopback port, user ``nova_lite`` (password ``nova_lite``) owning
    database ``nova_lite``. PostgreSQL refuses to run as root: when the
    tests run as root, the server runs as the ``postgres`` user.
    ``stop()``/``start()`` as ``PrivateMariaDB``'s; ``pause()``/``resume()``
    SIGSTOP and SIGCONT it (the postmaster and every backend); ``url`` is
    its SQLAlchemy URL."""

    NAME = 'PostgreSQL'

    def _setUp(self):
        bindir = _postgres_bindir()
        if bindir is None:
            deploy.unavailable('a private PostgreSQL needs initdb and '
                               'postgres')
        self.path = self.useFixture(fixtures.TempDir()).path
        self.data = os.path.join(self.path, 'data')
        self.port = required.free_port()
        run_as = []
        if os.getuid() == 0:
            owner = pwd.getpwnam('postgres')
            os.chmod(self.path, 0o755)
            os.makedirs(self.data, mode=0o700)
            os.chown(self.data, owner.pw_uid, owner.pw_gid)
            # setpriv execs the server (runuser would stay its parent):
            # the postmaster is the fixture's own child, reaped when it
            # dies, so that its pid in postmaster.pid is free again.
            run_as = ['setpriv', '--reuid=postgres', '--regid=postgres',
                      '--init-groups', '--']
        result = subprocess.run(
            run_as + [os.path.join(bindir, 'initdb'), '-D', self.data,
                      '-U', 'postgres', '--auth=trust', '-E', 'UTF8'],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=120)
        if result.returncode != 0:
            raise AssertionError('initdb failed:\n%s' % result.stdout[-5000:])
        self.process = deploy.ServiceProcess(
            'private-postgresql',
            run_as + [os.path.join(bindir, 'postgres'), '-D', self.data,
                      '-p', str(self.port), '-c', 'listen_addresses=127.0.0.1',
                      '-c', 'unix_socket_directories=%s' % self.data,
                      '-c', 'fsync=off', '-c', 'shared_buffers=32MB'],
            os.path.join(self.path, 'postgresql.log'))
        self.addCleanup(self._kill)
        self.start()
        self._sql("CREATE USER nova_lite PASSWORD 'nova_lite'")
        self._sql('CREATE DATABASE nova_lite OWNER nova_lite')
        self.url = ('postgresql+psycopg2://nova_lite:nova_lite@127.0.0.1:%d/'
                    'nova_lite' % self.port)

    def _sql(self, statement):
        import psycopg2
        conn = psycopg2.connect(host='127.0.0.1', port=self.port,
                                user='postgres', dbname='postgres',
                                connect_timeout=2)
        try:
            conn.autocommit = True
            with conn.cursor() as cursor:
                cursor.execute(statement)
        finally:
            conn.close()

    def _kill(self):
        if self.process.running:
            server = _descendants(self.process.pid)
            _resume(self.process)
            for pid in [self.process.pid] + server:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.process.wait_stopped()
            # The backends, reparented, may linger as zombies holding the
            # data directory's shared memory for a moment.
            deploy.wait_for(lambda: not any(_alive(p) for p in server), 30,
                            message='PostgreSQL backends outlived SIGKILL')

    def stop(self):
        """SIGKILL of the postmaster and every backend (the database host
        is gone); ``start()`` brings it back on the same port and data."""
        self._kill()


def _postgres_bindir():
    for bindir in sorted(glob.glob('/usr/lib/postgresql/*/bin'),
                         reverse=True):
        if os.path.exists(os.path.join(bindir, 'postgres')):
            return bindir
    return None


class PrivateRabbitMQ(_PrivateServer):
    """A RabbitMQ node of this test alone (its own node name, ports and
    data directory; guest/guest on loopback). ``stop()`` kills it with
    SIGKILL, ``start()`` brings it back on the same port and data;
    ``stop_app()``/``start_app()`` stop and start the RabbitMQ application
    in the running node (``rabbitmqctl stop_app``: every connection closed,
    the port refuses, the node keeps its data), as an operator's restart
    of the broker does. ``queues()`` lists the node's queues.
    ``transport_url`` and ``control_exchange`` as ``RabbitVhost`` has
    them."""

    NAME = 'RabbitMQ'
    START_TIMEOUT = 90
    SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server'

    def _setUp(self):
        server = self.SERVER if os.path.exists(self.SERVER) else \
            shutil.which('rabbitmq-server')
        if not server:
            deploy.unavailable('a private RabbitMQ node needs '
                               'rabbitmq-server')
        self.path = self.useFixture(fixtures.TempDir()).path
        self.port = required.free_port()
        dist_port = required.free_port()
        plugins = os.path.join(self.path, 'enabled_plugins')
        with open(plugins, 'w') as f:
            f.write('[].\n')
        env = dict(os.environ)
        env.update({
            'HOME': self.path,
            'RABBITMQ_NODENAME': 'nova-lite-test-%d@localhost' % self.port,
            'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(dist_port),
            'RABBITMQ_MNESIA_BASE': os.path.join(self.path, 'mnesia'),
            'RABBITMQ_LOG_BASE': os.path.join(self.path, 'log'),
            'RABBITMQ_ENABLED_PLUGINS_FILE': plugins,
            'RABBITMQ_PID_FILE': os.path.join(self.path, 'rabbit.pid'),
            'RABBITMQ_CONFIG_FILE': os.path.join(self.path, 'none'),
        })
        self.env = env
        self.process = deploy.ServiceProcess(
            'private-rabbitmq', [server],
            os.path.join(self.path, 'rabbitmq.log'), env=env)
        self.addCleanup(self._kill)
        self.start()
        self.control_exchange = 'nova_lite'
        self.transport_url = 'rabbit://guest:guest@127.0.0.1:%d/' % self.port

    def _answers(self):
        import kombu
        try:
            with kombu.Connection(hostname='127.0.0.1', port=self.port,
                                  userid='guest', password='guest',
                                  connect_timeout=2) as conn:
                conn.connect()
            return True
        except Exception:
            return False

    def _kill(self):
        if self.process.running:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait_stopped()

    def stop(self):
        self._kill()

    def ensure_running(self):
        if not self.process.running:
            self.start()
        elif not self._answers():
            self.start_app()

    def _rabbitmqctl(self, *args):
        # The CLI beside the server script (the distribution's wrapper in
        # /usr/sbin switches to the rabbitmq user and its Erlang cookie;
        # this node's cookie is in self.path, its HOME).
        server = self.process.argv[0]
        ctl = os.path.join(os.path.dirname(os.path.realpath(server)),
                           'rabbitmqctl')
        if not os.path.exists(ctl):
            ctl = shutil.which('rabbitmqctl')
        result = subprocess.run(
            [ctl, '-n', self.env['RABBITMQ_NODENAME']] + list(args),
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=deploy.COMMAND_TIMEOUT)
        if result.returncode != 0:
            raise AssertionError('rabbitmqctl %s failed:\n%s' % (
                ' '.join(args), result.stdout[-5000:]))
        return result.stdout

    def stop_app(self):
        self._rabbitmqctl('stop_app')

    def start_app(self):
        self._rabbitmqctl('start_app')
        deploy.wait_for(self._answers, 90,
                        message='the private RabbitMQ did not start its '
                                'application again')

    def queues(self):
        """{name: (durable, type, messages)} of the node's queues."""
        out = self._rabbitmqctl('list_queues', '-q', '--no-table-headers',
                                'name', 'durable', 'type', 'messages')
        queues = {}
        for line in out.splitlines():
            fields = line.split()
            if len(fields) == 4:
                queues[fields[0]] = (fields[1] == 'true', fields[2],
                                     int(fields[3]))
        return queues
