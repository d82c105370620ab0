"""/v3 volume metadata: ``/volumes/{volume_id}/metadata[/{key}]``.

Cinder's answers: GET, POST (keys added; the whole metadata answered) and
PUT (the whole metadata replaced) of ``{"metadata": {...}}``; GET and PUT
of one key as ``{"meta": {key: value}}`` (the body's one key must be the
URL's: 400 otherwise); DELETE of one key answers 200 with no body (404
when there is no such key). From 3.15 the metadata's GET carries an
``Etag`` and its PUTs honour ``If-Match`` (412 when the metadata changed).
The rules are in ``nova_lite.volume.metadata_api``.
"""

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import volume_metadata as schema
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.volume import api as volume_api
from nova_lite.volume import metadata as vmeta


def _api(req):
    return volume_api.API(req.environ['nova_lite.conf'])


def _ctxt(req):
    return req.environ['nova_lite.context']


def _if_match(req):
    """The ETags of the request's If-Match (3.15+), or None: no header,
    ``*``, or an older microversion (the header is then ignored, as in
    Cinder)."""
    if not mv.want(req).matches(mv.ETAGS):
        return None
    header = req.if_match
    if not header:     # webob's AnyETag: no header, or "*"
        return None
    return list(header.etags)


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.METADATA_RESPONSE, mv.VOLUME_MIN)
def list_volume_metadata(req, volume_id):
    metadata = _api(req).metadata.get(_ctxt(req), volume_id)
    headers = {}
    if mv.want(req).matches(mv.ETAGS):
        headers['Etag'] = '"%s"' % vmeta.etag(metadata)
    return router.reply(200, {'metadata': metadata}, headers)


@validation.request_body(schema.SET, mv.VOLUME_MIN)
@validation.response(200, schema.METADATA_RESPONSE, mv.VOLUME_MIN)
def create_volume_metadata(req, volume_id, body):
    return {'metadata': _api(req).metadata.create(
        _ctxt(req), volume_id, body['metadata'])}


@validation.request_body(schema.SET, mv.VOLUME_MIN)
@validation.response(200, schema.METADATA_RESPONSE, mv.VOLUME_MIN)
def update_volume_metadata(req, volume_id, body):
    return {'metadata': _api(req).metadata.update(
        _ctxt(req), volume_id, body['metadata'], replace=True,
        if_match=_if_match(req))}


@validation.query(schema.SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.ITEM_RESPONSE, mv.VOLUME_MIN)
def show_volume_metadata_item(req, volume_id, key):
    metadata = _api(req).metadata.get(_ctxt(req), volume_id)
    if key not in metadata:
        raise exception.VolumeMetadataNotFound(volume_id=volume_id,
                                               metadata_key=key)
    return {'meta': {key: metadata[key]}}


@validation.request_body(schema.SET_ITEM, mv.VOLUME_MIN)
@validation.response(200, schema.ITEM_RESPONSE, mv.VOLUME_MIN)
def update_volume_metadata_item(req, volume_id, key, body):
    item = body['meta']
    if key not in item:
        raise exception.InvalidInput(reason=_(
            'Request body and URI mismatch'))
    _api(req).metadata.update(_ctxt(req), volume_id, item,
                              if_match=_if_match(req))
    return {'meta': item}


@validation.response(200, None, mv.VOLUME_MIN)
def delete_volume_metadata_item(req, volume_id, key):
    _api(req).metadata.delete(_ctxt(req), volume_id, key)
    return router.reply(200)
