"""Named crash points: where the fault-injection tier kills a process.

A workflow marks the places between its durable steps with
``crashpoint.hit(NAME)``. In a normal process that is a set lookup and
nothing more. A process started with the environment variable
``NOVA_LITE_CRASH_AT`` naming one or more points (comma separated) kills
itself with SIGKILL when it reaches one of them: no ``finally`` block, no
``atexit`` handler, no message acknowledgement runs, exactly as when the
kernel's OOM killer or a power cut ends it.

``NOVA_LITE_CRASH_MARK``, when set, is a file path that makes the crash
happen once: the first process to reach an armed point creates the file
(``O_CREAT | O_EXCL``) and dies; every later arrival, in that process's
restarted successor or in another uWSGI worker started with the same
environment, finds the file and goes on. The file holds the point's name
and the process id, so the test knows the crash happened.

These are test-only settings: they are environment variables, not
configuration options, so that no configuration file can switch them on.
Every point is declared in ``POINTS`` below (one place to read them all;
the integration tier's crash matrix iterates over it), and ``hit`` refuses
an undeclared name, so a typo fails the test that reaches it instead of
never crashing.
"""

import os
import signal

CRASH_AT_ENV = 'NOVA_LITE_CRASH_AT'
CRASH_MARK_ENV = 'NOVA_LITE_CRASH_MARK'

# name -> (process that reaches it, what has been written when it is hit).
# Names are <process>.<workflow>.<where>.
POINTS = {}


def declare(name, process, description):
    """Declare a crash point (at import of this module); returns name."""
    if name in POINTS:
        raise ValueError('crash point %s declared twice' % name)
    POINTS[name] = (process, description)
    return name


# -- the API (compute/server_volumes.py) -------------------------------------
API_ATTACH_AFTER_ACCEPT = declare(
    'api.attach.after_accept', 'api',
    'the mapping (owned by the API) and the action are written; the '
    'conductor was not called yet')
API_DETACH_AFTER_BEGIN = declare(
    'api.detach.after_begin_detaching', 'api',
    'the detach task is started (owned by the API), the volume is '
    'detaching and the action recorded; the host was not told yet')
API_SWAP_AFTER_RESERVE = declare(
    'api.swap.after_reserve', 'api',
    'the swap task is started (owned by the API), the old volume is '
    'detaching, the new one reserved (its attachment id recorded) and the '
    'action recorded; the host was not told yet')
API_SWAP_OFFLOADED_AFTER_RESERVE = declare(
    'api.swap_offloaded.after_reserve', 'api',
    'a shelved-offloaded server (no host): the swap task is started '
    '(owned by the API), the new volume reserved (its attachment id '
    'recorded) and the action recorded; the mapping still names the old '
    'volume')
API_SWAP_OFFLOADED_AFTER_COMPLETE = declare(
    'api.swap_offloaded.after_complete', 'api',
    'a shelved-offloaded server: the new attachment is complete (the new '
    'volume in-use for the server) but the mapping still names the old '
    'volume (step reserved)')
API_SWAP_OFFLOADED_AFTER_MOVE = declare(
    'api.swap_offloaded.after_move', 'api',
    'a shelved-offloaded server: the new attachment is complete and the '
    'mapping names the new volume (step swapped); the old attachment is '
    'not deleted yet')
API_LOCAL_DETACH_AFTER_ACCEPT = declare(
    'api.local_detach.after_accept', 'api',
    'no host can detach (offloaded server, or its host forced down): the '
    'API started the local detach task (step accepted) and its action; '
    'the mapping has not stepped aside yet')
API_LOCAL_DETACH_AFTER_DECIDE = declare(
    'api.local_detach.after_decide', 'api',
    'no host can detach (offloaded server, or its host forced down): the '
    'API moved the detach to local_detaching, the mapping stepped aside; '
    'the attachment is not deleted yet')
API_LOCAL_DELETE_AFTER_DECIDE = declare(
    'api.local_delete.after_decide', 'api',
    'a server with no host or a forced-down one: the API moved it to '
    'deleting (its task); no volume is released yet')

# -- nova-lite-manage (cmd/volume_attachment.py) ------------------------------
MANAGE_REFRESH_AFTER_CREATE = declare(
    'manage.refresh.after_create', 'manage',
    'the refresh task is started and the server locked; block storage made '
    'the new attachment with the connector; its id is not recorded yet')
MANAGE_REFRESH_AFTER_MOVE = declare(
    'manage.refresh.after_move', 'manage',
    "the mapping has the new attachment and its connection_info; the new "
    "attachment is not complete, the old one not deleted")

# -- block storage (volume/api.py), in the process that serves /v3 ----------
VOLUME_EXTEND_AFTER_START = declare(
    'api.volume_extend.after_start', 'api',
    'the volume is extending with its new size (the quota counts it); the '
    'backend was not asked to grow it')
VOLUME_EXTEND_AFTER_BACKEND = declare(
    'api.volume_extend.after_backend', 'api',
    'the backend grew the volume; its row is still extending')
VOLUME_DELETE_AFTER_START = declare(
    'api.volume_delete.after_start', 'api',
    'the volume is deleting; the backend still holds it')
VOLUME_CLONE_AFTER_CREATE = declare(
    'api.volume_clone.after_create', 'api',
    'the clone is creating with its source_volid (the source cannot be '
    'deleted); the backend was not asked to clone')
# A migration (volume/migration.py; in the API process, os-migrate_volume
# or os-retype).
VOLUME_MIGRATE_AFTER_START = declare(
    'api.volume_migrate.after_start', 'api',
    'the volume is migration_status starting; no temporary volume yet')
VOLUME_MIGRATE_AFTER_TARGET = declare(
    'api.volume_migrate.after_target', 'api',
    'the temporary volume exists on the target backend (available); the '
    'volume is still starting')
VOLUME_MIGRATE_AFTER_COPY = declare(
    'api.volume_migrate.after_copy', 'api',
    'no host uses the volume: block storage copied its data into the '
    'temporary volume and recorded it (migration_status completing); the '
    'volume still has its old storage')
VOLUME_MIGRATE_AFTER_FINISH = declare(
    'api.volume_migrate.after_finish', 'api',
    'the volume has the new storage (migration_status success); the '
    'temporary volume, now naming the old storage, is deleting')

# -- the volume service (volume_service/manager.py), nova-lite-volume ------
# Each after the backend's step, before the answer reaches block storage's
# service layer (the caller's RPC call then times out: its own failure
# rules apply, and the service's settling at its restart finishes the rest).
VOLUME_SERVICE_CREATE_AFTER_BACKEND = declare(
    'volume.create.after_backend', 'volume',
    'the backend made the storage; the volume is still creating (the '
    'caller has no answer)')
VOLUME_SERVICE_EXTEND_AFTER_BACKEND = declare(
    'volume.extend.after_backend', 'volume',
    'the backend grew the volume; its row is still extending')
VOLUME_SERVICE_CONNECT_AFTER_BACKEND = declare(
    'volume.connect.after_backend', 'volume',
    'the backend connected the host (exported); the attachment is not '
    'connected')
VOLUME_SERVICE_DISCONNECT_AFTER_BACKEND = declare(
    'volume.disconnect.after_backend', 'volume',
    'the backend disconnected the host; the attachment still exists '
    '(detaching)')
VOLUME_SERVICE_MIGRATE_MID_COPY = declare(
    'volume.migrate.mid_copy', 'volume',
    'both volumes are open for the copy, none of the data copied; the '
    'volume is migrating with its temporary volume')

# -- the conductor (conductor/attach.py) -------------------------------------
CONDUCTOR_ATTACH_AFTER_TAKE = declare(
    'conductor.attach.after_take', 'conductor',
    'the conductor owns the attach; no device name yet')
CONDUCTOR_ATTACH_AFTER_RESERVE_DEVICE = declare(
    'conductor.attach.after_reserve_device', 'conductor',
    'the host gave the mapping its device name')
CONDUCTOR_ATTACH_AFTER_RESERVE = declare(
    'conductor.attach.after_reserve', 'conductor',
    'block storage reserved the volume (an attachment exists); its id is '
    'not recorded on the mapping yet')
CONDUCTOR_ATTACH_AFTER_ATTACHMENT_CREATE = declare(
    'conductor.attach.after_attachment_create', 'conductor',
    'block storage reserved the volume; the attachment id is in the '
    "task's data")
CONDUCTOR_ATTACH_AFTER_HANDOVER = declare(
    'conductor.attach.after_handover', 'conductor',
    'the attach is handed over to the host (committed); the cast was not '
    'sent')

# -- the compute host (compute/host/volume_ops.py) --------------------------
COMPUTE_ATTACH_AFTER_TAKE = declare(
    'compute.attach.after_take', 'compute',
    'the host took the attach over; nothing connected')
COMPUTE_ATTACH_AFTER_CONNECT = declare(
    'compute.attach.after_connect', 'compute',
    'the attachment has its connection (volume attaching) and the mapping '
    'its connection_info; the guest has not the disk yet')
COMPUTE_ATTACH_AFTER_GUEST_ATTACH = declare(
    'compute.attach.after_guest_attach', 'compute',
    'the guest has the disk; the attachment is not complete')
COMPUTE_SWAP_AFTER_CONNECT = declare(
    'compute.swap.after_connect', 'compute',
    'the new volume is connected to the host (its attachment updated, its '
    'connection_info in the task data); the guest still has the old one')
COMPUTE_SWAP_AFTER_GUEST_SWAP = declare(
    'compute.swap.after_guest_swap', 'compute',
    'the guest has the new volume; its attachment is not complete and the '
    'mapping is still the old volume\'s')
COMPUTE_SWAP_AFTER_MOVE = declare(
    'compute.swap.after_move', 'compute',
    'the new attachment is complete and the mapping is the new volume\'s; '
    'the old volume\'s attachment is not deleted yet')
COMPUTE_SWAP_AFTER_RELEASE = declare(
    'compute.swap.after_release', 'compute',
    'a migration\'s swap: the old attachment is deleted; block storage was '
    'not told the swap is done (the migration is not complete)')
COMPUTE_BUILD_AFTER_CONNECT = declare(
    'compute.build.after_connect', 'compute',
    "the server's volumes are connected (attachments updated, "
    "connection_info on the mappings); the guest is not spawned")
COMPUTE_UNSHELVE_AFTER_CONNECT = declare(
    'compute.unshelve.after_connect', 'compute',
    "an offloaded server's volumes are connected to this host; the guest "
    "is not spawned")
COMPUTE_DETACH_AFTER_TAKE = declare(
    'compute.detach.after_take', 'compute',
    'the host took the detach over; the guest still has the disk')
COMPUTE_DETACH_AFTER_GUEST_DETACH = declare(
    'compute.detach.after_guest_detach', 'compute',
    'the guest no longer has the disk; the attachment still exists')
COMPUTE_DETACH_AFTER_STEP_ASIDE = declare(
    'compute.detach.after_step_aside', 'compute',
    'the guest no longer has the disk and the mapping stepped aside '
    '(releasing: no volume on the row, the attachment id in the task '
    'data); the attachment still exists (the volume is not available)')


def _armed():
    value = os.environ.get(CRASH_AT_ENV, '')
    return frozenset(p.strip() for p in value.split(',') if p.strip())


_ARMED = _armed()


def reload_from_environment():
    """Read ``NOVA_LITE_CRASH_AT`` again (tests that change it in-process);
    returns the armed points."""
    global _ARMED
    _ARMED = _armed()
    return _ARMED


def _claim_mark(name):
    """True if this process is the one to crash (the mark file was created
    now, or no mark file is used)."""
    mark = os.environ.get(CRASH_MARK_ENV)
    if not mark:
        return True
    try:
        fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, 'w') as f:
        f.write('%s %d\n' % (name, os.getpid()))
        f.flush()
        os.fsync(f.fileno())
    return True


def hit(name):
    """Die here (SIGKILL) if the point is armed; otherwise do nothing."""
    if name not in POINTS:
        raise ValueError('undeclared crash point %s' % name)
    if name in _ARMED and _claim_mark(name):
        os.kill(os.getpid(), signal.SIGKILL)
