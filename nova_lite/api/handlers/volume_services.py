"""/v3 os-services and os-hosts: the block-storage services and hosts,
for administrators, under Cinder's names.

What they stand for in nova_lite (``cinder-scheduler`` and one
``cinder-volume`` per backend for each conductor) is explained in
``nova_lite.volume.services``.
"""

from nova_lite.api import microversion as mv
from nova_lite.api.schemas import volume_services as schema
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import volume_services as policies
from nova_lite import utils
from nova_lite.volume import services as volume_services


def _ctxt_conf(req, rule):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(rule, target={})
    return ctxt, req.environ['nova_lite.conf']


def _serialize_service(conf, svc, want):
    data = {
        'binary': svc.binary,
        'host': svc.host,
        'zone': svc.zone,
        'status': 'disabled' if svc.disabled else 'enabled',
        'state': 'up' if svc.up else 'down',
        'updated_at': utils.isotime(svc.updated_at),
        'disabled_reason': svc.disabled_reason,
    }
    if want.matches(mv.CLUSTER_SUPPORT):
        data['cluster'] = None
    if svc.binary == volume_services.VOLUME_BINARY:
        # nova_lite has no replication and never freezes a backend.
        data.update(replication_status='disabled', active_backend_id=None,
                    frozen=False)
        if want.matches(mv.BACKEND_STATE_REPORT):
            data['backend_state'] = volume_services.backend_state(
                conf, svc.backend)
    return data


@validation.query(schema.LIST_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.LIST_RESPONSE, mv.VOLUME_MIN,
                     mv.before(mv.CLUSTER_SUPPORT))
@validation.response(200, schema.LIST_RESPONSE_V37, mv.CLUSTER_SUPPORT,
                     mv.before(mv.BACKEND_STATE_REPORT))
@validation.response(200, schema.LIST_RESPONSE_V349, mv.BACKEND_STATE_REPORT)
def list_services(req):
    ctxt, conf = _ctxt_conf(req, policies.SERVICES_INDEX)
    services = volume_services.get_all(
        ctxt, conf, host=req.GET.get('host') or None,
        binary=req.GET.get('binary') or req.GET.get('service') or None)
    want = mv.want(req)
    return {'services': [_serialize_service(conf, s, want)
                         for s in services]}


def _update(req, body, disabled, reason=None):
    ctxt, conf = _ctxt_conf(req, policies.SERVICES_UPDATE)
    binary = body.get('binary') or body.get('service')
    if not binary:
        raise exception.InvalidInput(reason=_(
            "Missing required element 'binary' in request body."))
    svc = volume_services.set_status(ctxt, conf, body['host'], binary,
                                     disabled, reason)
    return {'host': svc.host, 'service': svc.binary, 'binary': svc.binary,
            'disabled': svc.disabled,
            'status': 'disabled' if svc.disabled else 'enabled'}


@validation.request_body(schema.UPDATE, mv.VOLUME_MIN)
@validation.response(200, schema.ENABLE_RESPONSE, mv.VOLUME_MIN)
def enable_service(req, body):
    return dict(_update(req, body, False), disabled_reason=None)


@validation.request_body(schema.UPDATE, mv.VOLUME_MIN)
@validation.response(200, schema.DISABLE_RESPONSE, mv.VOLUME_MIN)
def disable_service(req, body):
    return _update(req, body, True)


@validation.request_body(schema.UPDATE_WITH_REASON, mv.VOLUME_MIN)
@validation.response(200, schema.ENABLE_RESPONSE, mv.VOLUME_MIN)
def disable_service_log_reason(req, body):
    reason = body['disabled_reason'].strip()
    return dict(_update(req, body, True, reason), disabled_reason=reason)


def _refuse_freeze(req, body, what):
    ctxt, conf = _ctxt_conf(req, policies.SERVICES_UPDATE)
    volume_services.check_known_host(ctxt, conf, body['host'])
    raise exception.InvalidInput(reason=_(
        'nova_lite has no replication: %s a backend is not supported.') %
        what)


@validation.request_body(schema.FREEZE, mv.VOLUME_MIN)
@validation.response(200, None, mv.VOLUME_MIN)
def freeze_host(req, body):
    _refuse_freeze(req, body, _('freezing'))


@validation.request_body(schema.FREEZE, mv.VOLUME_MIN)
@validation.response(200, None, mv.VOLUME_MIN)
def thaw_host(req, body):
    _refuse_freeze(req, body, _('thawing'))


@validation.query(schema.HOSTS_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.HOSTS_RESPONSE, mv.VOLUME_MIN)
def list_hosts(req):
    """Cinder's host list: the enabled services, each with its host."""
    ctxt, conf = _ctxt_conf(req, policies.HOSTS)
    service = req.GET.get('service') or None
    zone = req.GET.get('zone') or None
    return {'hosts': [{
        'host_name': s.host,
        'service': s.binary,
        'zone': s.zone,
        'service-status': 'available' if s.up else 'unavailable',
        'service-state': 'enabled',
        'last-update': utils.isotime(s.updated_at),
    } for s in volume_services.get_all(ctxt, conf)
        if not s.disabled and (service is None or s.binary == service) and
        (zone is None or s.zone == zone)]}


@validation.query(schema.HOST_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.HOST_RESPONSE, mv.VOLUME_MIN)
def show_host(req, host_name):
    """Volumes and gigabytes on a volume host: ``(total)``, then per
    project (nova_lite has no snapshots: 0)."""
    ctxt, conf = _ctxt_conf(req, policies.HOSTS)
    return {'host': [{'resource': {
        'host': host_name,
        'project': project,
        'volume_count': str(count),
        'total_volume_gb': str(gigabytes),
        'snapshot_count': '0',
        'total_snapshot_gb': '0',
    }} for project, count, gigabytes in volume_services.host_usage(
        ctxt, conf, host_name)]}
