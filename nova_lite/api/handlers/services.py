"""/v2.1/os-services: the services and whether each is up."""

from nova_lite.api import microversion as mv
from nova_lite.api.schemas import services as schema
from nova_lite.api import validation
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
