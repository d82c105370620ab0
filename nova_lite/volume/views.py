"""Cinder's REST views of volumes, volume types and attachments.

Used by the ``/v3`` handlers and by the ``local`` VolumeClient, so that
compute sees exactly what the ``cinder`` client would read over REST.
``version`` is the request's microversion (an ``APIVersion``); ``links_base``
the URL root for ``links`` (None: no links, as for in-process callers).
"""

from oslo_serialization import jsonutils

from nova_lite import api_version
from nova_lite import context as nl_context
from nova_lite.db import secrets
from nova_lite.policies import volume_type_access as access_policies
from nova_lite.policies import volume_types as type_policies
from nova_lite.policies import volumes as volume_policies
from nova_lite import utils
from nova_lite.volume import backends as backend_conf
from nova_lite.volume import status as st

DEFAULT_AVAILABILITY_ZONE = 'nova'


def _allowed(ctxt, rule, project_id=None):
    # A policy check costs ~0.3 ms; a list view asks the same few
    # questions for every item, so the answers are kept on the context
    # (one per request) by rule and target project.
    project_id = project_id or ctxt.project_id
    cache = ctxt.__dict__.setdefault('_nova_lite_view_policy', {})
    key = (rule, project_id)
    if key not in cache:
        cache[key] = ctxt.can(rule, target={'project_id': project_id},
                              fatal=False)
    return cache[key]


def sees_hosts(ctxt):
    """Admins and services see attachment host names, as in Cinder."""
    return ctxt.is_admin or nl_context.is_service_request(ctxt)


def links(links_base, project_id, collection, item_id):
    if links_base is None:
        return []
    return [
        {'rel': 'self', 'href': '%s/v3/%s/%s/%s' % (
            links_base, project_id, collection, item_id)},
        {'rel': 'bookmark', 'href': '%s/%s/%s/%s' % (
            links_base, project_id, collection, item_id)},
    ]


def volume_attachments(ctxt, volume):
    """The volume view's ``attachments``: attached ones only."""
    show_host = sees_hosts(ctxt)
    return [{
        'id': volume.id,
        'attachment_id': a.id,
        'volume_id': volume.id,
        'server_id': a.instance_uuid,
        'host_name': a.attached_host if show_host else None,
        'device': a.mountpoint,
        'attached_at': utils.isotime(a.attach_time),
    } for a in volume.attachments if a.attach_status == st.ATTACHED]


def volume_metadata(volume):
    """The volume view's ``metadata``: the user's metadata (``{key:
    value}`` by key; none when the record was read without it,
    ``with_metadata=False``) and the administrator metadata every user
    sees (``readonly``: 'True' or 'False'), merged as Cinder shows them.
    Shown to whoever may see the volume, as in Cinder."""
    rows = volume.volume_metadata
    result = {} if rows is None else {
        row.key: row.value for row in sorted(rows, key=lambda row: row.key)}
    result.update(st.visible_admin_metadata(
        (item.key, item.value) for item in volume.admin_metadata))
    return result


def volume_summary(volume, links_base=None):
    return {
        'id': volume.id,
        'name': volume.display_name,
        'links': links(links_base, volume.project_id, 'volumes', volume.id),
    }


def volume_detail(ctxt, volume, version, links_base=None,
                  attributes=True, *, conf):
    """Cinder's detail view of ``volume``. ``attributes``: the
    ``os-vol-*-attr`` fields, which Cinder's extensions add to show and
    list detail only (not to create and update: tempest's schemas of those
    refuse them). ``conf`` names the backends' hosts:
    ``os-vol-host-attr:host`` is Cinder's ``host@backend#pool``
    (``backend_conf.volume_host``)."""
    vtype = volume.volume_type
    view = {
        'id': volume.id,
        'status': volume.status,
        'size': volume.size,
        'availability_zone': volume.availability_zone,
        'created_at': utils.isotime(volume.created_at),
        'updated_at': utils.isotime(volume.updated_at),
        'name': volume.display_name,
        'description': volume.display_description,
        'volume_type': vtype.name if vtype is not None else None,
        'snapshot_id': None,
        'source_volid': volume.source_volid,
        'metadata': volume_metadata(volume),
        'links': links(links_base, volume.project_id, 'volumes', volume.id),
        'user_id': volume.user_id,
        'bootable': str(bool(volume.bootable)).lower(),
        'encrypted': bool(volume.encrypted),
        'replication_status': None,
        'consistencygroup_id': None,
        'multiattach': bool(volume.multiattach),
        'attachments': volume_attachments(ctxt, volume),
    }
    if attributes and _allowed(ctxt, volume_policies.TENANT_ATTRIBUTE,
                               volume.project_id):
        view['os-vol-tenant-attr:tenant_id'] = volume.project_id
    if attributes and _allowed(ctxt, volume_policies.HOST_ATTRIBUTE):
        view['os-vol-host-attr:host'] = backend_conf.volume_host(
            conf, volume.host)
    if _allowed(ctxt, volume_policies.MIG_STATUS_ATTRIBUTE):
        view['migration_status'] = volume.migration_status
        if attributes:
            view['os-vol-mig-status-attr:migstat'] = volume.migration_status
            view['os-vol-mig-status-attr:name_id'] = volume.name_id
    if version.matches(api_version.GROUP_VOLUME):
        view['group_id'] = None
    if ctxt.is_admin and version.matches(
            api_version.VOLUME_DETAIL_PROVIDER_ID):
        view['provider_id'] = None
    if version.matches(api_version.SHARED_TARGETS_AND_SERVICE_FIELDS):
        view['shared_targets'] = False
        view['service_uuid'] = None
    if ctxt.is_admin and version.matches(api_version.VOLUME_CLUSTER_NAME):
        view['cluster_name'] = None
    if version.matches(api_version.VOLUME_TYPE_ID_IN_VOLUME_DETAIL):
        view['volume_type_id'] = volume.volume_type_id
    if version.matches(api_version.USE_QUOTA):
        # A migration's temporary volume uses no quota (Cinder's
        # use_quota).
        view['consumes_quota'] = not (
            volume.migration_status or '').startswith(st.TARGET_PREFIX)
    return view


def type_view(ctxt, vtype, answer='show'):
    """Cinder's view of a volume type as the ``answer`` of show (and
    list), create or update: ``qos_specs_id`` (administrators) is in show
    and list only, ``os-volume-type-access:is_public`` not in update, as
    tempest's schemas of Cinder's answers have them, and only for those
    ``volume_extension:volume_type_access`` allows (project members and
    administrators by default)."""
    view = {
        'id': vtype.id,
        'name': vtype.name,
        'description': vtype.description,
        'is_public': bool(vtype.is_public),
    }
    if answer != 'update' and _allowed(ctxt, access_policies.TYPE_ACCESS):
        view['os-volume-type-access:is_public'] = bool(vtype.is_public)
    if _allowed(ctxt, type_policies.EXTRA_SPECS):
        view['extra_specs'] = visible_extra_specs(ctxt, vtype)
    if ctxt.is_admin and answer == 'show':
        view['qos_specs_id'] = None
    return view


def encryption_view(row):
    """Cinder's encryption specs of a type ({} when it has none)."""
    if row is None:
        return {}
    return {
        'volume_type_id': row.volume_type_id,
        'encryption_id': row.encryption_id,
        'provider': row.provider,
        'control_location': row.control_location,
        'cipher': row.cipher,
        'key_size': row.key_size,
        'created_at': utils.isotime(row.created_at),
        'updated_at': utils.isotime(row.updated_at),
        'deleted': False,
        'deleted_at': None,
    }


def extra_specs_of(vtype):
    return {spec.key: spec.value for spec in vtype.extra_specs}


def visible_extra_specs(ctxt, vtype):
    specs = extra_specs_of(vtype)
    if _allowed(ctxt, type_policies.READ_SENSITIVE):
        return specs
    return {k: v for k, v in specs.items()
            if k in type_policies.USER_VISIBLE_EXTRA_SPECS}


def _normalize(value):
    # Cinder shows empty attachment times as "".
    return utils.isotime(value) if value else ''


def attachment_summary(attachment):
    return {
        'id': attachment.id,
        'status': attachment.attach_status,
        'instance': attachment.instance_uuid,
        'volume_id': attachment.volume_id,
    }


#: The credentials a ``connection_info`` may carry: the iSCSI target's
#: CHAP secrets, the cephx keyring of an ``rbd`` connection (the same
#: that the database stores encrypted).
SECRET_KEYS = secrets.SECRET_KEYS


def sees_secrets(ctxt):
    """Whether ``ctxt`` is shown the credentials of a connection: a
    service (the compute service connecting the volume) or an
    administrator; a project member is not."""
    return ctxt.is_admin or nl_context.is_service_request(ctxt)


def without_secrets(connection_info):
    """``connection_info`` without its credentials (``SECRET_KEYS``), in
    its ``data`` or, for the flat form, at its top level."""
    info = dict(connection_info)
    if isinstance(info.get('data'), dict):
        info['data'] = {k: v for k, v in info['data'].items()
                        if k not in SECRET_KEYS}
    return {k: v for k, v in info.items() if k not in SECRET_KEYS}


def attachment_detail(attachment, secrets=True):
    """The attachment's detailed view; without the connection's
    credentials unless ``secrets`` (``sees_secrets`` of the request)."""
    view = attachment_summary(attachment)
    info = (jsonutils.loads(attachment.connection_info)
            if attachment.connection_info else {})
    view.update({
        'attached_at': _normalize(attachment.attach_time),
        'detached_at': _normalize(attachment.detach_time),
        'attach_mode': attachment.attach_mode,
        'connection_info': info if secrets else without_secrets(info),
    })
    return view


# Capabilities a backend reports that a volume type may ask for, shown as
# Cinder's capabilities "properties" when the backend has them.
_PROPERTIES = {
    'multiattach': {
        'title': 'Multiattach',
        'description': 'Volumes of a type whose extra spec multiattach is '
                       '"<is> True" may be attached to several servers at '
                       'once.',
        'type': 'boolean',
    },
}


def capabilities_view(name, caps):
    """Cinder's capabilities summary of backend ``name``."""
    return {
        'namespace': 'OS::Storage::Capabilities::%s' % name,
        'vendor_name': caps.get('vendor_name'),
        'volume_backend_name': caps.get('volume_backend_name'),
        'pool_name': caps.get('pool_name'),
        'driver_version': caps.get('driver_version'),
        'storage_protocol': caps.get('storage_protocol'),
        'display_name': caps.get('display_name'),
        'description': caps.get('description'),
        'visibility': caps.get('visibility'),
        'replication_targets': caps.get('replication_targets', []),
        'properties': {key: dict(prop) for key, prop in _PROPERTIES.items()
                       if caps.get(key)},
    }


def pool_view(name, caps, detail):
    """A pool (``name``: its ``host@backend#pool``) of get_pools."""
    view = {'name': name}
    if detail:
        view['capabilities'] = dict(caps)
    return view
