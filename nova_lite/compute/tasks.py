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

from oslo_context import context as oslo_context
from oslo_log import log as logging

from nova_lite import exception

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
LOCAL_DETACHING = 'local_detaching'  # API: no host; finish without one
# A swap records ACCEPTED, RESERVED (API), CONNECTING, CONNECTED (host)
# and then:
GUEST_SWAPPED = 'guest_swapped'    # host: the guest has the new volume
SWAPPED = 'swapped'                # host: the mapping is the new volume's
# A refresh records ACCEPTED, RESERVED (its new attachment made) and:
REFRESHED = 'refreshed'            # the mapping has the new attachment

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


def settle_each(bdms, owner, settle):
    """Settle each mapping's task: take it over for ``owner`` first (a
    compare-and-swap on its last move: one that someone else moved or
    settled meanwhile is skipped), then ``settle(bdm, previous_owner)``,
    which returns what it did (or None). A failure is logged and the next
    one goes on. Returns ``[(bdm, outcome)]``."""
    settled = []
    for bdm in bdms:
        previous_owner = bdm.task_owner
        try:
            bdm.take_over_task(owner)
        except exception.TaskOwnerChanged:
            continue
        try:
            outcome = settle(bdm, previous_owner)
        except Exception:
            LOG.exception('Could not settle the %s of volume %s of %s',
                          bdm.task, bdm.volume_id, bdm.instance_uuid)
            continue
        if outcome:
            LOG.warning('Settled the interrupted %s of volume %s of %s '
                        '(owner %s): %s', bdm.task, bdm.volume_id,
                        bdm.instance_uuid, previous_owner, outcome)
            settled.append((bdm, outcome))
    return settled
