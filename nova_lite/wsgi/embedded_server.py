"""The HTTP server of ``nova-lite-all`` and ``nova-lite-api``: waitress.

Production runs the API under uWSGI. The embedded default and development
serve the same application with waitress (``create_server``): HTTP/1.1
persistent connections, one loop thread reading and writing the sockets
(with ``poll``, so descriptors above 1024 work), at most ``[wsgi]
threads`` threads running the application.

The edges, bounded as uWSGI bounds them in production:

* Connections: at most ``[wsgi] connection_limit`` (1000) open at once;
  an idle one costs a descriptor, not a thread, so hundreds of silent
  sockets do not keep a client out (with waitress's default of 100, 300
  idle sockets left a request unanswered for minutes). A connection with
  no request in progress and no traffic for ``[wsgi]
  client_socket_timeout`` seconds is closed (checked every
  ``CLEANUP_INTERVAL`` seconds at most).
* Request headers: more than ``MAX_REQUEST_HEADER_SIZE`` bytes (the
  request line included; the ``buffer-size`` of
  ``etc/nova-lite/nova-lite-api-uwsgi.ini``) or more than
  ``MAX_HEADER_FIELDS`` fields (Python's ``http.server`` limit, Nova's
  under eventlet) are refused with ``431 Request Header Fields Too Large``
  before the application runs, and the connection is closed. uWSGI drops
  such a request without an answer.

What waitress decides on its own, and nova_lite relies on: a malformed
request line or header (a header name with a space, a ``Content-Length``
that is not digits) is a 400; a chunked body reaches the application
dechunked, with ``CONTENT_LENGTH`` its decoded size and no
``Transfer-Encoding``; a header whose name has an underscore is dropped
(``X_Roles`` can never become ``HTTP_X_ROLES``). These refusals, 431
included, are waitress's plain-text answers, not the API's JSON faults:
the request never reached the API.

Proxy headers (``X-Forwarded-*``, ``Forwarded``) are passed on untouched:
``[oslo_middleware] enable_proxy_headers_parsing`` decides about them, as
under uWSGI.
"""

import resource
import threading

from oslo_log import log as logging
import waitress
from waitress import channel as waitress_channel
from waitress import parser as waitress_parser
from waitress import utilities as waitress_utilities

from nova_lite.conf import wsgi as wsgi_conf
from nova_lite import stop_signals

LOG = logging.getLogger(__name__)

IDENT = 'nova-lite'
# Seconds ``stop`` waits for the loop thread and for requests in progress.
STOP_TIMEOUT = 5
# The request line and headers, in bytes: uWSGI's buffer-size in
# etc/nova-lite/nova-lite-api-uwsgi.ini (a unit test keeps them equal).
MAX_REQUEST_HEADER_SIZE = 65535
# Header fields of a request: Python's http.server (and so eventlet's
# server, Nova's) answers 431 above 100; uWSGI drops a request with more
# than about 119.
MAX_HEADER_FIELDS = 100
# Most seconds between two sweeps for idle connections.
CLEANUP_INTERVAL = 10
# Descriptors kept for everything but client connections (the listening
# socket, the loop's wake-up pipe, the database, log files, RPC).
RESERVED_FDS = 64


class _HeaderFieldsParser(waitress_parser.HTTPRequestParser):
    """waitress's parser, refusing more than MAX_HEADER_FIELDS header
    fields with 431 as it refuses more than max_request_header_size
    bytes."""

    def parse_header(self, header_plus):
        _line, _sep, fields = header_plus.partition(b'\r\n')
        count = len(waitress_parser.get_header_lines(fields)) if fields else 0
        if count <= MAX_HEADER_FIELDS:
            return super().parse_header(header_plus)
        # As waitress does for too many bytes: a minimal request, marked
        # complete, whose error is the response (the connection closes).
        super().parse_header(b'GET / HTTP/1.0\r\n')
        self.error = waitress_utilities.RequestHeaderFieldsTooLarge(
            '%d header fields, more than %d' % (count, MAX_HEADER_FIELDS))
        self.completed = True


class _Channel(waitress_channel.HTTPChannel):
    parser_class = _HeaderFieldsParser


def fit_descriptor_limit(connection_limit):
    """``connection_limit``, once the process may open that many
    descriptors and RESERVED_FDS more: the soft RLIMIT_NOFILE is raised
    (up to the hard limit) if needed; if it cannot be, the connection
    limit is lowered to fit, with a warning."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connection_limit + RESERVED_FDS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = (wanted if hard == resource.RLIM_INFINITY
               else min(wanted, hard))
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
            soft = new
        except (ValueError, OSError) as exc:
            LOG.warning('Cannot raise the open-files limit to %d: %s',
                        new, exc)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        fitted = max(1, soft - RESERVED_FDS)
        LOG.warning('[wsgi] connection_limit %d lowered to %d: the process '
                    'may open %d files', connection_limit, fitted, soft)
        return fitted
    return connection_limit


class Server(object):
    """``app`` served on ``host``:``port`` (0: a free port, see ``port``)."""

    def __init__(self, app, host, port, threads,
                 connection_limit=wsgi_conf.DEFAULT_CONNECTION_LIMIT,
                 idle_timeout=wsgi_conf.DEFAULT_CLIENT_SOCKET_TIMEOUT):
        # The server's sockets (listening socket, connections, the loop's
        # wake-up pipe): closed by ``stop`` in the loop thread.
        self._map = {}
        self._server = waitress.create_server(
            app, map=self._map, host=host, port=port, threads=threads,
            ident=IDENT, clear_untrusted_proxy_headers=False,
            connection_limit=fit_descriptor_limit(connection_limit),
            channel_timeout=idle_timeout,
            cleanup_interval=max(1, min(CLEANUP_INTERVAL, idle_timeout)),
            max_request_header_size=MAX_REQUEST_HEADER_SIZE,
            asyncore_use_poll=True)
        if not hasattr(self._server, 'effective_port'):
            # A host name that resolves to several addresses: waitress
            # would listen on each, on different ports when port is 0.
            self._server.close()
            raise ValueError('%s resolves to several addresses; bind to '
                             'one IP address' % host)
        # Every connection accepted from now on counts its header fields.
        self._server.channel_class = _Channel
        self.host = self._server.effective_host
        self.port = self._server.effective_port
        self._thread = None

    def start(self):
        """Serve on a daemon thread."""
        self._thread = threading.Thread(target=self._server.run,
                                        name='wsgi-server', daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=STOP_TIMEOUT):
        """Let the requests in progress finish (up to ``timeout`` seconds;
        requests still queued are cancelled), then close the listening
        socket and every connection."""
        if self._thread is None:
            self._server.close()
            return
        # First the application threads: they end after their request,
        # whose response the loop thread still sends. Only then may the
        # wake-up pipe they use be closed.
        self._server.task_dispatcher.shutdown(timeout=timeout)
        # The loop thread owns the sockets: it closes them itself, after
        # which its loop has nothing left to serve and returns.
        try:
            self._server.trigger.pull_trigger(self._close_all)
        except OSError:
            # The wake-up pipe is closed already: the loop is ending.
            LOG.warning('The WSGI server loop was ending before stop')
        self._thread.join(timeout)
        if self._thread.is_alive():
            LOG.warning('The WSGI server loop did not stop within %ss',
                        timeout)
        self._thread = None

    def _close_all(self):
        self._server.close()  # the listening socket and the wake-up pipe
        for channel in list(self._map.values()):
            channel.handle_close()

    def serve_until_signalled(self):
        """Serve until SIGINT or SIGTERM, then stop; the signal's number."""
        signals = stop_signals.StopSignals()
        self.start()
        try:
            return signals.wait()
        finally:
            self.stop()
