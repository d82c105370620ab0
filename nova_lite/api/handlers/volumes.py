"""/v3 volumes: create, list (summary and detail), show, update, delete,
and the volume actions nova_lite serves (os-set_bootable, os-extend,
os-retype, the administrator's os-force_detach, os-force_delete and
os-reset_status, and Cinder's legacy (pre-3.27) attach actions:
os-reserve / os-unreserve, os-attach / os-detach, the detach markers
os-begin_detaching / os-roll_detaching and os-update_readonly_flag). A
volume's metadata has its own routes
(``nova_lite.api.handlers.volume_metadata``); create and update set it
too, and the detail views show it.

Views are Cinder's (``nova_lite.volume.views``); URLs work with and without
the ``{project_id}`` segment (the router strips it).
"""

from oslo_utils import strutils

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import volumes as schema
from nova_lite.api import util
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.volume import api as volume_api
from nova_lite.volume import metadata as vmeta
from nova_lite.volume import views


def _api(req):
    return volume_api.API(req.environ['nova_lite.conf'])


def _ctxt(req):
    return req.environ['nova_lite.context']


def detail_responses(status, wrap):
    """One response band per Cinder volume-detail microversion band."""
    def decorator(fn):
        for low, high, item in schema.DETAIL_BANDS:
            fn = validation.response(status, wrap(item), low, high)(fn)
        return fn
    return decorator


def bool_param(value, name):
    try:
        return strutils.bool_from_string(value or 'true', strict=True)
    except ValueError:
        raise exception.InvalidInput(
            reason=_("Invalid value '%(value)s' for %(name)s") % {
                'value': value, 'name': name})


def _list(req, detail):
    ctxt = _ctxt(req)
    want = mv.want(req)
    page = util.page_params(req)
    filters = {k: req.GET[k] for k in ('name', 'status', 'project_id')
               if k in req.GET}
    if 'bootable' in req.GET:
        filters['bootable'] = bool_param(req.GET['bootable'], 'bootable')
    if 'metadata' in req.GET:
        try:
            filters['metadata'] = vmeta.parse_filter(req.GET['metadata'])
        except ValueError as e:
            raise exception.InvalidInput(reason=_(
                "Invalid value for metadata: %s") % e)
    all_tenants = ('all_tenants' in req.GET and
                   bool_param(req.GET['all_tenants'], 'all_tenants'))
    found = _api(req).get_all(ctxt, filters=filters,
                              all_tenants=all_tenants, with_metadata=detail,
                              **page)
    base = req.host_url
    if detail:
        conf = req.environ['nova_lite.conf']
        items = [views.volume_detail(ctxt, v, want, base, conf=conf)
                 for v in found]
    else:
        items = [views.volume_summary(v, base) for v in found]
    result = {'volumes': items}
    links = util.next_links(req, found, page['limit'], 'limit' in req.GET)
    if links:
        result['volumes_links'] = links
    if _with_count(req):
        result['count'] = _api(req).count(ctxt, filters=filters,
                                          all_tenants=all_tenants)
    return result


def _with_count(req):
    """Cinder's ``with_count`` (3.45): the list also says how many volumes
    match, all pages together. Ignored below 3.45, as Cinder ignores it;
    a value that is not a boolean is 400, as Cinder's
    ``get_bool_param``."""
    if ('with_count' not in req.GET or
            not mv.want(req).matches(mv.SUPPORT_COUNT_INFO)):
        return False
    value = req.GET.getall('with_count')[-1]
    if not strutils.is_valid_boolstr(value):
        raise exception.InvalidInput(reason=_(
            "Value '%(param)s' for 'with_count' is not a boolean.") % {
                'param': value})
    return strutils.bool_from_string(value, strict=True)


@validation.query(schema.LIST_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.LIST_RESPONSE, mv.VOLUME_MIN,
                     mv.before(mv.SUPPORT_COUNT_INFO))
@validation.response(200, schema.LIST_RESPONSE_V345, mv.SUPPORT_COUNT_INFO)
def list_volumes(req):
    return _list(req, detail=False)


def _list_detail_responses(fn):
    for low, high, body in schema.LIST_DETAIL_BANDS:
        fn = validation.response(200, body, low, high)(fn)
    return fn


@validation.query(schema.LIST_QUERY, mv.VOLUME_MIN)
@_list_detail_responses
def list_volumes_detail(req):
    return _list(req, detail=True)


@validation.versions(mv.VOLUME_SUMMARY)
@validation.query(schema.SUMMARY_QUERY, mv.VOLUME_SUMMARY)
@validation.response(200, schema.SUMMARY_RESPONSE, mv.VOLUME_SUMMARY,
                     mv.before(mv.VOLUME_SUMMARY_METADATA))
@validation.response(200, schema.SUMMARY_RESPONSE_V336,
                     mv.VOLUME_SUMMARY_METADATA)
def show_volume_summary(req):
    ctxt = _ctxt(req)
    all_tenants = ('all_tenants' in req.GET and
                   bool_param(req.GET['all_tenants'], 'all_tenants'))
    count, size = _api(req).summary(ctxt, all_tenants=all_tenants)
    summary = {'total_count': count, 'total_size': size}
    if mv.want(req).matches(mv.VOLUME_SUMMARY_METADATA):
        summary['metadata'] = _api(req).metadata.summary(
            ctxt, all_tenants=all_tenants)
    return {'volume-summary': summary}


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@detail_responses(200, schema.one)
def show_volume(req, volume_id):
    ctxt = _ctxt(req)
    volume = _api(req).get(ctxt, volume_id, with_metadata=True)
    return {'volume': views.volume_detail(
        ctxt, volume, mv.want(req), req.host_url,
        conf=req.environ['nova_lite.conf'])}


@validation.request_body(schema.CREATE, mv.VOLUME_MIN,
                         mv.before(mv.GROUP_VOLUME))
@validation.request_body(schema.CREATE_V313, mv.GROUP_VOLUME,
                         mv.before(mv.VOLUME_CREATE_FROM_BACKUP))
@validation.request_body(schema.CREATE_V347, mv.VOLUME_CREATE_FROM_BACKUP,
                         mv.before(mv.SUPPORT_VOLUME_SCHEMA_CHANGES))
@validation.request_body(schema.CREATE_V353, mv.SUPPORT_VOLUME_SCHEMA_CHANGES)
@detail_responses(202, schema.one)
def create_volume(req, body):
    ctxt = _ctxt(req)
    data = body['volume']
    if bool_param(data.get('multiattach') or 'false', 'multiattach'):
        raise exception.InvalidInput(reason=_(
            'multiattach parameter has been removed. The default behavior '
            'is to use multiattach enabled volume types. Contact your '
            'administrator to create a multiattach enabled volume type and '
            'use it to create multiattach volumes.'))
    size = data.get('size')
    if isinstance(size, str):
        size = int(size)
    volume = _api(req).create(
        ctxt, size,
        name=data.get('name', data.get('display_name')),
        description=data.get('description',
                             data.get('display_description')),
        volume_type=data.get('volume_type'),
        availability_zone=data.get('availability_zone'),
        image_ref=data.get('imageRef') or data.get('image_id'),
        snapshot_id=data.get('snapshot_id'),
        source_volid=data.get('source_volid'),
        backup_id=data.get('backup_id'),
        metadata=data.get('metadata'))
    return router.reply(202, {'volume': views.volume_detail(
        ctxt, volume, mv.want(req), req.host_url,
        attributes=False, conf=req.environ['nova_lite.conf'])})


@validation.request_body(schema.UPDATE, mv.VOLUME_MIN)
@detail_responses(200, schema.one)
def update_volume(req, volume_id, body):
    ctxt = _ctxt(req)
    data = body['volume']
    values = {}
    for key, column in (('name', 'display_name'),
                        ('display_name', 'display_name'),
                        ('description', 'display_description'),
                        ('display_description', 'display_description')):
        if key in data:
            values[column] = data[key]
    # Given metadata replaces the volume's whole metadata ({} clears it).
    volume = _api(req).update(ctxt, volume_id, values,
                              metadata=data.get('metadata'))
    return {'volume': views.volume_detail(
        ctxt, volume, mv.want(req), req.host_url,
        attributes=False, conf=req.environ['nova_lite.conf'])}


@validation.response(202, None, mv.VOLUME_MIN)
def delete_volume(req, volume_id):
    _api(req).delete(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.SET_BOOTABLE, mv.VOLUME_MIN)
@validation.response(200, None, mv.VOLUME_MIN)
def set_bootable(req, volume_id, body):
    bootable = strutils.bool_from_string(
        body['os-set_bootable']['bootable'], strict=True)
    _api(req).update(_ctxt(req), volume_id, {'bootable': bootable})
    return router.reply(200)


@validation.request_body(schema.BEGIN_DETACHING, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def begin_detaching(req, volume_id, body):
    _api(req).begin_detaching(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.ROLL_DETACHING, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def roll_detaching(req, volume_id, body):
    _api(req).roll_detaching(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.RESERVE, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def reserve(req, volume_id, body):
    _api(req).reserve_volume(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.UNRESERVE, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def unreserve(req, volume_id, body):
    _api(req).unreserve_volume(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.ATTACH, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def attach(req, volume_id, body):
    data = body['os-attach']
    _api(req).attach(_ctxt(req), volume_id,
                     instance_uuid=data.get('instance_uuid'),
                     host_name=data.get('host_name'),
                     mountpoint=data['mountpoint'],
                     mode=data.get('mode', 'rw'))
    return router.reply(202)


@validation.request_body(schema.DETACH, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def detach(req, volume_id, body):
    data = body['os-detach'] or {}
    _api(req).detach(_ctxt(req), volume_id,
                     attachment_id=data.get('attachment_id'))
    return router.reply(202)


@validation.request_body(schema.UPDATE_READONLY_FLAG, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def update_readonly_flag(req, volume_id, body):
    readonly = strutils.bool_from_string(
        body['os-update_readonly_flag']['readonly'], strict=True)
    _api(req).update_readonly_flag(_ctxt(req), volume_id, readonly)
    return router.reply(202)


@validation.request_body(schema.EXTEND, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def extend(req, volume_id, body):
    # The schema allows digits in a string, as Cinder's. An in-use volume
    # from 3.42, as Cinder.
    _api(req).extend(_ctxt(req), volume_id,
                     int(body['os-extend']['new_size']),
                     in_use=mv.want(req).matches(mv.VOLUME_EXTEND_INUSE))
    return router.reply(202)


@validation.request_body(schema.RETYPE, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def retype(req, volume_id, body):
    data = body['os-retype']
    _api(req).retype(_ctxt(req), volume_id, data['new_type'],
                     migration_policy=data.get('migration_policy'))
    return router.reply(202)


@validation.request_body(schema.MIGRATE, mv.VOLUME_MIN,
                         mv.before(mv.VOLUME_MIGRATE_CLUSTER))
@validation.request_body(schema.MIGRATE_V316, mv.VOLUME_MIGRATE_CLUSTER)
@validation.response(202, None, mv.VOLUME_MIN)
def migrate(req, volume_id, body):
    """Cinder's admin ``os-migrate_volume``: to another backend (a name,
    or ``host@backend[#pool]``). The answer comes once the data is copied
    (no host uses the volume) or the compute service swaps it."""
    data = body['os-migrate_volume']
    if data.get('cluster'):
        raise exception.InvalidInput(reason=_(
            'nova_lite has no clusters: give the backend as host.'))
    if not data.get('host'):
        raise exception.InvalidInput(reason=_(
            'One of host or cluster must be given.'))
    _api(req).migrate(
        _ctxt(req), volume_id, data['host'],
        force_host_copy=bool_param(str(data.get('force_host_copy', False)),
                                   'force_host_copy'),
        lock_volume=bool_param(str(data.get('lock_volume', False)),
                               'lock_volume'))
    return router.reply(202)


@validation.request_body(schema.MIGRATE_COMPLETION, mv.VOLUME_MIN)
@validation.response(200, schema.MIGRATE_COMPLETION_RESPONSE, mv.VOLUME_MIN)
def migrate_completion(req, volume_id, body):
    """Cinder's ``os-migrate_volume_completion``: the compute side's swap
    of the migrating volume is done, or failed (``error``)."""
    data = body['os-migrate_volume_completion']
    error = data.get('error') or False
    if isinstance(error, str):
        error = strutils.bool_from_string(error)
    return {'save_volume_id': _api(req).migrate_volume_completion(
        _ctxt(req), volume_id, data['new_volume'], error=error)}


@validation.request_body(schema.FORCE_DETACH, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def force_detach(req, volume_id, body):
    data = body['os-force_detach']
    _api(req).force_detach(_ctxt(req), volume_id,
                           attachment_id=data.get('attachment_id'),
                           connector=data.get('connector'))
    return router.reply(202)


@validation.request_body(schema.FORCE_DELETE, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def force_delete(req, volume_id, body):
    _api(req).force_delete(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.RESET_STATUS, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def reset_status(req, volume_id, body):
    data = body['os-reset_status']
    _api(req).reset_status(_ctxt(req), volume_id,
                           status=data.get('status'),
                           attach_status=data.get('attach_status'),
                           migration_status=data.get('migration_status'))
    return router.reply(202)
