"""/v2.1/os-volumes: the compute API's proxy to block storage (Nova's volume
extension), deprecated by Nova at 2.36: every route answers 404 from 2.36.

The compute API passes each request on to block storage as the caller,
through its VolumeClient (``compute.api.API.volume_client``: in-process
or over REST, as ``[volume] client`` says), after its own policy
(``os_compute_api:os-volumes:*``); block storage applies its rules and
its errors come back as they are (404 unknown volume, 400 what it
refuses), but an over-quota create is 403, as Nova answers it.

The view is Nova's translation of Cinder's (``volume_view``): camelCase
keys, and ``attachments`` holding the volume's first attachment (Nova
kept one per volume) or a single empty object when it has none.
"""

from nova_lite.api import links
from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import os_volumes as schema
from nova_lite.api import validation
from nova_lite.compute import api as compute_api
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import os_volumes as policies

COLLECTION = 'os-volumes'


def volume_view(volume):
    """Nova's view of a VolumeClient volume dict."""
    attachments = volume.get('attachments') or []
    if attachments:
        first = attachments[0]
        attachment = {'id': volume['id'], 'volumeId': volume['id'],
                      'serverId': first['server_id']}
        if first.get('device'):
            attachment['device'] = first['device']
    else:
        attachment = {}
    return {
        'id': volume['id'],
        'status': volume['status'],
        'size': volume['size'],
        'availabilityZone': volume['availability_zone'],
        'createdAt': volume['created_at'],
        'displayName': volume['name'],
        'displayDescription': volume['description'],
        'volumeType': volume['volume_type'],
        'snapshotId': volume['snapshot_id'],
        'metadata': dict(volume.get('metadata') or {}),
        'attachments': [attachment],
    }


def page(max_limit, limit=None, offset=None):
    """``(limit, offset)`` of a list as Nova pages it: ``limit`` 0 or
    absent is ``max_limit``, and never more."""
    return min(max_limit, limit or max_limit), offset or 0


def _int_param(req, name):
    values = req.GET.getall(name)
    return int(values[-1]) if values else None


def _volumes(req, rule):
    """The VolumeClient, once the compute API's policy ``rule`` allowed
    the caller."""
    ctxt = req.environ['nova_lite.context']
    ctxt.can(rule, target={'project_id': ctxt.project_id})
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    return ctxt, api.volume_client


def _list(req, rule):
    ctxt, volumes = _volumes(req, rule)
    limit, offset = page(req.environ['nova_lite.conf'].api.max_limit,
                         _int_param(req, 'limit'), _int_param(req, 'offset'))
    found = volumes.get_all(ctxt, limit=limit, offset=offset)
    return {'volumes': [volume_view(v) for v in found]}


@validation.versions(mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.response(200, schema.LIST_RESPONSE, mv.COMPUTE_MIN,
                     mv.MAX_PROXY_API)
def list_volumes(req):
    return _list(req, policies.LIST)


@validation.versions(mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.response(200, schema.LIST_RESPONSE, mv.COMPUTE_MIN,
                     mv.MAX_PROXY_API)
def list_volumes_detail(req):
    return _list(req, policies.DETAIL)


@validation.versions(mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.query(schema.SHOW_QUERY, mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.response(200, schema.SHOW_RESPONSE, mv.COMPUTE_MIN,
                     mv.MAX_PROXY_API)
def show_volume(req, volume_id):
    ctxt, volumes = _volumes(req, policies.SHOW)
    return {'volume': volume_view(volumes.get(ctxt, volume_id))}


def size_param(value):
    """The size of a create body (an integer, or digits that Nova's schema
    lets through as they are): below 1, or above what block storage
    stores, is 400 with one message whichever VolumeClient would carry
    it."""
    size = int(value)
    if size < 1:
        raise exception.InvalidInput(
            reason=_("Volume size '%s' must be an integer and greater "
                     "than 0") % value)
    if size > schema.MAX_SIZE:
        raise exception.InvalidInput(
            reason=_('size must be <= %d.') % schema.MAX_SIZE)
    return size


@validation.versions(mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.request_body(schema.CREATE, mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.response(200, schema.CREATE_RESPONSE, mv.COMPUTE_MIN,
                     mv.MAX_PROXY_API)
def create_volume(req, body):
    ctxt, volumes = _volumes(req, policies.CREATE)
    data = body['volume']
    try:
        volume = volumes.create(
            ctxt, size_param(data['size']),
            name=data.get('display_name'),
            description=data.get('display_description'),
            volume_type=data.get('volume_type'),
            metadata=data.get('metadata'),
            availability_zone=data.get('availability_zone'),
            snapshot_id=data.get('snapshot_id'))
    except exception.OverQuota as exc:
        # Cinder's 413; Nova answers 403.
        raise exception.Forbidden(message=exc.format_message())
    location = links.collection_url(req, '%s/%s' % (COLLECTION,
                                                    volume['id']))
    return router.reply(200, {'volume': volume_view(volume)},
                        headers={'Location': location})


@validation.versions(mv.COMPUTE_MIN, mv.MAX_PROXY_API)
@validation.response(202, None, mv.COMPUTE_MIN, mv.MAX_PROXY_API)
def delete_volume(req, volume_id):
    ctxt, volumes = _volumes(req, policies.DELETE)
    volumes.delete(ctxt, volume_id)
    return router.reply(202)
