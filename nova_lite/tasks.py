"""Volume operations in flight on a block device mapping: their names, the
durable steps they record, who owns them, and what settling one needs.

A mapping's ``task`` says which operation holds it, ``task_owner`` which
service ('<binary>:<host>') may move it on, ``task_step`` the last
durable step reached. Every move is a compare-and-swap
(``BlockDeviceMapping.move_task`` and friends), so a service that lost a
race, or a message delivered twice, finds the task moved and does
nothing. doc/source/contributor/crash-safety.rst has the steps of each
operation and who settles it after a crash.
"""

import collections
import contextlib
import threading

from oslo_context import context as oslo_context
from oslo_log import log as logging

from nova_lite import exception
from nova_lite.i18n import _

LOG = logging.getLogger(__name__)

# Tasks (block_device_mappings.task).
ATTACHING = 'attaching'
DETACHING = 'detaching'
SWAPPING = 'swapping'
REFRESHING = 'refreshing'   # nova-lite-manage volume_attachment refresh

# Steps (task_step), in the order an attach or a detach records them.
ACCEPTED = 'accepted'              # API: mapping + action written
RESERVING = 'reserving'            # conductor took it; device name next
RESERVED = 'reserved'              # conductor: block storage reserved it
CAST = 'cast'                      # handed over to the compute host
CONNECTING = 'connecting'          # host took the attach; connecting
CONNECTED = 'connected'            # host: connection made, info saved
GUEST_DETACHING = 'guest_detaching'  # host took the detach
GUEST_DETACHED = 'guest_detached'  # host: the guest no longer has it
# The mapping is out of the server's way (no volume, no device name, no
# attachment on the row: what they were is in the task's data), so that a
# volume never reads ``available`` while its server still maps it; the
# attachment's delete and the row's are next.
RELEASING = 'releasing'
LOCAL_DETACHING = 'local_detaching'  # API: no host; finish without one
# A swap records ACCEPTED, RESERVED (API), CONNECTING, CONNECTED (host)
# and then:
GUEST_SWAPPED = 'guest_swapped'    # host: the guest has the new volume
SWAPPED = 'swapped'                # host: the mapping is the new volume's
# A refresh records ACCEPTED, RESERVED (its new attachment made) and:
REFRESHED = 'refreshed'            # the mapping has the new attachment

# How settling ended an operation (what the settling reports and logs).
FINISHED = 'finished'
ROLLED_BACK = 'rolled back'
REDRIVEN = 're-driven'      # accepted work whose message was lost: sent again

# Who records a step in the normal course of its task.
API = 'API'
CONDUCTOR = 'conductor'
COMPUTE = 'compute'
MANAGE = 'nova-lite-manage'

# What settling does with a task its owner left at a step.
FINISH = 'finish'
ROLL_BACK = 'roll back'
REDRIVE = 're-drive'


class Step(collections.namedtuple('Step', 'owner next on_crash')):
    """One durable step of a task: ``owner``, the side that records it
    in the normal course (``API``, ``CONDUCTOR``, ``COMPUTE``,
    ``MANAGE``); ``next``, the steps the task may move to from it (any
    step may end it); ``on_crash``, what settling does with a task its
    owner left there (``FINISH``, ``ROLL_BACK``, ``REDRIVE``)."""


#: Every task's steps: ``{task: {step: Step}}``. ``BlockDeviceMapping``
#: refuses a task started at a step not listed here and a move not
#: listed (``check_step``, ``check_move``), and
#: doc/source/contributor/crash-safety.rst's tables say the same (a unit
#: test compares them). Settling a fenced host's work follows its own
#: table (``FENCED``, and ``Fencing`` there); the steps of the work done
#: without a host are ``WITHOUT_HOST``'s. ``on_crash`` answers from them.
STEPS = {
    ATTACHING: {
        ACCEPTED: Step(API, (RESERVING,), REDRIVE),
        RESERVING: Step(CONDUCTOR, (RESERVED,), ROLL_BACK),
        # Recorded again with the attachment id on the row (a
        # shelved-offloaded server's attach, completed without a host).
        RESERVED: Step(CONDUCTOR, (RESERVED, CAST), ROLL_BACK),
        CAST: Step(COMPUTE, (CONNECTING,), ROLL_BACK),
        CONNECTING: Step(COMPUTE, (CONNECTED,), ROLL_BACK),
        CONNECTED: Step(COMPUTE, (), FINISH),
    },
    DETACHING: {
        # To ``releasing`` and ``local_detaching``: finished without the
        # host (a fenced one's, or one with no host).
        ACCEPTED: Step(API, (GUEST_DETACHING, RELEASING, LOCAL_DETACHING),
                       REDRIVE),
        GUEST_DETACHING: Step(COMPUTE, (GUEST_DETACHED, RELEASING), FINISH),
        GUEST_DETACHED: Step(COMPUTE, (RELEASING,), FINISH),
        RELEASING: Step(COMPUTE, (), FINISH),
        LOCAL_DETACHING: Step(API, (), FINISH),
    },
    SWAPPING: {
        ACCEPTED: Step(API, (RESERVED,), ROLL_BACK),
        # To ``swapped``: a shelved-offloaded server's swap.
        RESERVED: Step(API, (CONNECTING, SWAPPED), REDRIVE),
        CONNECTING: Step(COMPUTE, (CONNECTED,), ROLL_BACK),
        CONNECTED: Step(COMPUTE, (GUEST_SWAPPED,), ROLL_BACK),
        GUEST_SWAPPED: Step(COMPUTE, (SWAPPED,), FINISH),
        SWAPPED: Step(COMPUTE, (), FINISH),
    },
    REFRESHING: {
        ACCEPTED: Step(MANAGE, (RESERVED,), ROLL_BACK),
        RESERVED: Step(MANAGE, (REFRESHED,), ROLL_BACK),
        REFRESHED: Step(MANAGE, (), FINISH),
    },
}

#: The steps that differ for work done without a host (a detach with
#: ``local`` in its data; a shelved-offloaded server's swap, which the API
#: runs alone): ``{task: {step: Step}}``.
WITHOUT_HOST = {
    DETACHING: {
        ACCEPTED: Step(API, (LOCAL_DETACHING,), FINISH),
        LOCAL_DETACHING: Step(API, (), FINISH),
    },
    SWAPPING: {
        ACCEPTED: Step(API, (RESERVED,), ROLL_BACK),
        RESERVED: Step(API, (SWAPPED,), ROLL_BACK),
        SWAPPED: Step(API, (), FINISH),
    },
}


#: What settling does at once with the work on a server whose compute
#: host an administrator fenced (forced down), or whose volume an
#: administrator released (``nova-lite-manage volume_attachment
#: release``), whoever owns it: ``{task: {step: action}}``. The host's
#: guest is not asked: an attach is rolled back at every step (the
#: volume goes back to block storage, whatever the guest had), a detach
#: is finished (the host removes the disk when it comes back), a swap is
#: rolled back until the guest had the new volume and finished from
#: there. A refresh runs in ``nova-lite-manage``, not on the host: its
#: own steps' rule.
FENCED = {
    ATTACHING: {step: ROLL_BACK for step in STEPS[ATTACHING]},
    DETACHING: {step: FINISH for step in STEPS[DETACHING]},
    SWAPPING: {ACCEPTED: ROLL_BACK, RESERVED: ROLL_BACK,
               CONNECTING: ROLL_BACK, CONNECTED: ROLL_BACK,
               GUEST_SWAPPED: FINISH, SWAPPED: FINISH},
    REFRESHING: {step: spec.on_crash
                 for step, spec in STEPS[REFRESHING].items()},
}


def on_crash(task, step, fenced=False, without_host=False):
    """What settling does with ``task`` left at ``step`` (``FINISH``,
    ``ROLL_BACK``, ``REDRIVE``): ``FENCED``'s for a fenced host's or a
    released volume's work, else the step's (``step_of``). The one
    answer every settler (the conductor's, the compute host's) asks."""
    if fenced:
        return FENCED[task][step]
    return step_of(task, step, without_host).on_crash


def step_of(task, step, without_host=False):
    """The ``Step`` of ``task`` at ``step``: ``WITHOUT_HOST``'s for work
    done without a host where it lists the step, ``STEPS``' otherwise."""
    if without_host and step in WITHOUT_HOST.get(task, {}):
        return WITHOUT_HOST[task][step]
    return STEPS[task][step]


def check_step(task, step):
    """``ValueError`` unless ``step`` is one of ``task``'s (``STEPS``)."""
    if step not in STEPS.get(task, {}):
        raise ValueError('%r is not a step of the task %r' % (step, task))


def check_move(task, step, next_step):
    """``ValueError`` unless ``task`` may move from ``step`` to
    ``next_step`` (``STEPS``): a workflow recording a step out of its
    order is a bug, refused before anything is written."""
    check_step(task, step)
    if next_step not in STEPS[task][step].next:
        raise ValueError('the task %r cannot move from %r to %r' % (
            task, step, next_step))


# The instance action events of the volume operations' steps.
CONDUCTOR_ATTACH_EVENT = 'conductor_attach_volume'
COMPUTE_ATTACH_EVENT = 'compute_attach_volume'
COMPUTE_DETACH_EVENT = 'compute_detach_volume'
COMPUTE_SWAP_EVENT = 'compute_swap_volume'

API_BINARY = 'nova-lite-api'
MANAGE_BINARY = 'nova-lite-manage'
# The lock reason of a server whose attachment is being refreshed.
REFRESH_LOCK_REASON = 'Refreshing volume attachment'


def task_data(context, **values):
    """What settling a task needs to know later: the request it belongs
    to (its instance action), plus ``values``."""
    return dict(values, request_id=context.request_id)


def binary_of(owner):
    """The binary part of an owner name ('' when there is none)."""
    return (owner or '').split(':', 1)[0]


def request_context(context, bdm):
    """A copy of ``context`` that records instance action events in the
    request that started ``bdm``'s task (its ``request_id``)."""
    ctxt = context.elevated()
    request_id = bdm.get_task_data().get('request_id')
    if request_id:
        ctxt.request_id = request_id
    else:
        ctxt.request_id = oslo_context.generate_request_id()
    return ctxt


def volume_of(bdm):
    """The volume a mapping's task acts on: the row's, or (step
    ``releasing``, the row out of the way) the one its data recorded."""
    return bdm.volume_id or bdm.get_task_data().get('volume_id')


class Settled(collections.namedtuple(
        'Settled', 'instance_uuid volume_id task owner')):
    """A mapping's task as it was when it was settled (settling clears
    the task): its server, volume, task and the owner it was taken
    from."""


def settle_each(bdms, owner, settle, take_over=None):
    """Settle each mapping's task: take it over for ``owner`` first (a
    compare-and-swap on its last move that raises its generation: one
    that someone else moved or settled meanwhile is skipped, and the
    worker it is taken from can no longer write it), then ``settle(bdm,
    previous_owner)``, which returns what it did (or None). ``take_over``
    (default: the take-over) may claim it otherwise (a re-drive touches
    it). A failure is logged and the next one goes on. Returns
    ``[(Settled, outcome)]``."""
    settled = []
    for bdm in bdms:
        previous_owner = bdm.task_owner
        before = Settled(bdm.instance_uuid, volume_of(bdm), bdm.task,
                         previous_owner)
        try:
            if take_over is None:
                bdm.take_over_task(owner)
            else:
                take_over(bdm)
        except exception.TaskOwnerChanged:
            continue
        try:
            outcome = settle(bdm, previous_owner)
        except Exception:
            LOG.exception('Could not settle the %s of volume %s of %s',
                          before.task, before.volume_id, bdm.instance_uuid)
            continue
        if outcome:
            LOG.warning('Settled the interrupted %s of volume %s of %s '
                        '(owner %s): %s', before.task, before.volume_id,
                        bdm.instance_uuid, previous_owner, outcome)
            settled.append((before, outcome))
    return settled


class InHand(object):
    """The mappings whose task this process is working on right now:
    what its own periodic settling leaves alone (its tasks are settled at
    start, and later only when provably not in hand). Bookkeeping of one
    process; the task columns say who owns the work."""

    def __init__(self):
        self._keys = set()
        self._lock = threading.Lock()

    def add(self, key):
        """False if ``key`` is in hand already (a second delivery)."""
        with self._lock:
            if key in self._keys:
                return False
            self._keys.add(key)
            return True

    def discard(self, key):
        with self._lock:
            self._keys.discard(key)

    @contextlib.contextmanager
    def holding(self, key):
        """Yields False when ``key`` is in hand already."""
        mine = self.add(key)
        try:
            yield mine
        finally:
            if mine:
                self.discard(key)

    def uuids(self):
        """The mapping uuids in hand (keys are a uuid, or a (uuid,
        operation) pair)."""
        with self._lock:
            return {k[0] if isinstance(k, tuple) else k for k in self._keys}


# A long wait is kept alive this many times per ``[recovery]
# stalled_after``: a live owner's task never looks stalled because it waits.
KEEP_ALIVE_PER_STALL = 4


def keep_alive_interval(conf):
    return max(conf.recovery.stalled_after / KEEP_ALIVE_PER_STALL, 0.05)


@contextlib.contextmanager
def keep_alive(conf, bdm):
    """While inside, touch ``bdm``'s task every ``stalled_after / 4``
    seconds (``touch_task``): a long wait (the reservation call to the
    host, a busy multiattach volume, the API's call to the conductor)
    never makes a live owner's work look stalled. Stops by itself once
    the task is no longer this object's (moved on, taken over, gone).
    The touches are made in a copy of ``bdm`` (the waiting thread keeps
    using its own)."""
    stop = threading.Event()
    copy = bdm.obj_clone()
    interval = keep_alive_interval(conf)

    def touch():
        while not stop.wait(interval):
            try:
                copy.touch_task()
            except (exception.TaskOwnerChanged,
                    exception.VolumeBDMNotFound):
                return
            except Exception:
                LOG.exception('Could not keep the %s of volume %s of %s '
                              'alive', copy.task, copy.volume_id,
                              copy.instance_uuid)
    thread = threading.Thread(target=touch, daemon=True,
                              name='keep-alive-%s' % bdm.uuid)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def unattended_waits(conf):
    """``[(option, seconds, margin)]``: what a live owner may spend
    holding a task with nothing keeping it alive, and how many times that
    ``[recovery] stalled_after`` must be:

    * ``[DEFAULT] service_down_time``, once: a process that stalls (a
      pause, a starved thread, a database that does not answer) for less
      is still up by the liveness rule; its work must not be called
      stalled sooner than the process itself would be called down;
    * ``[cinder] timeout`` (the ``cinder`` client, when set), twice: one
      request to block storage over REST, which the API, the conductor
      and the host make between two steps of a task.

    The long waits (``long_rpc_timeout``: the conductor's reservation
    call to the host and the API's call to the conductor; ``[compute]
    multiattach_reserve_timeout``) are kept alive (``keep_alive``): they
    touch the task every ``stalled_after / 4`` seconds instead."""
    waits = [('[DEFAULT] service_down_time', conf.service_down_time, 1)]
    if conf.volume.client == 'cinder':
        timeout = getattr(conf.cinder, 'timeout', None)
        if timeout:
            waits.append(('[cinder] timeout', timeout, 2))
    return waits


def check_stalled_after(conf):
    """Refuse to start (``InvalidConfiguration``) when ``[recovery]
    stalled_after`` is not well above the unattended waits
    (``unattended_waits``): the settling would then take the work of
    owners that are only waiting. The message says by how much."""
    stalled_after = conf.recovery.stalled_after
    for name, wait, margin in unattended_waits(conf):
        needed = margin * wait
        if stalled_after >= needed:
            continue
        raise exception.InvalidConfiguration(reason=_(
            '[recovery] stalled_after (%(stalled)gs) must be at least '
            '%(times)s%(name)s (%(wait)gs), that is %(needed)gs: raise it '
            'by %(missing)gs or lower %(name)s. A live owner may spend '
            '%(name)s holding a task with nothing to keep it alive, and '
            'the work of a task that did not move for stalled_after '
            'seconds is taken from its owner.') % {
                'stalled': stalled_after,
                'times': '%d times ' % margin if margin > 1 else '',
                'name': name, 'wait': wait, 'needed': needed,
                'missing': needed - stalled_after})
