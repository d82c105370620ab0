"""How block storage asks the compute service for what only it can do:
swap a server's disk to a migration's temporary volume, and have the
guests of an attached volume that grew see its new size.

Cinder calls Nova's ``PUT /servers/{id}/os-volume_attachments/{volume}``
with a service token when it migrates an attached volume, and sends
Nova's ``POST /os-server-external-events`` with a ``volume-extended``
event per attached server once it extended an in-use volume
(``cinder/compute/nova.py``). nova_lite's block storage and compute share
one deployment (one database, one message bus), so they are the compute
service layer's own swap and external events, called in this process
with a context that acts as the service.

Block storage does not import the compute side: it loads the
``ComputeCalls`` registered as entry point ``local`` of group
``nova_lite.volume.compute`` (``setup.cfg``;
``nova_lite.compute.volume_calls``), so that the compute side depends
on block storage and never the other way round (the import-linter
contract ``volume-not-compute``).
"""

import abc
import threading
import weakref

from oslo_log import log as logging
from stevedore import driver as stevedore_driver

from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume import status as st

LOG = logging.getLogger(__name__)

NAMESPACE = 'nova_lite.volume.compute'

_LOCK = threading.Lock()
# id(conf) -> (weakref to conf, ComputeCalls)
_CALLS = {}


class ComputeCalls(abc.ABC):
    """What block storage calls on the compute service."""

    @abc.abstractmethod
    def swap(self, ctxt, instance_uuid, old_volume_id, new_volume_id):
        """Swap server ``instance_uuid``'s ``old_volume_id`` for
        ``new_volume_id`` (Nova's swap: its checks, then the cast to the
        server's host). Returns once the compute side took it."""

    @abc.abstractmethod
    def volume_extended(self, ctxt, volume_id, instance_uuids):
        """``volume-extended`` of ``volume_id`` to each server of
        ``instance_uuids``; ``[(code, event)]`` as Nova's
        ``os-server-external-events`` answers."""


def _calls(conf):
    """The ``ComputeCalls`` of ``conf`` (loaded on first use, then
    shared)."""
    with _LOCK:
        entry = _CALLS.get(id(conf))
        if entry is None or entry[0]() is not conf:
            manager = stevedore_driver.DriverManager(
                NAMESPACE, 'local', invoke_on_load=True,
                invoke_args=(conf,))
            for stale in [k for k, (ref, _c) in _CALLS.items()
                          if ref() is None]:
                del _CALLS[stale]
            entry = _CALLS[id(conf)] = (weakref.ref(conf), manager.driver)
        return entry[1]


def swap(conf, ctxt, instance_uuid, old_volume_id, new_volume_id):
    """Have the compute service swap server ``instance_uuid``'s
    ``old_volume_id`` for ``new_volume_id`` (``ctxt`` a service context).
    Returns once the compute side took it (its own 202); raises what its
    checks raise."""
    _calls(conf).swap(ctxt, instance_uuid, old_volume_id, new_volume_id)


def volume_extended(conf, ctxt, volume_id):
    """Send ``volume-extended`` of ``volume_id`` to each server it is
    attached to (``ctxt`` a service context), so that their hosts resize
    the guests' disks; a volume attached to none sends nothing. As
    Cinder's, a failure is logged, not raised: the volume grew."""
    uuids = sorted({a.instance_uuid for a in
                    attachment_db.attachments_of_volume(ctxt, volume_id)
                    if a.instance_uuid and a.attach_status == st.ATTACHED})
    if not uuids:
        return
    try:
        results = _calls(conf).volume_extended(ctxt, volume_id, uuids)
    except Exception:
        LOG.exception('Could not tell the compute service that volume %s '
                      'grew (servers %s)', volume_id, ', '.join(uuids))
        return
    for code, event in results:
        if code != 200:
            LOG.warning('The compute service refused volume-extended of '
                        'volume %s for server %s: %s', volume_id,
                        event['server_uuid'], code)
