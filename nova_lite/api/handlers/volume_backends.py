"""/v3 backend views for administrators: ``capabilities/{hostname}`` (what a
backend offers to volume types, e.g. multiattach) and
``scheduler-stats/get_pools`` (every backend with the capabilities it last
reported; ``volume_type`` keeps those that can host that type).

A backend is one pool in nova_lite. Pools are named in Cinder's
``host@backend#pool`` form, as ``os-vol-host-attr:host`` names their
volumes' (``drivers.volume_host``); where a backend is named (the
``hostname`` of capabilities, get_pools' ``name``), that form and the plain
backend name are both accepted.
"""

from nova_lite.api.handlers import volumes as volume_handlers
from nova_lite.api import microversion as mv
from nova_lite.api.schemas import volume_backends as schema
from nova_lite.api import validation
from nova_lite.volume import api as volume_api
from nova_lite.volume import views


def _api(req):
    return volume_api.API(req.environ['nova_lite.conf'])


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.CAPABILITIES_RESPONSE, mv.VOLUME_MIN)
def show_capabilities(req, hostname):
    name, caps = _api(req).types.backend_capabilities(
        req.environ['nova_lite.context'], hostname)
    return views.capabilities_view(name, caps)


@validation.query(schema.POOLS_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.POOLS_RESPONSE, mv.VOLUME_MIN)
def list_pools(req):
    detail = ('detail' in req.GET and
              volume_handlers.bool_param(req.GET['detail'], 'detail'))
    pools = _api(req).types.backend_pools(
        req.environ['nova_lite.context'], name=req.GET.get('name'),
        volume_type=req.GET.get('volume_type'))
    return {'pools': [views.pool_view(name, caps, detail)
                      for name, caps in pools]}
