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
6. ``RequestBodySizeLimiter``: refuse oversized bodies before parsing them.
7. URL map: ``/`` and the bare ``/v2.1`` and ``/v3`` version documents need
   no token; everything below them goes through auth (keystonemiddleware or
   noauth2), the context middleware, then the sub-API's router, which owns
   microversions, routing, validation and the exception mapping.

oslo.middleware's three (1, 2 and 6) run as plain WSGI adapters of their
classes (``_ProxyHeaders``, ``_RequestId``, ``_BodySizeLimiter``): the same
checks and headers, without a ``wsgify`` that copies every response into a
new WebOb Response.

``loadapp(conf)`` is the one factory used by uWSGI (``nova_lite.wsgi.api``),
``nova-lite-all``/``nova-lite-api`` and the test fixtures.
"""

import urllib.parse

from oslo_context import context
from oslo_log import log as logging
from oslo_middleware import base as base_middleware
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
from oslo_middleware import sizelimit
import webob
import webob.exc

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


class _ProxyHeaders(http_proxy_to_wsgi.HTTPProxyToWSGI):
    """oslo.middleware's ``HTTPProxyToWSGI`` as a plain WSGI middleware.

    It only rewrites the environ before the request goes on and never
    answers or changes a response; its base class's ``__call__`` (a
    ``wsgify`` that wraps the inner response in a new Response and runs
    ``inspect.getfullargspec`` on ``process_response`` for every request)
    is replaced by a call to its ``process_request``. Should a later
    oslo.middleware give it a ``process_response`` of its own, or let
    ``process_request`` answer, the base class's ``__call__`` is used.
    """

    _PLAIN = (http_proxy_to_wsgi.HTTPProxyToWSGI.process_response is
              base_middleware.ConfigurableMiddleware.process_response)

    def __call__(self, environ, start_response):
        if not self._PLAIN:
            return super().__call__(environ, start_response)
        response = self.process_request(
            base_middleware.NoContentTypeRequest(environ))
        if response is not None:
            return response(environ, start_response)
        return self.application(environ, start_response)


class _RequestId(request_id.RequestId):
    """oslo.middleware's ``RequestId`` as a plain WSGI middleware.

    The same work as its base class's ``__call__`` (a ``wsgify`` that
    copies the inner response into a new Response): the client's global
    request id checked by ``set_global_req_id``, a new
    ``req-<uuid>`` in the environ, and that id in the response headers
    (``x-openstack-request-id`` and any ``compat_headers``) unless the
    application set them, added as the response starts.
    """

    def __call__(self, environ, start_response):
        self.set_global_req_id(base_middleware.NoContentTypeRequest(environ))
        req_id = context.generate_request_id()
        environ[request_id.ENV_REQUEST_ID] = req_id
        names = [request_id.HTTP_RESP_HEADER_REQUEST_ID]
        names.extend(self.compat_headers)

        def start_with_id(status, headers, exc_info=None):
            present = {name.lower() for name, _value in headers}
            headers.extend((name, req_id) for name in names
                           if name.lower() not in present)
            return start_response(status, headers, exc_info)
        return self.application(environ, start_with_id)


class _BodySizeLimiter(sizelimit.RequestBodySizeLimiter):
    """oslo.middleware's ``RequestBodySizeLimiter`` as a plain WSGI
    middleware: a declared body over ``[oslo_middleware]
    max_request_body_size`` is refused with a 413, an undeclared one
    (chunked) is read through its ``LimitingReader`` (which raises the
    413 once the limit is passed); otherwise the request goes on
    untouched, without a ``wsgify`` around it. The 413 is raised to
    ``FaultWrapper``, just outside, so that it is a fault in the API's own
    format like every other error.

    A request with neither ``Content-Length`` nor ``Transfer-Encoding``
    has no body (RFC 9112, 6.3): most requests (every GET) are such, and
    the base class would still wrap their empty input; here they go on
    as they are.
    """

    def __call__(self, environ, start_response):
        max_size = self._conf_get('max_request_body_size')
        length = _content_length(environ)
        if length is None and 'HTTP_TRANSFER_ENCODING' not in environ:
            return self.application(environ, start_response)
        req = base_middleware.NoContentTypeRequest(environ)
        if length is not None and length > max_size:
            LOG.info('Request is too large: %(length)s bytes, larger than '
                     'max_request_body_size (%(max)s).',
                     {'length': length, 'max': max_size})
            raise webob.exc.HTTPRequestEntityTooLarge(
                explanation='Request is too large. Larger than '
                            'max_request_body_size (%s).' % max_size)
        if length is None:
            req.body_file = sizelimit.LimitingReader(req.body_file,
                                                     max_size)
        return self.application(environ, start_response)


def _content_length(environ):
    """``Content-Length`` as WebOb reads it: an int, or None when it is
    missing or not a number."""
    value = environ.get('CONTENT_LENGTH')
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        return None


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
    app = URLMap(root.RootApp(conf), {
        'v2.1': (root.compute_root(conf),
                 _authenticated(compute, conf, enforcer)),
        'v3': (root.volume_root(conf),
               _authenticated(volume, conf, enforcer)),
        # Identity version discovery only (see handlers/identity.py).
        'identity': (identity.identity_app(conf),
                     identity.identity_app(conf)),
    })
    app = _BodySizeLimiter(app, conf)
    app = _DecodedRequest(app)
    app = fault.FaultWrapper(app)
    app = requestlog.RequestLog(app)
    app = _RequestId(app)
    app = _ProxyHeaders(app, conf)
    return _ConfInEnviron(app, conf)
