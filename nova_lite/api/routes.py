"""The route tables: the table of contents of the API.

``{path: {METHOD: handler}}`` per sub-API, paths relative to ``/v2.1`` and
``/v3`` (an optional ``/{project_id}`` segment is handled by the router).
``router.Action({...})`` dispatches ``POST .../action`` bodies by key.
"""

from nova_lite.api.handlers import services

COMPUTE_ROUTES = {
    '/os-services': {
        'GET': services.list_services,
    },
}

VOLUME_ROUTES = {
}
