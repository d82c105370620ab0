"""One INFO line per request: method, path, status, size and time."""

import time
from urllib import parse

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# What WebOb leaves unquoted in a path (webob.request.PATH_SAFE).
_PATH_SAFE = "/~!$&'()*+,;=:@"


def path_qs(environ):
    """The request's path and query string as WebOb's ``path_qs`` gives
    them (the path quoted, the query string as sent), read from the
    environ without building a request; a path that is not UTF-8 is
    quoted byte for byte instead of failing."""
    path = (parse.quote(environ.get('SCRIPT_NAME', '').encode('latin-1'),
                        _PATH_SAFE) +
            parse.quote(environ.get('PATH_INFO', '').encode('latin-1'),
                        _PATH_SAFE))
    query = environ.get('QUERY_STRING')
    return path + '?' + query if query else path


class _LoggedBody(list):
    """The application's list body, with a ``close()`` that writes the
    request's log line: the WSGI server calls it once the response has
    been sent (PEP 3333), so the line is formatted and written after the
    client has its answer instead of before. A list still: servers send a
    list's items in one write and may compute its ``Content-Length``."""

    __slots__ = ('_log', '_inner_close')

    def __init__(self, body, log, inner_close):
        super().__init__(body)
        self._log = log
        self._inner_close = inner_close

    def close(self):
        log, self._log = self._log, None
        try:
            if self._inner_close is not None:
                self._inner_close()
        finally:
            if log is not None:
                log()


class RequestLog(object):
    """A plain WSGI middleware: it watches the status and headers go by
    (the applications below it answer in full when they return) and logs
    one line per request. ``time`` is the time the application took to
    answer; the line itself is written when the server closes the
    response, after sending it (at once for a body that is not a list)."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        start = time.monotonic()
        seen = []

        def _start_response(status, headers, exc_info=None):
            seen[:] = [status, headers]
            return start_response(status, headers, exc_info)
        result = self.application(environ, _start_response)
        if not seen:
            return result
        status, headers = seen
        length = next((value for key, value in headers
                       if key.lower() == 'content-length'), None)
        values = {'addr': environ.get('REMOTE_ADDR'),
                  'method': environ['REQUEST_METHOD'],
                  'path': path_qs(environ), 'status': int(status[:3]),
                  'len': None if length is None else int(length),
                  'mv': environ.get('nova_lite.microversion', '-'),
                  'time': time.monotonic() - start}

        def log():
            LOG.info('%(addr)s "%(method)s %(path)s" status: %(status)s '
                     'len: %(len)s microversion: %(mv)s time: %(time).4f',
                     values)
        if isinstance(result, (list, tuple)):
            return _LoggedBody(result, log, getattr(result, 'close', None))
        log()
        return result
