"""/v2.1/servers: create, list, show and delete servers.

Enough of Nova's server resource for real clients and for the attach
flows: no networks (``networks: "none"``/``"auto"`` from 2.37), no image
service (``imageRef`` is an opaque UUID), existing volumes in
``block_device_mapping_v2``. Create returns 202 at once; the conductor
schedules and the compute host builds, ``status`` moving BUILD -> ACTIVE.
"""

import hashlib
import ipaddress
import re

from oslo_utils import strutils
from oslo_utils import uuidutils

from nova_lite.api import links
from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import servers as schema
from nova_lite.api import util
from nova_lite.api import validation
from nova_lite.compute import api as compute_api
from nova_lite.compute import flavors
from nova_lite.compute import names
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_fault
from nova_lite.policies import servers as policies
from nova_lite import states
from nova_lite import utils


def _view_bands(kind):
    """The server-view response schemas of every band (show or detail)."""
    def decorator(fn):
        for lo, hi, show, detail in schema.SERVER_VIEW_BANDS:
            fn = validation.response(
                200, show if kind == 'show' else detail, lo, hi)(fn)
        return fn
    return decorator


def _create_bands(fn):
    for lo, hi, body in schema.CREATE_BANDS:
        fn = validation.request_body(body, lo, hi)(fn)
    return fn


def host_id(instance):
    """Nova's ``hostId``: the host, hashed with the project."""
    if not instance.host:
        return ''
    return hashlib.sha224(
        (instance.project_id + instance.host).encode('utf-8')).hexdigest()


def _hostname(name):
    return re.sub('[^a-z0-9-]+', '-', (name or '').lower()).strip('-')[:63]


def _image(req, instance):
    if not instance.image_ref:
        return ''
    return {'id': instance.image_ref,
            'links': [links.bookmark(req, 'images', instance.image_ref)]}


def _flavor(req, instance, want):
    flavor = flavors.get(instance.flavor_id)
    if not want.matches(mv.FLAVOR_EMBEDDED):
        return {'id': flavor.flavorid,
                'links': [links.bookmark(req, 'flavors', flavor.flavorid)]}
    return {'vcpus': flavor.vcpus, 'ram': flavor.memory_mb,
            'disk': flavor.root_gb, 'ephemeral': flavor.ephemeral_gb,
            'swap': flavor.swap, 'original_name': flavor.name,
            'extra_specs': dict(flavor.extra_specs)}


def _fault(fault, is_admin):
    view = {'code': fault.code, 'created': utils.isotime(fault.created_at),
            'message': fault.message}
    if fault.details and (is_admin or fault.code != 500):
        view['details'] = fault.details
    return view


def _extended_attributes(instance, want, show_all, name_template):
    view = {}
    if show_all:
        view.update({
            'OS-EXT-SRV-ATTR:host': instance.host,
            # The name of its libvirt domain too.
            'OS-EXT-SRV-ATTR:instance_name': names.instance_name(
                name_template, instance),
            'OS-EXT-SRV-ATTR:hypervisor_hostname': instance.host,
        })
        if want.matches(mv.EXTENDED_VOLUMES_DOT):
            view.update({
                'OS-EXT-SRV-ATTR:reservation_id': instance.reservation_id,
                'OS-EXT-SRV-ATTR:launch_index': instance.launch_index,
                'OS-EXT-SRV-ATTR:kernel_id': '',
                'OS-EXT-SRV-ATTR:ramdisk_id': '',
                'OS-EXT-SRV-ATTR:root_device_name':
                    instance.root_device_name,
                'OS-EXT-SRV-ATTR:user_data': None,
            })
    if want.matches(mv.EXTENDED_VOLUMES_DOT) and (
            show_all or want.matches(mv.HOSTNAME_FOR_ALL)):
        view['OS-EXT-SRV-ATTR:hostname'] = (
            instance.hostname or _hostname(instance.display_name))
    return view


def serialize_server(req, instance, want, bdms, fault, show_extended,
                     is_admin, listing=False):
    """The detailed view of a server (``listing``: as an item of
    ``/servers/detail``, which has no ``server_groups``, as in Nova)."""
    volumes = []
    for bdm in bdms:
        if bdm.volume_id:
            item = {'id': bdm.volume_id}
            if want.matches(mv.EXTENDED_VOLUMES_DOT):
                item['delete_on_termination'] = bdm.delete_on_termination
            volumes.append(item)
    status = instance.status
    view = {
        'id': instance.uuid,
        'name': instance.display_name,
        'status': status,
        'tenant_id': instance.project_id,
        'user_id': instance.user_id,
        'metadata': instance.server_metadata or {},
        'hostId': host_id(instance),
        'image': _image(req, instance),
        'flavor': _flavor(req, instance, want),
        'created': utils.isotime(instance.created_at),
        'updated': utils.isotime(instance.updated_at or instance.created_at),
        'addresses': {},
        'accessIPv4': instance.access_ip_v4 or '',
        'accessIPv6': instance.access_ip_v6 or '',
        'links': links.resource_links(req, 'servers', instance.uuid),
        'OS-DCF:diskConfig': 'MANUAL',
        'OS-EXT-AZ:availability_zone': instance.availability_zone or '',
        'config_drive': '',
        'key_name': None,
        'OS-SRV-USG:launched_at': utils.isotime(instance.launched_at),
        'OS-SRV-USG:terminated_at': utils.isotime(instance.terminated_at),
        'OS-EXT-STS:task_state': instance.task_state,
        'OS-EXT-STS:vm_state': instance.vm_state,
        'OS-EXT-STS:power_state': instance.power_state,
        'os-extended-volumes:volumes_attached': volumes,
    }
    if status in states.PROGRESS_STATUSES:
        view['progress'] = 100 if status == 'ACTIVE' else 0
    view.update(_extended_attributes(
        instance, want, show_extended,
        req.environ['nova_lite.conf'].instance_name_template))
    if instance.vm_state in (states.ERROR, states.DELETED) and fault:
        view['fault'] = _fault(fault, is_admin)
    optional = [
        (mv.SERVER_LOCKED, 'locked', instance.locked),
        (mv.SERVER_DESCRIPTION, 'description', instance.display_description),
        (mv.SERVER_TAGS, 'tags', []),
        (mv.TRUSTED_CERTS, 'trusted_image_certificates', None),
        (mv.SERVER_GROUPS, 'server_groups', []),
        (mv.LOCKED_REASON, 'locked_reason', instance.locked_reason),
        (mv.PINNED_AZ, 'pinned_availability_zone', None),
        (mv.SCHEDULER_HINTS, 'scheduler_hints', {}),
    ]
    for first, key, value in optional:
        if want.matches(first) and not (listing and key == 'server_groups'):
            view[key] = value
    return view


def serialize_servers(req, ctxt, instances, want, listing=False):
    """Views of many servers with a fixed number of queries."""
    uuids = [i.uuid for i in instances]
    bdms = bdm_obj.BlockDeviceMapping.get_all_by_instances(ctxt, uuids)
    failed = [i.uuid for i in instances
              if i.vm_state in (states.ERROR, states.DELETED)]
    faults = instance_fault.InstanceFault.get_latest_for_instances(
        ctxt, failed)
    show_extended = ctxt.can(policies.EXTENDED_ATTRIBUTES, target={},
                             fatal=False)
    return [serialize_server(req, i, want, bdms.get(i.uuid, []),
                             faults.get(i.uuid), show_extended,
                             ctxt.is_admin, listing=listing)
            for i in instances]


def get_instance(req, ctxt, server_id, rule=None):
    """The server (404 if not the caller's) after policy ``rule``."""
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    instance = api.get(ctxt, server_id)
    if rule:
        ctxt.can(rule, target={'project_id': instance.project_id,
                               'user_id': instance.user_id})
    return api, instance


# -- list --------------------------------------------------------------------
def _select(req, ctxt, detail):
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    all_tenants = 'all_tenants' in req.GET and strutils.bool_from_string(
        req.GET.get('all_tenants') or 'True', default=True)
    if all_tenants:
        ctxt.can(policies.DETAIL_ALL_TENANTS if detail
                 else policies.INDEX_ALL_TENANTS, target={})
    limit = util.limit_param(req)
    # One row more than the page: whether there is a next one.
    instances = api.get_all(ctxt, all_tenants=all_tenants,
                            project_id=req.GET.get('project_id'),
                            status=req.GET.get('status'),
                            name=req.GET.get('name'), limit=limit + 1,
                            marker=req.GET.get('marker'))
    page = instances[:limit]
    next_links = []
    # limit=0 is an empty page, with no next one to point at.
    if page and len(instances) > limit:
        path = 'servers/detail' if detail else 'servers'
        next_links = [{'rel': 'next', 'href': '%s?limit=%d&marker=%s' % (
            links.collection_url(req, path), limit, page[-1].uuid)}]
    return page, next_links


@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.LIST_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@validation.response(200, schema.LIST_RESPONSE, mv.COMPUTE_MIN)
def list_servers(req):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.INDEX, target={'project_id': ctxt.project_id})
    page, next_links = _select(req, ctxt, detail=False)
    body = {'servers': [
        {'id': i.uuid, 'name': i.display_name,
         'links': links.resource_links(req, 'servers', i.uuid)}
        for i in page]}
    if next_links:
        body['servers_links'] = next_links
    return body


@validation.query(schema.LIST_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.LIST_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@_view_bands('detail')
def list_servers_detail(req):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.DETAIL, target={'project_id': ctxt.project_id})
    page, next_links = _select(req, ctxt, detail=True)
    body = {'servers': serialize_servers(req, ctxt, page, mv.want(req),
                                         listing=True)}
    if next_links:
        body['servers_links'] = next_links
    return body


@validation.query(schema.SHOW_QUERY, mv.COMPUTE_MIN,
                  mv.before(mv.STRICT_QUERY_PARAMS))
@validation.query(schema.SHOW_QUERY_V2102, mv.STRICT_QUERY_PARAMS)
@_view_bands('show')
def show_server(req, server_id):
    ctxt = req.environ['nova_lite.context']
    _api, instance = get_instance(req, ctxt, server_id, policies.SHOW)
    return {'server': serialize_servers(req, ctxt, [instance],
                                        mv.want(req))[0]}


# -- create ------------------------------------------------------------------
def _count(server, name, default):
    value = server.get(name)
    if value is None:
        return default
    value = int(value)
    if value < 1:
        raise exception.ValidationError(
            message=_("Invalid input for field/attribute %s. Value: %s. "
                      "0 is less than the minimum of 1") % (name, value))
    return value


def _check_networks(server):
    networks = server.get('networks')
    if networks in (None, 'none', 'auto'):
        return
    if networks:
        raise exception.InvalidInput(
            message=_('nova_lite has no networking service: request '
                      'networks "none" (or "auto", which allocates nothing) '
                      'or no networks.'))


def _access_ip(value):
    """An access address in its canonical text, as Nova stores it
    (``0000::babe:220.12.22.2`` is ``::babe:dc0c:1602``). The schema has
    checked it is an address."""
    if not value:
        return value
    return str(ipaddress.ip_address(value))


# The security groups Nova echoes for a request without any.
DEFAULT_GROUPS = ({'name': 'default'},)


def _check_security_groups(server):
    """nova_lite has no networking: the one security group there is is
    every project's ``default`` (which Nova's answer names when none is
    asked); any other is not found (400, as Nova answers what its network
    service does not find)."""
    for group in server.get('security_groups') or []:
        name = group.get('name')
        if name and name != DEFAULT_GROUPS[0]['name']:
            raise exception.InvalidInput(message=_(
                "Unable to find security_group with name or id '%s'") %
                name)


@_create_bands
@validation.response(202, schema.CREATE_RESPONSE, mv.COMPUTE_MIN)
def create_server(req, body):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    target = {'project_id': ctxt.project_id, 'user_id': ctxt.user_id}
    ctxt.can(policies.CREATE, target=target)
    server = body['server']
    bdms = server.get('block_device_mapping_v2')
    if bdms:
        ctxt.can(policies.CREATE_ATTACH_VOLUME, target=target)
    try:
        flavor = flavors.from_ref(server['flavorRef'])
    except exception.FlavorNotFound:
        raise exception.InvalidInput(
            message=_('Invalid flavorRef provided.'))
    _check_networks(server)
    _check_security_groups(server)
    min_count = _count(server, 'min_count', 1)
    max_count = _count(server, 'max_count', min_count)
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    instances, reservation_id = api.create(
        ctxt, server['name'], flavor, image_ref=server.get('imageRef') or None,
        block_device_mapping=bdms, min_count=min_count, max_count=max_count,
        availability_zone=server.get('availability_zone'),
        supports_multiattach=want.matches(mv.MULTIATTACH),
        share_multiattach=want.matches(mv.ATTACH_MODE),
        access_ip_v4=_access_ip(server.get('accessIPv4')),
        access_ip_v6=_access_ip(server.get('accessIPv6')),
        hostname=server.get('hostname'),
        description=server.get('description'),
        metadata=server.get('metadata'))
    if strutils.bool_from_string(server.get('return_reservation_id', False)):
        return router.reply(202, {'reservation_id': reservation_id})
    first = instances[0]
    server_links = links.resource_links(req, 'servers', first.uuid)
    view = {
        'id': first.uuid,
        'links': server_links,
        'OS-DCF:diskConfig': server.get('OS-DCF:diskConfig', 'MANUAL'),
        'adminPass': server.get('adminPass') or
        uuidutils.generate_uuid()[:12],
        # Echoed as Nova does (``default`` when none was asked); nova_lite
        # has no networking, so no group is applied to anything.
        'security_groups': [
            {'name': group['name']}
            for group in server.get('security_groups', DEFAULT_GROUPS)
            if group.get('name')],
    }
    return router.reply(202, {'server': view},
                        {'Location': server_links[0]['href']})


# -- update ------------------------------------------------------------------
# PUT /servers/{id} keys and the server fields they change.
_UPDATE_FIELDS = {'name': 'display_name', 'accessIPv4': 'access_ip_v4',
                  'accessIPv6': 'access_ip_v6',
                  'description': 'display_description',
                  'hostname': 'hostname'}


def _update_bands(fn):
    for lo, hi, body in schema.UPDATE_BANDS:
        fn = validation.request_body(body, lo, hi)(fn)
    for lo, hi, body in schema.UPDATE_RESPONSE_BANDS:
        fn = validation.response(200, body, lo, hi)(fn)
    return fn


@_update_bands
def update_server(req, server_id, body):
    ctxt = req.environ['nova_lite.context']
    api, instance = get_instance(req, ctxt, server_id, policies.UPDATE)
    changes = {}
    for key, field in _UPDATE_FIELDS.items():
        if key in body['server']:
            value = body['server'][key]
            if key in ('accessIPv4', 'accessIPv6'):
                value = _access_ip(value)
            changes[field] = value
    api.update(ctxt, instance, **changes)
    want = mv.want(req)
    view = serialize_servers(req, ctxt, [instance], want)[0]
    if not want.matches(mv.UPDATE_ALL_ATTRIBUTES):
        view = {k: v for k, v in view.items()
                if not (k.startswith(schema.UPDATE_HIDDEN_PREFIXES) or
                        k in schema.UPDATE_HIDDEN_KEYS)}
    return {'server': view}


# -- delete -------------------------------------------------------------------
@validation.response(204, None, mv.COMPUTE_MIN)
def delete_server(req, server_id):
    ctxt = req.environ['nova_lite.context']
    api, instance = get_instance(req, ctxt, server_id, policies.DELETE)
    api.delete(ctxt, instance)
    return router.reply(204)
