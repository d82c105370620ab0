"""Server side of the compute RPC API: one per host.

A doorway: each method takes the server's instance lock (one per server
uuid in this process, like oslo.concurrency's internal ``synchronized``
lock; other processes are kept out by the database), records its step as an
instance action event and hands off to ``volume_ops`` or the virt driver.
Casts never raise back to a caller: a failure is recorded as the event's
error, an instance fault and (for attach) an ``.error`` notification.
"""

import contextlib
import datetime
import threading
import time

from concurrent import futures

from oslo_concurrency import lockutils
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import units

from nova_lite.compute import external_events
from nova_lite.compute.host import power_sync
from nova_lite.compute.host import recovery
from nova_lite.compute.host import shelve_ops
from nova_lite.compute.host import volume_ops
from nova_lite.compute import notifications
from nova_lite.compute import rpcapi
from nova_lite import context as nl_context
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import manager
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite import policy
from nova_lite import states
from nova_lite import tasks
from nova_lite import utils
from nova_lite.virt import driver as virt_driver
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)

RPC_API_VERSION = rpcapi.RPC_API_VERSION

# Threads syncing power states: a sync waits for its server's instance lock
# (an attach in progress), and must not hold up the others for long.
SYNC_WORKERS = 4


class ComputeManager(manager.Manager):
    target = messaging.Target(namespace=rpcapi.NAMESPACE,
                              version=RPC_API_VERSION)

    def __init__(self, conf, host):
        super().__init__(conf, host)
        self.driver = virt_driver.load_driver(conf, host)
        self.notifier = notifications.Notifier(conf, host)
        self._volume_client = None
        self._semaphores = lockutils.Semaphores()
        # The mappings whose task this process is working on right now:
        # what the periodic settling leaves alone, and what a second
        # delivery of the same message finds taken. Bookkeeping of this
        # process only; the task columns say who owns the work.
        self._in_hand = tasks.InHand()
        # Whether this host saw itself forced down at its last look, and
        # when it last looked (monotonic): see ``_watch_fence``.
        self._fenced = False
        self._last_look = None
        # The hypervisor's truth: when the power states were last synced
        # and the guests of deleted servers last looked for (monotonic),
        # and the servers whose sync is queued or running (a sync asked
        # again meanwhile is the same sync).
        self._last_sync = None
        self._last_guest_reap = None
        self._syncs = set()
        self._syncs_lock = threading.Lock()
        self._sync_pool = futures.ThreadPoolExecutor(
            max_workers=SYNC_WORKERS, thread_name_prefix='power-sync')

    @property
    def periodic_interval(self):
        """Periodic tasks run every ``[DEFAULT] report_interval`` (a host
        looks whether it was forced down, ``_watch_fence``), and when
        stalled work is settled (``[recovery] settle_interval``), when
        shelved servers are offloaded after a while or deleted servers
        are kept for a while; the shortest interval of those."""
        intervals = [self.conf.report_interval]
        if self.conf.recovery.settle_interval > 0:
            intervals.append(self.conf.recovery.settle_interval)
        if self.conf.shelved_offload_time > 0 or \
                self.conf.reclaim_instance_interval > 0:
            intervals.append(self.conf.compute.periodic_interval)
        if self.conf.sync_power_state_interval > 0:
            intervals.append(self.conf.sync_power_state_interval)
        return min(intervals)

    def init_host(self, context):
        # A host that would settle live work refuses to start.
        tasks.check_stalled_after(self.conf)
        # Block storage reached in-process (``[volume] client = local``)
        # checks its policies with the enforcer of this configuration.
        policy.init(self.conf)
        # The host's connector properties are read now, not by the first
        # attach (the libvirt driver keeps them while the host is the same).
        self.driver.get_volume_connector(None)
        # What this host no longer owns goes first (servers deleted, and
        # volumes detached, without it while it was fenced), before any
        # message is taken: a guest that does not let go is stopped.
        recovery.reap(context, self.driver, self.host,
                      lock=self.instance_lock)
        self._last_guest_reap = time.monotonic()
        self._recover_instances(context)
        # Guests are back with the disks their mappings had: settle the
        # volume operations this host owned when it stopped.
        self._settle(context)
        self._last_look = time.monotonic()
        # The hypervisor's lifecycle events sync their server from now on
        # (the first periodic run syncs every server).
        self.driver.register_event_listener(self.request_power_sync)

    def cleanup_host(self):
        self._sync_pool.shutdown(wait=False, cancel_futures=True)

    @contextlib.contextmanager
    def _working_on(self, bdm, operation):
        """Yields False when this process is already running ``operation``
        (``attach``, ``detach``, ``swap``) on ``bdm`` (a second delivery of
        its message). Another operation on the same mapping is not a
        second delivery: a detach that took over a completed attach runs
        while the attach's message is still being finished."""
        with self._in_hand.holding((bdm.uuid, operation)) as mine:
            yield mine

    def _settle(self, context, stalled_before=None):
        return recovery.settle(context, self.driver, self.volume_client,
                               self.notifier, self.host,
                               in_hand=self._in_hand.uuids(),
                               stalled_before=stalled_before)

    def _recover_instances(self, context):
        """Take the servers of this host back after a restart: guests the
        driver lost are restored with their volumes, and work that was in
        flight when the service stopped is settled (its messages are gone):
        a power action is dropped, a build fails, a delete is finished."""
        instances = instance_obj.get_all(context, host=self.host)
        bdms = bdm_obj.BlockDeviceMapping.get_all_by_instances(
            context, [i.uuid for i in instances])
        for instance in instances:
            try:
                self._recover(context, instance, bdms[instance.uuid])
            except Exception:
                LOG.exception('Could not recover server %s', instance.uuid)

    def _recover(self, context, instance, bdms):
        if instance.task_state == states.DELETING:
            self._terminate(context, instance)
            # The delete is done: its event (left open by the process
            # that stopped) ends.
            self._settle_action(context, instance, instance_action.DELETE,
                                'compute_terminate_instance', None)
            return
        if instance.vm_state in (states.BUILDING, states.SHELVED_OFFLOADED):
            # Placed here for a build or an unshelve: interrupted if it had
            # begun (``spawning``); otherwise its message is still queued
            # for this host and comes once the service consumes (one lost
            # with a process that died before its first write is settled
            # by the periodic task once it stalled).
            if instance.task_state == states.SPAWNING:
                self._settle_placement(context, instance, bdms)
            return
        if instance.vm_state == states.ERROR and not instance.launched_at:
            # A build that failed: it never had a guest to restore.
            return
        if instance.task_state is not None:
            states.move(instance, 'recovered')
        disks = [{'mount_device': b.device_name,
                  'connection_info': b.get_connection_info(),
                  'mode': b.attach_mode or 'rw'}
                 for b in bdms if b.is_volume and b.device_name and
                 b.connection_info]
        self.driver.restore_guest(context, instance, disks)

    def _settle_placement(self, context, instance, bdms):
        """A build or an unshelve on this host that a restart (or a lost
        message) interrupted, as if it had failed: a build gives back the
        volumes it may have connected (attachments deleted, host
        disconnected, mappings destroyed) and the server is ERROR with a
        fault; an unshelve puts the server back to shelved_offloaded with
        every volume attached and none connected. The request's event ends
        with the error."""
        if instance.vm_state == states.BUILDING:
            exc = exception.NovaLiteException(
                message='The compute service restarted during the build.')
            volume_ops.release_for_failed_build(
                context, self.driver, self.volume_client, instance, bdms)
            states.move(instance, 'build_interrupted')
            instance_fault.InstanceFault.record(context, instance.uuid, exc,
                                                host=self.host)
            self._settle_action(context, instance, instance_action.CREATE,
                                'compute_build_and_run_instance', exc)
            return
        exc = exception.NovaLiteException(
            message='The compute service restarted during the unshelve.')
        shelve_ops.release_interrupted_unshelve(
            context, self.driver, self.volume_client, instance, bdms)
        instance_fault.InstanceFault.record(context, instance.uuid, exc,
                                            host=self.host)
        self._settle_action(context, instance, instance_action.UNSHELVE,
                            'compute_unshelve_instance', exc)

    def _settle_stalled_deletes(self, context, stalled_before):
        """Servers of this host whose delete was cast to it (``deleting``,
        no owner) and did not move since ``stalled_before``: the message
        was lost (a broker that restarted while this host was down, say).
        Taken (a compare-and-swap on the last move), then deleted as the
        message would have."""
        for instance in instance_obj.get_all(context, host=self.host):
            moved = instance.task_updated_at or instance.updated_at
            if (instance.task_state != states.DELETING or
                    instance.task_owner is not None or moved is None or
                    moved.replace(tzinfo=None) >= stalled_before):
                continue
            try:
                instance.take_over_task(service_obj.owner_name(
                    service_obj.COMPUTE_BINARY, self.host))
            except exception.InstanceTaskOwnerChanged:
                continue
            LOG.warning('The delete of server %s never reached this host; '
                        'deleting it', instance.uuid)
            self.terminate_instance(context, instance)

    def _settle_stalled_placements(self, context, stalled_before):
        """Servers placed on this host whose build or unshelve message
        never came (taken by a process of this host that died before its
        first write) and that have not moved since ``stalled_before``:
        taken (a compare-and-swap to ``spawning``), then settled as
        interrupted."""
        for status, vm_state, task_state in (
                ('BUILD', states.BUILDING, states.SCHEDULING),
                ('SHELVED_OFFLOADED', states.SHELVED_OFFLOADED,
                 states.UNSHELVING)):
            for instance in instance_obj.get_all(context, status=status,
                                                 host=self.host):
                moved = instance.updated_at
                if (instance.vm_state != vm_state or
                        instance.task_state != task_state or moved is None or
                        moved.replace(tzinfo=None) >= stalled_before):
                    continue
                try:
                    states.move(instance, 'retake', from_task=task_state)
                except (exception.UnexpectedTaskStateError,
                        exception.InstanceNotFound):
                    continue    # its message came meanwhile, or deleted
                LOG.warning('The %s of server %s never reached this host; '
                            'settling it', 'build' if vm_state ==
                            states.BUILDING else 'unshelve', instance.uuid)
                try:
                    self._settle_placement(
                        context, instance,
                        bdm_obj.BlockDeviceMapping.get_all_by_instance(
                            context, instance.uuid))
                except Exception:
                    LOG.exception('Could not settle server %s',
                                  instance.uuid)

    @staticmethod
    def _settle_action(context, instance, action, event_name, exc):
        """End the events the server's latest ``action`` (the request a
        restart interrupted) left open, with ``exc``."""
        latest = [a for a in instance_action.InstanceAction
                  .get_all_by_instance(context, instance.uuid, limit=10)
                  if a.action == action]
        if not latest:
            return
        ctxt = context.elevated()
        ctxt.request_id = latest[0].request_id
        instance_action.settle_events(ctxt, instance.uuid, event_name,
                                      exc=exc)

    @property
    def volume_client(self):
        if self._volume_client is None:
            self._volume_client = block_storage.get_client(self.conf)
        return self._volume_client

    def instance_lock(self, instance_uuid):
        """The lock every operation on one server holds on this host."""
        return lockutils.lock(instance_uuid, semaphores=self._semaphores,
                              do_log=False)

    @contextlib.contextmanager
    def _operation(self, context, instance, event_name):
        """Lock the server and record the step; failures are recorded as
        the event's error and an instance fault, then re-raised. Yields the
        step's ``EventReporter`` (whose ``finish()`` lets the step's last
        write end the event in its transaction)."""
        try:
            with instance_action.EventReporter(context, event_name,
                                               self.host,
                                               instance.uuid) as event:
                with self.instance_lock(instance.uuid):
                    yield event
        except Exception as exc:
            try:
                instance_fault.InstanceFault.record(
                    context, instance.uuid, exc, host=self.host)
            except Exception:
                LOG.exception('Could not record the fault of %s',
                              instance.uuid)
            raise

    def _cast_operation(self, context, instance, event_name, fn, *args,
                        with_event=False):
        """Run ``fn(*args)`` as ``_operation`` does (``fn(event, *args)``
        ``with_event``); a failure is logged, not raised (a cast has no
        caller to raise it to)."""
        try:
            with self._operation(context, instance, event_name) as event:
                if with_event:
                    fn(event, *args)
                else:
                    fn(*args)
        except Exception as exc:
            LOG.error('%s of server %s failed: %s', event_name,
                      instance.uuid, exc)

    # -- servers -------------------------------------------------------------
    def build_and_run_instance(self, context, instance):
        self._cast_operation(context, instance,
                             'compute_build_and_run_instance',
                             self._build, context, instance)

    def _build(self, context, instance):
        """Connect the server's volumes, spawn, complete the attachments:
        ``ACTIVE``. On failure the server is ``ERROR`` (its fault, recorded
        by ``_operation``, says why) and holds nothing: guest, attachments,
        host connections and volume mappings are released first
        (``volume_ops.release_for_failed_build``), so a volume shared with
        other servers (a multi-create on a multiattach volume) stays
        ``in-use`` for them alone and no attachment is left ``attaching``.
        Each server of a multi-create is built, and fails, on its own."""
        try:
            states.move(instance, 'build')
        except (exception.UnexpectedTaskStateError,
                exception.InstanceNotFound):
            LOG.info('Server %s was deleted before it was built',
                     instance.uuid)
            return
        bdms = bdm_obj.BlockDeviceMapping.get_all_by_instance(
            context, instance.uuid)
        try:
            disks = volume_ops.connect_for_spawn(
                context, self.driver, self.volume_client, instance, bdms)
            crashpoint.hit(crashpoint.COMPUTE_BUILD_AFTER_CONNECT)
            self.driver.spawn(context, instance, disks)
            volume_ops.complete_for_spawn(context, self.volume_client, bdms)
        except Exception as exc:
            LOG.warning('Building %s failed: %s; releasing its volumes',
                        instance.uuid, exc)
            volume_ops.release_for_failed_build(
                context, self.driver, self.volume_client, instance, bdms)
            try:
                states.move(instance, 'build_failed')
            except (exception.UnexpectedTaskStateError,
                    exception.InstanceNotFound):
                pass
            raise
        states.move(instance, 'build_done', power_state=states.RUNNING,
                    launched_at=utils.utcnow())

    def terminate_instance(self, context, instance):
        self._cast_operation(context, instance, 'compute_terminate_instance',
                             self._terminate, context, instance)

    def _terminate(self, context, instance):
        bdms = bdm_obj.BlockDeviceMapping.get_all_by_instance(
            context, instance.uuid)
        self.driver.destroy(context, instance, None)
        volume_ops.cleanup_for_delete(context, self.volume_client, bdms,
                                      driver=self.driver)
        states.move(instance, 'terminated', power_state=states.NOSTATE,
                    terminated_at=utils.utcnow())

    def _power_action(self, context, instance, event_name, driver_fn,
                      done, power_state, task_state):
        """The host's step of a power action: the driver, then the move
        ``done`` (out of ``task_state``)."""
        def run():
            driver_fn(instance)
            states.move(instance, done, power_state=power_state)
        try:
            self._cast_operation(context, instance, event_name, run)
        finally:
            # The driver failed: the server is idle again.
            self._reset_task_state(instance, task_state)

    def stop_instance(self, context, instance):
        self._power_action(context, instance, 'compute_stop_instance',
                           self.driver.power_off, 'stopped',
                           states.SHUTDOWN, states.POWERING_OFF)

    def start_instance(self, context, instance):
        self._power_action(context, instance, 'compute_start_instance',
                           lambda inst: self.driver.power_on(
                               inst, block_device_info=self._attached_disks(
                                   context, inst)),
                           'started', states.RUNNING, states.POWERING_ON)

    @staticmethod
    def _attached_disks(context, instance):
        """The server's attached volumes (no operation in flight on
        them), as the driver's ``block_device_info``."""
        bdms = bdm_obj.BlockDeviceMapping.get_all_by_instance(
            context, instance.uuid)
        return [{'mount_device': b.device_name,
                 'connection_info': b.get_connection_info(),
                 'mode': b.attach_mode or 'rw'}
                for b in bdms if b.is_volume and b.device_name and
                b.connection_info and not b.task]

    def pause_instance(self, context, instance):
        self._power_action(context, instance, 'compute_pause_instance',
                           self.driver.pause, 'paused',
                           states.POWER_PAUSED, states.PAUSING)

    def unpause_instance(self, context, instance):
        self._power_action(context, instance, 'compute_unpause_instance',
                           self.driver.unpause, 'unpaused',
                           states.RUNNING, states.UNPAUSING)

    # -- shelve ------------------------------------------------------------
    def _reset_task_state(self, instance, task_state):
        """After a failed step, the server is idle again."""
        if instance.task_state != task_state:
            return
        try:
            states.move(instance, 'abandon', from_task=task_state)
        except (exception.UnexpectedTaskStateError,
                exception.InstanceNotFound):
            pass

    def shelve_instance(self, context, instance):
        def run():
            if shelve_ops.shelve(context, self.conf, self.driver, instance):
                shelve_ops.offload(context, self.driver, self.volume_client,
                                   instance)
        try:
            self._cast_operation(context, instance,
                                 'compute_shelve_instance', run)
        finally:
            self._reset_task_state(instance, states.SHELVING)
            self._reset_task_state(instance, states.SHELVING_OFFLOADING)

    def shelve_offload_instance(self, context, instance):
        try:
            self._cast_operation(context, instance,
                                 'compute_shelve_offload_instance',
                                 shelve_ops.offload, context, self.driver,
                                 self.volume_client, instance)
        finally:
            self._reset_task_state(instance, states.SHELVING_OFFLOADING)

    def unshelve_instance(self, context, instance):
        self._cast_operation(context, instance, 'compute_unshelve_instance',
                             shelve_ops.unshelve, context, self.driver,
                             self.volume_client, self.host, instance)

    # -- deferred delete --------------------------------------------------
    def soft_delete_instance(self, context, instance):
        def run():
            self.driver.power_off(instance)
            states.move(instance, 'soft_deleted',
                        power_state=states.SHUTDOWN,
                        deleted_at=utils.utcnow())
        try:
            self._cast_operation(context, instance,
                                 'compute_soft_delete_instance', run)
        finally:
            self._reset_task_state(instance, states.SOFT_DELETING)

    def restore_instance(self, context, instance):
        def run():
            self.driver.power_on(instance)
            states.move(instance, 'restored', power_state=states.RUNNING,
                        deleted_at=None)
        try:
            self._cast_operation(context, instance,
                                 'compute_restore_instance', run)
        finally:
            self._reset_task_state(instance, states.RESTORING)

    # -- periodic tasks ----------------------------------------------------
    def _watch_fence(self, context):
        """Say when this host was forced down, let go, or silent for
        longer than ``service_down_time`` (the process was stopped or
        starved: it may have been forced down and back meanwhile), and
        reap (``recovery.reap``, each server under its instance lock):
        what was settled without it while it was fenced is no longer its
        own; a guest that does not let go of such a disk is stopped, and
        once no guest has one the host can be let go (``forced_down:
        false`` answers 409 before). Work that came in meanwhile is
        fenced by its task's generation already. The guests of deleted
        servers (``recovery.reap_guests``) are looked for then, and
        otherwise every ``running_deleted_instance_poll_interval``
        seconds."""
        now = time.monotonic()
        silent = (self._last_look is not None and
                  now - self._last_look > self.conf.service_down_time)
        self._last_look = now
        try:
            forced_down = service_obj.Service.get_by_host_and_binary(
                context, self.host, service_obj.COMPUTE_BINARY).forced_down
        except exception.ServiceNotFound:
            forced_down = False
        if forced_down and not self._fenced:
            LOG.warning('This host (%s) is forced down: its work was '
                        'settled without it; it removes what it no longer '
                        'owns', self.host)
        elif self._fenced and not forced_down:
            LOG.warning('This host (%s) is no longer forced down',
                        self.host)
        elif silent:
            LOG.warning('This host (%s) was silent for more than %ss: it '
                        'may have been forced down meanwhile',
                        self.host, self.conf.service_down_time)
        fence_news = bool(forced_down) or self._fenced or silent
        self._fenced = bool(forced_down)
        poll = self.conf.running_deleted_instance_poll_interval
        guests = fence_news or (poll > 0 and (
            self._last_guest_reap is None or
            now - self._last_guest_reap >= poll))
        recovery.reap(context, self.driver, self.host,
                      lock=self.instance_lock, guests=guests)
        if guests:
            self._last_guest_reap = now

    def periodic_tasks(self, context):
        self._watch_fence(context)
        if self.conf.recovery.settle_interval > 0:
            stalled_before = utils.utcnow() - \
                datetime.timedelta(seconds=self.conf.recovery.stalled_after)
            self._settle(context, stalled_before=stalled_before)
            self._settle_stalled_placements(context, stalled_before)
            self._settle_stalled_deletes(context, stalled_before)
        if self.conf.shelved_offload_time > 0:
            self._offload_shelved(context)
        if self.conf.reclaim_instance_interval > 0:
            self._reclaim_deleted(context)
        interval = self.conf.sync_power_state_interval
        now = time.monotonic()
        if interval >= 0 and (self._last_sync is None or
                              now - self._last_sync >= interval):
            self._last_sync = now
            self._sync_power_states(context)

    # -- the hypervisor's truth ----------------------------------------------
    def _sync_power_states(self, context):
        """Every server of this host with no task in progress is synced
        with its guest (``power_sync``), each on a thread of the sync
        pool under its instance lock, as Nova's ``_sync_power_states``."""
        instances = instance_obj.get_all(context, host=self.host)
        try:
            guests = len(self.driver.list_instance_uuids())
        except Exception:
            LOG.exception('Could not list the guests of the hypervisor')
            return
        LOG.info('Syncing the power states of the %d servers of this host',
                 len(instances))
        if guests != len(instances):
            LOG.warning('While syncing power states, found %d servers in '
                        'the database and %d guests on the hypervisor',
                        len(instances), guests)
        for instance in instances:
            if instance.task_state is not None:
                LOG.debug('Power-state sync: server %s has a task in '
                          'progress (%s); skipped', instance.uuid,
                          instance.task_state)
                continue
            self.request_power_sync(instance.uuid)

    def request_power_sync(self, instance_uuid):
        """Sync server ``instance_uuid`` with its guest on a thread of the
        sync pool (the driver's lifecycle events call this); a sync of
        that server already queued is not asked twice."""
        with self._syncs_lock:
            if instance_uuid in self._syncs:
                return
            self._syncs.add(instance_uuid)
        try:
            self._sync_pool.submit(self._sync_in_pool, instance_uuid)
        except RuntimeError:    # the pool is shut down: the host stops
            with self._syncs_lock:
                self._syncs.discard(instance_uuid)

    def _sync_in_pool(self, instance_uuid):
        with self._syncs_lock:
            self._syncs.discard(instance_uuid)
        try:
            self.sync_power_state(instance_uuid)
        except Exception:
            LOG.exception('Power-state sync of server %s failed',
                          instance_uuid)

    def sync_power_state(self, instance_uuid):
        """Sync server ``instance_uuid`` with its guest under its instance
        lock (``power_sync.sync``); a server the sync takes to
        ``powering-off`` is then stopped as a stop request would (the
        stop takes the lock again). Idempotent. Returns the outcome."""
        context = nl_context.get_admin_context()
        try:
            with self.instance_lock(instance_uuid):
                outcome, instance = power_sync.sync(
                    context, self.driver, self.host, instance_uuid)
        except exception.InstanceNotFound:
            return power_sync.SKIPPED
        if outcome == power_sync.STOP:
            self.stop_instance(context, instance)
        return outcome

    def _older_than(self, instances, field, seconds):
        now = utils.utcnow()
        for instance in instances:
            stamp = getattr(instance, field)
            if stamp is not None:
                stamp = stamp.replace(tzinfo=None)  # stored as naive UTC
            if instance.task_state is None and stamp is not None and \
                    (now - stamp).total_seconds() > seconds:
                yield instance

    def _claim(self, instance, task_state):
        """Compare-and-swap the idle server to ``task_state``; False if
        something else got to it first."""
        try:
            states.move(instance, 'begin', to_task=task_state)
        except (exception.UnexpectedTaskStateError,
                exception.InstanceNotFound):
            return False
        return True

    def _offload_shelved(self, context):
        shelved = instance_obj.get_all(context, host=self.host,
                                       status='SHELVED')
        for instance in self._older_than(shelved, 'shelved_at',
                                         self.conf.shelved_offload_time):
            if not self._claim(instance, states.SHELVING_OFFLOADING):
                continue
            LOG.info('Offloading %s, shelved for more than %ss',
                     instance.uuid, self.conf.shelved_offload_time)
            self.shelve_offload_instance(context, instance)

    def _reclaim_deleted(self, context):
        deleted = instance_obj.get_all(context, host=self.host,
                                       status='SOFT_DELETED')
        for instance in self._older_than(
                deleted, 'deleted_at', self.conf.reclaim_instance_interval):
            if not self._claim(instance, states.DELETING):
                continue
            LOG.info('Deleting %s, soft-deleted for more than %ss',
                     instance.uuid, self.conf.reclaim_instance_interval)
            self.terminate_instance(context, instance)

    # -- volumes ---------------------------------------------------------
    @messaging.expected_exceptions(exception.NovaLiteException)
    def reserve_block_device_name(self, context, instance, device, volume_id,
                                  tag=None, multiattach=False,
                                  delete_on_termination=False, bdm=None):
        with self.instance_lock(instance.uuid):
            # A disk the guest still has from a volume detached without
            # this host (it was fenced) would take the name: removed first.
            recovery.reap_devices(context, self.driver, instance)
            return volume_ops.reserve_device_name(
                context, self.conf, self.driver, instance, volume_id,
                device=device, tag=tag, multiattach=multiattach,
                delete_on_termination=delete_on_termination, bdm=bdm)

    def attach_volume(self, context, instance, bdm):
        with self._working_on(bdm, 'attach') as mine:
            if not mine:
                LOG.info('Already attaching volume %s to %s',
                         bdm.volume_id, instance.uuid)
                return
            self._cast_operation(context, instance, tasks.COMPUTE_ATTACH_EVENT,
                                 volume_ops.attach, context, self.driver,
                                 self.volume_client, self.notifier, instance,
                                 bdm)

    @staticmethod
    def _acts_for(bdm, task, task_ref, operation):
        """Whether a ``task`` message (detach, swap) acts for the task on
        ``bdm`` (read under the instance lock), decided by the message: a
        sender of compute RPC 1.4 names the task it acts for
        (``task_ref``), and a mapping no longer at that task (rolled
        back, settled, taken over, done) drops the message; an older
        sender names none, and then only a ``task`` at its first step
        that an API process owns (or, from a sender older than task
        ownership, no task at all) is taken. Returns ``(act, tracked)``.
        """
        if task_ref is not None:
            if bdm.matches(task_ref):
                return True, True
            LOG.warning('Dropping the %s of volume %s of %s: the message is '
                        'for %s (generation %s), the mapping is at %s '
                        '(generation %s): rolled back, settled or taken '
                        'over meanwhile', operation, bdm.volume_id,
                        bdm.instance_uuid,
                        '/'.join(str(task_ref.get(k)) for k in (
                            'task', 'owner', 'step')),
                        task_ref.get('generation'),
                        '/'.join(str(v) for v in (
                            bdm.task, bdm.task_owner, bdm.task_step)),
                        bdm.task_generation)
            return False, True
        if bdm.task is None:
            return True, False
        if (bdm.task == task and tasks.binary_of(bdm.task_owner) ==
                tasks.API_BINARY and bdm.task_step in (tasks.ACCEPTED,
                                                       tasks.RESERVED)):
            return True, True
        LOG.info('Dropping the %s of volume %s of %s from an older sender: '
                 'the mapping is at %s/%s/%s', operation, bdm.volume_id,
                 bdm.instance_uuid, bdm.task, bdm.task_owner, bdm.task_step)
        return False, True

    def detach_volume(self, context, instance, volume_id, attachment_id,
                      task_ref=None):
        def run(event):
            try:
                bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                    context, volume_id, instance.uuid)
            except exception.VolumeBDMNotFound:
                LOG.info('Volume %s is no longer attached to %s', volume_id,
                         instance.uuid)
                return
            act, tracked = self._acts_for(bdm, tasks.DETACHING, task_ref,
                                          'detach')
            if not act:
                return
            with self._working_on(bdm, 'detach') as mine:
                if not mine:
                    LOG.info('Already detaching volume %s from %s',
                             volume_id, instance.uuid)
                    return
                volume_ops.detach(context, self.driver, self.volume_client,
                                  self.notifier, instance, bdm, event=event,
                                  tracked=tracked)
        self._cast_operation(context, instance,
                             tasks.COMPUTE_DETACH_EVENT, run,
                             with_event=True)

    @staticmethod
    def _swapped(context, instance, new_volume_id, new_attachment_id):
        """Whether the server's mapping is the new volume's already (a
        second delivery of a swap that is done)."""
        try:
            bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                context, new_volume_id, instance.uuid)
        except exception.VolumeBDMNotFound:
            return False
        return bdm.attachment_id == new_attachment_id

    def swap_volume(self, context, instance, old_volume_id, new_volume_id,
                    new_attachment_id, task_ref=None):
        def run():
            try:
                bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                    context, old_volume_id, instance.uuid)
            except exception.VolumeBDMNotFound:
                if self._swapped(context, instance, new_volume_id,
                                 new_attachment_id):
                    LOG.info('Volume %s of %s is already swapped for %s',
                             old_volume_id, instance.uuid, new_volume_id)
                    return
                # Detached meanwhile: release what the API reserved.
                volume_ops.release_swap(context, self.volume_client,
                                        old_volume_id, new_attachment_id)
                raise
            act, tracked = self._acts_for(bdm, tasks.SWAPPING, task_ref,
                                          'swap')
            if not act:
                return
            with self._working_on(bdm, 'swap') as mine:
                if not mine:
                    LOG.info('Already swapping volume %s of %s',
                             old_volume_id, instance.uuid)
                    return
                volume_ops.swap(context, self.driver, self.volume_client,
                                instance, bdm, new_volume_id,
                                new_attachment_id, tracked=tracked)
        self._cast_operation(context, instance, tasks.COMPUTE_SWAP_EVENT, run)

    # -- events of other services ------------------------------------------
    def external_instance_event(self, context, instances, events):
        """Other services' events about servers of this host (a cast,
        ``compute.external_events``): ``volume-extended`` resizes the
        guest's disk of the volume (``extend_volume``); nothing on this
        host waits for any other event, which is logged and dropped (as
        Nova's host does with an event nothing waits for)."""
        by_uuid = {i.uuid: i for i in instances}
        for event in events:
            instance = by_uuid.get(event['server_uuid'])
            if instance is None:
                continue
            if event['name'] == external_events.VOLUME_EXTENDED:
                self.extend_volume(context, instance, event['tag'])
                continue
            LOG.warning('Received event %s:%s for server %s (status %s): '
                        'nothing on this host waits for it; dropped',
                        event['name'], event.get('tag'), instance.uuid,
                        event.get('status'))

    def extend_volume(self, context, instance, volume_id):
        """The guest's disk of ``volume_id`` gets the volume's size (block
        storage's, read now), so that the guest sees it grown, as Nova's
        ``extend_volume``. Idempotent: a disk of that size already stays
        as it is. A volume no longer attached, or not connected, is
        logged and left; a driver that cannot resize fails the step (its
        event and an instance fault say so)."""
        def run():
            try:
                bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                    context, volume_id, instance.uuid)
            except exception.VolumeBDMNotFound:
                LOG.warning('Volume %s was extended but is not attached to '
                            '%s: nothing to resize', volume_id,
                            instance.uuid)
                return
            connection_info = bdm.get_connection_info()
            if not connection_info:
                LOG.warning('Volume %s of %s was extended but has no '
                            'connection on this host: nothing to resize',
                            volume_id, instance.uuid)
                return
            if not self.driver.capabilities.get('supports_extend_volume'):
                raise exception.NotSupported(reason=_(
                    'the virt driver of host %s cannot resize a volume '
                    'disk') % self.host)
            volume = self.volume_client.get(
                block_storage.service_context(context), volume_id)
            LOG.info('Volume %s of %s was extended to %sG; resizing the '
                     'guest disk', volume_id, instance.uuid, volume['size'])
            self.driver.extend_volume(context, connection_info, instance,
                                      volume['size'] * units.Gi)
        self._cast_operation(context, instance,
                             external_events.COMPUTE_EXTEND_EVENT, run)
