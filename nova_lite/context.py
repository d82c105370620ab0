"""RequestContext: who is asking, their project, and a database session.

The context travels with every request and every RPC message
(``nova_lite.rpc.RequestContextSerializer``). It is an enginefacade
transaction-context provider, so ``@db_api.context_manager.reader`` functions
take it as their first argument.
"""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """Security context and request information."""

    def __init__(self, user_id=None, project_id=None, is_admin=None,
                 read_deleted='no', service_catalog=None, **kwargs):
        if user_id:
            kwargs['user_id'] = user_id
        if project_id:
            kwargs['project_id'] = project_id
        super().__init__(is_admin=is_admin, **kwargs)
        if self.is_admin is None:
            self.is_admin = 'admin' in [r.lower() for r in self.roles]
        self.read_deleted = read_deleted
        self.service_catalog = service_catalog or []
        # Set by nova_lite.policy when the enforcer is built for an app.
        self.enforcer = None

    def to_dict(self):
        values = super().to_dict()
        values.update({
            'user_id': self.user_id,
            'project_id': self.project_id,
            'is_admin': self.is_admin,
            'read_deleted': self.read_deleted,
            'service_catalog': self.service_catalog,
        })
        return values

    @classmethod
    def from_dict(cls, values):
        return super().from_dict(
            values,
            user_id=values.get('user_id'),
            project_id=values.get('project_id'),
            is_admin=values.get('is_admin'),
            read_deleted=values.get('read_deleted', 'no'),
            service_catalog=values.get('service_catalog'))

    def elevated(self):
        """A copy of this context with admin rights."""
        ctx = self.from_dict(self.to_dict())
        ctx.is_admin = True
        if 'admin' not in [r.lower() for r in ctx.roles]:
            ctx.roles = list(ctx.roles) + ['admin']
        ctx.enforcer = self.enforcer
        return ctx

    def can(self, action, target=None, fatal=True):
        """Check policy ``action`` for this context.

        ``target`` defaults to the caller's own project and user. Raises
        ``PolicyNotAuthorized`` (403) when denied and ``fatal``.
        """
        if target is None:
            target = {'project_id': self.project_id,
                      'user_id': self.user_id}
        from nova_lite import policy
        return policy.authorize(self, action, target, fatal=fatal)


def get_admin_context(read_deleted='no'):
    """A context for internal work: periodic tasks, services, tools."""
    return RequestContext(user_id=None, project_id=None, is_admin=True,
                          read_deleted=read_deleted, overwrite=False,
                          roles=['admin', 'service'])


def is_service_request(ctxt):
    """A request made by another service: the ``service`` role in the
    token (noauth2's user ``service``, ``service_context``) or in
    the service token (keystone's ``X-Service-Roles``)."""
    roles = [r.lower() for r in ctxt.roles or []]
    service_roles = [r.lower() for r in
                     getattr(ctxt, 'service_roles', None) or []]
    return 'service' in roles or 'service' in service_roles


def service_context(ctxt):
    """A copy of ``ctxt`` that acts as the compute service on the user's
    behalf: same user and project, plus the ``service`` role."""
    svc = ctxt.from_dict(ctxt.to_dict())
    if 'service' not in [r.lower() for r in svc.roles]:
        svc.roles = list(svc.roles) + ['service']
    svc.enforcer = getattr(ctxt, 'enforcer', None)
    return svc
