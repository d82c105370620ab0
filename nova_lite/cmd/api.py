"""nova-lite-api: a development server for the API WSGI application.

Production runs ``nova_lite.wsgi.api:application`` under uWSGI
(``etc/nova-lite/nova-lite-api-uwsgi.ini``). This command serves the same
application on ``[wsgi] bind_host``:``bind_port`` with waitress
(``nova_lite.wsgi.embedded_server``).
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging

from nova_lite.api import app as api_app
from nova_lite import config
from nova_lite.wsgi import embedded_server

LOG = logging.getLogger(__name__)


def main(argv=None):
    conf = cfg.ConfigOpts()
    config.parse_args(conf, sys.argv[1:] if argv is None else argv)
    app = api_app.init_application(conf=conf, clock_tick=True)
    server = embedded_server.Server(
        app, conf.wsgi.bind_host, conf.wsgi.bind_port, conf.wsgi.threads,
        connection_limit=conf.wsgi.connection_limit,
        idle_timeout=conf.wsgi.client_socket_timeout)
    LOG.info('nova-lite-api serving on http://%s:%s', server.host,
             server.port)
    signum = server.serve_until_signalled()
    LOG.info('Signal %s received, nova-lite-api stopped', signum)
    return 0


if __name__ == '__main__':
    sys.exit(main())
