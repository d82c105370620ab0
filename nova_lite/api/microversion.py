"""Microversions of the two sub-APIs, as data.

``COMPUTE`` follows Nova's numbering for everything Nova has; versions above
Nova's are nova_lite's own and each names its feature. ``VOLUME`` follows
Cinder's.

Every version at which something nova_lite serves changes has a named
constant below, with what it changed; ``COMPUTE_MIN``/``COMPUTE_MAX`` and
``VOLUME_MIN``/``VOLUME_MAX`` bound the two ranges. Handlers gate a feature
with its constant (``want.matches(SHELVED_VOLUME_OPS)``) and declare their
bands with the ``nova_lite.api.validation`` decorators, a band that ends
where a feature begins ending at ``before(FEATURE)``.

In ``nova_lite/`` a microversion is written as a value only here and in
``nova_lite/api_version.py``, which holds ``APIVersion`` and the versions
block storage reads (block storage may not import this package); this
module takes them from there. ``tests/unit/test_microversion_literals.py``
keeps it so. Elsewhere versions are named in prose (docstrings, comments),
in ``api-ref/source``, the docs, the release notes and the tests.
"""

import microversion_parse

from nova_lite import api_version
from nova_lite import exception
from nova_lite.i18n import _

ENVIRON_KEY = 'nova_lite.microversion'

# The version type lives outside the API package: block storage uses it.
APIVersion = api_version.APIVersion


class ServiceVersions(object):
    """The version range and headers of one sub-API."""

    def __init__(self, service_type, versions, legacy_header=None,
                 first_match=False, missing_entry_is_error=False):
        self.service_type = service_type
        self.versions = [APIVersion.parse(v) for v in versions]
        self.min = self.versions[0]
        self.max = self.versions[-1]
        self.legacy_header = legacy_header
        # Cinder takes the first matching entry of the standard header and
        # refuses a header without one; Nova takes the last and defaults.
        self.first_match = first_match
        self.missing_entry_is_error = missing_entry_is_error

    def _from_standard_header(self, headers):
        raw = headers.get('OpenStack-API-Version')
        if raw is None:
            return None
        entries = [e.strip().split(None, 1) for e in raw.split(',')]
        found = [e[1].strip() for e in entries
                 if len(e) == 2 and e[0].lower() == self.service_type]
        if not found:
            if self.missing_entry_is_error:
                raise exception.InvalidInput(
                    reason=_("The OpenStack-API-Version header has no "
                             "'%s' entry.") % self.service_type)
            return None
        return found[0] if self.first_match else found[-1]

    def from_headers(self, headers):
        """The requested APIVersion; raises 400 or 406 errors."""
        text = self._from_standard_header(headers)
        if text is None and self.legacy_header:
            text = microversion_parse.check_legacy_headers(
                microversion_parse.fold_headers(dict(headers)),
                [self.legacy_header])
        if text is None:
            return self.min
        if text.strip().lower() == 'latest':
            return self.max
        version = APIVersion.parse(text.strip())
        if not version.matches(self.min, self.max):
            raise exception.InvalidGlobalAPIVersion(
                req_ver=str(version), min_ver=str(self.min),
                max_ver=str(self.max))
        return version

    def response_headers(self, version):
        """Headers echoed on every versioned response."""
        headers = [('OpenStack-API-Version',
                    '%s %s' % (self.service_type, version)),
                   ('Vary', 'OpenStack-API-Version')]
        if self.legacy_header:
            headers += [(self.legacy_header, str(version)),
                        ('Vary', self.legacy_header)]
        return headers


# -- compute (/v2.1) -------------------------------------------------------
# Nova's numbering. The resources nova_lite serves change at these versions
# (API-CONTRACT.md 2.1); the other Nova versions in between are accepted and
# change nothing in nova_lite. Several features may share a version.
COMPUTE_MIN = '2.1'                  # the first: Nova's v2.1 API
EXTENDED_VOLUMES_DOT = '2.3'         # server: delete_on_termination, SRV-ATTR
SERVER_LOCKED = '2.9'                # server view: locked
SERVICE_FORCED_DOWN = '2.11'         # os-services: forced_down
SERVER_DESCRIPTION = '2.19'          # servers: description
SHELVED_VOLUME_OPS = '2.20'          # attach/detach while shelved(_offloaded)
ACTIONS_OF_DELETED_SERVERS = '2.21'  # instance actions of deleted servers
SERVER_TAGS = '2.26'                 # server view: tags (always [])
BDM_TAG = '2.32'                     # create: tag in mappings and networks
BDM_TAG_REMOVED = '2.33'             # create: no tag (Nova's bug, to 2.41)
# 2.36 deprecated the proxies of other services: os-volumes answers 404
# from 2.36 (its last version is MAX_PROXY_API, Nova's
# MAX_PROXY_API_SUPPORT_VERSION); quota sets and limits lose their network
# keys.
MAX_PROXY_API = '2.35'
NO_NETWORK_PROXIES = '2.36'          # quota sets, limits: no network keys
NETWORKS_NONE = '2.37'               # create: networks, or "none"/"auto"
NO_IMAGE_META_LIMIT = '2.39'         # limits: no maxImageMeta
BDM_TAG_RESTORED = '2.42'            # create: tag again (Nova's fix)
FLAVOR_EMBEDDED = '2.47'             # server view: the flavor, not a link
VOLUME_ATTACH_TAG = '2.49'           # tag on POST os-volume_attachments
ACTION_EVENTS_FOR_ALL = '2.51'       # instance action events for everyone
VOLUME_EXTENDED_EVENT = '2.51'       # external events: volume-extended
SERVICE_UUID = '2.53'                # os-services: id is the UUID
FLAVOR_DESCRIPTION = '2.55'          # flavors: description
NO_INJECTED_FILES = '2.57'           # quota sets, limits: no personality
ACTIONS_PAGING = '2.58'              # instance actions: paging, updated_at
MULTIATTACH = '2.60'                 # multiattach volumes
FLAVOR_EXTRA_SPECS = '2.61'          # flavor view: extra_specs
ACTION_EVENT_HOST = '2.62'           # action events: hostId (and host)
TRUSTED_CERTS = '2.63'               # server view: trusted_image_certificates
ACTIONS_CHANGES_BEFORE = '2.66'      # instance actions: changes-before
BDM_VOLUME_TYPE = '2.67'             # create: volume_type in a mapping
VOLUME_ATTACHMENT_TAG_VIEW = '2.70'  # tag in attachment views
SERVER_GROUPS = '2.71'               # server view: server_groups
LOCKED_REASON = '2.73'               # lock: locked_reason; server view too
STRICT_LIST_QUERY = '2.75'           # attachment, flavor lists: no extras
FLAVOR_SWAP_ZERO = '2.75'            # flavor view: swap 0, not ""
UPDATE_ALL_ATTRIBUTES = '2.75'       # PUT /servers answers the show view
UNSHELVE_AVAILABILITY_ZONE = '2.77'  # unshelve: availability_zone
POWER_UPDATE_EVENT = '2.76'          # external events: power-update
ATTACH_DELETE_ON_TERMINATION = '2.79'  # attach: delete_on_termination
ACCELERATOR_EVENT = '2.82'           # external events:
#                                       accelerator-request-bound
ACTION_EVENT_DETAILS = '2.84'        # action events: details
VOLUME_ATTACHMENT_UPDATE = '2.85'    # PUT may update delete_on_termination
ATTACHMENT_ID_VIEW = '2.89'          # attachment_id/bdm_uuid, no id
CREATE_HOSTNAME = '2.90'             # create, update: hostname (short)
HOSTNAME_FOR_ALL = '2.90'            # server view: hostname for everyone
UNSHELVE_TO_HOST = '2.91'            # unshelve: host (administrators)
VOLUME_REIMAGED_EVENT = '2.93'       # external events: volume-reimaged
HOSTNAME_FQDN = '2.94'               # hostname may be a FQDN
PINNED_AZ = '2.96'                   # server view: pinned_availability_zone
SCHEDULER_HINTS = '2.100'            # server view: scheduler_hints
ASYNC_VOLUME_ATTACH = '2.101'        # attach: 202 + Location, cast
STRICT_QUERY_PARAMS = '2.102'        # every GET refuses unknown params
FLAVOR_NAME_FILTER = '2.102'         # flavor lists: ?name= (a regex)
FLAVOR_LEGACY_KEYS_REMOVED = '2.102'  # flavor view: no rxtx_factor,
#                                       OS-FLV-DISABLED:disabled
# 2.103 and 2.104 change nothing nova_lite serves.
# nova_lite's own, above Nova's 2.104 (volume-multiattach-enhancements):
# attach_mode ro/rw; multi-create sharing one multiattach volume.
ATTACH_MODE = '2.105'
COMPUTE_MAX = '2.105'                # the newest: ATTACH_MODE


def _versions(first, last):
    """Every version from ``first`` to ``last`` (one major), as strings."""
    first, last = APIVersion.parse(first), APIVersion.parse(last)
    return [str(APIVersion(first.major, minor))
            for minor in range(first.minor, last.minor + 1)]


COMPUTE_VERSIONS = _versions(COMPUTE_MIN, COMPUTE_MAX)

COMPUTE = ServiceVersions('compute', COMPUTE_VERSIONS,
                          legacy_header='X-OpenStack-Nova-API-Version')

# -- volume (/v3) ------------------------------------------------------------
# Cinder's numbering; the names are mostly Cinder's (its api/microversions.py).
VOLUME_MIN = '3.0'                   # the first: Cinder's v3 API
CLUSTER_SUPPORT = '3.7'              # os-services: cluster
VOLUME_SUMMARY = '3.12'              # GET /volumes/summary
VOLUME_MIGRATE_CLUSTER = '3.16'      # os-migrate_volume: cluster (or host)
ETAGS = '3.15'                       # volume metadata: Etag and If-Match
NEW_ATTACH = '3.27'                  # /attachments
VOLUME_EXTEND_INUSE = '3.42'         # os-extend of an in-use volume
VOLUME_SUMMARY_METADATA = '3.36'     # summary: metadata
SUPPORT_COUNT_INFO = '3.45'          # volume lists: with_count -> count
VOLUME_CREATE_FROM_BACKUP = '3.47'   # create: backup_id
BACKEND_STATE_REPORT = '3.49'        # os-services: backend_state
SUPPORT_VOLUME_SCHEMA_CHANGES = '3.53'  # create: no unknown keys
# nova_lite's own, above Cinder's 3.71: attachment show and delete name
# the attachments sharing the host connection.
SHARED_CONNECTIONS = api_version.SHARED_CONNECTIONS              # 3.72
VOLUME_MAX = '3.72'                  # the newest: SHARED_CONNECTIONS
# Block storage reads these too (its views, its clients): they are defined,
# with what each changed, in nova_lite/api_version.py.
GROUP_VOLUME = api_version.GROUP_VOLUME                          # 3.13
VOLUME_DETAIL_PROVIDER_ID = api_version.VOLUME_DETAIL_PROVIDER_ID  # 3.21
NEW_ATTACH_COMPLETION = api_version.NEW_ATTACH_COMPLETION        # 3.44
SHARED_TARGETS_AND_SERVICE_FIELDS = (
    api_version.SHARED_TARGETS_AND_SERVICE_FIELDS)               # 3.48
ATTACHMENT_CREATE_MODE_ARG = api_version.ATTACHMENT_CREATE_MODE_ARG  # 3.54
VOLUME_CLUSTER_NAME = api_version.VOLUME_CLUSTER_NAME            # 3.61
VOLUME_TYPE_ID_IN_VOLUME_DETAIL = (
    api_version.VOLUME_TYPE_ID_IN_VOLUME_DETAIL)                 # 3.63
USE_QUOTA = api_version.USE_QUOTA                                # 3.65
# The others are accepted and change nothing nova_lite serves; among them
# 3.46 (volumes from Nova's 0-byte images: nova_lite has no image service),
# 3.50 (announces multiattach, which nova_lite has at every version) and
# 3.67 (project_id optional in URLs: the router takes both at every
# version).

VOLUME_VERSIONS = _versions(VOLUME_MIN, VOLUME_MAX)

VOLUME = ServiceVersions('volume', VOLUME_VERSIONS, first_match=True,
                         missing_entry_is_error=True)


def want(req):
    """The microversion of this request (an APIVersion)."""
    return req.environ[ENVIRON_KEY]


def before(version):
    """The version just before ``version`` in its sub-API, as a string:
    ``before('2.70') == '2.69'``. The upper bound of a band that ends where
    the feature of ``version`` begins, in the form the
    ``nova_lite.api.validation`` decorators take.

    ValueError when no version of the same sub-API precedes ``version``:
    it is the first (``2.1``, ``3.0``) or no sub-API serves it.
    """
    wanted = APIVersion.parse(version)
    for service in (COMPUTE, VOLUME):
        if service.min < wanted <= service.max:
            return str(APIVersion(wanted.major, wanted.minor - 1))
    raise ValueError(
        'No microversion precedes %s: the compute API serves %s to %s, '
        'the volume API %s to %s.' % (version, COMPUTE.min, COMPUTE.max,
                                      VOLUME.min, VOLUME.max))
