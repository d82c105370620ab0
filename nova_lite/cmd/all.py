"""nova-lite-all: the whole system in one process (the embedded default).

With no configuration at all it syncs a SQLite database under
``[DEFAULT] state_path`` (``./state``), runs the conductor and one compute
host on threads over the in-process transport, and serves the API on
``[wsgi] bind_host``:``bind_port`` (127.0.0.1:8774) with noauth2 and
Keystone's token API in front of it (``/identity``). It writes the
clients' ``clouds.yaml`` and openrc files, with the generated passwords,
into the state directory. Ctrl-C stops it cleanly.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging

from nova_lite.conf import base as conf_base
from nova_lite import config
from nova_lite import embedded
from nova_lite.wsgi import embedded_server

LOG = logging.getLogger(__name__)


def main(argv=None):
    conf = cfg.ConfigOpts()
    config.parse_args(conf, sys.argv[1:] if argv is None else argv)
    system = embedded.EmbeddedSystem(conf).start()
    server = embedded_server.Server(
        system.app, conf.wsgi.bind_host, conf.wsgi.bind_port,
        conf.wsgi.threads,
        connection_limit=conf.wsgi.connection_limit,
        idle_timeout=conf.wsgi.client_socket_timeout)
    base = 'http://%s:%s' % (server.host, server.port)
    clouds = embedded.write_client_files(conf, base)
    LOG.info('nova-lite-all serving on %s', base)
    LOG.info('compute API: %s/v2.1  block storage API: %s/volume/v3 '
             '(and %s/v3)  identity: %s/identity', base, base, base, base)
    LOG.info('database: %s', conf.database.connection)
    LOG.info('clouds.yaml for openstacksdk/openstackclient: %s (export '
             'OS_CLIENT_CONFIG_FILE=%s OS_CLOUD=nova-lite); for the cinder '
             'and nova CLIs: . %s', clouds, clouds,
             conf_base.state_path(conf, 'admin-openrc'))
    try:
        signum = server.serve_until_signalled()
        LOG.info('Signal %s received, stopping', signum)
    finally:
        system.stop()
        LOG.info('nova-lite-all stopped')
    return 0


if __name__ == '__main__':
    sys.exit(main())
