"""Settling, in the conductor, volume operations whose owner died, stopped
moving or was fenced (doc/source/contributor/crash-safety.rst).

What the conductor settles, and when:

* work it owned itself when it stopped (``settle(..., at_start=True)``
  from ``init_host``): an attach it had taken from the API, up to the
  hand-over to the host, rolled back; later, its own work only when it
  is provably not in hand (``in_hand``: no thread of this process works
  on it) and stalled;
* work another conductor owned that stopped moving for ``[recovery]
  stalled_after`` seconds (a live conductor keeps its long waits alive,
  ``tasks.keep_alive``), or whose conductor was forced down: rolled back.
  A conductor that only misses heartbeats is silent, not dead: its work
  is left to it;
* work an API process owned that stopped moving for ``stalled_after``
  seconds: the user was told it was accepted, so it is *re-driven*, not
  rolled back: an attach no conductor took is cast to the conductors
  again, a detach or a swap no host took is cast to its host again
  (which must be up: a silent host's work waits for it), a local detach
  is finished. The handlers are idempotent (the first delivery takes the
  task with a compare-and-swap, the others find it taken), so a message
  that was only slow and the re-driven one cannot both run. A swap the
  API had not handed over (``accepted``) and a shelved-offloaded
  server's swap before ``swapped`` are rolled back;
* every task on a mapping of a server whose compute host an
  administrator forced down (fenced, ``compute.fencing``), whoever owns
  it and at once: attaches rolled back, detaches finished (queued ones
  taken over), swaps rolled back before the guest had the new volume and
  finished from there; and the servers such a host was to delete are
  deleted without it. The host removes what it no longer owns when it
  comes back (``compute.host.recovery.reap``).

What it finishes instead of rolling back (``compute.release``): a local
detach, a shelved-offloaded server's swap whose mapping already names the
new volume (``swapped``), and a server deleted without a host
(``deleting``, owned by an API process or a conductor) whose task
stalled, by releasing its volumes and marking it deleted.

Work a compute host owns is its host's to settle (``compute.host.recovery``):
only the host knows whether the guest has the disk; unless it is fenced.

Block storage's own operations that a dead process left behind (a volume
``extending`` that stopped moving for ``stalled_after`` seconds, the
exports a restarted target daemon lost) are not settled here: block
storage settles itself, in the processes that serve it
(``nova_lite.volume_service.periodic``). The conductor reaches block storage
through the volume client only.

Each item is taken over first (compare-and-swap on its last move that
raises its generation, the fencing token), so two conductors running this
at once never settle one item twice, an item its owner moved on meanwhile
is left alone, and a worker still holding an item that was taken from it
finds the generation moved at its next write and stops there. A re-drive
claims its item with a compare-and-swap on its last move instead (the
task stays the API's, at its step, for the re-driven message to take).
"""

import datetime

from oslo_log import log as logging

from nova_lite.compute import fencing
from nova_lite.compute import notifications
from nova_lite.compute import release
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import rpcapi as conductor_rpcapi
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite import states
from nova_lite import tasks
from nova_lite import utils
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)


# Why an item is settled now (what ``_due`` answers).
_STALLED = 'stalled'
_AT_START = 'at start'
_FENCED_OWNER = 'owner fenced'
_FENCED_HOST = 'host fenced'
_RELEASED = 'released'
_FENCED = (_FENCED_HOST, _RELEASED)


class _Hosts(object):
    """The compute hosts' states, read once per run."""

    def __init__(self, context, conf):
        self._services = {s.host: s for s in service_obj.Service.list(
            context, service_obj.COMPUTE_BINARY)}
        self._down_time = conf.service_down_time

    def state(self, host):
        svc = self._services.get(host)
        if svc is None:
            return fencing.DOWN
        if svc.forced_down:
            return fencing.FENCED
        return fencing.UP if svc.is_up(self._down_time) else fencing.DOWN

    def fenced(self):
        return [h for h, s in self._services.items() if s.forced_down]


class _Settler(object):
    """One run of the settling (``settle``)."""

    def __init__(self, context, conf, volume_client, notifier, me,
                 compute_api=None, conductor_api=None):
        self.context = context
        self.conf = conf
        self.volume_client = volume_client
        self.notifier = notifier
        self.me = me
        self._compute_api = compute_api
        self._conductor_api = conductor_api
        self.hosts = _Hosts(context, conf)
        self._instances = {}

    @property
    def compute_api(self):
        if self._compute_api is None:
            self._compute_api = compute_rpcapi.ComputeAPI(self.conf)
        return self._compute_api

    @property
    def conductor_api(self):
        if self._conductor_api is None:
            self._conductor_api = conductor_rpcapi.ConductorAPI(self.conf)
        return self._conductor_api

    def instance(self, uuid):
        """The server (deleted ones too), or None."""
        if uuid not in self._instances:
            try:
                self._instances[uuid] = instance_obj.Instance.get_by_uuid(
                    self.context, uuid, read_deleted=True)
            except exception.InstanceNotFound:
                self._instances[uuid] = None
        return self._instances[uuid]

    def host_state(self, bdm):
        """The state of the host of ``bdm``'s server (None: no host)."""
        instance = self.instance(bdm.instance_uuid)
        if instance is None or not instance.host:
            return None
        return self.hosts.state(instance.host)


def _due(settler, bdm, fenced_owners, stalled_before, at_start, in_hand):
    """Why this run settles ``bdm``'s task now (None: it does not)."""
    if settler.host_state(bdm) == fencing.FENCED:
        return _FENCED_HOST
    owner = bdm.task_owner or ''
    if owner in fenced_owners:
        return _FENCED_OWNER
    if bdm.uuid in in_hand:
        return None
    binary = tasks.binary_of(owner)
    moved = bdm.task_updated_at
    if moved is not None:
        moved = moved.replace(tzinfo=None)
    stalled = moved is None or moved < stalled_before
    if owner == settler.me and at_start:
        return _AT_START
    if binary in (service_obj.CONDUCTOR_BINARY, tasks.API_BINARY,
                  tasks.MANAGE_BINARY) and stalled:
        return _STALLED
    return None


def settle(context, conf, volume_client, notifier, host, at_start=False,
           in_hand=(), owner=None, compute_api=None, conductor_api=None):
    """Settle what this conductor (on ``host``; ``owner``, its owner name
    by default) is due to (see the module docstring), leaving alone the
    mappings ``in_hand``. Returns ``[(item, outcome)]``: a
    ``tasks.Settled`` per mapping, an ``Instance`` per server deleted."""
    me = owner or service_obj.owner_name(service_obj.CONDUCTOR_BINARY,
                                         host)
    settler = _Settler(context, conf, volume_client, notifier, me,
                       compute_api=compute_api, conductor_api=conductor_api)
    stalled_before = utils.utcnow() - \
        datetime.timedelta(seconds=conf.recovery.stalled_after)
    fenced_owners = fencing.fenced_owners(context)
    in_hand = set(in_hand)
    due = []
    for bdm in bdm_obj.BlockDeviceMapping.get_with_tasks(context):
        why = _due(settler, bdm, fenced_owners, stalled_before, at_start,
                   in_hand)
        if why is not None:
            due.append((bdm, why))
    settled = []
    for bdm, why in due:
        settled += _settle_one(settler, bdm, why, host)
    return (settled +
            _finish_local_deletes(context, volume_client, me, stalled_before) +
            _delete_on_fenced_hosts(settler))


def settle_fenced_mapping(context, conf, volume_client, bdm, owner, host):
    """Settle the operation in flight on ``bdm`` now, as the task of a
    fenced host's server is (``nova-lite-manage volume_attachment
    release``, once the host is forced down or the server has none): an
    attach rolled back, a detach finished, a swap rolled back before the
    guest had the new volume and finished from there. Returns ``(
    tasks.Settled, outcome)``, or None if another service moved the task
    meanwhile."""
    settler = _Settler(context, conf, volume_client, None, owner)
    settled = tasks.settle_each(
        [bdm], owner,
        lambda b, previous: _settle(settler, b, previous, _RELEASED, host))
    return settled[0] if settled else None


def _without_host(settler, bdm):
    """Whether ``bdm``'s task is work done without a host (a local
    detach; a shelved-offloaded server's swap, which the API runs
    alone), whose steps are ``tasks.WITHOUT_HOST``'s."""
    if bdm.task == tasks.DETACHING:
        return bool(bdm.get_task_data().get('local') or
                    bdm.task_step == tasks.LOCAL_DETACHING)
    if bdm.task == tasks.SWAPPING:
        instance = settler.instance(bdm.instance_uuid)
        return (instance is None or
                instance.vm_state == states.SHELVED_OFFLOADED)
    return False


def _redrives(settler, bdm):
    """Whether ``bdm``'s stalled task is accepted work an API process
    (or a re-drive) handed on, which the table of steps says is driven
    again rather than settled (``tasks.on_crash``: ``REDRIVE``)."""
    if tasks.binary_of(bdm.task_owner) != tasks.API_BINARY:
        return False
    return tasks.on_crash(bdm.task, bdm.task_step,
                          without_host=_without_host(settler, bdm)) == \
        tasks.REDRIVE


def _settle_one(settler, bdm, why, host):
    """Take ``bdm``'s task (or claim it, to re-drive) and settle it."""
    if why == _STALLED and _redrives(settler, bdm):
        return tasks.settle_each(
            [bdm], settler.me,
            lambda b, previous: _redrive(settler, b, host),
            take_over=lambda b: b.touch_task(
                expected_updated_at=b.task_updated_at))
    return tasks.settle_each(
        [bdm], settler.me,
        lambda b, previous: _settle(settler, b, previous, why, host))


def _reason(settler, bdm, previous_owner, why):
    """Who really stopped, for the user (the error of the events, the
    fault)."""
    if why == _FENCED_HOST:
        instance = settler.instance(bdm.instance_uuid)
        return 'the compute host %s was forced down' % (
            instance.host if instance is not None else None)
    if why == _FENCED_OWNER:
        return '%s was forced down' % previous_owner
    if why == _RELEASED:
        return ('an administrator released the volume (nova-lite-manage '
                'volume_attachment release) while %s held it' %
                previous_owner)
    if why == _AT_START:
        return '%s restarted before the compute host took it over' % (
            previous_owner)
    return ('%s stopped moving it for %s seconds, before the compute host '
            'took it over' % (previous_owner,
                              settler.conf.recovery.stalled_after))


def _finish_local_deletes(context, volume_client, me, stalled_before):
    """Servers an API process (or a conductor, retrying) began to delete
    without a host and that stopped moving: taken over, then deleted."""
    finished = []
    for instance in instance_obj.Instance.get_stalled_tasks(
            context, states.DELETING,
            [tasks.API_BINARY, service_obj.CONDUCTOR_BINARY],
            stalled_before):
        previous_owner = instance.task_owner
        try:
            instance.take_over_task(me)
        except exception.InstanceTaskOwnerChanged:
            continue
        try:
            deleted = release.delete_locally(context.elevated(), volume_client,
                                             instance)
        except Exception:
            LOG.exception('Could not finish the delete of server %s',
                          instance.uuid)
            continue
        if deleted:
            LOG.warning('Finished the interrupted delete of server %s '
                        '(owner %s)', instance.uuid, previous_owner)
            finished.append((instance, tasks.FINISHED))
    return finished


_OPERATION = {tasks.ATTACHING: 'attach', tasks.DETACHING: 'detach',
              tasks.SWAPPING: 'swap'}


def unlock_refreshed(instance):
    """Unlock a server that a refresh locked (its lock reason says so)."""
    if instance.locked and \
            instance.locked_reason == tasks.REFRESH_LOCK_REASON:
        instance.locked = False
        instance.locked_by = None
        instance.locked_reason = None
        instance.save()


def finish_refresh(context, volume_client, bdm):
    """The last steps of ``nova-lite-manage volume_attachment refresh``,
    once the mapping has the new attachment (step ``refreshed``): the new
    attachment completed, the old one deleted, the task ended, the server
    unlocked. Each is idempotent."""
    svc = block_storage.service_context(context)
    data = bdm.get_task_data()
    volume_client.attachment_complete(svc, bdm.attachment_id)
    if data.get('old_attachment_id'):
        _delete_attachments(svc, volume_client, [data['old_attachment_id']])
    bdm.end_task()
    unlock_refreshed(instance_obj.Instance.get_by_uuid(
        context, bdm.instance_uuid))


def _roll_back_refresh(context, volume_client, bdm):
    """A refresh whose nova-lite-manage died before the mapping had the
    new attachment: rolled back (the new attachment, recorded or found
    by server and volume, deleted); the server unlocked."""
    svc = block_storage.service_context(context)
    new_id = bdm.get_task_data().get('new_attachment_id')
    _delete_attachments(svc, volume_client, [new_id] if new_id else [
        a for a in _unrecorded_attachments(svc, volume_client, bdm)
        if a != bdm.attachment_id])
    bdm.end_task()
    unlock_refreshed(instance_obj.Instance.get_by_uuid(
        context, bdm.instance_uuid))
    return tasks.ROLLED_BACK


def _settle(settler, bdm, previous_owner, why, host):
    """Finish or roll back ``bdm``'s task, as the table says
    (``tasks.on_crash``: ``FENCED`` for a fenced host's work or a
    released volume; the step's own rule otherwise). Accepted work that
    is re-driven never reaches here (``_redrives``); anything the table
    does not say to finish is rolled back."""
    action = tasks.on_crash(bdm.task, bdm.task_step,
                            fenced=why in _FENCED or why == _FENCED_OWNER,
                            without_host=_without_host(settler, bdm))
    if action == tasks.FINISH:
        return _FINISH[bdm.task](settler, bdm, why, host)
    if bdm.task == tasks.REFRESHING:
        return _roll_back_refresh(settler.context.elevated(),
                                  settler.volume_client, bdm)
    return _roll_back(settler, host, bdm,
                      _reason(settler, bdm, previous_owner, why))


def _finish_detach(settler, bdm, why, host):
    """A local detach (decided, or accepted), or any detach of a fenced
    host (queued for it, or taken by it): finished without the host,
    which removes the disk from its guest when it comes back."""
    ctxt = tasks.request_context(settler.context, bdm)
    if why in _FENCED and not bdm.get_task_data().get('local'):
        _finish_fenced_detach(ctxt, settler.volume_client, bdm)
    else:
        release.finish_local_detach(ctxt, settler.volume_client, bdm)
    instance_action.settle_events(ctxt, bdm.instance_uuid,
                                  tasks.COMPUTE_DETACH_EVENT, host=host)
    return tasks.FINISHED


def _finish_swap(settler, bdm, why, host):
    """A swap past the guest's move: at ``swapped`` (a shelved-offloaded
    server's, which the API runs without a host, or a fenced host's that
    got this far) its old volume released; at ``guest_swapped`` (a
    fenced host's: its guest had the new volume) the new attachment
    completed first."""
    ctxt = tasks.request_context(settler.context, bdm)
    if bdm.task_step == tasks.GUEST_SWAPPED:
        _finish_fenced_swap(ctxt, settler.volume_client, bdm)
    else:
        release.finish_offloaded_swap(ctxt, settler.volume_client, bdm)
    instance_action.settle_events(ctxt, bdm.instance_uuid,
                                  tasks.COMPUTE_SWAP_EVENT, host=host)
    return tasks.FINISHED


def _finish_refresh(settler, bdm, why, host):
    finish_refresh(settler.context.elevated(), settler.volume_client, bdm)
    return tasks.FINISHED


def _finish_attach(settler, bdm, why, host):
    """The conductor never finishes an attach: the steps it settles
    (its own, an API's, a fenced host's or owner's) all roll back; the
    host finishes its own at ``connected`` (``compute.host.recovery``),
    which the conductor settles only when the host is fenced."""
    raise exception.NovaLiteException(
        'the conductor does not finish attaches: %s at %s' % (
            bdm.task, bdm.task_step))


# The finish of each task, when the table says finish.
_FINISH = {tasks.ATTACHING: _finish_attach,
           tasks.DETACHING: _finish_detach,
           tasks.SWAPPING: _finish_swap,
           tasks.REFRESHING: _finish_refresh}


def _finish_fenced_detach(ctxt, volume_client, bdm):
    """A detach of a fenced host, finished without it: the mapping out of
    the way, the attachment deleted (never the volume: a detach), the
    mapping destroyed."""
    if bdm.task_step != tasks.RELEASING:
        release.step_aside(bdm)
    _volume_id, attachment_id, _info, _device = release.released(bdm)
    if attachment_id:
        block_storage.delete_attachment(ctxt, volume_client, attachment_id)
    bdm.destroy()


def _finish_fenced_swap(ctxt, volume_client, bdm):
    """A fenced host's swap whose guest had the new volume: the new
    attachment completed (without a connector: no host is connected),
    the mapping made the new volume's (``swapped``), the old attachment
    deleted, the task ended."""
    data = bdm.get_task_data()
    svc = block_storage.service_context(ctxt)
    volume_client.attachment_complete(svc, data['new_attachment_id'])
    bdm.move_task(tasks.SWAPPED, data=dict(
        data, old_volume_id=bdm.volume_id,
        old_attachment_id=bdm.attachment_id),
        volume_id=data['new_volume_id'],
        attachment_id=data['new_attachment_id'], connection_info=None)
    release.finish_offloaded_swap(ctxt, volume_client, bdm)


def _redrive(settler, bdm, host):
    """Cast again the message of accepted work whose message was lost
    (its task claimed, still the API's at its step): an attach to the
    conductors, a detach or a swap to the server's host when it is up (a
    silent host's message may still be queued for it: it waits). A server
    gone since is rolled back."""
    ctxt = tasks.request_context(settler.context, bdm)
    instance = settler.instance(bdm.instance_uuid)
    if instance is None or instance.vm_state == states.DELETED:
        return _roll_back(settler, host, bdm, 'server %s is deleted' %
                          bdm.instance_uuid)
    if bdm.task == tasks.ATTACHING:
        try:
            volume = settler.volume_client.get(
                block_storage.service_context(ctxt), bdm.volume_id)
        except exception.VolumeNotFound:
            return _roll_back(settler, host, bdm,
                              'volume %s is gone' % bdm.volume_id)
        settler.conductor_api.attach_volume(
            ctxt, instance, bdm.volume_id, None, bdm.tag,
            bdm.delete_on_termination, bool(volume.get('multiattach')),
            bdm=bdm, do_cast=True)
        return tasks.REDRIVEN
    if settler.hosts.state(instance.host) != fencing.UP:
        LOG.info('The %s of volume %s of %s waits for its host %s, which '
                 'is down', bdm.task, bdm.volume_id, instance.uuid,
                 instance.host)
        return None
    if bdm.task == tasks.DETACHING:
        settler.compute_api.detach_volume(
            ctxt, instance, bdm.volume_id, bdm.attachment_id,
            task_ref=bdm.task_ref())
        return tasks.REDRIVEN
    data = bdm.get_task_data()
    settler.compute_api.swap_volume(
        ctxt, instance, bdm.volume_id, data['new_volume_id'],
        data['new_attachment_id'], task_ref=bdm.task_ref())
    return tasks.REDRIVEN


def _delete_on_fenced_hosts(settler):
    """The servers a fenced host was to delete (``deleting``, the
    terminate cast to it, or taken by it): deleted without it, at once
    (their volumes released, the server marked deleted)."""
    deleted = []
    for host in settler.hosts.fenced():
        for instance in instance_obj.get_all(settler.context, host=host):
            if instance.task_state != states.DELETING:
                continue
            previous_owner = instance.task_owner
            try:
                instance.take_over_task(settler.me)
            except exception.InstanceTaskOwnerChanged:
                continue
            try:
                done = release.delete_locally(settler.context.elevated(),
                                              settler.volume_client, instance)
            except Exception:
                LOG.exception('Could not delete server %s of fenced host %s',
                              instance.uuid, host)
                continue
            if done:
                LOG.warning('Deleted server %s without its host %s, which is '
                            'forced down (owner %s)', instance.uuid, host,
                            previous_owner)
                deleted.append((instance, tasks.FINISHED))
    return deleted


def _unrecorded_attachments(svc, volume_client, bdm, volume_id=None):
    """The attachments of the mapping's volume (or of ``volume_id``, a
    swap's new volume) to its server that are not ``attached``: made by
    block storage for an attach or swap whose owner died before it
    recorded the id (a server maps a volume once, so they are this
    operation's)."""
    return [a['id'] for a in volume_client.attachment_get_all(
        svc, instance_id=bdm.instance_uuid,
        volume_id=volume_id or bdm.volume_id)
        if a['status'] != 'attached']


def _delete_attachments(svc, volume_client, attachment_ids):
    for attachment_id in attachment_ids:
        block_storage.delete_attachment(svc, volume_client, attachment_id)


def _roll_back(settler, host, bdm, reason):
    """Give back what the task took (the attachment it made, the volume's
    ``detaching``) and record why (``reason``: who really stopped) where
    the user sees it: the request's events end with the error, an
    instance fault, an attach's ``.error`` notification."""
    volume_client = settler.volume_client
    notifier = settler.notifier
    ctxt = tasks.request_context(settler.context, bdm)
    svc = block_storage.service_context(ctxt)
    exc = exception.OperationInterrupted(
        task=_OPERATION.get(bdm.task, bdm.task), volume_id=bdm.volume_id,
        reason=reason)
    if bdm.task == tasks.ATTACHING:
        attachment_id = bdm.attachment_id or \
            bdm.get_task_data().get('attachment_id')
        _delete_attachments(
            svc, volume_client, [attachment_id] if attachment_id
            else _unrecorded_attachments(svc, volume_client, bdm))
        bdm.destroy()
        event = tasks.CONDUCTOR_ATTACH_EVENT
    elif bdm.task == tasks.DETACHING:
        block_storage.roll_detaching(svc, volume_client, bdm.volume_id)
        bdm.end_task()
        event = tasks.COMPUTE_DETACH_EVENT
    elif bdm.task == tasks.SWAPPING:
        data = bdm.get_task_data()
        new_volume_id = data.get('new_volume_id')
        if data.get('new_attachment_id'):
            _delete_attachments(svc, volume_client, [
                                data['new_attachment_id']])
        elif new_volume_id:
            _delete_attachments(svc, volume_client, _unrecorded_attachments(
                svc, volume_client, bdm, volume_id=new_volume_id))
        block_storage.roll_detaching(svc, volume_client, bdm.volume_id)
        bdm.end_task()
        event = tasks.COMPUTE_SWAP_EVENT
    else:
        LOG.warning('No settling rule for task %s of volume %s of %s',
                    bdm.task, bdm.volume_id, bdm.instance_uuid)
        return None
    instance_action.settle_events(ctxt, bdm.instance_uuid, event, exc=exc,
                                  host=host)
    instance_fault.InstanceFault.record(
        ctxt, bdm.instance_uuid, exc, host=host)
    if bdm.task == tasks.ATTACHING and notifier is not None:
        try:
            instance = instance_obj.Instance.get_by_uuid(
                ctxt, bdm.instance_uuid, read_deleted=True)
        except exception.InstanceNotFound:
            instance = None
        if instance is not None:
            notifier.notify_volume(ctxt, instance,
                                   notifications.VOLUME_ATTACH,
                                   notifications.ERROR, bdm.volume_id,
                                   exc=exc, bdm=bdm)
    return tasks.ROLLED_BACK
