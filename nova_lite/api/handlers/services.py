"""/v2.1/os-services: the services and whether each is up; (2.53) an
administrator's update of a compute service."""

from oslo_utils import strutils
from oslo_utils import uuidutils

from nova_lite.api import microversion as mv
from nova_lite.api.schemas import services as schema
from nova_lite.api import validation
from nova_lite.compute import fencing
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import service as service_obj
from nova_lite.policies import services as policies
from nova_lite import utils


def _serialize_service(svc, want, down_time):
    zone = 'nova' if svc.binary == service_obj.COMPUTE_BINARY else 'internal'
    last = svc.last_seen_up or svc.updated_at
    data = {
        'id': svc.uuid if want.matches(mv.SERVICE_UUID) else svc.id,
        'binary': svc.binary,
        'disabled_reason': svc.disabled_reason,
        'host': svc.host,
        'state': 'up' if svc.is_up(down_time) else 'down',
        'status': 'disabled' if svc.disabled else 'enabled',
        'updated_at': utils.isotime(last),
        'zone': zone,
    }
    if want.matches(mv.SERVICE_FORCED_DOWN):
        data['forced_down'] = svc.forced_down
    return data


@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.LIST_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.LIST_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.SERVICE_FORCED_DOWN))
@validation.response(200, schema.LIST_RESPONSE_V211, mv.SERVICE_FORCED_DOWN,
                     mv.before(mv.SERVICE_UUID))
@validation.response(200, schema.LIST_RESPONSE_V253, mv.SERVICE_UUID)
def list_services(req):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.LIST, target={})
    want = mv.want(req)
    binary = req.GET.get('binary')
    host = req.GET.get('host')
    conf = req.environ['nova_lite.conf']
    services = [s for s in service_obj.Service.list(ctxt, binary)
                if host is None or s.host == host]
    return {'services': [
        _serialize_service(s, want, conf.service_down_time)
        for s in services]}


@validation.versions(mv.SERVICE_UUID)
@validation.request_body(schema.UPDATE_V253, mv.SERVICE_UUID)
@validation.response(200, schema.UPDATE_RESPONSE_V253, mv.SERVICE_UUID)
def update_service(req, service_id, body):
    """Nova's 2.53 update: ``status`` (enabled, disabled with an optional
    ``disabled_reason``) and ``forced_down`` of a compute service. A host
    forced down is fenced (``nova_lite.compute.fencing``): its servers'
    volumes are detached and their deletes done without it, and the
    conductor settles its volume work in flight at once. A host forced
    down stays so (409) while it may still give a guest a volume freed
    without it (``fencing.check_let_go``)."""
    if not uuidutils.is_uuid_like(service_id):
        raise exception.InvalidInput(
            reason=_('Invalid uuid %s') % service_id)
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.UPDATE, target={})
    svc = service_obj.Service.get_by_uuid(ctxt, service_id)
    if svc.binary != service_obj.COMPUTE_BINARY:
        raise exception.InvalidInput(reason=_(
            'Updating a %(binary)s service is not supported. Only '
            '%(compute)s services can be updated.') % {
                'binary': svc.binary,
                'compute': service_obj.COMPUTE_BINARY})
    values = {}
    if 'status' in body:
        if body['status'] == 'enabled':
            if body.get('disabled_reason'):
                raise exception.InvalidInput(reason=_(
                    "Specifying 'disabled_reason' with status 'enabled' is "
                    "invalid."))
            values.update(disabled=False, disabled_reason=None)
        else:
            values.update(disabled=True,
                          disabled_reason=body.get('disabled_reason'))
    if 'forced_down' in body:
        values['forced_down'] = strutils.bool_from_string(
            body['forced_down'], strict=True)
    if not values:
        raise exception.InvalidInput(reason=_(
            "No updates were requested. Fields 'status' or 'forced_down' "
            "should be specified."))
    if svc.forced_down and values.get('forced_down') is False:
        # Let go only a host that holds no disk freed without it.
        fencing.check_let_go(ctxt, svc.host)
    svc.update_admin_state(**values)
    conf = req.environ['nova_lite.conf']
    return {'service': _serialize_service(svc, mv.want(req),
                                          conf.service_down_time)}
