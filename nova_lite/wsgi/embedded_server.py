"""The HTTP server of ``nova-lite-all`` and ``nova-lite-api``: waitress.

Production runs the API under uWSGI. The embedded default and development
serve the same application with waitress (``create_server``): HTTP/1.1
persistent connections, one loop thread reading and writing the sockets,
at most ``[wsgi] threads`` threads running the application and at most
``connection_limit`` (waitress's default, 100) open connections.

What waitress decides on its own, and nova_lite relies on: a malformed
request line or header (a header name with a space, a ``Content-Length``
that is not digits) is a 400; a chunked body reaches the application
dechunked, with ``CONTENT_LENGTH`` its decoded size and no
``Transfer-Encoding``; a header whose name has an underscore is dropped
(``X_Roles`` can never become ``HTTP_X_ROLES``).

Proxy headers (``X-Forwarded-*``, ``Forwarded``) are passed on untouched:
``[oslo_middleware] enable_proxy_headers_parsing`` decides about them, as
under uWSGI.
"""

import threading

from oslo_log import log as logging
import waitress

from nova_lite import stop_signals

LOG = logging.getLogger(__name__)

IDENT = 'nova-lite'
# Seconds ``stop`` waits for the loop thread and for requests in progress.
STOP_TIMEOUT = 5


class Server(object):
    """``app`` served on ``host``:``port`` (0: a free port, see ``port``)."""

    def __init__(self, app, host, port, threads):
        # The server's sockets (listening socket, connections, the loop's
        # wake-up pipe): closed by ``stop`` in the loop thread.
        self._map = {}
        self._server = waitress.create_server(
            app, map=self._map, host=host, port=port, threads=threads,
            ident=IDENT, clear_untrusted_proxy_headers=False)
        if not hasattr(self._server, 'effective_port'):
            # A host name that resolves to several addresses: waitress
            # would listen on each, on different ports when port is 0.
            self._server.close()
            raise ValueError('%s resolves to several addresses; bind to '
                             'one IP address' % host)
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
