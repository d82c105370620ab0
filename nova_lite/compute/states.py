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
