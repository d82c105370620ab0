"""A threaded WSGI server for the embedded default and development.

Production runs the API under uWSGI; ``nova-lite-all`` and ``nova-lite-api``
use this server, which needs nothing beyond Python: one thread per
connection (``socketserver.ThreadingMixIn``), HTTP/1.1 persistent
connections, and a WSGI (PEP 3333) gateway of its own.

Why not the standard library's ``wsgiref``: its handler answers one request
per connection (every request then pays a TCP connection, a new thread and
their teardown), parses headers with the ``email`` package and writes a
response in five writes. Measured on this project's machine kind with a
trivial application, server CPU per request on a kept connection: about
130 us through ``http.server`` and ``wsgiref``, about 35 us for the
socket work alone. OpenStack clients (keystoneauth sessions: openstacksdk,
the CLI, python-cinderclient) keep connections open, and a volume attach
is a handful of requests, so this server does only what HTTP/1.1 and
PEP 3333 ask:

* a connection carries requests one after the other until the client asks
  to close it (``Connection: close``, or an HTTP/1.0 request without
  ``Connection: keep-alive``), stays idle longer than ``IDLE_TIMEOUT``
  seconds, or a response cannot be delimited (no ``Content-Length`` and
  not a list body whose length the server can add);
* the request line and headers are limited (``MAX_LINE`` bytes a line,
  ``MAX_HEADERS`` lines): 414, 431 or 400 otherwise, and the connection is
  closed; HTTP/2 and later get 505; a request with a body must give its
  ``Content-Length`` (a chunked body is handed to the application as the
  raw stream, and the connection ends with that request);
* the application reads the body through a stream limited to
  ``Content-Length``; what it left unread is skipped before the next
  request, or the connection is closed when that is more than
  ``MAX_SKIP`` bytes;
* ``Expect: 100-continue`` is answered before the application runs;
* an error in the application before its response started is a 500
  (logged) and closes the connection; after it started, the connection is
  closed at once (the client sees a short response);
* a response is written with one ``sendall`` when it is a list (what
  WebOb and nova_lite's API return), chunk by chunk otherwise.
"""

from email import utils as email_utils
import socket
import socketserver
import threading
import time
from urllib import parse as urlparse

from oslo_log import log as logging

from nova_lite import stop_signals

LOG = logging.getLogger(__name__)

# Seconds a persistent connection may stay idle before the server closes it.
IDLE_TIMEOUT = 60
# Unread request body the server skips to keep a connection; more: close.
MAX_SKIP = 1024 * 1024
# Longest request line or header line, and most header lines, accepted.
MAX_LINE = 65536
MAX_HEADERS = 100

SERVER_SOFTWARE = 'nova-lite'
_HTTP_VERSIONS = ('HTTP/1.1', 'HTTP/1.0')
# Request headers that are not HTTP_* keys in the environ.
_CGI_HEADERS = frozenset(('CONTENT_TYPE', 'CONTENT_LENGTH'))
_END_OF_HEADERS = (b'\r\n', b'\n')
# Response headers the gateway decides about itself.
_HOP_BY_HOP = frozenset(('connection', 'keep-alive', 'proxy-authenticate',
                         'proxy-authorization', 'te', 'trailers',
                         'transfer-encoding', 'upgrade'))


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


class _LogStream(object):
    """``wsgi.errors``: what the application writes there is logged."""

    def write(self, text):
        if text.strip():
            LOG.error(text.rstrip())

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass


_ERRORS = _LogStream()


class _BadRequest(Exception):
    def __init__(self, code, reason):
        super().__init__(reason)
        self.code = code
        self.reason = reason


class _Response(object):
    """The PEP 3333 side of one request: ``start_response``, ``write``,
    and the status line and headers, sent with the first body bytes."""

    def __init__(self, handler, version, keep_alive, head=False):
        self.handler = handler
        self.version = version
        self.keep_alive = keep_alive
        # HEAD: the headers of a GET, never a body; 1xx, 204 and 304
        # responses (found out in _send_head) have none either.
        self.bodiless = head
        self.status = None
        self.headers = None
        self.sent = False
        self.length = None
        self.written = 0

    def start_response(self, status, headers, exc_info=None):
        if exc_info:
            try:
                if self.sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.status is not None:
            raise AssertionError('start_response called twice')
        if not isinstance(status, str) or len(status) < 4 or \
                not status[:3].isdigit() or status[3] != ' ':
            raise AssertionError('invalid status %r' % (status,))
        self.status = status
        self.headers = list(headers)
        return self.write

    def write(self, data):
        """The legacy ``write()`` callable, and every body chunk."""
        if self.status is None:
            raise AssertionError('write() before start_response()')
        if not self.sent:
            self._send_head(data, len(data))
        elif data and not self.bodiless:
            self.handler.wfile.write(data)
        self.written += len(data)

    def finish(self, result):
        """Send what the application returned."""
        if isinstance(result, (list, tuple)) and not self.sent:
            body = b''.join(result)
            if self.status is None:
                raise AssertionError('no start_response() before the body')
            # One write: status line, headers and the whole body.
            self._send_head(body, len(body), whole=True)
            self.written = len(body)
            return
        for data in result:
            if data:
                self.write(data)
        if not self.sent:
            self.write(b'')

    def _send_head(self, data, size, whole=False):
        lines = ['%s %s\r\n' % (self.version, self.status)]
        code = int(self.status[:3])
        if code < 200 or code in (204, 304):
            self.bodiless = True
        length = None
        names = set()
        for name, value in self.headers:
            lower = name.lower()
            if lower in _HOP_BY_HOP:
                continue  # the gateway's to decide
            if lower == 'content-length':
                length = value
            names.add(lower)
            lines.append('%s: %s\r\n' % (name, value))
        if self.bodiless:
            # Delimited by its headers; a HEAD's Content-Length is the
            # GET's, not checked against what the application returned.
            data = b''
        else:
            if length is None and whole:
                length = str(size)
                lines.append('Content-Length: %s\r\n' % length)
            try:
                self.length = int(length)
            except (TypeError, ValueError):
                # No length: the end of the body is the end of the
                # connection.
                self.keep_alive = False
        if 'date' not in names:
            lines.append('Date: %s\r\n' % _http_date())
        if 'server' not in names:
            lines.append('Server: %s\r\n' % SERVER_SOFTWARE)
        if not self.keep_alive:
            lines.append('Connection: close\r\n')
        elif self.version == 'HTTP/1.0':
            # An HTTP/1.0 client that asked to keep the connection learns
            # here that it is kept.
            lines.append('Connection: keep-alive\r\n')
        lines.append('\r\n')
        self.sent = True
        self.handler.wfile.write(''.join(lines).encode('latin-1') + data)


class _Handler(socketserver.StreamRequestHandler):
    timeout = IDLE_TIMEOUT
    # Unbuffered writes: every response goes out in one sendall.
    wbufsize = 0

    def setup(self):
        super().setup()
        # Responses go out as soon as they are written; with Nagle's
        # algorithm a second write would wait for the client's delayed
        # ACK (40 ms) on a persistent connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self):
        while self._handle_one():
            pass

    # -- one request ------------------------------------------------------
    def _handle_one(self):
        """Serve one request; False when the connection is to be closed."""
        try:
            line = self.rfile.readline(MAX_LINE + 1)
        except (socket.timeout, ConnectionError):
            return False
        if not line:
            return False
        try:
            if len(line) > MAX_LINE:
                raise _BadRequest(414, 'Request-URI Too Long')
            method, target, version = self._request_line(line)
            headers = self._headers()
        except _BadRequest as exc:
            self._send_error(exc.code, exc.reason)
            return False
        except (socket.timeout, ConnectionError):
            return False
        keep_alive = self._keep_alive(version, headers)
        environ = self._environ(method, target, version, headers)
        length = environ.get('CONTENT_LENGTH')
        body = None
        if 'HTTP_TRANSFER_ENCODING' in environ:
            # Not delimited by a length: the application gets the stream,
            # and the connection ends with this request.
            keep_alive = False
            environ['wsgi.input'] = self.rfile
        else:
            try:
                size = int(length) if length else 0
            except ValueError:
                size = -1
            if size < 0:
                self._send_error(400, 'Bad Content-Length')
                return False
            body = _Body(self.rfile, size)
            environ['wsgi.input'] = body
        if environ.get('HTTP_EXPECT', '').lower() == '100-continue' and \
                version == 'HTTP/1.1':
            self.wfile.write(b'HTTP/1.1 100 Continue\r\n\r\n')
        response = _Response(self, version,
                             keep_alive and not (body and body.too_much_left),
                             head=method == 'HEAD')
        if not self._run(environ, response):
            return False
        if body is None or not response.keep_alive:
            return False
        return body.skip_rest()

    def _run(self, environ, response):
        """Call the application; False if the connection cannot go on."""
        result = None
        try:
            app = self.server.application
            result = app(environ, response.start_response)
            response.finish(result)
        except (ConnectionError, socket.timeout):
            return False
        except Exception:
            if response.sent:
                LOG.exception('Error after the response to %s %s started',
                              environ['REQUEST_METHOD'],
                              environ['PATH_INFO'])
                return False
            LOG.exception('Error in the application serving %s %s',
                          environ['REQUEST_METHOD'], environ['PATH_INFO'])
            self._send_error(500, 'Internal Server Error',
                             version=response.version)
            return False
        finally:
            close = getattr(result, 'close', None)
            if close is not None:
                try:
                    close()
                except Exception:
                    LOG.exception('Error closing the response iterable')
        if response.length is not None and \
                response.written != response.length:
            LOG.error('%s %s: the application sent %d bytes of a '
                      'Content-Length of %d', environ['REQUEST_METHOD'],
                      environ['PATH_INFO'], response.written,
                      response.length)
            return False
        return response.keep_alive

    # -- parsing ------------------------------------------------------------
    @staticmethod
    def _request_line(line):
        words = line.decode('latin-1').rstrip('\r\n').split()
        if len(words) != 3:
            raise _BadRequest(400, 'Bad request line')
        method, target, version = words
        if version not in _HTTP_VERSIONS:
            major = version[5:].split('.', 1)[0]
            if version.startswith('HTTP/') and major.isdigit() and \
                    int(major) >= 2:
                raise _BadRequest(505, 'HTTP Version Not Supported')
            raise _BadRequest(400, 'Bad request version')
        if not method.isalpha() or not method.isupper():
            raise _BadRequest(400, 'Bad request method')
        return method, target, version

    def _headers(self):
        headers = []
        readline = self.rfile.readline
        while True:
            line = readline(MAX_LINE + 1)
            if len(line) > MAX_LINE:
                raise _BadRequest(431, 'Request Header Fields Too Large')
            if line in _END_OF_HEADERS:
                return headers
            if not line:
                raise ConnectionError('the client went away')
            if len(headers) == MAX_HEADERS:
                raise _BadRequest(431, 'Request Header Fields Too Large')
            if line[:1] in (b' ', b'\t'):
                # Obsolete line folding (RFC 9112 section 5.2).
                raise _BadRequest(400, 'Folded header line')
            name, sep, value = line.decode('latin-1').partition(':')
            if not sep or not name or name != name.strip():
                raise _BadRequest(400, 'Bad header line')
            headers.append((name, value.strip()))

    @staticmethod
    def _keep_alive(version, headers):
        connection = ','.join(v for n, v in headers
                              if n.lower() == 'connection').lower()
        tokens = {t.strip() for t in connection.split(',')}
        if version == 'HTTP/1.1':
            return 'close' not in tokens
        return 'keep-alive' in tokens and 'close' not in tokens

    def _environ(self, method, target, version, headers):
        environ = self.server.base_environ.copy()
        path, _sep, query = target.partition('?')
        if path.startswith('//'):
            path = '/' + path.lstrip('/')
        environ['REQUEST_METHOD'] = method
        environ['PATH_INFO'] = urlparse.unquote(path, 'latin-1')
        environ['QUERY_STRING'] = query
        environ['SERVER_PROTOCOL'] = version
        environ['REMOTE_ADDR'] = self.client_address[0]
        environ['REMOTE_PORT'] = str(self.client_address[1])
        environ['wsgi.errors'] = _ERRORS
        for name, value in headers:
            key = name.upper().replace('-', '_')
            if key not in _CGI_HEADERS:
                key = 'HTTP_' + key
            if key in environ:
                environ[key] += ',' + value  # a repeated header
            else:
                environ[key] = value
        return environ

    # -- errors -------------------------------------------------------------
    def _send_error(self, code, reason, version='HTTP/1.1'):
        body = ('%d %s\n' % (code, reason)).encode('latin-1')
        head = ('%s %d %s\r\nContent-Type: text/plain\r\n'
                'Content-Length: %d\r\nDate: %s\r\nServer: %s\r\n'
                'Connection: close\r\n\r\n' % (
                    version, code, reason, len(body), _http_date(),
                    SERVER_SOFTWARE))
        try:
            self.wfile.write(head.encode('latin-1') + body)
        except (ConnectionError, socket.timeout):
            pass


_DATE = [0, '']


def _http_date():
    """The Date header's value, formatted once a second."""
    now = int(time.time())
    cached = _DATE
    if cached[0] != now:
        cached[:] = [now, email_utils.formatdate(now, usegmt=True)]
    return cached[1]


class ThreadedWSGIServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """One thread per connection; ``application`` is the WSGI app."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, server_address, application):
        self.application = application
        super().__init__(server_address, _Handler)

    def server_bind(self):
        super().server_bind()
        host, port = self.server_address[:2]
        self.base_environ = {
            'SERVER_NAME': socket.getfqdn(host),
            'SERVER_PORT': str(port),
            'SERVER_SOFTWARE': SERVER_SOFTWARE,
            'GATEWAY_INTERFACE': 'CGI/1.1',
            'SCRIPT_NAME': '',
            'wsgi.version': (1, 0),
            'wsgi.url_scheme': 'http',
            'wsgi.multithread': True,
            'wsgi.multiprocess': False,
            'wsgi.run_once': False,
        }


def make_server(host, port, app):
    return ThreadedWSGIServer((host, port), app)


def serve_until_signalled(server):
    """Serve ``server`` until SIGINT or SIGTERM, then shut it down and
    close it; returns the signal's number."""
    signals = stop_signals.StopSignals()
    thread = serve_in_thread(server)
    try:
        return signals.wait()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def serve_in_thread(server):
    thread = threading.Thread(target=server.serve_forever,
                              kwargs={'poll_interval': 0.5},
                              name='wsgi-server', daemon=True)
    thread.start()
    return thread
