"""/v3 attachments: first-class attachments (Cinder 3.27, os-complete
3.44, ``mode`` 3.54), from the add-new-attach-apis spec.

Below 3.27 every route here answers 404, as Cinder does; ``mode`` below
3.54 is an unknown property (400). From nova_lite's own 3.72 (above
Cinder's 3.71) ``GET /attachments/{id}`` adds
``shared_connections_by_attachment`` (the other attachments of the volume
on the same host), and ``DELETE`` returns it beside Cinder's list of the
volume's remaining attachments, so a host knows whether the connection is
still in use; below 3.72 both answer as Cinder's.

A connection's credentials (the CHAP secret of an iSCSI target, the cephx
keyring of an ``rbd`` one) are shown to the service that connects the
volume and to administrators only (``views.sees_secrets``): a project
member sees its attachments' ``connection_info`` without them.
"""

from nova_lite.api import microversion as mv
from nova_lite.api.handlers import volumes as volume_handlers
from nova_lite.api import router
from nova_lite.api.schemas import attachments as schema
from nova_lite.api import util
from nova_lite.api import validation
from nova_lite.volume import api as volume_api
from nova_lite.volume import views


def _api(req):
    return volume_api.API(req.environ['nova_lite.conf'])


def _ctxt(req):
    return req.environ['nova_lite.context']


def _detail(req, attachment):
    return views.attachment_detail(
        attachment, secrets=views.sees_secrets(_ctxt(req)))


def _list(req, view):
    ctxt = _ctxt(req)
    page = util.page_params(req, default_sort_dir='asc')
    filters = {}
    for param, key in (('volume_id', 'volume_id'),
                       ('instance_id', 'instance_uuid'),
                       ('status', 'attach_status'),
                       ('attach_status', 'attach_status')):
        if param in req.GET:
            filters[key] = req.GET[param]
    all_tenants = ('all_tenants' in req.GET and volume_handlers.bool_param(
        req.GET['all_tenants'], 'all_tenants'))
    found = _api(req).attachments.get_all(
        ctxt, filters=filters, all_tenants=all_tenants,
        marker=page['marker'], limit=page['limit'], offset=page['offset'],
        sort_dir=page['sort_dir'])
    result = {'attachments': [view(a) for a in found]}
    links = util.next_links(req, found, page['limit'], 'limit' in req.GET)
    if links:
        result['attachments_links'] = links
    return result


@validation.versions(mv.NEW_ATTACH)
@validation.query(schema.LIST_QUERY, mv.NEW_ATTACH)
@validation.response(200, schema.LIST_RESPONSE, mv.NEW_ATTACH)
def list_attachments(req):
    return _list(req, views.attachment_summary)


@validation.versions(mv.NEW_ATTACH)
@validation.query(schema.LIST_QUERY, mv.NEW_ATTACH)
@validation.response(200, schema.LIST_DETAIL_RESPONSE, mv.NEW_ATTACH)
def list_attachments_detail(req):
    return _list(req, lambda attachment: _detail(req, attachment))


@validation.versions(mv.NEW_ATTACH)
@validation.query(schema.SHOW_QUERY, mv.NEW_ATTACH)
@validation.response(200, schema.DETAIL_RESPONSE, mv.NEW_ATTACH,
                     mv.before(mv.SHARED_CONNECTIONS))
@validation.response(200, schema.SHOW_RESPONSE_V372, mv.SHARED_CONNECTIONS)
def show_attachment(req, attachment_id):
    attachment, shared = _api(req).attachments.get(_ctxt(req), attachment_id)
    view = _detail(req, attachment)
    if mv.want(req).matches(mv.SHARED_CONNECTIONS):
        view['shared_connections_by_attachment'] = shared
    return {'attachment': view}


@validation.versions(mv.NEW_ATTACH)
@validation.request_body(schema.CREATE, mv.NEW_ATTACH,
                         mv.before(mv.ATTACHMENT_CREATE_MODE_ARG))
@validation.request_body(schema.CREATE_V354, mv.ATTACHMENT_CREATE_MODE_ARG)
@validation.response(200, schema.DETAIL_RESPONSE, mv.NEW_ATTACH)
def create_attachment(req, body):
    data = body['attachment']
    attachment = _api(req).attachments.create(
        _ctxt(req), data['volume_uuid'], data.get('instance_uuid'),
        connector=data.get('connector'), mode=data.get('mode'))
    return {'attachment': _detail(req, attachment)}


@validation.versions(mv.NEW_ATTACH)
@validation.request_body(schema.UPDATE, mv.NEW_ATTACH)
@validation.response(200, schema.DETAIL_RESPONSE, mv.NEW_ATTACH)
def update_attachment(req, attachment_id, body):
    attachment = _api(req).attachments.update(
        _ctxt(req), attachment_id, body['attachment']['connector'])
    return {'attachment': _detail(req, attachment)}


@validation.versions(mv.NEW_ATTACH)
@validation.response(200, schema.DELETE_RESPONSE, mv.NEW_ATTACH,
                     mv.before(mv.SHARED_CONNECTIONS))
@validation.response(200, schema.DELETE_RESPONSE_V372, mv.SHARED_CONNECTIONS)
def delete_attachment(req, attachment_id):
    remaining, shared = _api(req).attachments.delete(_ctxt(req),
                                                     attachment_id)
    result = {'attachments': [views.attachment_summary(a)
                              for a in remaining]}
    if mv.want(req).matches(mv.SHARED_CONNECTIONS):
        result['shared_connections_by_attachment'] = shared
    return result


@validation.versions(mv.NEW_ATTACH_COMPLETION)
@validation.request_body(schema.COMPLETE, mv.NEW_ATTACH_COMPLETION)
@validation.response(204, None, mv.NEW_ATTACH_COMPLETION)
def complete_attachment(req, attachment_id, body):
    _api(req).attachments.complete(_ctxt(req), attachment_id)
    return router.reply(204)
