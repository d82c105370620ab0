"""Authentication: keystonemiddleware or noauth2, then the request context.

``noauth2`` (development and tests only) trusts a token ``user:project``; the
user ``admin`` gets the admin role. Both strategies refuse a request without
a token with 401. The context middleware turns the identity headers into a
``RequestContext`` at ``environ['nova_lite.context']``. Both are plain
WSGI middlewares (they only read and set the environ); what they raise
becomes a response in ``nova_lite.api.fault.FaultWrapper``.
"""

from keystonemiddleware import auth_token

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite.i18n import _

CONTEXT_KEY = 'nova_lite.context'


class NoAuthMiddleware(object):
    """Trust ``X-Auth-Token: user:project`` (or ``user``) as is."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        # The headers as the environ holds them (PEP 3333's HTTP_ keys),
        # as keystonemiddleware sets them.
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if not token:
            raise exception.NotAuthenticated()
        user_id, _sep, project_id = token.partition(':')
        project_id = project_id or user_id
        roles = ['member', 'reader']
        if user_id == 'admin':
            roles.insert(0, 'admin')
        if user_id == 'service':
            roles.append('service')
        environ['HTTP_X_USER_ID'] = user_id
        environ['HTTP_X_PROJECT_ID'] = project_id
        environ['HTTP_X_ROLES'] = ','.join(roles)
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        return self.application(environ, start_response)


class ContextMiddleware(object):
    """Build the RequestContext from the identity headers."""

    def __init__(self, application, enforcer):
        self.application = application
        self.enforcer = enforcer

    def __call__(self, environ, start_response):
        if environ.get('HTTP_X_IDENTITY_STATUS',
                       'Confirmed') != 'Confirmed':
            raise exception.NotAuthenticated()
        ctxt = nl_context.RequestContext.from_environ(environ)
        if not ctxt.user_id or not ctxt.project_id:
            raise exception.NotAuthenticated(
                message=_('The request has no user or project.'))
        ctxt.is_admin = 'admin' in [r.lower() for r in ctxt.roles]
        ctxt.enforcer = self.enforcer
        environ[CONTEXT_KEY] = ctxt
        return self.application(environ, start_response)


def keystone_middleware(application, conf):
    """keystonemiddleware ``auth_token``, configured from
    ``[keystone_authtoken]`` of ``conf``."""
    return auth_token.AuthProtocol(
        application, {'oslo_config_config': conf})
