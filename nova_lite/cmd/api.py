"""nova-lite-api: a development server for the API WSGI application.

Production runs ``nova_lite.wsgi.api:application`` under uWSGI
(``etc/nova-lite/nova-lite-api-uwsgi.ini``). This command serves the same
application on ``[wsgi] bind_host``:``bind_port`` with a threaded server.
"""

import signal
import sys
import threading

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
    stopped = threading.Event()
    signal.signal(signal.SIGINT, lambda *a: stopped.set())
    signal.signal(signal.SIGTERM, lambda *a: stopped.set())
    thread = wsgi_server.serve_in_thread(server)
    while not stopped.wait(1):
        pass
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    return 0


if __name__ == '__main__':
    sys.exit(main())
