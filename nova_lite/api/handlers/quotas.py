"""/v2.1/os-quota-sets and /v2.1/limits: the compute quotas
(``nova_lite.compute.quotas``)."""

from oslo_utils import strutils

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import quotas as schema
from nova_lite.api import validation
from nova_lite.compute import quotas
from nova_lite.policies import quotas as policies
from nova_lite import quota


def _ctxt(req):
    return req.environ['nova_lite.context']


def _names(want):
    """The resources of the quota set at this microversion."""
    names = list(quotas.CURRENT)
    if not want.matches(mv.NO_INJECTED_FILES):
        names += list(quotas.INJECTED)
    if not want.matches(mv.NO_NETWORK_PROXIES):
        names += list(quotas.NETWORK)
    return names


def _quota_set(values, names, project_id=None):
    body = {name: values[name] for name in names}
    if project_id is not None:
        body['id'] = project_id
    return {'quota_set': body}


@validation.query(schema.SHOW_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.SHOW_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.SHOW_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.NO_NETWORK_PROXIES))
@validation.response(200, schema.SHOW_RESPONSE_V236, mv.NO_NETWORK_PROXIES,
                     mv.before(mv.NO_INJECTED_FILES))
@validation.response(200, schema.SHOW_RESPONSE_V257, mv.NO_INJECTED_FILES)
def show_quota_set(req, tenant_id):
    # ``user_id`` is accepted and answered with the project's quotas
    # (as Nova's unified limits do: there are no per-user quotas).
    ctxt = _ctxt(req)
    ctxt.can(policies.COMPUTE_SHOW, target={'project_id': tenant_id})
    conf = req.environ['nova_lite.conf']
    return _quota_set(quotas.limits(ctxt, conf, tenant_id),
                      _names(mv.want(req)), tenant_id)


@validation.query(schema.SHOW_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.SHOW_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.DETAIL_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.NO_NETWORK_PROXIES))
@validation.response(200, schema.DETAIL_RESPONSE_V236, mv.NO_NETWORK_PROXIES,
                     mv.before(mv.NO_INJECTED_FILES))
@validation.response(200, schema.DETAIL_RESPONSE_V257, mv.NO_INJECTED_FILES)
def show_quota_set_detail(req, tenant_id):
    ctxt = _ctxt(req)
    ctxt.can(policies.COMPUTE_DETAIL, target={'project_id': tenant_id})
    conf = req.environ['nova_lite.conf']
    limits = quotas.limits(ctxt, conf, tenant_id)
    used = quotas.usage(ctxt, tenant_id)
    detail = {name: {'limit': limit, 'in_use': used.get(name, 0),
                     'reserved': 0}
              for name, limit in limits.items()}
    return _quota_set(detail, _names(mv.want(req)), tenant_id)


@validation.query(schema.DEFAULTS_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.DEFAULTS_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.SHOW_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.NO_NETWORK_PROXIES))
@validation.response(200, schema.SHOW_RESPONSE_V236, mv.NO_NETWORK_PROXIES,
                     mv.before(mv.NO_INJECTED_FILES))
@validation.response(200, schema.SHOW_RESPONSE_V257, mv.NO_INJECTED_FILES)
def show_quota_set_defaults(req, tenant_id):
    ctxt = _ctxt(req)
    ctxt.can(policies.COMPUTE_DEFAULTS, target={'project_id': tenant_id})
    return _quota_set(quotas.defaults(req.environ['nova_lite.conf']),
                      _names(mv.want(req)), tenant_id)


@validation.request_body(schema.UPDATE, mv.COMPUTE_MIN,
                         mv.before(mv.NO_NETWORK_PROXIES))
@validation.request_body(schema.UPDATE_V236, mv.NO_NETWORK_PROXIES,
                         mv.before(mv.NO_INJECTED_FILES))
@validation.request_body(schema.UPDATE_V257, mv.NO_INJECTED_FILES)
@validation.response(200, schema.UPDATE_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.NO_NETWORK_PROXIES))
@validation.response(200, schema.UPDATE_RESPONSE_V236, mv.NO_NETWORK_PROXIES,
                     mv.before(mv.NO_INJECTED_FILES))
@validation.response(200, schema.UPDATE_RESPONSE_V257, mv.NO_INJECTED_FILES)
def update_quota_set(req, tenant_id, body):
    ctxt = _ctxt(req)
    ctxt.can(policies.COMPUTE_UPDATE, target={'project_id': tenant_id})
    conf = req.environ['nova_lite.conf']
    data = dict(body['quota_set'])
    force = strutils.bool_from_string(data.pop('force', False), strict=True)
    values = {name: quota.parse_limit(value, name)
              for name, value in data.items()}
    quotas.update(ctxt, conf, tenant_id, values, force=force)
    return _quota_set(quotas.limits(ctxt, conf, tenant_id),
                      _names(mv.want(req)))


@validation.response(202, None, mv.COMPUTE_MIN)
def delete_quota_set(req, tenant_id):
    ctxt = _ctxt(req)
    ctxt.can(policies.COMPUTE_DELETE, target={'project_id': tenant_id})
    quotas.delete(ctxt, tenant_id)
    return router.reply(202)


@validation.query(schema.LIMITS_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.LIMITS_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.LIMITS_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.NO_NETWORK_PROXIES))
@validation.response(200, schema.LIMITS_RESPONSE_V236, mv.NO_NETWORK_PROXIES,
                     mv.before(mv.NO_IMAGE_META_LIMIT))
@validation.response(200, schema.LIMITS_RESPONSE_V239, mv.NO_IMAGE_META_LIMIT,
                     mv.before(mv.NO_INJECTED_FILES))
@validation.response(200, schema.LIMITS_RESPONSE_V257, mv.NO_INJECTED_FILES)
def show_limits(req):
    ctxt = _ctxt(req)
    ctxt.can(policies.COMPUTE_LIMITS, target={'project_id': ctxt.project_id})
    project_id = ctxt.project_id
    if 'tenant_id' in req.GET and req.GET['tenant_id'] != project_id:
        ctxt.can(policies.COMPUTE_LIMITS_OTHER_PROJECT,
                 target={'project_id': req.GET['tenant_id']})
        project_id = req.GET['tenant_id']
    want = mv.want(req)
    limits = quotas.limits(ctxt, req.environ['nova_lite.conf'], project_id)
    used = quotas.usage(ctxt, project_id)
    absolute = {
        'maxServerMeta': limits['metadata_items'],
        'maxTotalCores': limits['cores'],
        'maxTotalInstances': limits['instances'],
        'maxTotalRAMSize': limits['ram'],
        'maxTotalKeypairs': limits['key_pairs'],
        'maxServerGroups': limits['server_groups'],
        'maxServerGroupMembers': limits['server_group_members'],
        'totalCoresUsed': used['cores'],
        'totalRAMUsed': used['ram'],
        'totalInstancesUsed': used['instances'],
        'totalServerGroupsUsed': 0,
    }
    if not want.matches(mv.NO_INJECTED_FILES):
        absolute['maxPersonality'] = limits['injected_files']
        absolute['maxPersonalitySize'] = limits[
            'injected_file_content_bytes']
    if not want.matches(mv.NO_IMAGE_META_LIMIT):
        absolute['maxImageMeta'] = limits['metadata_items']
    if not want.matches(mv.NO_NETWORK_PROXIES):
        absolute.update(
            maxTotalFloatingIps=limits['floating_ips'],
            totalFloatingIpsUsed=0,
            maxSecurityGroups=limits['security_groups'],
            totalSecurityGroupsUsed=0,
            maxSecurityGroupRules=limits['security_group_rules'])
    return {'limits': {'rate': [], 'absolute': absolute}}
