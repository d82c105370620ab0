"""The route tables: the table of contents of the API.

``{path: {METHOD: handler}}`` per sub-API, paths relative to ``/v2.1`` and
``/v3`` (an optional ``/{project_id}`` segment is handled by the router).
``router.Action({...})`` dispatches ``POST .../action`` bodies by key.
"""

from nova_lite.api.handlers import attachments
from nova_lite.api.handlers import flavors
from nova_lite.api.handlers import instance_actions
from nova_lite.api.handlers import server_actions
from nova_lite.api.handlers import servers
from nova_lite.api.handlers import services
from nova_lite.api.handlers import volume_types
from nova_lite.api.handlers import volume_attachments
from nova_lite.api.handlers import volume_backends
from nova_lite.api.handlers import volumes
from nova_lite.api import router

COMPUTE_ROUTES = {
    '/os-services': {
        'GET': services.list_services,
    },
    # Flavors ('/flavors/detail' before '/flavors/{flavor_id}').
    '/flavors': {
        'GET': flavors.list_flavors,
    },
    '/flavors/detail': {
        'GET': flavors.list_flavors_detail,
    },
    '/flavors/{flavor_id}': {
        'GET': flavors.show_flavor,
    },
    # Servers ('/servers/detail' before '/servers/{server_id}').
    '/servers': {
        'GET': servers.list_servers,
        'POST': servers.create_server,
    },
    '/servers/detail': {
        'GET': servers.list_servers_detail,
    },
    '/servers/{server_id}': {
        'GET': servers.show_server,
        'DELETE': servers.delete_server,
    },
    '/servers/{server_id}/action': {
        'POST': router.Action(server_actions.ACTIONS),
    },
    '/servers/{server_id}/os-volume_attachments': {
        'GET': volume_attachments.list_volume_attachments,
        'POST': volume_attachments.create_volume_attachment,
    },
    '/servers/{server_id}/os-volume_attachments/{volume_id}': {
        'GET': volume_attachments.show_volume_attachment,
        'PUT': volume_attachments.update_volume_attachment,
        'DELETE': volume_attachments.delete_volume_attachment,
    },
    '/servers/{server_id}/os-instance-actions': {
        'GET': instance_actions.list_instance_actions,
    },
    '/servers/{server_id}/os-instance-actions/{request_id}': {
        'GET': instance_actions.show_instance_action,
    },
}

VOLUME_ROUTES = {
    # Volumes ('/volumes/detail' before '/volumes/{volume_id}').
    '/volumes': {
        'GET': volumes.list_volumes,
        'POST': volumes.create_volume,
    },
    '/volumes/detail': {
        'GET': volumes.list_volumes_detail,
    },
    '/volumes/{volume_id}': {
        'GET': volumes.show_volume,
        'PUT': volumes.update_volume,
        'DELETE': volumes.delete_volume,
    },
    '/volumes/{volume_id}/action': {
        'POST': router.Action({
            'os-set_bootable': volumes.set_bootable,
            'os-begin_detaching': volumes.begin_detaching,
            'os-roll_detaching': volumes.roll_detaching,
            'os-retype': volumes.retype,
            'os-force_detach': volumes.force_detach,
        }),
    },
    # Volume types and their extra specs.
    '/types': {
        'GET': volume_types.list_types,
        'POST': volume_types.create_type,
    },
    '/types/{type_id}': {
        'GET': volume_types.show_type,
        'PUT': volume_types.update_type,
        'DELETE': volume_types.delete_type,
    },
    '/types/{type_id}/extra_specs': {
        'GET': volume_types.list_extra_specs,
        'POST': volume_types.create_extra_specs,
    },
    '/types/{type_id}/extra_specs/{key}': {
        'GET': volume_types.show_extra_spec,
        'PUT': volume_types.update_extra_spec,
        'DELETE': volume_types.delete_extra_spec,
    },
    '/types/{type_id}/encryption': {
        'GET': volume_types.show_encryption,
        'POST': volume_types.create_encryption,
    },
    '/types/{type_id}/encryption/{key}': {
        'GET': volume_types.show_encryption_key,
        'PUT': volume_types.update_encryption,
        'DELETE': volume_types.delete_encryption,
    },
    # Backends (administrators): capabilities and pools.
    '/capabilities/{hostname}': {
        'GET': volume_backends.show_capabilities,
    },
    '/scheduler-stats/get_pools': {
        'GET': volume_backends.list_pools,
    },
    # Attachments (3.27+).
    '/attachments': {
        'GET': attachments.list_attachments,
        'POST': attachments.create_attachment,
    },
    '/attachments/detail': {
        'GET': attachments.list_attachments_detail,
    },
    '/attachments/{attachment_id}': {
        'GET': attachments.show_attachment,
        'PUT': attachments.update_attachment,
        'DELETE': attachments.delete_attachment,
    },
    '/attachments/{attachment_id}/action': {
        'POST': router.Action({
            'os-complete': attachments.complete_attachment,
        }),
    },
}
