"""Servers of the test's own, for fault tests: a private MariaDB and a
private RabbitMQ node that a test may kill and start again (the machine's
servers are never stopped by a test).
"""

import os
import shutil
import signal
import subprocess

import fixtures

from tests.fixtures import required
from tests.integration import deployment as deploy


class PrivateMariaDB(fixtures.Fixture):
    """A MariaDB server of this test alone: its own data directory and
    free loopback port, root without a password, database ``nova_lite``.
    ``stop()`` kills it (SIGKILL: the database host is gone), ``start()``
    brings it back on the same port and data; ``url`` is its SQLAlchemy
    URL."""

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

    def _answers(self):
        try:
            self._sql('SELECT 1')
            return True
        except Exception:
            return False

    def _sql(self, statement):
        import pymysql
        conn = pymysql.connect(host='127.0.0.1', port=self.port,
                               user='root', connect_timeout=2)
        try:
            with conn.cursor() as cursor:
                cursor.execute(statement)
        finally:
            conn.close()

    def start(self):
        self.process.start()
        deploy.wait_for(self._answers, 60,
                        message='the private MariaDB did not start:\n%s' %
                        self.process.log_text(5000))

    def stop(self):
        self.process.proc.kill()
        self.process.wait_stopped()

    def ensure_running(self):
        if not self.process.running:
            self.start()


def _user():
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name


class PrivateRabbitMQ(fixtures.Fixture):
    """A RabbitMQ node of this test alone (its own node name, ports and
    data directory; guest/guest on loopback). ``stop()`` kills it with
    SIGKILL, ``start()`` brings it back on the same port and data.
    ``transport_url`` and ``control_exchange`` as ``RabbitVhost`` has
    them."""

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

    def start(self):
        self.process.start()
        deploy.wait_for(self._answers, 90,
                        message='the private RabbitMQ did not start:\n%s' %
                        self.process.log_text(5000))

    def _kill(self):
        if self.process.running:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait_stopped()

    def stop(self):
        self._kill()

    def ensure_running(self):
        if not self.process.running:
            self.start()
