"""/v2.1/servers/{server_id}/ips: a server's IP addresses by network.

nova_lite attaches volumes and has no networks, so a server has no
addresses: the list is ``{"addresses": {}}`` (what Nova answers for a
server created with ``networks: none``) and no network label exists
(404). Clients such as tempest read it after creating a server.
"""

from nova_lite.api.handlers import servers
from nova_lite.api import microversion as mv
from nova_lite.api.schemas import ips as schema
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import ips as policies


@validation.query(schema.QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.INDEX_RESPONSE, mv.COMPUTE_MIN)
def list_ips(req, server_id):
    ctxt = req.environ['nova_lite.context']
    servers.get_instance(req, ctxt, server_id, policies.INDEX)
    return {'addresses': {}}


@validation.query(schema.QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.INDEX_RESPONSE, mv.COMPUTE_MIN)
def show_ips(req, server_id, network_label):
    ctxt = req.environ['nova_lite.context']
    servers.get_instance(req, ctxt, server_id, policies.SHOW)
    raise exception.NotFound(message=_(
        'Instance is not a member of specified network'))
