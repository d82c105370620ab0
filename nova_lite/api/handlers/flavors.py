"""/v2.1/flavors: the built-in flavors (``compute/flavors.py``).

Read only and open to every authenticated user, as in Nova. Views change at
2.55 (``description``), 2.61 (``extra_specs``), 2.75 (``swap`` is 0, not
``""``, when there is none) and 2.102 (no ``rxtx_factor`` and
``OS-FLV-DISABLED:disabled``). From 2.102 the lists take ``name``, a
regular expression the flavor's name must match (searched, not anchored,
as Nova's database ``REGEXP``).
"""

import re

from nova_lite.api import links
from nova_lite.api import microversion as mv
from nova_lite.api.schemas import flavors as schema
from nova_lite.api import validation
from nova_lite.compute import flavors
from nova_lite import exception
from nova_lite.i18n import _


def _links(req, flavor):
    return links.resource_links(req, 'flavors', flavor.flavorid)


def _brief(req, flavor, want):
    view = {'id': flavor.flavorid, 'name': flavor.name,
            'links': _links(req, flavor)}
    if want.matches(mv.FLAVOR_DESCRIPTION):
        view['description'] = flavor.description
    return view


def serialize_flavor(req, flavor, want):
    view = {
        'id': flavor.flavorid,
        'name': flavor.name,
        'ram': flavor.memory_mb,
        'disk': flavor.root_gb,
        'vcpus': flavor.vcpus,
        'links': _links(req, flavor),
        'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral_gb,
        'swap': flavor.swap
        if (flavor.swap or want.matches(mv.FLAVOR_SWAP_ZERO)) else '',
        'os-flavor-access:is_public': flavor.is_public,
    }
    if not want.matches(mv.FLAVOR_LEGACY_KEYS_REMOVED):
        view['OS-FLV-DISABLED:disabled'] = flavor.disabled
        view['rxtx_factor'] = flavor.rxtx_factor
    if want.matches(mv.FLAVOR_DESCRIPTION):
        view['description'] = flavor.description
    if want.matches(mv.FLAVOR_EXTRA_SPECS):
        view['extra_specs'] = dict(flavor.extra_specs)
    return view


def _int(req, name):
    value = req.GET.get(name)
    return int(value) if value is not None else None


def _name_matcher(req):
    """The 2.102 ``name`` filter (its last value), compiled; 400 for a
    pattern that is not a regular expression."""
    names = req.GET.getall('name')
    if not names or not mv.want(req).matches(mv.FLAVOR_NAME_FILTER):
        return None
    try:
        return re.compile(names[-1])
    except re.error as e:
        raise exception.InvalidInput(reason=_(
            "Invalid name filter [%(name)s]: %(error)s") % {
                'name': names[-1], 'error': e})


def _select(req):
    selected = flavors.get_all(min_ram=_int(req, 'minRam'),
                               min_disk=_int(req, 'minDisk'))
    name = _name_matcher(req)
    if name is not None:
        selected = [f for f in selected if name.search(f.name)]
    marker = req.GET.get('marker')
    if marker is not None:
        ids = [f.flavorid for f in selected]
        if marker not in ids:
            raise exception.MarkerNotFound(marker=marker)
        selected = selected[ids.index(marker) + 1:]
    limit = _int(req, 'limit')
    max_limit = req.environ['nova_lite.conf'].api.max_limit
    return selected[:min(limit or max_limit, max_limit)]


@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_LIST_QUERY))
@validation.query(schema.LIST_QUERY_V275, mv.STRICT_LIST_QUERY,
                  mv.before(mv.FLAVOR_NAME_FILTER))
@validation.query(schema.LIST_QUERY_V2102, mv.FLAVOR_NAME_FILTER)
@validation.response(200, schema.LIST_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.FLAVOR_DESCRIPTION))
@validation.response(200, schema.LIST_RESPONSE_V255, mv.FLAVOR_DESCRIPTION)
def list_flavors(req):
    want = mv.want(req)
    return {'flavors': [_brief(req, f, want) for f in _select(req)]}


@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_LIST_QUERY))
@validation.query(schema.LIST_QUERY_V275, mv.STRICT_LIST_QUERY,
                  mv.before(mv.FLAVOR_NAME_FILTER))
@validation.query(schema.LIST_QUERY_V2102, mv.FLAVOR_NAME_FILTER)
@validation.response(200, schema.DETAIL_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.FLAVOR_DESCRIPTION))
@validation.response(200, schema.DETAIL_RESPONSE_V255, mv.FLAVOR_DESCRIPTION,
                     mv.before(mv.FLAVOR_EXTRA_SPECS))
@validation.response(200, schema.DETAIL_RESPONSE_V261, mv.FLAVOR_EXTRA_SPECS,
                     mv.before(mv.FLAVOR_SWAP_ZERO))
@validation.response(200, schema.DETAIL_RESPONSE_V275, mv.FLAVOR_SWAP_ZERO,
                     mv.before(mv.FLAVOR_LEGACY_KEYS_REMOVED))
@validation.response(200, schema.DETAIL_RESPONSE_V2102,
                     mv.FLAVOR_LEGACY_KEYS_REMOVED)
def list_flavors_detail(req):
    want = mv.want(req)
    return {'flavors': [serialize_flavor(req, f, want)
                        for f in _select(req)]}


@validation.query(schema.SHOW_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.SHOW_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.SHOW_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.FLAVOR_DESCRIPTION))
@validation.response(200, schema.SHOW_RESPONSE_V255, mv.FLAVOR_DESCRIPTION,
                     mv.before(mv.FLAVOR_EXTRA_SPECS))
@validation.response(200, schema.SHOW_RESPONSE_V261, mv.FLAVOR_EXTRA_SPECS,
                     mv.before(mv.FLAVOR_SWAP_ZERO))
@validation.response(200, schema.SHOW_RESPONSE_V275, mv.FLAVOR_SWAP_ZERO,
                     mv.before(mv.FLAVOR_LEGACY_KEYS_REMOVED))
@validation.response(200, schema.SHOW_RESPONSE_V2102,
                     mv.FLAVOR_LEGACY_KEYS_REMOVED)
def show_flavor(req, flavor_id):
    want = mv.want(req)
    return {'flavor': serialize_flavor(req, flavors.get(flavor_id), want)}
