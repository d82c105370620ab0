"""Route tables to handlers: dispatch, validation, versioned responses.

A ``VersionedAPI`` is one sub-API (``/v2.1`` compute or ``/v3`` volume): it
reads the microversion (400/406), strips an optional ``{project_id}`` URL
segment, finds the handler in its route table (404, or 405 with ``Allow``),
validates the body and query against the handler's schemas for that
version, calls it, validates the response, and echoes the version headers on
every response, errors included. Exceptions become responses in
``nova_lite.api.fault`` only.
"""

import collections

from oslo_log import log as logging
from oslo_serialization import jsonutils
import routes
import webob
import webob.dec
import webob.exc

from nova_lite.api import fault
from nova_lite.api import microversion
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _

LOG = logging.getLogger(__name__)

Reply = collections.namedtuple('Reply', ['status', 'body', 'headers'])


def reply(status, body=None, headers=None):
    """What a handler returns when the status is not 200 or it needs
    headers (``Location``); a plain dict means 200 with that body."""
    return Reply(status, body, headers or {})


class Action(object):
    """``POST .../action`` dispatch on the body's single key.

    ``Action({'os-stop': handlers.stop_server, ...})`` is used in a route
    table like a handler; each action handler declares its own schemas.
    """

    def __init__(self, actions):
        self.actions = actions

    def __call__(self, *args, **kwargs):
        # Never called: being callable keeps the routes library from
        # turning the Action (a route default) into its str().
        raise TypeError('resolve() an Action, do not call it')

    def resolve(self, body):
        if not isinstance(body, dict) or len(body) != 1:
            raise exception.ValidationError(
                message=_('An action body must have exactly one key, the '
                          'action name.'))
        name = next(iter(body))
        handler = self.actions.get(name)
        if handler is None:
            raise exception.ValidationError(
                message=_('There is no such action: %s') % name)
        return handler


class VersionedAPI(object):
    def __init__(self, conf, route_table, versions):
        self.conf = conf
        self.versions = versions
        self.mapper = routes.Mapper()
        self.collections = set()
        for path, methods in route_table.items():
            self.collections.add(path.strip('/').split('/')[0])
            for method, handler in methods.items():
                self.mapper.connect(
                    path, conditions={'method': [method]},
                    nl_handler=handler)
            self.mapper.connect(path, nl_handler=None,
                                nl_allowed=', '.join(sorted(methods)))
        self.response_validation = conf.api.response_validation

    # -- URL ------------------------------------------------------------
    def _strip_project(self, req):
        """Handle ``/{project_id}/...`` URLs. The segment is optional, as
        in Nova, and in Cinder, whose 3.67 only announces what its routes
        already accept."""
        # lstrip only: a trailing slash is kept, so that '/{p}/volumes/'
        # is a 404 as '/volumes/' is (Routes does not match it).
        parts = req.path_info.lstrip('/').split('/', 1)
        first = parts[0]
        if not first or first in self.collections:
            return
        ctxt = req.environ['nova_lite.context']
        rest = parts[1].split('/', 1)[0] if len(parts) > 1 else ''
        if rest not in self.collections and first != ctxt.project_id:
            # Not /{project_id}/<known collection>: an unknown resource.
            raise webob.exc.HTTPNotFound()
        if first != ctxt.project_id and not ctxt.is_admin:
            raise exception.InvalidInput(
                reason=_('Malformed request URL: the project_id %(url)s in '
                         'the URL does not match the project_id %(ctx)s of '
                         'the token.') % {'url': first,
                                          'ctx': ctxt.project_id})
        req.environ['nova_lite.url_project_id'] = first
        req.script_name += '/' + first
        req.path_info = '/' + (parts[1] if len(parts) > 1 else '')

    # -- WSGI -------------------------------------------------------------
    @webob.dec.wsgify
    def __call__(self, req):
        try:
            version = self.versions.from_headers(req.headers)
        except exception.InvalidGlobalAPIVersion as exc:
            resp = fault.exception_to_response(exc)
            raw = exc.kwargs['req_ver']
            self._add_headers(resp, raw)
            return resp
        except exception.NovaLiteException as exc:
            # A malformed version string: 400 without version headers.
            return fault.exception_to_response(exc)
        req.environ[microversion.ENVIRON_KEY] = version
        try:
            self._strip_project(req)
            resp = self._dispatch(req, version)
        except Exception as exc:
            resp = fault.exception_to_response(exc)
        self._add_headers(resp, version)
        return resp

    def _add_headers(self, resp, version):
        for key, value in self.versions.response_headers(version):
            if key == 'Vary':
                resp.headers.add('Vary', value)
            else:
                resp.headers[key] = value

    def _dispatch(self, req, version):
        match = self.mapper.match(environ=req.environ)
        if match is None:
            raise webob.exc.HTTPNotFound()
        handler = match.pop('nl_handler')
        allowed = match.pop('nl_allowed', None)
        if handler is None:
            raise webob.exc.HTTPMethodNotAllowed(
                headers={'Allow': allowed})
        urlvars = {k: v for k, v in match.items()
                   if k not in ('controller', 'action')}
        body = None
        if isinstance(handler, Action):
            body = self._json_body(req)
            handler = handler.resolve(body)
        return call_handler(self, req, handler, version, urlvars, body)

    @staticmethod
    def _json_body(req):
        if not req.body:
            raise exception.ValidationError(
                message=_('The request requires a JSON body.'))
        if req.content_type and 'json' not in req.content_type:
            raise webob.exc.HTTPUnsupportedMediaType(
                _('The media type %s is not supported, use '
                  'application/json') % req.content_type)
        return validation.extract_json(req.body)

    def check_response(self, handler, status, body, version):
        if self.response_validation == 'ignore':
            return
        band = validation.spec_of(handler).response_band(status, version)
        problem = None
        if band is None:
            problem = 'no response schema for status %s at %s' % (
                status, version)
        elif band.schema is None:
            if body is not None:
                problem = 'a body where none is documented'
        else:
            errors = list(band.validator.iter_errors(body))
            if errors:
                problem = '; '.join(e.message for e in errors[:3])
        if problem:
            msg = 'Response of %s does not match its schema: %s' % (
                handler.__name__, problem)
            if self.response_validation == 'error':
                raise exception.NovaLiteException(message=msg)
            LOG.warning(msg)


def call_handler(api, req, handler, version, urlvars, body=None):
    spec = validation.spec_of(handler)
    if not spec.available(version):
        raise webob.exc.HTTPNotFound()
    kwargs = dict(urlvars)
    band = spec.request_band(version)
    if spec.request_bands:
        if band is None:
            raise webob.exc.HTTPNotFound()
        if body is None:
            body = VersionedAPI._json_body(req)
        validation.validate(band, body)
        kwargs['body'] = body
    qband = spec.query_band(version)
    if qband is not None:
        if req.environ.get('QUERY_STRING'):
            validation.validate(qband, req.GET.dict_of_lists())
        elif not qband.accepts_empty:
            validation.validate(qband, {})
    result = handler(req, **kwargs)
    if isinstance(result, webob.Response):
        return result
    if not isinstance(result, Reply):
        result = Reply(200, result, {})
    api.check_response(handler, result.status, result.body, version)
    resp = webob.Response(status=result.status)
    if result.body is not None:
        resp.content_type = 'application/json'
        resp.charset = 'UTF-8'
        resp.body = jsonutils.dump_as_bytes(result.body)
    else:
        resp.content_type = None
        resp.body = b''
    for key, value in result.headers.items():
        resp.headers[key] = value
    return resp
