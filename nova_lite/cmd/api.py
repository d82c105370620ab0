"""nova-lite-api: a development server for the API WSGI application.

Production runs ``nova_lite.wsgi.api:application`` under uWSGI
(``etc/nova-lite/nova-lite-api-uwsgi.ini``). This command serves the same
application on ``[wsgi] bind_host``:``bind_port`` with a threaded server.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging

from nova_lite.api import app as api_app
from nova_lite import config
from nova_lite.wsgi import server as wsgi_server

LOG = logging.getLogger(__name__)


def main(argv=None):
    conf = cfg.ConfigOpts()
    config.parse_args(conf, sys.argv[1:] if argv is None else argv)
    app = api_app.init_application(conf=conf)
    server = wsgi_server.make_server(conf.wsgi.bind_host,
                                     conf.wsgi.bind_port, app)
    LOG.info('nova-lite-api serving on http://%s:%s',
             *server.server_address[:2])
    signum = wsgi_server.serve_until_signalled(server)
    LOG.info('Signal %s received, nova-lite-api stopped', signum)
    return 0


if __name__ == '__main__':
    sys.exit(main())
