"""/v2.1/os-availability-zone and /v3/os-availability-zone.

nova_lite has one availability zone, ``nova``, for servers and volumes (as
a Nova and a Cinder without zones configured). The compute list names it
while a compute service is up; the detail (administrators) also lists the
``internal`` zone of the other services, with each service's state.
"""

from nova_lite.api import microversion as mv
from nova_lite.api.schemas import availability_zones as schema
from nova_lite.api import validation
from nova_lite.compute import checks as compute_checks
from nova_lite.objects import service as service_obj
from nova_lite.policies import availability_zones as policies
from nova_lite import utils
from nova_lite.volume import views as volume_views

INTERNAL = 'internal'


def _services(req):
    conf = req.environ['nova_lite.conf']
    ctxt = req.environ['nova_lite.context']
    return [(s, s.is_up(conf.service_down_time))
            for s in service_obj.Service.list(ctxt, None)]


@validation.query(schema.QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.COMPUTE_LIST_RESPONSE, mv.COMPUTE_MIN)
def list_compute_zones(req):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.COMPUTE_LIST, target={})
    up = any(alive for svc, alive in _services(req)
             if svc.binary == service_obj.COMPUTE_BINARY)
    return {'availabilityZoneInfo': [{
        'zoneName': compute_checks.DEFAULT_AVAILABILITY_ZONE,
        'zoneState': {'available': up}, 'hosts': None}]}


@validation.query(schema.QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.COMPUTE_DETAIL_RESPONSE, mv.COMPUTE_MIN)
def list_compute_zones_detail(req):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.COMPUTE_DETAIL, target={})
    zones = {compute_checks.DEFAULT_AVAILABILITY_ZONE: {}, INTERNAL: {}}
    for svc, alive in _services(req):
        zone = (compute_checks.DEFAULT_AVAILABILITY_ZONE
                if svc.binary == service_obj.COMPUTE_BINARY else INTERNAL)
        zones[zone].setdefault(svc.host, {})[svc.binary] = {
            'available': alive, 'active': not svc.disabled,
            'updated_at': utils.isotime(svc.last_seen_up or svc.updated_at)}
    return {'availabilityZoneInfo': [
        {'zoneName': name,
         'zoneState': {'available': any(
             state['available'] for host in hosts.values()
             for state in host.values())},
         'hosts': hosts or None}
        for name, hosts in zones.items() if hosts or
        name == compute_checks.DEFAULT_AVAILABILITY_ZONE]}


@validation.query(schema.QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.VOLUME_LIST_RESPONSE, mv.VOLUME_MIN)
def list_volume_zones(req):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.VOLUME_LIST, target={})
    return {'availabilityZoneInfo': [{
        'zoneName': volume_views.DEFAULT_AVAILABILITY_ZONE,
        'zoneState': {'available': True}}]}
