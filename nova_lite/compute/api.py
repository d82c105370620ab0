"""The compute service layer: what the API handlers call for servers.

Every fast guard runs here, in the API process, before anything is asked
of a compute host: ownership (404), lock and state (409), request checks
(400). Long work goes to the conductor (build, attach) or, for one host's
business, straight to that host by cast. A server's volume operations are
``API().volumes`` (``server_volumes.py``), shelving ``API().shelving``
(``shelve_api.py``), other services' events about servers
``API().events`` (``external_events.py``).

``get_api(conf)`` returns the one ``API`` per configuration of a process.
"""

import threading
import weakref

from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import uuidutils

from nova_lite.compute import actions
from nova_lite.compute import block_device
from nova_lite.compute import checks
from nova_lite.compute import external_events
from nova_lite.compute import fencing
from nova_lite.compute import quotas
from nova_lite.compute import release
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.compute import server_volumes
from nova_lite.compute import shelve_api
from nova_lite.conductor import rpcapi as conductor_rpcapi
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import base as obj_base
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite import states
from nova_lite import utils
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)

_APIS = {}
_APIS_LOCK = threading.Lock()


def get_api(conf):
    """The ``API`` of ``conf`` (created on first use, then shared)."""
    with _APIS_LOCK:
        ref, api = _APIS.get(id(conf), (None, None))
        if ref is None or ref() is not conf:
            api = API(conf)
            _APIS[id(conf)] = (weakref.ref(conf), api)
        return api


def _reservation_id():
    return 'r-%s' % uuidutils.generate_uuid()[:8]


class API(object):
    def __init__(self, conf):
        self.conf = conf
        # A request gives up on an unreachable broker after
        # [DEFAULT] rpc_send_retries and answers 503.
        self.conductor_rpcapi = conductor_rpcapi.ConductorAPI(
            conf, retry=conf.rpc_send_retries)
        self.compute_rpcapi = compute_rpcapi.ComputeAPI(
            conf, retry=conf.rpc_send_retries)
        # The block-storage client (``nova_lite.volume_client``).
        self.volume_client = block_storage.get_client(conf)
        self.volumes = server_volumes.ServerVolumes(
            conf, self.volume_client, self.compute_rpcapi,
            self.conductor_rpcapi)
        self.shelving = shelve_api.Shelving(conf, self.compute_rpcapi,
                                            self.conductor_rpcapi)
        # Other services' events about servers (os-server-external-events).
        self.events = external_events.ExternalEvents(self.compute_rpcapi)

    # -- lookups -------------------------------------------------------------
    def get(self, context, instance_uuid, read_deleted=False):
        """The server, if the caller may see it: another project's server
        is 404 for non-admins, as if it did not exist."""
        instance = instance_obj.Instance.get_by_uuid(context, instance_uuid,
                                                     read_deleted=read_deleted)
        if not context.is_admin and instance.project_id != context.project_id:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        return instance

    def get_with_volume_mapping(self, context, instance_uuid, volume_id):
        """``get`` and the server's mapping of ``volume_id`` (None if there
        is none), read in one transaction. The caller checks its policy on
        the server before it uses the mapping."""
        with obj_base.reads(context):
            instance = self.get(context, instance_uuid)
            try:
                bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                    context, volume_id, instance.uuid)
            except exception.VolumeBDMNotFound:
                bdm = None
        return instance, bdm

    def get_all(self, context, all_tenants=False, project_id=None,
                status=None, name=None, limit=None, marker=None):
        if not all_tenants:
            project_id = context.project_id
        return instance_obj.get_all(context, project_id=project_id,
                                    status=status, name=name,
                                    read_deleted=(status or '').upper() ==
                                    'DELETED', limit=limit, marker=marker)

    # -- create ---------------------------------------------------------------
    def _check_volumes(self, context, parsed, supports_multiattach, count,
                       share_multiattach=False):
        """The existing volumes of a create (400 unless noted).

        Each must exist; a multiattach one needs 2.60, any other must be
        ``available``. A multiattach volume is not checked further here:
        block storage decides at the reservation (it takes one while the
        volume is ``in-use``, not while it is ``reserved`` or
        ``attaching``), as Nova leaves it to Cinder.

        Several servers (``count`` > 1) with an existing volume: below
        2.105 always 400, whatever the volume (upstream Nova); from 2.105
        (``share_multiattach``) only when every such volume is multiattach,
        each server then getting its own mapping and attachment.
        """
        ids = block_device.volume_ids(parsed)
        multi = _('Cannot attach one or more volumes to multiple instances')
        if ids and count > 1 and not share_multiattach:
            raise exception.InvalidInput(message=multi)
        for volume_id in ids:
            try:
                volume = self.volume_client.get(context, volume_id)
            except exception.VolumeNotFound:
                raise exception.InvalidBDMVolume(id=volume_id)
            if volume['multiattach']:
                if not supports_multiattach:
                    raise exception.MultiattachNotSupportedOldMicroversion()
                continue
            if count > 1:
                raise exception.InvalidInput(
                    message=_('%(multi)s: volume %(vol)s is not '
                              'multiattach.') % {'multi': multi,
                                                 'vol': volume_id})
            if volume['status'] != 'available':
                raise exception.InvalidVolume(
                    reason=_("volume '%(vol)s' status must be 'available'. "
                             "Currently in '%(status)s'") %
                    {'vol': volume_id, 'status': volume['status']})

    def create(self, context, name, flavor, image_ref=None,
               block_device_mapping=None, min_count=1, max_count=None,
               availability_zone=None, supports_multiattach=False,
               share_multiattach=False, access_ip_v4=None,
               access_ip_v6=None, hostname=None, description=None,
               metadata=None):
        """Create ``max_count`` servers (at least ``min_count``) and hand
        them to the conductor. Returns (servers, reservation_id).

        All or nothing: if any server cannot be created or its volumes
        reserved, every server of the request is deleted again (its
        mappings and attachments with it) and the error is raised.
        ``share_multiattach`` (2.105): several servers may share their
        multiattach volumes (see ``_check_volumes``)."""
        max_count = max_count or min_count
        if min_count > max_count:
            raise exception.InvalidInput(
                message=_('min_count must be <= max_count'))
        checks.check_availability_zone(availability_zone)
        parsed = block_device.parse_request(block_device_mapping, image_ref)
        self._check_volumes(context, parsed, supports_multiattach, max_count,
                            share_multiattach=share_multiattach)
        # Read-only needs hosts that honour it; a new server may land on
        # any of them (409).
        checks.check_computes_support_attach_mode(
            context, block_device.attach_modes(parsed))
        shared = max_count > 1 and bool(block_device.volume_ids(parsed))
        reservation_id = _reservation_id()
        # As many servers as the project's quota takes (at least
        # min_count, else 403), inserted in one transaction.
        instances = quotas.create_servers(
            context, self.conf, flavor, min_count, max_count,
            lambda index, count: self._create_one(
                context, name, flavor, image_ref, parsed, index, count,
                reservation_id, access_ip_v4=access_ip_v4,
                access_ip_v6=access_ip_v6, hostname=hostname,
                description=description, metadata=metadata))
        try:
            for instance in instances:
                self._reserve_volumes(context, instance, shared=shared)
                instance_action.InstanceAction.action_start(
                    context, instance.uuid, instance_action.CREATE)
        except Exception:
            for instance in instances:
                try:
                    self._start_local_delete(instance)
                    release.delete_locally(context, self.volume_client,
                                           instance)
                except Exception:
                    LOG.exception('Could not clean up server %s',
                                  instance.uuid)
            raise
        self.conductor_rpcapi.build_instances(context, instances)
        return instances, reservation_id

    def _create_one(self, context, name, flavor, image_ref, parsed, index,
                    count, reservation_id, access_ip_v4=None,
                    access_ip_v6=None, hostname=None, description=None,
                    metadata=None):
        uuid = uuidutils.generate_uuid()
        instance = instance_obj.Instance(
            context, uuid=uuid,
            display_name=name if count == 1 else '%s-%d' % (name, index + 1),
            project_id=context.project_id, user_id=context.user_id,
            host=None, availability_zone=checks.DEFAULT_AVAILABILITY_ZONE,
            flavor_id=flavor.flavorid, image_ref=image_ref or '',
            vm_state=states.BUILDING, task_state=states.SCHEDULING,
            power_state=states.NOSTATE, locked=False, locked_by=None,
            locked_reason=None, reservation_id=reservation_id,
            launch_index=index, root_device_name='/dev/vda',
            task_owner=None, task_updated_at=None,
            access_ip_v4=access_ip_v4, access_ip_v6=access_ip_v6,
            display_description=description, server_metadata=metadata or {},
            # Several servers of one request: hostname-1, hostname-2...
            hostname=(hostname if count == 1 or hostname is None
                      else '%s-%d' % (hostname, index + 1)))
        instance.create(block_device.build_mappings(context, uuid, parsed,
                                                    image_ref))
        return instance

    def _reserve_volumes(self, context, instance, shared=False):
        """One attachment per volume of the server, in its mapping's
        ``attach_mode``, written on the mapping.

        ``shared``: the volumes are shared by the servers of a multi-create
        (multiattach ones, 2.105). Block storage takes no reservation of a
        volume while another is pending (``reserved``), so each one is
        completed at once without a connector, as for a shelved-offloaded
        server: the volume stays ``in-use`` and the next server's
        reservation is accepted. The compute host connects it at build
        (``attachment_update`` with its connector: ``attaching``, then
        ``attached``), or releases it if the build fails."""
        svc = block_storage.service_context(context)
        for bdm in bdm_obj.BlockDeviceMapping.get_all_by_instance(
                context, instance.uuid):
            if not (bdm.is_volume and bdm.volume_id):
                continue
            attachment = self.volume_client.attachment_create(
                context, bdm.volume_id, instance.uuid, mode=bdm.attach_mode)
            try:
                bdm.attachment_id = attachment['id']
                bdm.save()
                if shared:
                    self.volume_client.attachment_complete(svc,
                                                           attachment['id'])
            except Exception:
                with excutils.save_and_reraise_exception():
                    self.volumes.release_new_attachment(
                        context, attachment['id'])

    # -- delete --------------------------------------------------------------
    def _start_local_delete(self, instance, expected_host=states.KEEP):
        """Move the server to ``deleting`` as this API process's task (a
        compare-and-swap on its task, and on its host when
        ``expected_host`` is given); the conductor finishes it if this
        process stops before ``release.delete_locally``."""
        states.move(instance, 'begin_delete', expected_host=expected_host,
                    task_owner=server_volumes.owner(self.conf),
                    task_updated_at=utils.utcnow())

    # What PUT /servers/{id} may change (the API maps its keys to these).
    UPDATABLE = ('display_name', 'access_ip_v4', 'access_ip_v6',
                 'display_description', 'hostname')

    def update(self, context, instance, **changes):
        """Change the server's name, access addresses, description or
        hostname, whatever its task: one UPDATE of those columns, which
        no task writes (``InstanceNotFound`` if it was deleted meanwhile).
        """
        for name, value in changes.items():
            if name not in self.UPDATABLE:
                raise exception.InvalidInput(
                    message=_('%s cannot be updated') % name)
            setattr(instance, name, value)
        instance.save()
        return instance

    def delete(self, context, instance, soft=None):
        """Delete, or soft-delete (``soft``; by default when ``[DEFAULT]
        reclaim_instance_interval`` asks for it and the server can be).

        A server with no host, or whose host an administrator forced down
        (fenced, ``compute.fencing``), is deleted here, its volumes
        released. One whose host is only ``down`` is not: its guest may
        still run and write its disks, so the delete is cast to the host
        (queued until it answers) and the server keeps its volumes until
        the host deletes it or is forced down (then the conductor deletes
        it at once). Nova deletes it locally on a ``down`` host too,
        freeing volumes a running guest may still write."""
        checks.check_instance_lock(context, instance)
        if instance.task_state == states.DELETING:
            return
        if soft is None:
            soft = self.can_soft_delete(context, instance)
        if soft:
            self.soft_delete(context, instance)
            return
        instance_action.InstanceAction.action_start(
            context, instance.uuid, instance_action.DELETE)
        host = instance.host
        if host is None or (
                not checks.host_is_up(context, self.conf, host) and
                fencing.is_fenced(context, host)):
            # No host (not scheduled, or offloaded) or a fenced one:
            # delete here, unless the conductor placed it meanwhile (the
            # compare-and-swap on the host says so).
            try:
                self._start_local_delete(instance, expected_host=host)
            except exception.UnexpectedTaskStateError:
                instance.refresh()
                if instance.task_state == states.DELETING:
                    return
            else:
                crashpoint.hit(crashpoint.API_LOCAL_DELETE_AFTER_DECIDE)
                release.delete_locally(context, self.volume_client, instance)
                return
        if not checks.host_is_up(context, self.conf, host):
            LOG.warning('Host %s of server %s is down but not forced down: '
                        'the delete waits for it (or for it to be forced '
                        'down); the server keeps its volumes meanwhile',
                        host, instance.uuid)
        try:
            # Its last move recorded: a host whose message was lost
            # deletes it once stalled (``ComputeManager``).
            states.move(instance, 'begin_delete',
                        task_updated_at=utils.utcnow())
        except exception.UnexpectedTaskStateError:
            return  # another delete got there first
        self.compute_rpcapi.terminate_instance(context, instance)

    # -- actions cast to the host -----------------------------------------
    # -- deferred delete ---------------------------------------------------
    def can_soft_delete(self, context, instance):
        """Soft delete applies with ``reclaim_instance_interval`` to an idle,
        launched server on a host that is up (otherwise: deleted now)."""
        return (self.conf.reclaim_instance_interval > 0 and
                instance.vm_state != states.SOFT_DELETED and
                instance.task_state is None and
                instance.launched_at is not None and
                bool(instance.host) and
                checks.host_is_up(context, self.conf, instance.host))

    def soft_delete(self, context, instance):
        checks.check_instance_lock(context, instance)
        states.move(instance, 'begin', to_task=states.SOFT_DELETING)
        instance_action.InstanceAction.action_start(
            context, instance.uuid, instance_action.DELETE)
        actions.cast_or_idle(instance, states.SOFT_DELETING,
                             self.compute_rpcapi.soft_delete_instance,
                             context, instance)

    def restore(self, context, instance):
        checks.check_instance_host_is_up(context, self.conf, instance)
        actions.run(context, instance, 'restore', states.RESTORE_VM_STATES,
                    states.RESTORING, instance_action.RESTORE,
                    self.compute_rpcapi.restore_instance, context, instance)

    def force_delete(self, context, instance):
        checks.check_instance_lock(context, instance)
        checks.check_instance_state(instance, 'force_delete',
                                    states.FORCE_DELETE_VM_STATES,
                                    must_have_launched=False)
        self.delete(context, instance, soft=False)

    # -- power and lock actions -----------------------------------------------
    def _power_action(self, context, instance, method, vm_states, task_state,
                      action, cast):
        checks.check_instance_lock(context, instance)
        checks.check_instance_host(instance)
        checks.check_instance_state(instance, method, vm_states)
        states.move(instance, 'begin', to_task=task_state)
        instance_action.InstanceAction.action_start(context, instance.uuid,
                                                    action)
        cast(context, instance)

    def stop(self, context, instance):
        self._power_action(context, instance, 'stop', states.STOP_VM_STATES,
                           states.POWERING_OFF, instance_action.STOP,
                           self.compute_rpcapi.stop_instance)

    def start(self, context, instance):
        self._power_action(context, instance, 'start',
                           states.START_VM_STATES, states.POWERING_ON,
                           instance_action.START,
                           self.compute_rpcapi.start_instance)

    def pause(self, context, instance):
        self._power_action(context, instance, 'pause',
                           states.PAUSE_VM_STATES, states.PAUSING,
                           instance_action.PAUSE,
                           self.compute_rpcapi.pause_instance)

    def unpause(self, context, instance):
        self._power_action(context, instance, 'unpause',
                           states.UNPAUSE_VM_STATES, states.UNPAUSING,
                           instance_action.UNPAUSE,
                           self.compute_rpcapi.unpause_instance)

    @staticmethod
    def is_expected_locked_by(context, instance):
        """False when an admin locked the server and its owner asks, or
        the owner locked it and someone else asks."""
        is_owner = instance.project_id == context.project_id
        if instance.locked_by == 'owner' and not is_owner:
            return False
        if instance.locked_by == 'admin' and is_owner:
            return False
        return True

    def lock(self, context, instance, reason=None):
        is_owner = instance.project_id == context.project_id
        instance_action.InstanceAction.action_start(
            context, instance.uuid, instance_action.LOCK)
        instance.locked = True
        instance.locked_by = 'owner' if is_owner else 'admin'
        instance.locked_reason = reason
        instance.save()

    def unlock(self, context, instance):
        instance_action.InstanceAction.action_start(
            context, instance.uuid, instance_action.UNLOCK)
        instance.locked = False
        instance.locked_by = None
        instance.locked_reason = None
        instance.save()
