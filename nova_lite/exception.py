"""Domain exceptions of nova_lite.

Every exception says what went wrong and carries ``code``, the HTTP status it
maps to; a 409 also carries ``error_code``, the kind of conflict (one of
``CONFLICT_CODES``, as placement tags its 409s), which the fault body
shows. Nothing here knows about WebOb: ``nova_lite.api.fault`` is the one
place that turns an exception into a response. The classes are allowed across
RPC (``nova_lite.rpc``), so an ``Invalid`` raised in the conductor reaches the
API as itself.
"""

from oslo_log import log as logging

from nova_lite.i18n import _

LOG = logging.getLogger(__name__)

# The kinds of 409 (a 409 fault's ``error_code``).
CONFLICT = 'nova_lite.conflict'     # none of those below
SERVER_STATE = 'compute.server_state'
SERVER_LOCKED = 'compute.server_locked'
MAPPING_BUSY = 'compute.mapping_busy'
HOST_UNAVAILABLE = 'compute.host_unavailable'
HOST_TOO_OLD = 'compute.host_too_old'
DEVICE_IN_USE = 'compute.device_in_use'
VOLUME_STATE = 'volume.state'
VOLUME_MIGRATION = 'volume.migration'
ATTACHMENT_OF_COMPUTE = 'volume.attachment_of_compute'
ALREADY_EXISTS = 'volume.already_exists'
HOST_HOLDS_STALE_DISKS = 'compute.host_holds_stale_disks'
CONFLICT_CODES = (CONFLICT, SERVER_STATE, SERVER_LOCKED, MAPPING_BUSY,
                  HOST_UNAVAILABLE, HOST_TOO_OLD, DEVICE_IN_USE, VOLUME_STATE,
                  VOLUME_MIGRATION, ATTACHMENT_OF_COMPUTE, ALREADY_EXISTS,
                  HOST_HOLDS_STALE_DISKS)


class NovaLiteException(Exception):
    """Base class: ``msg_fmt % kwargs`` makes the message."""

    msg_fmt = _('An unknown exception occurred.')
    code = 500
    #: The kind of a 409 (``CONFLICT_CODES``); None for other statuses.
    error_code = None
    headers = {}
    safe = False

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if 'code' not in self.kwargs:
            self.kwargs['code'] = self.code
        if not message:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                LOG.exception('Exception in string format operation for '
                              '%s, kwargs %s', self.__class__.__name__,
                              kwargs)
                message = self.msg_fmt
        self.message = message
        super().__init__(message)

    def format_message(self):
        return self.args[0] if self.args else self.message


# -- 400 ------------------------------------------------------------------

class Invalid(NovaLiteException):
    msg_fmt = _('Bad request: %(reason)s')
    code = 400


class ValidationError(Invalid):
    msg_fmt = _('Invalid input for field/attribute %(field)s. '
                'Value: %(value)s. %(reason)s')


class InvalidInput(Invalid):
    msg_fmt = _('Invalid input received: %(reason)s')


class InvalidAPIVersionString(Invalid):
    msg_fmt = _('API Version String %(version)s is of invalid format. Must '
                'be of format MajorNum.MinorNum.')


class InvalidVolume(Invalid):
    msg_fmt = _('Invalid volume: %(reason)s')


class InvalidVolumeAttachMode(Invalid):
    msg_fmt = _("Invalid attaching mode '%(mode)s' for volume "
                "%(volume_id)s.")


class InvalidDevicePath(Invalid):
    msg_fmt = _("The supplied device path (%(path)s) is invalid.")


class InvalidVolumeMetadata(Invalid):
    msg_fmt = _('Invalid metadata: %(reason)s')


class InvalidVolumeType(Invalid):
    msg_fmt = _('Invalid volume type: %(reason)s')


class InvalidBDM(Invalid):
    msg_fmt = _('Block Device Mapping is Invalid: %(details)s')


class MultiattachNotSupportedOldMicroversion(Invalid):
    msg_fmt = _('Multiattach volumes are only supported starting with '
                'compute API version 2.60.')


class InvalidHost(Invalid):
    msg_fmt = _('Invalid host: %(reason)s')


class VolumeMigrationAttached(Invalid):
    msg_fmt = _('Volume %(volume_id)s is attached more than once: '
                'nova_lite migrates volumes attached to one server at '
                'most.')


class VolumeTypeDefaultDeletionError(Invalid):
    msg_fmt = _('The volume type %(volume_type_id)s is a default volume '
                'type and cannot be deleted.')


class VolumeTypeInUse(Invalid):
    msg_fmt = _('Volume Type %(volume_type_id)s deletion is not allowed '
                'with volumes present with the type.')


class MultiattachNotSupportedByVirtDriver(Invalid):
    msg_fmt = _("Volume %(volume_id)s has 'multiattach' set, which is not "
                "supported for this instance.")


class MultiattachToShelvedNotSupported(Invalid):
    msg_fmt = _('Attaching multiattach volumes is not supported for '
                'shelved-offloaded instances.')


class MultiattachSwapVolumeNotSupported(Invalid):
    msg_fmt = _('Swapping multi-attach volumes with more than one read/write '
                'attachment is not supported.')


class VolumeTaggedAttachNotSupported(Invalid):
    msg_fmt = _('Tagged volume attachment is not supported for this '
                'instance.')


class VolumeTaggedAttachToShelvedNotSupported(Invalid):
    msg_fmt = _('Tagged volume attachment is not supported for '
                'shelved-offloaded instances.')


class InvalidBDMFormat(InvalidBDM):
    msg_fmt = _('Block Device Mapping is Invalid: some fields are not '
                'recognized, or have invalid values: %(details)s')


class InvalidBDMBootSequence(InvalidBDM):
    msg_fmt = _('Block Device Mapping is Invalid: Boot sequence for the '
                'instance and image/block device mapping combination is not '
                'valid.')


class InvalidBDMVolume(InvalidBDM):
    msg_fmt = _('Block Device Mapping is Invalid: failed to get volume '
                '%(id)s.')


class RootVolumeDetach(Invalid):
    msg_fmt = _('Cannot detach a root device volume')


class AttachmentFieldNotMutable(Invalid):
    msg_fmt = _('The %(field)s property is not mutable')


class VolumeTypeEncryptionExists(Invalid):
    msg_fmt = _('Volume type encryption for type %(type_id)s already '
                'exists.')


class EncryptedVolumesNotSupported(Invalid):
    msg_fmt = _('Invalid volume: the volume type is encrypted, and '
                'nova_lite has no key manager to make encryption keys: it '
                'cannot create encrypted volumes.')


class EncryptionChangeNotSupported(Invalid):
    msg_fmt = _('Invalid input received: changing the encryption of a '
                'volume needs migrating it to a new volume, which nova_lite '
                'does not do.')


class MarkerNotFound(Invalid):
    msg_fmt = _('Marker %(marker)s could not be found.')


# -- 401/403 --------------------------------------------------------------

class NotAuthenticated(NovaLiteException):
    msg_fmt = _('Authentication required')
    code = 401


class Forbidden(NovaLiteException):
    msg_fmt = _('Forbidden')
    code = 403


class PolicyNotAuthorized(Forbidden):
    msg_fmt = _("Policy doesn't allow %(action)s to be performed.")


class TooManyDiskDevices(Forbidden):
    msg_fmt = _('The maximum allowed number of disk devices (%(maximum)d) '
                'to attach to a single instance has been exceeded.')


class TooManyInstances(Forbidden):
    """Nova's over-quota answer for a server create (403)."""
    msg_fmt = _('Quota exceeded for %(overs)s: Requested %(req)s, but '
                'already used %(used)s of %(allowed)s %(overs)s')


class QuotaBelowUsage(Invalid):
    msg_fmt = _('Quota limit %(limit)s for %(resource)s must be greater '
                'than or equal to already used and reserved %(minimum)s.')


class VolumeSizeExceedsLimit(Invalid):
    msg_fmt = _('Requested volume size %(size)dG is larger than maximum '
                'allowed limit %(limit)dG.')


class OverQuota(NovaLiteException):
    """Cinder's over-quota answers (413)."""
    code = 413


class VolumeLimitExceeded(OverQuota):
    msg_fmt = _("Maximum number of volumes allowed (%(allowed)d) exceeded "
                "for quota '%(name)s'.")


class VolumeSizeExceedsAvailableQuota(OverQuota):
    msg_fmt = _('Requested volume or snapshot exceeds allowed %(name)s '
                'quota. Requested %(requested)sG, quota is %(quota)sG and '
                '%(consumed)sG has been consumed.')


# -- 404 ------------------------------------------------------------------

class NotFound(NovaLiteException):
    msg_fmt = _('Resource could not be found.')
    code = 404


class InstanceNotFound(NotFound):
    msg_fmt = _('Instance %(instance_id)s could not be found.')


class VolumeNotFound(NotFound):
    msg_fmt = _('Volume %(volume_id)s could not be found.')


class VolumeTypeNotFound(NotFound):
    msg_fmt = _('Volume type %(volume_type_id)s could not be found.')


class VolumeAttachmentNotFound(NotFound):
    msg_fmt = _('Volume attachment %(attachment_id)s could not be found.')


class VolumeTypeAccessNotFound(NotFound):
    msg_fmt = _('Volume type access not found for %(volume_type_id)s / '
                '%(project_id)s combination.')


class VolumeTypeExtraSpecsNotFound(NotFound):
    msg_fmt = _('Volume Type %(volume_type_id)s has no extra specs with '
                'key %(extra_specs_key)s.')


class VolumeMetadataNotFound(NotFound):
    msg_fmt = _('Volume %(volume_id)s has no metadata with key '
                '%(metadata_key)s.')


class SnapshotNotFound(NotFound):
    msg_fmt = _('Snapshot %(snapshot_id)s could not be found.')


class BackupNotFound(NotFound):
    msg_fmt = _('Backup %(backup_id)s could not be found.')


class VolumeBDMNotFound(NotFound):
    msg_fmt = _('Instance %(instance_uuid)s is not attached to volume '
                '%(volume_id)s')


class FlavorNotFound(NotFound):
    msg_fmt = _('Flavor %(flavor_id)s could not be found.')


class ServiceNotFound(NotFound):
    msg_fmt = _('Service %(service_id)s could not be found.')


class HostNotFound(NotFound):
    msg_fmt = _('Host %(host)s could not be found.')


class ComputeHostNotFound(NotFound):
    msg_fmt = _('Compute host %(host)s could not be found.')


class InstanceActionNotFound(NotFound):
    msg_fmt = _('Action for request_id %(request_id)s on instance '
                '%(instance_uuid)s not found')


class InstanceActionEventNotFound(NotFound):
    msg_fmt = _('Event %(event)s not found for action id %(action_id)s')


class VolumeTypeEncryptionNotFound(NotFound):
    msg_fmt = _('Volume type encryption for type %(type_id)s does not '
                'exist.')


class VolumeBackendNotFound(NotFound):
    msg_fmt = _("Can't find service: %(host)s")


# -- 405/406 --------------------------------------------------------------

class InvalidGlobalAPIVersion(NovaLiteException):
    msg_fmt = _('Version %(req_ver)s is not supported by the API. Minimum '
                'is %(min_ver)s and maximum is %(max_ver)s.')
    code = 406


# -- 409 ------------------------------------------------------------------

class Conflict(NovaLiteException):
    msg_fmt = _('Conflict: %(reason)s')
    code = 409
    error_code = CONFLICT


class InstanceInvalidState(Conflict):
    msg_fmt = _("Cannot '%(method)s' instance %(instance_uuid)s while it is "
                "in %(attr)s %(state)s")
    error_code = SERVER_STATE


class InstanceIsLocked(Conflict):
    msg_fmt = _('Instance %(instance_uuid)s is locked')
    error_code = SERVER_LOCKED


class InstanceNotReady(Conflict):
    msg_fmt = _('Instance %(instance_id)s is not ready')
    error_code = SERVER_STATE


class DevicePathInUse(Conflict):
    msg_fmt = _('The supplied device path (%(path)s) is in use.')
    error_code = DEVICE_IN_USE


class UnshelveInstanceInvalidState(Conflict):
    msg_fmt = _('Specifying an availability zone or a host when unshelving '
                'server %(instance_uuid)s with status %(status)s is not '
                'supported. The server status must be SHELVED_OFFLOADED.')
    error_code = SERVER_STATE


class UnexpectedTaskStateError(Conflict):
    msg_fmt = _('Conflict updating instance %(instance_uuid)s. Expected: '
                '%(expected)s. Actual: %(actual)s')
    error_code = SERVER_STATE


class OperationInterrupted(NovaLiteException):
    msg_fmt = _("The %(task)s operation of volume %(volume_id)s was "
                "interrupted (%(reason)s) and has been rolled back.")


class VolumeTaskInProgress(Conflict):
    msg_fmt = _("Volume %(volume_id)s of server %(instance_uuid)s is busy "
                "with another operation (%(task)s).")
    error_code = MAPPING_BUSY


class TaskOwnerChanged(Conflict):
    msg_fmt = _("The %(task)s operation on volume %(volume_id)s of server "
                "%(instance_uuid)s was taken over or settled by another "
                "service.")
    error_code = MAPPING_BUSY


class InstanceTaskOwnerChanged(Conflict):
    msg_fmt = _("The %(task)s of server %(instance_uuid)s was taken over "
                "or settled by another service.")
    error_code = SERVER_STATE


class ComputeServiceUnavailable(Conflict):
    msg_fmt = _('Compute service of %(host)s is unavailable at this time.')
    error_code = HOST_UNAVAILABLE


class HostServiceDown(Conflict):
    """Nova's answer to a detach of a server whose compute service is
    down (``ServiceUnavailable``, 409): the host is not named to users."""
    msg_fmt = _('Service is unavailable at this time.')
    error_code = HOST_UNAVAILABLE


class HostDidNotAnswer(HostServiceDown):
    """A compute host that is up by its heartbeats but did not answer a
    call (no reply and no call-monitor heartbeat for ``[DEFAULT]
    rpc_response_timeout`` s: stopped, partitioned, overloaded). The
    conductor undid what the call was for; a 409 as for a host that reads
    down, which it soon will if it stays silent."""
    msg_fmt = _('Service is unavailable at this time: the compute host of '
                'the server did not answer.')


class NoValidHost(Conflict):
    msg_fmt = _('No valid host was found. %(reason)s')
    error_code = HOST_UNAVAILABLE


class ResourceConflict(Conflict):
    msg_fmt = _('Conflict: %(reason)s')
    error_code = VOLUME_STATE


class VolumeTypeExists(Conflict):
    msg_fmt = _('Volume Type %(id)s already exists.')
    error_code = ALREADY_EXISTS


class VolumeTypeAccessExists(Conflict):
    msg_fmt = _('Volume type access for %(volume_type_id)s / '
                '%(project_id)s combination already exists.')
    error_code = ALREADY_EXISTS


class VolumeMappedByCompute(Conflict):
    msg_fmt = _('Conflict: %(reason)s')
    error_code = ATTACHMENT_OF_COMPUTE


class ConflictNovaUsingAttachment(Conflict):
    msg_fmt = _('Detach volume from instance %(instance_id)s using the '
                'Compute API')
    error_code = ATTACHMENT_OF_COMPUTE


class SwapVolumeNotMigrating(Conflict):
    # Nova's own words (bug 2112187).
    msg_fmt = _('volume %(volume_id)s is not migrating; this API should '
                'only be called by Cinder')
    error_code = VOLUME_MIGRATION


class SwapVolumeNotMigrationTarget(Conflict):
    msg_fmt = _('volume %(volume_id)s is migrating: only its migration '
                'swaps it, for volume %(target)s of that migration, as the '
                'block-storage service')
    error_code = VOLUME_MIGRATION


class ConflictNovaOwnsAttachment(Conflict):
    msg_fmt = _('Attachment %(attachment_id)s belongs to instance '
                '%(instance_id)s: only the compute service may change its '
                'connection')
    error_code = ATTACHMENT_OF_COMPUTE


# -- 412 ------------------------------------------------------------------

class MetadataChanged(NovaLiteException):
    msg_fmt = _('The metadata of volume %(volume_id)s changed since the '
                'ETag given in If-Match was read.')
    code = 412


# -- 5xx ------------------------------------------------------------------

class AttachModeNotSupportedByHost(Conflict):
    msg_fmt = _("The compute host %(host)s of server %(instance_uuid)s is "
                "too old to attach volumes read-only; attach it read/write "
                "or retry once the host is upgraded.")
    error_code = HOST_TOO_OLD


class AttachModeNotSupportedByComputes(Conflict):
    msg_fmt = _("Some compute hosts are too old to attach volumes "
                "read-only; boot with attach_mode 'rw' or retry once every "
                "compute host is upgraded.")
    error_code = HOST_TOO_OLD


class DeviceIsReadOnly(NovaLiteException):
    msg_fmt = _('%(mountpoint)s of server %(instance_uuid)s is attached '
                'read-only: the write is refused.')
    code = 409


class VolumeNotConnected(NovaLiteException):
    msg_fmt = _('Input/output error on %(mountpoint)s of server '
                '%(instance_uuid)s: the host is not connected to the '
                'volume.')


class ServiceTooOld(NovaLiteException):
    msg_fmt = _('%(reason)s')
    code = 503


class ServiceUnavailable(NovaLiteException):
    msg_fmt = _('Service is unavailable at this time.')
    code = 503


class InvalidConfiguration(NovaLiteException):
    msg_fmt = _('Invalid configuration: %(reason)s')


class UnshelveVolumeConnectFailed(NovaLiteException):
    msg_fmt = _('Volume %(volume_id)s could not be connected to %(host)s '
                'while unshelving: %(reason)s. The server is '
                'shelved_offloaded again, with all its volumes.')
    code = 500


class VolumeMigrationFailed(NovaLiteException):
    msg_fmt = _('Volume migration failed: %(reason)s')
    code = 500


class VolumeTypeDefaultMisconfiguredError(NovaLiteException):
    msg_fmt = _('The request cannot be fulfilled as the default volume type '
                '%(volume_type_name)s cannot be found.')
    code = 500


class VolumeBackendAPIException(NovaLiteException):
    msg_fmt = _('Bad or unexpected response from the storage volume '
                'backend API: %(data)s')
    code = 500


class VolumeIsBusy(VolumeBackendAPIException):
    """The backend refuses to delete a volume's storage that is still in
    use (Cinder's ``VolumeIsBusy``: an RBD image with snapshots, clones or
    a client holding it open); the volume goes back to ``available``."""
    msg_fmt = _('The volume is busy: %(data)s')
    code = 409
    error_code = VOLUME_STATE


class NotSupported(Invalid):
    msg_fmt = _('Not supported: %(reason)s')


class HypervisorUnavailable(NovaLiteException):
    msg_fmt = _('Connection to the hypervisor is broken on host %(host)s: '
                '%(reason)s')
    code = 503


class DeviceDetachFailed(NovaLiteException):
    msg_fmt = _('Device detach failed for %(device)s: %(reason)s')
    code = 500


class GuestStoppedHoldingStaleDisk(NovaLiteException):
    msg_fmt = _('The guest was stopped by compute host %(host)s: it did not '
                'release volume %(volume_id)s (%(device)s), which was freed '
                'without the host while the host was forced down.')


class HostHoldsStaleDisks(Conflict):
    msg_fmt = _('Compute host %(host)s may still give the guests of '
                'servers %(servers)s volumes freed without it while it was '
                'forced down; it stays forced down until it removed them.')
    error_code = HOST_HOLDS_STALE_DISKS


class VolumeRebaseFailed(NovaLiteException):
    msg_fmt = _('Volume rebase failed: %(reason)s')
    code = 500
