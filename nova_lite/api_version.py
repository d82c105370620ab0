"""The microversion type, and the block-storage versions block storage reads.

Block storage (``nova_lite.volume``) never imports the API package
(``setup.cfg`` ``[importlinter:contract:volume-not-api]``), yet its views
(``volume/views.py``) change with the request's microversion and its
VolumeClient asks for fixed ones. What both sides need lives here:
``APIVersion``, the Cinder versions at which the volume detail view changes
and the versions the clients use. ``nova_lite.api.microversion`` takes them
from here and holds every other microversion of the two sub-APIs.
"""

import re

from nova_lite import exception

# At most 9 digits each: no microversion has more, and int() of a digit
# string thousands long is an error of its own.
_VERSION_RE = re.compile(r'^([1-9]\d{0,8})\.([1-9]\d{0,8}|0)$')


class APIVersion(tuple):
    """A (major, minor) microversion that compares as a tuple."""

    def __new__(cls, major, minor):
        return super().__new__(cls, (int(major), int(minor)))

    @classmethod
    def parse(cls, text):
        match = _VERSION_RE.match(text or '')
        if not match:
            raise exception.InvalidAPIVersionString(version=text)
        return cls(*match.groups())

    @property
    def major(self):
        return self[0]

    @property
    def minor(self):
        return self[1]

    def matches(self, min_version, max_version=None):
        """True if min_version <= self <= max_version (strings or tuples)."""
        if isinstance(min_version, str):
            min_version = APIVersion.parse(min_version)
        if max_version is None:
            return self >= min_version
        if isinstance(max_version, str):
            max_version = APIVersion.parse(max_version)
        return min_version <= self <= max_version

    def __str__(self):
        return '%d.%d' % self


# -- volume (/v3), Cinder's numbering ----------------------------------------
# The volume detail view (volume/views.py) adds:
GROUP_VOLUME = '3.13'                       # group_id
VOLUME_DETAIL_PROVIDER_ID = '3.21'          # provider_id (administrators)
SHARED_TARGETS_AND_SERVICE_FIELDS = '3.48'  # shared_targets, service_uuid
VOLUME_CLUSTER_NAME = '3.61'                # cluster_name (administrators)
VOLUME_TYPE_ID_IN_VOLUME_DETAIL = '3.63'    # volume_type_id
USE_QUOTA = '3.65'                          # consumes_quota
# First-class attachments:
NEW_ATTACH_COMPLETION = '3.44'              # os-complete
ATTACHMENT_CREATE_MODE_ARG = '3.54'         # create takes a mode (ro/rw)

# nova_lite's own, above Cinder's 3.71: GET /attachments/{id} and DELETE
# /attachments/{id} name the attachments sharing the host connection
# (shared_connections_by_attachment), which compute hosts read.
SHARED_CONNECTIONS = '3.72'

# The versions the VolumeClient asks for, as Nova does: volume show at 3.48,
# attachments at 3.44 (3.54 when a mode is given); an attachment's show and
# delete at 3.72 when the block storage offers it (nova_lite's).
CLIENT_VOLUME_VERSION = APIVersion.parse(SHARED_TARGETS_AND_SERVICE_FIELDS)
CLIENT_ATTACHMENT_VERSION = APIVersion.parse(NEW_ATTACH_COMPLETION)
CLIENT_ATTACHMENT_MODE_VERSION = APIVersion.parse(ATTACHMENT_CREATE_MODE_ARG)
CLIENT_SHARED_CONNECTIONS_VERSION = APIVersion.parse(SHARED_CONNECTIONS)
