"""Policy defaults in code, one module per resource.

``list_rules()`` is the ``oslo.policy.policies`` entry point used by
``tox -e genpolicy`` and by ``nova_lite.policy``. A resource module adds
itself to ``_MODULES``.
"""

import itertools

from nova_lite.policies import attachments
from nova_lite.policies import availability_zones
from nova_lite.policies import base
from nova_lite.policies import deferred_delete
from nova_lite.policies import instance_actions
from nova_lite.policies import ips
from nova_lite.policies import lock_server
from nova_lite.policies import os_volumes
from nova_lite.policies import pause_server
from nova_lite.policies import quotas
from nova_lite.policies import server_external_events
from nova_lite.policies import servers
from nova_lite.policies import services
from nova_lite.policies import shelve
from nova_lite.policies import volume_backends
from nova_lite.policies import volume_metadata
from nova_lite.policies import volume_services
from nova_lite.policies import volume_type_access
from nova_lite.policies import volume_types
from nova_lite.policies import volumes
from nova_lite.policies import volumes_attachments

_MODULES = [base, services, volumes, volume_metadata, volume_types,
            volume_type_access, attachments, servers, lock_server,
            pause_server, volumes_attachments, instance_actions,
            volume_backends, shelve, deferred_delete, quotas, ips,
            availability_zones, os_volumes, volume_services,
            server_external_events]


def register(module):
    """Used by feature modules that are imported lazily (none yet)."""
    if module not in _MODULES:
        _MODULES.append(module)


def list_rules():
    return list(itertools.chain.from_iterable(
        m.list_rules() for m in _MODULES))
