"""Reserving a volume for a server (``attachment_create`` without a
connector), patient with a multiattach volume that is busy.

Block storage keeps Cinder's rule (API-CONTRACT.md 5.4): a multiattach
volume takes a new reservation while it is ``available`` or ``in-use``,
not while another server's attach or detach of it holds it ``reserved``,
``attaching`` or ``detaching``. Those states last as long as one host
takes to connect (or disconnect) the volume, so when several servers
attach one multiattach volume at once (separate requests), the later ones
wait here, in the conductor's attach workflow, and try again, polling with
a deadline (``[compute] multiattach_reserve_timeout``), instead of failing
an attach that would succeed a moment later. Any other refusal, and a
non-multiattach volume, fail at once as before.

Server create does not wait here: an API worker must not wait on a host's
connect (ARCHITECTURE.md). A 2.105 multi-create needs no waiting within
its own request (the API completes each shared reservation at once, see
``compute/api.py``); a create that finds the volume busy with another
request's attach gets the 400 at once, as upstream.
"""

import time

from oslo_log import log as logging
import tenacity

from nova_lite import exception

LOG = logging.getLogger(__name__)

# Volume statuses that another attachment's attach or detach holds for a
# moment (a multiattach volume leaves them by itself).
TRANSIENT = ('reserved', 'attaching', 'detaching')
# After a refusal, these mean the volume moved on meanwhile: try again.
RESERVABLE = ('available', 'in-use')

_FIRST_PAUSE = 0.02
_MAX_PAUSE = 0.5


def reserve(context, volume_client, volume_id, instance_uuid, mode=None,
            timeout=60.0, clock=time.monotonic, sleep=time.sleep):
    """``attachment_create`` for ``instance_uuid``; returns the
    attachment. While a multiattach volume is busy with another
    attachment, retried (``tenacity``, pauses doubling from 0.02 s to
    0.5 s) for up to ``timeout`` seconds by ``clock``: no pause ends past
    the deadline; then the last refusal is raised."""
    deadline = clock() + timeout
    pause = tenacity.wait_exponential(multiplier=_FIRST_PAUSE,
                                      max=_MAX_PAUSE)

    def busy(retry_state):
        return isinstance(retry_state.outcome.exception(),
                          exception.InvalidVolume) and _busy(
            context, volume_client, volume_id)

    def past_deadline(retry_state):
        return clock() + pause(retry_state) > deadline

    retrying = tenacity.Retrying(retry=busy, wait=pause, stop=past_deadline,
                                 sleep=sleep, reraise=True)
    attachment = retrying(volume_client.attachment_create, context,
                          volume_id, instance_uuid, mode=mode)
    attempts = retrying.statistics.get('attempt_number', 1)
    if attempts > 1:
        LOG.info('Reserved multiattach volume %s for %s after %d '
                 'attempts', volume_id, instance_uuid, attempts)
    return attachment


def _busy(context, volume_client, volume_id):
    """True if the refusal was a multiattach volume held for a moment by
    another attachment (which may have let it go since: then it is
    reservable again)."""
    try:
        volume = volume_client.get(context, volume_id)
    except exception.VolumeNotFound:
        return False
    return bool(volume.get('multiattach')) and \
        volume.get('status') in TRANSIENT + RESERVABLE
