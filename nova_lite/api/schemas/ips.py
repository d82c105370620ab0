"""Schemas of /v2.1/servers/{server_id}/ips (Nova's server IP addresses).

nova_lite has no networks: a server's addresses are always empty."""

from nova_lite.api.schemas import common

QUERY = common.query({}, strict=False)
QUERY_V2102 = common.query({}, strict=True)

INDEX_RESPONSE = {
    'type': 'object',
    'properties': {
        'addresses': {'type': 'object', 'additionalProperties': False},
    },
    'required': ['addresses'],
    'additionalProperties': False,
}
