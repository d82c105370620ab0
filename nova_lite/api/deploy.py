"""The WSGI pipeline, composed in code (no paste).

Outer to inner, and why in this order:

1. ``HTTPProxyToWSGI``: fix scheme/host from a TLS-terminating proxy first,
   so every later piece (links, Location headers, logs) sees the real URL.
2. ``RequestId``: every response, even a 401 or a 500, carries
   ``x-openstack-request-id``, and the id is in the context for the logs.
3. ``RequestLog``: logs what the client finally got, errors included.
4. ``FaultWrapper``: the last chance; nothing below may leak a traceback.
5. ``_DecodedRequest``: a path or query string that is not UTF-8 is 400
   here, once, before anything reads it (authentication included).
6. ``RequestBodySizeLimiter``: refuse oversized bodies before parsing them;
   ``_OversizeFault`` around it gives its 413 the API's fault format.
7. URL map: ``/`` and the bare ``/v2.1`` and ``/v3`` version documents need
   no token; everything below them goes through auth (keystonemiddleware or
   noauth2), the context middleware, then the sub-API's router, which owns
   microversions, routing, validation and the exception mapping. The
   block-storage API is also mounted at ``/volume/v3`` (as devstack
   registers Cinder), where ``/volume/`` answers Cinder's version list
   with Cinder's 300, while ``/`` stays Nova's (200). ``/identity`` is
   Keystone's version discovery and, with noauth2, its token API
   (``handlers/identity.py``): no token needed there either.

oslo.middleware's three (1, 2 and 6) are its classes as they are, built
with the service's configuration.

``loadapp(conf)`` is the one factory used by uWSGI (``nova_lite.wsgi.api``),
``nova-lite-all``/``nova-lite-api`` and the test fixtures.
"""

import urllib.parse

from oslo_log import log as logging
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
from oslo_middleware import sizelimit
import webob

from nova_lite.api import auth
from nova_lite.api import fault
from nova_lite.api.handlers import identity
from nova_lite.api.handlers import root
from nova_lite.api import microversion
from nova_lite.api import requestlog
from nova_lite.api import router
from nova_lite.api import routes
from nova_lite import policy

LOG = logging.getLogger(__name__)


class URLMap(object):
    """Dispatch on the first path segment (``/v2.1``, ``/v3``)."""

    def __init__(self, root_app, apps):
        self.root_app = root_app
        self.apps = apps  # {'v2.1': (version_doc_app, api_app)}

    def __call__(self, environ, start_response):
        req = webob.BaseRequest(environ)
        segment = req.path_info.strip('/').split('/', 1)[0]
        if segment not in self.apps:
            return self.root_app(environ, start_response)
        doc_app, api_app = self.apps[segment]
        req.path_info_pop()
        if req.path_info in ('', '/'):
            return doc_app(environ, start_response)
        return api_app(environ, start_response)


class _OversizeFault(object):
    """oslo.middleware's ``RequestBodySizeLimiter`` with its 413 in the
    API's fault format.

    The limiter answers a body over ``[oslo_middleware]
    max_request_body_size`` itself, with WebOb's error page: a declared
    one before the application runs, an undeclared (chunked) one when
    the application's read of it passes the limit and raises. Such an
    answer (a 413 the application did not start) is replaced by the
    ``overLimit`` fault; everything else, a 413 of the application's own
    included, passes unchanged.
    """

    # In the environ once the application below the limiter has started
    # its response.
    _STARTED = 'nova_lite.oversize_fault.started'

    def __init__(self, application, conf):
        self.application = application
        self.conf = conf
        # The limiter registers [oslo_middleware] max_request_body_size.
        self.limiter = sizelimit.RequestBodySizeLimiter(self._inner, conf)

    def _inner(self, environ, start_response):
        def started(status, headers, exc_info=None):
            environ[self._STARTED] = True
            return start_response(status, headers, exc_info)
        return self.application(environ, started)

    def __call__(self, environ, start_response):
        refused = []

        def start(status, headers, exc_info=None):
            if status.startswith('413') and not environ.get(self._STARTED):
                refused.append(status)
                return lambda data: None
            return start_response(status, headers, exc_info)
        result = self.limiter(environ, start)
        if not refused:
            return result
        getattr(result, 'close', lambda: None)()
        max_size = self.conf.oslo_middleware.max_request_body_size
        LOG.info('Request body larger than max_request_body_size (%s) '
                 'refused.', max_size)
        return fault.fault_response(
            413, 'Request is too large. Larger than max_request_body_size '
            '(%s).' % max_size)(environ, start_response)


class _ConfInEnviron(object):
    def __init__(self, application, conf):
        self.application = application
        self.conf = conf

    def __call__(self, environ, start_response):
        environ['nova_lite.conf'] = self.conf
        return self.application(environ, start_response)


class _DecodedRequest(object):
    """The one decoding step of every request, before authentication: the
    path and the query string must be UTF-8 once percent-decoded (WebOb
    decodes them so for every handler). Anything else is 400 in the fault
    format, instead of a decoding error wherever it is first read."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            # PEP 3333: PATH_INFO holds the decoded bytes as latin-1.
            environ.get('PATH_INFO', '').encode('latin-1').decode('utf-8')
            urllib.parse.parse_qsl(environ.get('QUERY_STRING', ''),
                                   keep_blank_values=True,
                                   encoding='utf-8', errors='strict')
        except (UnicodeError, ValueError):
            return fault.fault_response(
                400, 'The request path or query string is not valid '
                'UTF-8.')(environ, start_response)
        return self.application(environ, start_response)


def _authenticated(application, conf, enforcer):
    application = auth.ContextMiddleware(application, enforcer)
    if conf.api.auth_strategy == 'keystone':
        return auth.keystone_middleware(application, conf)
    return auth.NoAuthMiddleware(application)


def loadapp(conf):
    """The whole API WSGI application for ``conf``."""
    enforcer = policy.init(conf)
    compute = router.VersionedAPI(conf, routes.COMPUTE_ROUTES,
                                  microversion.COMPUTE)
    volume = router.VersionedAPI(conf, routes.VOLUME_ROUTES,
                                 microversion.VOLUME)
    volume = (root.volume_root(conf), _authenticated(volume, conf, enforcer))
    # The block-storage API under /volume too, with Cinder's own root (300)
    # at /volume/: one port serves both APIs, and / is Nova's (200).
    volume_choices = root.volume_choices(conf, '/volume')
    # Keystone's version documents and, with noauth2, its token API (see
    # handlers/identity.py).
    identity_app = identity.identity_app(conf)
    app = URLMap(root.RootApp(conf), {
        'v2.1': (root.compute_root(conf),
                 _authenticated(compute, conf, enforcer)),
        'v3': volume,
        'volume': (volume_choices, URLMap(volume_choices, {'v3': volume})),
        'identity': (identity_app, identity_app),
    })
    app = _OversizeFault(app, conf)
    app = _DecodedRequest(app)
    app = fault.FaultWrapper(app)
    app = requestlog.RequestLog(app)
    app = request_id.RequestId(app, conf)
    app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
    return _ConfInEnviron(app, conf)
