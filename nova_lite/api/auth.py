"""Authentication: keystonemiddleware or noauth2, then the request context.

``noauth2`` (development and tests only) trusts a token ``user:project``; the
user ``admin`` gets the admin role, the user ``service`` the service role
(in a service token, ``X-Service-Token``, too). Identity headers a client
sends are never trusted: keystonemiddleware removes them, and so does
noauth2 before it sets its own. Both strategies refuse a request without
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


# The identity headers an auth middleware sets (keystonemiddleware's, as
# PEP 3333 environ keys, by prefix): whatever a client sent under these
# names is removed before the middleware sets its own, so identity comes
# only from the token. (keystonemiddleware removes them itself.)
_IDENTITY_PREFIXES = (
    'HTTP_X_IDENTITY_STATUS', 'HTTP_X_SERVICE_IDENTITY_STATUS',
    'HTTP_X_USER', 'HTTP_X_PROJECT', 'HTTP_X_TENANT', 'HTTP_X_DOMAIN',
    'HTTP_X_ROLE', 'HTTP_X_IS_ADMIN_PROJECT', 'HTTP_X_SYSTEM_SCOPE',
    'HTTP_X_TRUST', 'HTTP_X_APPLICATION_CREDENTIAL', 'HTTP_X_SERVICE_USER',
    'HTTP_X_SERVICE_PROJECT', 'HTTP_X_SERVICE_DOMAIN', 'HTTP_X_SERVICE_ROLES',
    'HTTP_X_SERVICE_CATALOG', 'HTTP_X_SERVICE_IS_ADMIN_PROJECT',
    'HTTP_X_SERVICE_SYSTEM_SCOPE', 'HTTP_X_AUTHORIZATION',
)


def remove_identity_headers(environ):
    """Drop every identity header the client sent (see above)."""
    for key in [k for k in environ if k.startswith(_IDENTITY_PREFIXES)]:
        del environ[key]


def noauth_identity(token):
    """``(user, project, roles)`` of a noauth2 token ``user[:project]``:
    every user is a member and reader, ``admin`` is an administrator and
    ``service`` has the ``service`` role."""
    user_id, _sep, project_id = token.partition(':')
    roles = ['member', 'reader']
    if user_id == 'admin':
        roles.insert(0, 'admin')
    if user_id == 'service':
        roles.append('service')
    return user_id, project_id or user_id, roles


class NoAuthMiddleware(object):
    """Trust ``X-Auth-Token: user:project`` (or ``user``) as is, and a
    service token ``X-Service-Token`` of the same form (the user
    ``service`` has the ``service`` role), as keystonemiddleware trusts
    Keystone's; identity headers the client sent are removed first."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        # The headers as the environ holds them (PEP 3333's HTTP_ keys),
        # as keystonemiddleware sets them.
        remove_identity_headers(environ)
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if not token:
            raise exception.NotAuthenticated()
        user_id, project_id, roles = noauth_identity(token)
        environ['HTTP_X_USER_ID'] = user_id
        environ['HTTP_X_PROJECT_ID'] = project_id
        environ['HTTP_X_ROLES'] = ','.join(roles)
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        service_token = environ.get('HTTP_X_SERVICE_TOKEN')
        if service_token:
            user_id, project_id, roles = noauth_identity(service_token)
            environ['HTTP_X_SERVICE_USER_ID'] = user_id
            environ['HTTP_X_SERVICE_PROJECT_ID'] = project_id
            environ['HTTP_X_SERVICE_ROLES'] = ','.join(roles)
            environ['HTTP_X_SERVICE_IDENTITY_STATUS'] = 'Confirmed'
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
