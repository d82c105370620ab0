"""The route tables: the table of contents of the API.

``{path: {METHOD: handler}}`` per sub-API, paths relative to ``/v2.1`` and
``/v3`` (an optional ``/{project_id}`` segment is handled by the router).
``router.Action({...})`` dispatches ``POST .../action`` bodies by key.
"""

from nova_lite.api.handlers import attachments
from nova_lite.api.handlers import availability_zones
from nova_lite.api.handlers import flavors
from nova_lite.api.handlers import instance_actions
from nova_lite.api.handlers import ips
from nova_lite.api.handlers import os_volumes
from nova_lite.api.handlers import quotas
from nova_lite.api.handlers import server_actions
from nova_lite.api.handlers import server_external_events
from nova_lite.api.handlers import servers
from nova_lite.api.handlers import services
from nova_lite.api.handlers import volume_types
from nova_lite.api.handlers import volume_attachments
from nova_lite.api.handlers import volume_backends
from nova_lite.api.handlers import volume_metadata
from nova_lite.api.handlers import volume_quotas
from nova_lite.api.handlers import volume_services
from nova_lite.api.handlers import volumes
from nova_lite.api import router

COMPUTE_ROUTES = {
    '/os-services': {
        'GET': services.list_services,
    },
    '/os-services/{service_id}': {
        'PUT': services.update_service,
    },
    '/os-availability-zone': {
        'GET': availability_zones.list_compute_zones,
    },
    '/os-availability-zone/detail': {
        'GET': availability_zones.list_compute_zones_detail,
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
        'PUT': servers.update_server,
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
    '/servers/{server_id}/ips': {
        'GET': ips.list_ips,
    },
    '/servers/{server_id}/ips/{network_label}': {
        'GET': ips.show_ips,
    },
    '/servers/{server_id}/os-instance-actions': {
        'GET': instance_actions.list_instance_actions,
    },
    '/servers/{server_id}/os-instance-actions/{request_id}': {
        'GET': instance_actions.show_instance_action,
    },
    # Other services' events about servers (Cinder's volume-extended...).
    '/os-server-external-events': {
        'POST': server_external_events.create_external_events,
    },
    # The deprecated proxy to block storage (below 2.36; '/os-volumes/detail'
    # before '/os-volumes/{volume_id}').
    '/os-volumes': {
        'GET': os_volumes.list_volumes,
        'POST': os_volumes.create_volume,
    },
    '/os-volumes/detail': {
        'GET': os_volumes.list_volumes_detail,
    },
    '/os-volumes/{volume_id}': {
        'GET': os_volumes.show_volume,
        'DELETE': os_volumes.delete_volume,
    },
    # Quotas and limits of the project's servers.
    '/os-quota-sets/{tenant_id}': {
        'GET': quotas.show_quota_set,
        'PUT': quotas.update_quota_set,
        'DELETE': quotas.delete_quota_set,
    },
    '/os-quota-sets/{tenant_id}/detail': {
        'GET': quotas.show_quota_set_detail,
    },
    '/os-quota-sets/{tenant_id}/defaults': {
        'GET': quotas.show_quota_set_defaults,
    },
    '/limits': {
        'GET': quotas.show_limits,
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
    '/volumes/summary': {
        'GET': volumes.show_volume_summary,
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
            'os-extend': volumes.extend,
            'os-retype': volumes.retype,
            'os-migrate_volume': volumes.migrate,
            'os-migrate_volume_completion': volumes.migrate_completion,
            'os-force_detach': volumes.force_detach,
            'os-force_delete': volumes.force_delete,
            'os-reset_status': volumes.reset_status,
            # Cinder's legacy (pre-3.27) attach actions.
            'os-reserve': volumes.reserve,
            'os-unreserve': volumes.unreserve,
            'os-attach': volumes.attach,
            'os-detach': volumes.detach,
            'os-update_readonly_flag': volumes.update_readonly_flag,
        }),
    },
    # A volume's metadata.
    '/volumes/{volume_id}/metadata': {
        'GET': volume_metadata.list_volume_metadata,
        'POST': volume_metadata.create_volume_metadata,
        'PUT': volume_metadata.update_volume_metadata,
    },
    '/volumes/{volume_id}/metadata/{key}': {
        'GET': volume_metadata.show_volume_metadata_item,
        'PUT': volume_metadata.update_volume_metadata_item,
        'DELETE': volume_metadata.delete_volume_metadata_item,
    },
    # Volume types, who may use private ones, and their extra specs.
    '/types': {
        'GET': volume_types.list_types,
        'POST': volume_types.create_type,
    },
    '/types/{type_id}': {
        'GET': volume_types.show_type,
        'PUT': volume_types.update_type,
        'DELETE': volume_types.delete_type,
    },
    '/types/{type_id}/action': {
        'POST': router.Action({
            'addProjectAccess': volume_types.add_project_access,
            'removeProjectAccess': volume_types.remove_project_access,
        }),
    },
    '/types/{type_id}/os-volume-type-access': {
        'GET': volume_types.list_type_access,
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
    # Block-storage services and hosts (administrators).
    '/os-services': {
        'GET': volume_services.list_services,
    },
    '/os-services/enable': {
        'PUT': volume_services.enable_service,
    },
    '/os-services/disable': {
        'PUT': volume_services.disable_service,
    },
    '/os-services/disable-log-reason': {
        'PUT': volume_services.disable_service_log_reason,
    },
    '/os-services/freeze': {
        'PUT': volume_services.freeze_host,
    },
    '/os-services/thaw': {
        'PUT': volume_services.thaw_host,
    },
    '/os-hosts': {
        'GET': volume_services.list_hosts,
    },
    '/os-hosts/{host_name}': {
        'GET': volume_services.show_host,
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
    '/os-availability-zone': {
        'GET': availability_zones.list_volume_zones,
    },
    # Quotas, quota classes and limits of the project's volumes.
    '/os-quota-sets/{target_project_id}': {
        'GET': volume_quotas.show_quota_set,
        'PUT': volume_quotas.update_quota_set,
        'DELETE': volume_quotas.delete_quota_set,
    },
    '/os-quota-sets/{target_project_id}/defaults': {
        'GET': volume_quotas.show_quota_set_defaults,
    },
    '/os-quota-class-sets/{class_name}': {
        'GET': volume_quotas.show_quota_class_set,
        'PUT': volume_quotas.update_quota_class_set,
    },
    '/limits': {
        'GET': volume_quotas.show_limits,
    },
}
