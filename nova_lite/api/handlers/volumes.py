"""/v3 volumes: create, list (summary and detail), show, update, delete,
and the volume actions nova_lite serves (os-set_bootable, os-retype, the
administrator's os-force_detach, and Cinder's legacy detach markers
os-begin_detaching / os-roll_detaching).

Views are Cinder's (``nova_lite.volume.views``); URLs work with and without
the ``{project_id}`` segment (the router strips it).
"""

from oslo_utils import strutils

from nova_lite.api import microversion
from nova_lite.api import router
from nova_lite.api.schemas import volumes as schema
from nova_lite.api import util
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.volume import api as volume_api
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
    want = microversion.want(req)
    page = util.page_params(req)
    filters = {k: req.GET[k] for k in ('name', 'status', 'project_id')
               if k in req.GET}
    if 'bootable' in req.GET:
        filters['bootable'] = bool_param(req.GET['bootable'], 'bootable')
    all_tenants = ('all_tenants' in req.GET and
                   bool_param(req.GET['all_tenants'], 'all_tenants'))
    found = _api(req).get_all(ctxt, filters=filters,
                              all_tenants=all_tenants, **page)
    base = req.host_url
    if detail:
        items = [views.volume_detail(ctxt, v, want, base) for v in found]
    else:
        items = [views.volume_summary(v, base) for v in found]
    result = {'volumes': items}
    links = util.next_links(req, 'volumes', found, page['limit'],
                            'limit' in req.GET)
    if links:
        result['volumes_links'] = links
    return result


@validation.query(schema.LIST_QUERY, '3.0')
@validation.response(200, schema.LIST_RESPONSE, '3.0')
def list_volumes(req):
    return _list(req, detail=False)


@validation.query(schema.LIST_QUERY, '3.0')
@detail_responses(200, schema.many)
def list_volumes_detail(req):
    return _list(req, detail=True)


@validation.query(schema.SHOW_QUERY, '3.0')
@detail_responses(200, schema.one)
def show_volume(req, volume_id):
    ctxt = _ctxt(req)
    volume = _api(req).get(ctxt, volume_id)
    return {'volume': views.volume_detail(ctxt, volume,
                                          microversion.want(req),
                                          req.host_url)}


@validation.request_body(schema.CREATE, '3.0', '3.12')
@validation.request_body(schema.CREATE_V313, '3.13', '3.46')
@validation.request_body(schema.CREATE_V347, '3.47', '3.52')
@validation.request_body(schema.CREATE_V353, '3.53')
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
        ctxt, volume, microversion.want(req), req.host_url)})


@validation.request_body(schema.UPDATE, '3.0')
@detail_responses(200, schema.one)
def update_volume(req, volume_id, body):
    ctxt = _ctxt(req)
    data = body['volume']
    if data.get('metadata'):
        raise exception.InvalidInput(
            reason=_('volume metadata is not supported by nova_lite.'))
    values = {}
    for key, column in (('name', 'display_name'),
                        ('display_name', 'display_name'),
                        ('description', 'display_description'),
                        ('display_description', 'display_description')):
        if key in data:
            values[column] = data[key]
    volume = _api(req).update(ctxt, volume_id, values)
    return {'volume': views.volume_detail(ctxt, volume,
                                          microversion.want(req),
                                          req.host_url)}


@validation.response(202, None, '3.0')
def delete_volume(req, volume_id):
    _api(req).delete(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.SET_BOOTABLE, '3.0')
@validation.response(200, None, '3.0')
def set_bootable(req, volume_id, body):
    bootable = strutils.bool_from_string(
        body['os-set_bootable']['bootable'], strict=True)
    _api(req).update(_ctxt(req), volume_id, {'bootable': bootable})
    return router.reply(200)


@validation.request_body(schema.BEGIN_DETACHING, '3.0')
@validation.response(202, None, '3.0')
def begin_detaching(req, volume_id, body):
    _api(req).begin_detaching(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.ROLL_DETACHING, '3.0')
@validation.response(202, None, '3.0')
def roll_detaching(req, volume_id, body):
    _api(req).roll_detaching(_ctxt(req), volume_id)
    return router.reply(202)


@validation.request_body(schema.RETYPE, '3.0')
@validation.response(202, None, '3.0')
def retype(req, volume_id, body):
    data = body['os-retype']
    _api(req).retype(_ctxt(req), volume_id, data['new_type'],
                     migration_policy=data.get('migration_policy'))
    return router.reply(202)


@validation.request_body(schema.FORCE_DETACH, '3.0')
@validation.response(202, None, '3.0')
def force_detach(req, volume_id, body):
    data = body['os-force_detach']
    _api(req).force_detach(_ctxt(req), volume_id,
                           attachment_id=data.get('attachment_id'),
                           connector=data.get('connector'))
    return router.reply(202)
