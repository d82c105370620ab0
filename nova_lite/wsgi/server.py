"""A threaded WSGI server for the embedded default and development.

Production runs the API under uWSGI; ``nova-lite-all`` and ``nova-lite-api``
use the standard library's WSGI server with one thread per connection, which
needs nothing beyond Python.

The standard library's handler answers one request per connection
(HTTP/1.0 style): every request pays a TCP connection, a new thread and
their teardown, about a third of the server's CPU for a small request.
OpenStack clients (keystoneauth sessions: openstacksdk, the CLI,
python-cinderclient) keep connections open, so this handler speaks
HTTP/1.1 persistent connections:

* a connection carries requests one after the other until the client asks
  to close it (``Connection: close``, or an HTTP/1.0 request), stays idle
  longer than ``IDLE_TIMEOUT`` seconds, or a response cannot be delimited
  (no ``Content-Length``);
* the application reads the body through a stream limited to
  ``Content-Length``; what it left unread is skipped before the next
  request, or the connection is closed when that is more than
  ``MAX_SKIP`` bytes;
* after an error in the application (a 500 from the server itself) the
  connection is closed.
"""

import socket
import socketserver
import threading
from wsgiref import simple_server

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# Seconds a persistent connection may stay idle before the server closes it.
IDLE_TIMEOUT = 60
# Unread request body the server skips to keep a connection; more: close.
MAX_SKIP = 1024 * 1024


class _Body(object):
    """``wsgi.input``: at most ``length`` bytes of the connection."""

    def __init__(self, rfile, length):
        self._rfile = rfile
        self._left = length

    def _limit(self, size):
        if size is None or size < 0 or size > self._left:
            return self._left
        return size

    def read(self, size=-1):
        data = self._rfile.read(self._limit(size)) if self._left else b''
        self._left -= len(data)
        return data

    def readline(self, size=-1):
        data = self._rfile.readline(self._limit(size)) if self._left else b''
        self._left -= len(data)
        return data

    def readlines(self, hint=-1):
        return list(iter(self.readline, b''))

    def __iter__(self):
        return iter(self.readline, b'')

    @property
    def too_much_left(self):
        return self._left > MAX_SKIP

    def skip_rest(self):
        """Read what the application did not; False if too much is left
        (or the client went away)."""
        if self._left > MAX_SKIP:
            return False
        while self._left:
            if not self.read(min(self._left, 65536)):
                return False
        return True


class _ServerHandler(simple_server.ServerHandler):
    keep_alive = False
    failed = False
    body = None

    def cleanup_headers(self):
        # Runs when the response headers go out: the client learns here
        # whether the connection stays open.
        super().cleanup_headers()
        if ('Content-Length' not in self.headers or self.failed or
                self.body is None or self.body.too_much_left):
            # No length: the end of the body is the end of the connection.
            # An error, or a body not read (or not delimited): the next
            # request could not be found reliably.
            self.keep_alive = False
        if not self.keep_alive:
            self.headers['Connection'] = 'close'

    def handle_error(self):
        self.failed = True
        super().handle_error()


class _Handler(simple_server.WSGIRequestHandler):
    # Makes parse_request() keep HTTP/1.1 connections open unless the
    # client sends "Connection: close".
    protocol_version = 'HTTP/1.1'
    timeout = IDLE_TIMEOUT

    def setup(self):
        super().setup()
        # A response goes out in several writes (status line, headers,
        # body); with Nagle's algorithm the last one would wait for the
        # client's delayed ACK (40 ms) on a persistent connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):
        # nova_lite.api.requestlog already logs every request.
        pass

    def get_stderr(self):
        return _LogStream()

    def handle(self):
        self.close_connection = True
        self._handle_one()
        while not self.close_connection:
            self._handle_one()

    def _handle_one(self):
        try:
            self.raw_requestline = self.rfile.readline(65537)
        except (socket.timeout, ConnectionError):
            self.close_connection = True
            return
        if not self.raw_requestline:
            self.close_connection = True
            return
        if len(self.raw_requestline) > 65536:
            self.requestline = ''
            self.request_version = ''
            self.command = ''
            self.close_connection = True
            self.send_error(414)
            return
        if not self.parse_request():
            # An error was sent; parse_request decided about the connection.
            return
        if self.request_version != 'HTTP/1.1':
            self.close_connection = True
        try:
            length = int(self.headers.get('Content-Length') or 0)
        except ValueError:
            length = -1
        if length < 0 or self.headers.get('Transfer-Encoding'):
            # Not delimited by a length: the application gets the stream
            # as before, and the connection ends with this request.
            self.close_connection = True
            body = None
        else:
            body = _Body(self.rfile, length)
        handler = _ServerHandler(body or self.rfile, self.wfile,
                                 self.get_stderr(), self.get_environ(),
                                 multithread=True)
        handler.http_version = self.request_version[len('HTTP/'):]
        handler.keep_alive = not self.close_connection
        handler.body = body
        handler.request_handler = self
        handler.run(self.server.get_app())
        if (handler.failed or not handler.keep_alive or body is None or
                not body.skip_rest()):
            self.close_connection = True


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
