"""/v2.1/servers/{server_id}/os-volume_attachments: a server's volumes.

The path id is the *volume* id. Views change at 2.70 (``tag``), 2.79
(``delete_on_termination``) and 2.89 (``attachment_id`` and ``bdm_uuid``
instead of ``id``, in list and show only) and 2.105 (``attach_mode``, ro or
rw, asked on attach and shown in list and show). Below 2.101 attach waits
for the conductor and returns 200 with the reserved device name; from 2.101
it returns 202 at once with the attachment's URL in ``Location`` (so the
2.105 mode, which only exists from 2.105, is never in a POST body).

An attach in progress is a mapping without a block-storage attachment yet
(``BlockDeviceMapping.attach_pending``). It is listed below 2.89 (without
``device`` until the host reserved one) and hidden at 2.89 to 2.104, whose
views require ``attachment_id``: Nova leaves such mappings out of the list
and answers 404 on show, so the URL a 2.101 attach returns answers 404
until block storage reserved the volume. nova_lite's 2.105 lists it again
with ``attachment_id: null``, so that a client sees its attach at once.
Legacy mappings (connected, without attachment) stay hidden from 2.89, as
in Nova.
"""

from oslo_utils import strutils

from nova_lite.api import fault
from nova_lite.api import links
from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import volume_attachments as schema
from nova_lite.api import validation
from nova_lite.compute import api as compute_api
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.policies import volumes_attachments as policies
from nova_lite import states


def _serialize(bdm, want):
    view = {'volumeId': bdm.volume_id, 'serverId': bdm.instance_uuid}
    if not want.matches(mv.ATTACHMENT_ID_VIEW):
        view['id'] = bdm.volume_id
    if bdm.device_name:
        view['device'] = bdm.device_name
    if want.matches(mv.VOLUME_ATTACHMENT_TAG_VIEW):
        view['tag'] = bdm.tag
    if want.matches(mv.ATTACH_DELETE_ON_TERMINATION):
        view['delete_on_termination'] = bdm.delete_on_termination
    if want.matches(mv.ATTACHMENT_ID_VIEW):
        view['attachment_id'] = bdm.attachment_id
        view['bdm_uuid'] = bdm.uuid
    if want.matches(mv.ATTACH_MODE):
        view['attach_mode'] = bdm.effective_attach_mode
    return view


def _listed(bdm, want):
    """Whether the view at ``want`` shows this mapping (see the module
    docstring)."""
    if not bdm.volume_id:
        return False
    if bdm.attachment_id or not want.matches(mv.ATTACHMENT_ID_VIEW):
        return True
    return want.matches(mv.ATTACH_MODE) and bdm.attach_pending


def _instance(req, ctxt, server_id, rule):
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    instance = api.get(ctxt, server_id)
    ctxt.can(rule, target={'project_id': instance.project_id})
    return api, instance


def _check_shelved_version(instance, want, method):
    """Below 2.20 a shelved server refuses volume operations (409)."""
    if (instance.vm_state in states.SHELVED_STATES and
            not want.matches(mv.SHELVED_VOLUME_OPS)):
        raise exception.InstanceInvalidState(
            attr='vm_state', instance_uuid=instance.uuid,
            state=instance.vm_state, method=method)


def _to_bool(value):
    if isinstance(value, bool):
        return value
    return strutils.bool_from_string(value, strict=True)


def _int_param(req, name):
    values = req.GET.getall(name)
    return int(values[-1]) if values else 0


@validation.query(schema.INDEX_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_LIST_QUERY))
@validation.query(schema.INDEX_QUERY_V275, mv.STRICT_LIST_QUERY)
@validation.response(200, schema.INDEX_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.VOLUME_ATTACHMENT_TAG_VIEW))
@validation.response(200, schema.INDEX_RESPONSE_V270,
                     mv.VOLUME_ATTACHMENT_TAG_VIEW,
                     mv.before(mv.ATTACH_DELETE_ON_TERMINATION))
@validation.response(200, schema.INDEX_RESPONSE_V279,
                     mv.ATTACH_DELETE_ON_TERMINATION,
                     mv.before(mv.ATTACHMENT_ID_VIEW))
@validation.response(200, schema.INDEX_RESPONSE_V289, mv.ATTACHMENT_ID_VIEW,
                     mv.before(mv.ATTACH_MODE))
@validation.response(200, schema.INDEX_RESPONSE_V2105, mv.ATTACH_MODE)
def list_volume_attachments(req, server_id):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    _api, instance = _instance(req, ctxt, server_id, policies.INDEX)
    max_limit = req.environ['nova_lite.conf'].api.max_limit
    offset = _int_param(req, 'offset')
    limit = min(max_limit, _int_param(req, 'limit') or max_limit)
    # Nova pages over all the server's mappings, then filters.
    bdms = bdm_obj.BlockDeviceMapping.get_all_by_instance(
        ctxt, instance.uuid)[offset:offset + limit]
    bdms = [b for b in bdms if _listed(b, want)]
    return {'volumeAttachments': [_serialize(b, want) for b in bdms]}


@validation.query(schema.SHOW_QUERY, mv.COMPUTE_MIN)
@validation.response(200, schema.SHOW_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.VOLUME_ATTACHMENT_TAG_VIEW))
@validation.response(200, schema.SHOW_RESPONSE_V270,
                     mv.VOLUME_ATTACHMENT_TAG_VIEW,
                     mv.before(mv.ATTACH_DELETE_ON_TERMINATION))
@validation.response(200, schema.SHOW_RESPONSE_V279,
                     mv.ATTACH_DELETE_ON_TERMINATION,
                     mv.before(mv.ATTACHMENT_ID_VIEW))
@validation.response(200, schema.SHOW_RESPONSE_V289, mv.ATTACHMENT_ID_VIEW,
                     mv.before(mv.ATTACH_MODE))
@validation.response(200, schema.SHOW_RESPONSE_V2105, mv.ATTACH_MODE)
def show_volume_attachment(req, server_id, volume_id):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    instance, bdm = api.get_with_volume_mapping(ctxt, server_id, volume_id)
    ctxt.can(policies.SHOW, target={'project_id': instance.project_id})
    if bdm is None or not _listed(bdm, want):
        raise exception.VolumeBDMNotFound(instance_uuid=instance.uuid,
                                          volume_id=volume_id)
    return {'volumeAttachment': _serialize(bdm, want)}


@validation.request_body(schema.CREATE, mv.COMPUTE_MIN,
                         mv.before(mv.VOLUME_ATTACH_TAG))
@validation.request_body(schema.CREATE_V249, mv.VOLUME_ATTACH_TAG,
                         mv.before(mv.ATTACH_DELETE_ON_TERMINATION))
@validation.request_body(schema.CREATE_V279, mv.ATTACH_DELETE_ON_TERMINATION,
                         mv.before(mv.ATTACH_MODE))
@validation.request_body(schema.CREATE_V2105, mv.ATTACH_MODE)
@validation.response(200, schema.CREATE_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.VOLUME_ATTACHMENT_TAG_VIEW))
@validation.response(200, schema.CREATE_RESPONSE_V270,
                     mv.VOLUME_ATTACHMENT_TAG_VIEW,
                     mv.before(mv.ATTACH_DELETE_ON_TERMINATION))
@validation.response(200, schema.CREATE_RESPONSE_V279,
                     mv.ATTACH_DELETE_ON_TERMINATION,
                     mv.before(mv.ASYNC_VOLUME_ATTACH))
@validation.response(202, None, mv.ASYNC_VOLUME_ATTACH)
def create_volume_attachment(req, server_id, body):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    api, instance = _instance(req, ctxt, server_id, policies.CREATE)
    _check_shelved_version(instance, want, 'attach_volume')
    attachment = body['volumeAttachment']
    volume_id = attachment['volumeId']
    tag = attachment.get('tag')
    delete_on_termination = _to_bool(
        attachment.get('delete_on_termination', False))
    is_async = want.matches(mv.ASYNC_VOLUME_ATTACH)
    try:
        device = api.volumes.attach(
            ctxt, instance, volume_id, device=attachment.get('device'),
            tag=tag, delete_on_termination=delete_on_termination,
            supports_multiattach=want.matches(mv.MULTIATTACH),
            do_cast=is_async,
            attach_mode=attachment.get('attach_mode', 'rw'))
    except exception.ServiceTooOld as exc:
        # Nova does not declare 503 for this call: clients get a 500.
        return fault.fault_response(
            500, fault.UNEXPECTED_MESSAGE % str(type(exc)))
    if is_async:
        location = links.collection_url(
            req, 'servers/%s/os-volume_attachments/%s' % (instance.uuid,
                                                          volume_id))
        return router.reply(202, headers={'Location': location})
    view = {'id': volume_id, 'serverId': instance.uuid,
            'volumeId': volume_id, 'device': device}
    if want.matches(mv.VOLUME_ATTACHMENT_TAG_VIEW):
        view['tag'] = tag
    if want.matches(mv.ATTACH_DELETE_ON_TERMINATION):
        view['delete_on_termination'] = delete_on_termination
    return {'volumeAttachment': view}


@validation.request_body(schema.UPDATE, mv.COMPUTE_MIN,
                         mv.before(mv.VOLUME_ATTACHMENT_UPDATE))
@validation.request_body(schema.UPDATE_V285, mv.VOLUME_ATTACHMENT_UPDATE)
@validation.response(202, None, mv.COMPUTE_MIN)
def update_volume_attachment(req, server_id, volume_id, body):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    instance = api.get(ctxt, server_id)
    attachment = body['volumeAttachment']
    new_volume_id = attachment['volumeId']
    only_swap = not want.matches(mv.VOLUME_ATTACHMENT_UPDATE)
    if only_swap or new_volume_id != volume_id:
        ctxt.can(policies.SWAP, target={})
    else:
        ctxt.can(policies.UPDATE, target={'project_id': instance.project_id})
    if not only_swap:
        api.volumes.update(ctxt, instance, volume_id, attachment)
    if only_swap or new_volume_id != volume_id:
        _check_shelved_version(instance, want, 'swap_volume')
        api.volumes.swap(ctxt, instance, volume_id, new_volume_id)
    return router.reply(202)


@validation.response(202, None, mv.COMPUTE_MIN)
def delete_volume_attachment(req, server_id, volume_id):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    api, instance = _instance(req, ctxt, server_id, policies.DELETE)
    _check_shelved_version(instance, want, 'detach_volume')
    api.volumes.detach(ctxt, instance, volume_id)
    return router.reply(202)
