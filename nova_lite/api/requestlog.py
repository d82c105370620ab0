"""One INFO line per request: method, path, status, size and time."""

import time

from oslo_log import log as logging
import webob

LOG = logging.getLogger(__name__)


class RequestLog(object):
    """A plain WSGI middleware: it watches the status and headers go by
    (the applications below it answer in full when they return)."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        start = time.monotonic()
        seen = []

        def _start_response(status, headers, exc_info=None):
            seen[:] = [status, headers]
            return start_response(status, headers, exc_info)
        result = self.application(environ, _start_response)
        if seen:
            status, headers = seen
            length = next((value for key, value in headers
                           if key.lower() == 'content-length'), None)
            req = webob.BaseRequest(environ)
            LOG.info('%(addr)s "%(method)s %(path)s" status: %(status)s '
                     'len: %(len)s microversion: %(mv)s time: %(time).4f',
                     {'addr': req.remote_addr, 'method': req.method,
                      'path': req.path_qs, 'status': int(status[:3]),
                      'len': None if length is None else int(length),
                      'mv': environ.get('nova_lite.microversion', '-'),
                      'time': time.monotonic() - start})
        return result
