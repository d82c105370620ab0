"""/v3 types: volume types, their extra specs, encryption specs and who
may use a private type.

Everyone may list and show public types, and the private types their
project has access to; creating, changing and deleting types, their extra
specs and their access lists is for administrators. Non-administrators see
only the user-visible extra specs (e.g. ``multiattach``).
"""

from oslo_utils import strutils

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import volume_types as schema
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.volume import api as volume_api
from nova_lite.volume import views


def _api(req):
    return volume_api.API(req.environ['nova_lite.conf'])


def _ctxt(req):
    return req.environ['nova_lite.context']


@validation.query(schema.LIST_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.LIST_RESPONSE, mv.VOLUME_MIN)
def list_types(req):
    ctxt = _ctxt(req)
    types = _api(req).types.get_all(ctxt, is_public=req.GET.get('is_public'))
    return {'volume_types': [views.type_view(ctxt, t) for t in types]}


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.SHOW_RESPONSE, mv.VOLUME_MIN)
def show_type(req, type_id):
    ctxt = _ctxt(req)
    if type_id == 'default':
        # Cinder's: the type a volume created without one gets.
        return {'volume_type': views.type_view(
            ctxt, _api(req).types.get_default(ctxt))}
    return {'volume_type': views.type_view(
        ctxt, _api(req).types.get(ctxt, type_id))}


@validation.request_body(schema.CREATE, mv.VOLUME_MIN)
@validation.response(200, schema.CREATE_RESPONSE, mv.VOLUME_MIN)
def create_type(req, body):
    ctxt = _ctxt(req)
    data = body['volume_type']
    is_public = strutils.bool_from_string(
        data.get('os-volume-type-access:is_public', True), strict=True)
    vtype = _api(req).types.create(
        ctxt, data['name'].strip(), description=data.get('description'),
        is_public=is_public, extra_specs=data.get('extra_specs'))
    return {'volume_type': views.type_view(ctxt, vtype, answer='create')}


@validation.request_body(schema.UPDATE, mv.VOLUME_MIN)
@validation.response(200, schema.UPDATE_RESPONSE, mv.VOLUME_MIN)
def update_type(req, type_id, body):
    ctxt = _ctxt(req)
    data = body['volume_type']
    values = {}
    if data.get('name') is not None:
        values['name'] = data['name'].strip()
    if 'description' in data:
        values['description'] = data['description']
    if 'is_public' in data:
        values['is_public'] = strutils.bool_from_string(data['is_public'],
                                                        strict=True)
    if not values:
        raise exception.InvalidInput(reason=_(
            'Specify volume type name, description, is_public or a '
            'combination thereof.'))
    vtype = _api(req).types.update(ctxt, type_id, values)
    return {'volume_type': views.type_view(ctxt, vtype, answer='update')}


@validation.response(202, None, mv.VOLUME_MIN)
def delete_type(req, type_id):
    _api(req).types.delete(_ctxt(req), type_id)
    return router.reply(202)


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.EXTRA_SPECS_RESPONSE, mv.VOLUME_MIN)
def list_extra_specs(req, type_id):
    specs = _api(req).types.extra_specs_get(_ctxt(req), type_id)
    return {'extra_specs': specs}


@validation.request_body(schema.SET_EXTRA_SPECS, mv.VOLUME_MIN)
@validation.response(200, schema.EXTRA_SPECS_RESPONSE, mv.VOLUME_MIN)
def create_extra_specs(req, type_id, body):
    specs = _api(req).types.extra_specs_update(_ctxt(req), type_id,
                                               body['extra_specs'])
    return {'extra_specs': specs}


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.EXTRA_SPEC_RESPONSE, mv.VOLUME_MIN)
def show_extra_spec(req, type_id, key):
    return _api(req).types.extra_specs_get(_ctxt(req), type_id, key=key)


@validation.request_body(schema.SET_EXTRA_SPEC, mv.VOLUME_MIN)
@validation.response(200, schema.EXTRA_SPEC_RESPONSE, mv.VOLUME_MIN)
def update_extra_spec(req, type_id, key, body):
    if key not in body:
        raise exception.InvalidInput(reason=_(
            'Request body and URI mismatch'))
    return _api(req).types.extra_specs_update(_ctxt(req), type_id,
                                              {key: body[key]}, single=True)


@validation.response(202, None, mv.VOLUME_MIN)
def delete_extra_spec(req, type_id, key):
    _api(req).types.extra_spec_delete(_ctxt(req), type_id, key)
    return router.reply(202)


# -- volume type access (private types) ---------------------------------------

@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.TYPE_ACCESS_RESPONSE, mv.VOLUME_MIN)
def list_type_access(req, type_id):
    projects = _api(req).types.access_get_all(_ctxt(req), type_id)
    return {'volume_type_access': [
        {'volume_type_id': type_id, 'project_id': project_id}
        for project_id in projects]}


@validation.request_body(schema.ADD_PROJECT_ACCESS, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def add_project_access(req, type_id, body):
    _api(req).types.access_add(_ctxt(req), type_id,
                               body['addProjectAccess']['project'])
    return router.reply(202)


@validation.request_body(schema.REMOVE_PROJECT_ACCESS, mv.VOLUME_MIN)
@validation.response(202, None, mv.VOLUME_MIN)
def remove_project_access(req, type_id, body):
    _api(req).types.access_remove(_ctxt(req), type_id,
                                  body['removeProjectAccess']['project'])
    return router.reply(202)


# -- encryption ---------------------------------------------------------------
# Cinder's shapes: GET returns the specs unwrapped ({} for none); POST and
# PUT echo the request's specs; in .../encryption/{key}, key is a spec name
# for GET and the (ignored) encryption id for PUT and DELETE.

def _echo(specs):
    specs = dict(specs)
    if specs.get('key_size') is not None:
        specs['key_size'] = int(specs['key_size'])
    return specs


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.ENCRYPTION_RESPONSE, mv.VOLUME_MIN)
def show_encryption(req, type_id):
    return views.encryption_view(_api(req).types.encryption_get(_ctxt(req),
                                                                type_id))


@validation.request_body(schema.ENCRYPTION_CREATE, mv.VOLUME_MIN)
@validation.response(200, schema.ENCRYPTION_CREATE_RESPONSE, mv.VOLUME_MIN)
def create_encryption(req, type_id, body):
    row = _api(req).types.encryption_create(_ctxt(req), type_id,
                                            body['encryption'])
    specs = _echo(body['encryption'])
    specs.update(volume_type_id=row.volume_type_id,
                 encryption_id=row.encryption_id)
    return {'encryption': specs}


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.ENCRYPTION_KEY_RESPONSE, mv.VOLUME_MIN)
def show_encryption_key(req, type_id, key):
    return _api(req).types.encryption_get(_ctxt(req), type_id, key=key)


@validation.request_body(schema.ENCRYPTION_UPDATE, mv.VOLUME_MIN)
@validation.response(200, schema.ENCRYPTION_UPDATE_RESPONSE, mv.VOLUME_MIN)
def update_encryption(req, type_id, key, body):
    _api(req).types.encryption_update(_ctxt(req), type_id, body['encryption'])
    return {'encryption': _echo(body['encryption'])}


@validation.response(202, None, mv.VOLUME_MIN)
def delete_encryption(req, type_id, key):
    _api(req).types.encryption_delete(_ctxt(req), type_id)
    return router.reply(202)
