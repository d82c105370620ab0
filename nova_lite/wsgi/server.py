"""A threaded WSGI server for the embedded default and development.

Production runs the API under uWSGI; ``nova-lite-all`` and ``nova-lite-api``
use the standard library's WSGI server with one thread per connection, which
needs nothing beyond Python.
"""

import socketserver
import threading
from wsgiref import simple_server

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class _Handler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):
        # nova_lite.api.requestlog already logs every request.
        pass

    def get_stderr(self):
        return _LogStream()


class _LogStream(object):
    def write(self, text):
        if text.strip():
            LOG.error(text.rstrip())

    def flush(self):
        pass


class ThreadedWSGIServer(socketserver.ThreadingMixIn,
                         simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def make_server(host, port, app):
    server = simple_server.make_server(
        host, port, app, server_class=ThreadedWSGIServer,
        handler_class=_Handler)
    return server


def serve_in_thread(server):
    thread = threading.Thread(target=server.serve_forever,
                              kwargs={'poll_interval': 0.5},
                              name='wsgi-server', daemon=True)
    thread.start()
    return thread
