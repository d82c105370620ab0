"""Server states: Nova's vm_state, task_state and power_state values, the
API ``status`` they show as, and which states each operation allows.

``vm_state`` is where a server rests, ``task_state`` what is being done to it
(``None`` when idle), ``power_state`` what the hypervisor last reported.
"""

# -- vm_state ---------------------------------------------------------------
ACTIVE = 'active'
BUILDING = 'building'
PAUSED = 'paused'
SUSPENDED = 'suspended'
STOPPED = 'stopped'
RESCUED = 'rescued'
RESIZED = 'resized'
SOFT_DELETED = 'soft-delete'
DELETED = 'deleted'
ERROR = 'error'
SHELVED = 'shelved'
SHELVED_OFFLOADED = 'shelved_offloaded'

VM_STATES = (ACTIVE, BUILDING, PAUSED, SUSPENDED, STOPPED, RESCUED, RESIZED,
             SOFT_DELETED, DELETED, ERROR, SHELVED, SHELVED_OFFLOADED)

# -- task_state -------------------------------------------------------------
SCHEDULING = 'scheduling'
SPAWNING = 'spawning'
POWERING_OFF = 'powering-off'
POWERING_ON = 'powering-on'
PAUSING = 'pausing'
UNPAUSING = 'unpausing'
DELETING = 'deleting'
REBOOTING = 'rebooting'
SHELVING = 'shelving'
SHELVING_OFFLOADING = 'shelving_offloading'
UNSHELVING = 'unshelving'
SOFT_DELETING = 'soft-deleting'
RESTORING = 'restoring'

# -- power_state (the hypervisor's word) ------------------------------------
NOSTATE = 0
RUNNING = 1
POWER_PAUSED = 3
SHUTDOWN = 4

# -- API status -------------------------------------------------------------
# The status a vm_state shows as, unless its task_state says otherwise.
_STATUS_BY_VM_STATE = {
    ACTIVE: 'ACTIVE',
    BUILDING: 'BUILD',
    STOPPED: 'SHUTOFF',
    RESIZED: 'VERIFY_RESIZE',
    PAUSED: 'PAUSED',
    SUSPENDED: 'SUSPENDED',
    RESCUED: 'RESCUE',
    ERROR: 'ERROR',
    DELETED: 'DELETED',
    SOFT_DELETED: 'SOFT_DELETED',
    SHELVED: 'SHELVED',
    SHELVED_OFFLOADED: 'SHELVED_OFFLOADED',
}
# (vm_state, task_state) pairs that show as something else.
_STATUS_OVERRIDES = {
    (ACTIVE, REBOOTING): 'REBOOT',
}


def status_of(vm_state, task_state):
    """The API ``status`` of a server (Nova's ``_STATE_MAP``)."""
    status = _STATUS_OVERRIDES.get((vm_state, task_state))
    if status:
        return status
    return _STATUS_BY_VM_STATE.get(vm_state, 'UNKNOWN')


def vm_states_of_status(status):
    """The vm_states a ``status`` filter selects; empty for an unknown
    status (the list is then empty, as in Nova)."""
    status = (status or '').upper()
    return sorted(vm for vm, st in _STATUS_BY_VM_STATE.items()
                  if st == status)


# States in which the server's progress is shown.
PROGRESS_STATUSES = ('ACTIVE', 'BUILD')

# -- which states each operation allows (API-CONTRACT.md section 3) ---------
ATTACH_VOLUME_VM_STATES = (ACTIVE, PAUSED, STOPPED, RESIZED, SOFT_DELETED,
                           SHELVED, SHELVED_OFFLOADED)
DETACH_VOLUME_VM_STATES = ATTACH_VOLUME_VM_STATES
# Nova allows swap in active, paused and resized; nova_lite also while
# shelved (volume-ops-when-shelved), on the host or offloaded.
SWAP_VOLUME_VM_STATES = (ACTIVE, PAUSED, RESIZED, SHELVED, SHELVED_OFFLOADED)
STOP_VM_STATES = (ACTIVE, ERROR)
START_VM_STATES = (STOPPED,)
PAUSE_VM_STATES = (ACTIVE,)
UNPAUSE_VM_STATES = (PAUSED,)
SHELVED_STATES = (SHELVED, SHELVED_OFFLOADED)
SHELVE_VM_STATES = (ACTIVE, STOPPED, PAUSED, SUSPENDED)
SHELVE_OFFLOAD_VM_STATES = (SHELVED,)
UNSHELVE_VM_STATES = SHELVED_STATES
RESTORE_VM_STATES = (SOFT_DELETED,)
FORCE_DELETE_VM_STATES = (SOFT_DELETED,)


# -- moves ------------------------------------------------------------------
# Every change of a server's vm_state or task_state is one of these moves,
# made by ``move``: a compare-and-swap on ``task_state`` in the database
# (``Instance.save(expected_task_state=...)``), so that of two processes
# moving one server only one wins and the other gets
# ``UnexpectedTaskStateError`` (409 in the API). A move names the task
# states it leaves (``ANY``: no compare; ``GIVEN``: the caller's
# ``from_task``), the vm_state it sets (``KEEP``: unchanged) and the
# task_state it sets (``GIVEN``: the caller's ``to_task``).

KEEP = 'keep'
ANY = 'any'
GIVEN = 'given'

# Every task_state a delete may interrupt (all but a delete in progress).
DELETABLE_TASK_STATES = (None, SCHEDULING, SPAWNING, POWERING_OFF,
                         POWERING_ON, PAUSING, UNPAUSING, REBOOTING,
                         SHELVING, SHELVING_OFFLOADING, UNSHELVING,
                         SOFT_DELETING, RESTORING)

# name: (task states left, vm_state set, task_state set)
MOVES = {
    # The API starts a task on an idle server (then casts it).
    'begin': ((None,), KEEP, GIVEN),
    'begin_delete': (DELETABLE_TASK_STATES, KEEP, DELETING),
    # A task whose cast could not be sent, or whose step failed or gave
    # up before changing anything, leaves the server idle.
    'abandon': (GIVEN, KEEP, None),
    # The conductor: no host for a new server.
    'schedule_failed': ((SCHEDULING,), ERROR, None),
    # The compute host.
    'build': ((SCHEDULING,), KEEP, SPAWNING),
    'build_done': ((SPAWNING,), ACTIVE, None),
    'build_failed': ((SPAWNING,), ERROR, None),
    'stopped': ((POWERING_OFF,), STOPPED, None),
    'started': ((POWERING_ON,), ACTIVE, None),
    'paused': ((PAUSING,), PAUSED, None),
    'unpaused': ((UNPAUSING,), ACTIVE, None),
    'shelved': ((SHELVING,), SHELVED, None),
    'shelved_to_offload': ((SHELVING,), SHELVED, SHELVING_OFFLOADING),
    'offloaded': ((SHELVING_OFFLOADING,), SHELVED_OFFLOADED, None),
    'unshelve': ((UNSHELVING,), KEEP, SPAWNING),
    'unshelved': ((SPAWNING,), ACTIVE, None),
    'unshelve_failed': ((SPAWNING,), SHELVED_OFFLOADED, None),
    'soft_deleted': ((SOFT_DELETING,), SOFT_DELETED, None),
    'restored': ((RESTORING,), ACTIVE, None),
    'terminated': (ANY, DELETED, None),
    'deleted_locally': ((DELETING,), DELETED, None),
    # The compute host's restart and periodic settling.
    'retake': (GIVEN, KEEP, SPAWNING),
    'recovered': (ANY, KEEP, None),
    'build_interrupted': (ANY, ERROR, None),
    'unshelve_interrupted': (ANY, SHELVED_OFFLOADED, None),
}


def move(instance, name, from_task=None, to_task=None, expected_host=KEEP,
         **changes):
    """Make the move ``name`` of ``MOVES`` on ``instance`` (with
    ``changes`` of other fields, written in the same statement) and save
    it; ``UnexpectedTaskStateError`` if the server's task_state is not one
    the move leaves, ``InstanceNotFound`` if it was deleted.
    ``expected_host`` adds a compare on the host."""
    from_tasks, vm_state, task_state = MOVES[name]
    if from_tasks == GIVEN:
        from_tasks = (from_task,)
    if task_state == GIVEN:
        task_state = to_task
    if vm_state != KEEP:
        instance.vm_state = vm_state
    instance.task_state = task_state
    for field, value in changes.items():
        setattr(instance, field, value)
    expected = {}
    if from_tasks != ANY:
        expected['expected_task_state'] = list(from_tasks)
    if expected_host != KEEP:
        expected['expected_host'] = expected_host
    instance.save(**expected)
