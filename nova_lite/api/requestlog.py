"""One INFO line per request: method, path, status, size and time."""

import time

from oslo_log import log as logging
import webob.dec

LOG = logging.getLogger(__name__)


class RequestLog(object):
    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        start = time.monotonic()
        resp = req.get_response(self.application)
        LOG.info('%(addr)s "%(method)s %(path)s" status: %(status)s len: '
                 '%(len)s microversion: %(mv)s time: %(time).4f',
                 {'addr': req.remote_addr, 'method': req.method,
                  'path': req.path_qs, 'status': resp.status_int,
                  'len': resp.content_length,
                  'mv': req.environ.get('nova_lite.microversion', '-'),
                  'time': time.monotonic() - start})
        return resp
