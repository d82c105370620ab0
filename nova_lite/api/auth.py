"""Authentication: keystonemiddleware or noauth2, then the request context.

``noauth2`` (development and tests only) trusts a token ``user:project``; the
user ``admin`` gets the admin role. Both strategies refuse a request without
a token with 401. The context middleware turns the identity headers into a
``RequestContext`` at ``environ['nova_lite.context']``. Both are plain
WSGI middlewares (they only read and set the environ); what they raise
becomes a response in ``nova_lite.api.fault.FaultWrapper``.
"""

from keystonemiddleware import auth_token
import webob

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite.i18n import _

CONTEXT_KEY = 'nova_lite.context'


class NoAuthMiddleware(object):
    """Trust ``X-Auth-Token: user:project`` (or ``user``) as is."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        req = webob.BaseRequest(environ)
        token = req.headers.get('X-Auth-Token')
        if not token:
            raise exception.NotAuthenticated()
        user_id, _sep, project_id = token.partition(':')
        project_id = project_id or user_id
        roles = ['member', 'reader']
        if user_id == 'admin':
            roles.insert(0, 'admin')
        if user_id == 'service':
            roles.append('service')
        req.headers['X-User-Id'] = user_id
        req.headers['X-Project-Id'] = project_id
        req.headers['X-Roles'] = ','.join(roles)
        req.headers['X-Identity-Status'] = 'Confirmed'
        return self.application(environ, start_response)


class ContextMiddleware(object):
    """Build the RequestContext from the identity headers."""

    def __init__(self, application, enforcer):
        self.application = application
        self.enforcer = enforcer

    def __call__(self, environ, start_response):
        req = webob.BaseRequest(environ)
        if req.headers.get('X-Identity-Status', 'Confirmed') != 'Confirmed':
            raise exception.NotAuthenticated()
        ctxt = nl_context.RequestContext.from_environ(req.environ)
        if not ctxt.user_id or not ctxt.project_id:
            raise exception.NotAuthenticated(
                message=_('The request has no user or project.'))
        ctxt.is_admin = 'admin' in [r.lower() for r in ctxt.roles]
        ctxt.enforcer = self.enforcer
        req.environ[CONTEXT_KEY] = ctxt
        return self.application(environ, start_response)


def keystone_middleware(application, conf):
    """keystonemiddleware ``auth_token``, configured from
    ``[keystone_authtoken]`` of ``conf``."""
    return auth_token.AuthProtocol(
        application, {'oslo_config_config': conf})
