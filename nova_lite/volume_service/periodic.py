"""Block storage settles itself, in the volume services that drive its
backends.

Block storage's settling (``settling.Settling``: the volumes a process
that died left ``extending`` or ``deleting``, stalled migrations, and the
backends' exports made to agree with the database, e.g. after a target
daemon restarted) is run:

* every ``[recovery] settle_interval`` seconds (0: never) by
  ``PeriodicSettling``, started by each volume service
  (``nova-lite-volume``, ``volume_service.service``; in ``nova-lite-all`` the
  one it runs in-process). Its first run is one interval after it
  starts, not at start: what a process that died left is settled only
  once it has not moved for ``[recovery] stalled_after`` seconds anyway;
* once by ``nova-lite-manage volume_attachment reconcile`` (``settle``),
  on the node of the volume service (it loads the backends' drivers).

Apart from it, the volume service looks every few seconds (the smallest
``export_check_interval`` of its backends: ``iscsi``'s, 2 s by default;
0 for every backend: never) at whether a backend's target daemon lost
its exports (``ensure_exports`` with no ``stalled_before``: for
``iscsi``, one ``tgtadm --op show``), the first time when the service
starts, and exports again at once what it lost (``watch_exports``): a
restarted tgtd gets its targets back within that interval, whatever
``settle_interval`` is (0 too).

The API processes and the conductor do not run it: they load no driver
(the API reaches the backends through the volume service's RPC API,
``volume.rpcapi``), and with ``[volume] client = cinder`` the conductor
never touches nova_lite's block-storage tables.

Several volume services may run it at once (those sharing a backend):
each decision is a compare-and-swap on the volume's last move, so one
volume is settled once and a volume its owner moved on meanwhile is left
alone; and ``ensure_exports`` makes each volume's exports agree under
that volume's lock (``drivers.iscsi``). Each service settles the
backends its configuration enables, calling their drivers in-process
(``local_settling``).
"""

import datetime

from futurist import periodics
from oslo_log import log as logging

from nova_lite import context as nl_context
from nova_lite import service
from nova_lite import utils
from nova_lite.volume_service import drivers
from nova_lite.volume_service import manager as volume_manager

LOG = logging.getLogger(__name__)


def local_settling(conf):
    """Block storage's settling of ``conf``'s backends, their drivers
    called in this process (a ``VolumeManager``'s)."""
    return volume_manager.VolumeManager(conf, conf.host).settling


class VolumeOperation(dict):
    """A block-storage operation settled: ``volume``, ``operation``
    (``extend``, ``delete``, ``export``, a migration's)."""


def settle(ctxt, conf, stalled_before=None):
    """Run block storage's settling once, now: what has not moved since
    ``stalled_before`` (naive UTC; by default ``[recovery]
    stalled_after`` seconds ago). Returns ``[(VolumeOperation,
    outcome)]``."""
    if stalled_before is None:
        stalled_before = utils.utcnow() - \
            datetime.timedelta(seconds=conf.recovery.stalled_after)
    settled = local_settling(conf).settle_stalled(
        ctxt.elevated(), stalled_before)
    return [(VolumeOperation(volume=volume_id, operation=operation), outcome)
            for volume_id, operation, outcome in settled]


def settle_every(conf, interval):
    """A ``futurist.periodics`` callable that runs ``settle`` every
    ``interval`` seconds (the first run one interval after its worker
    starts), logging what it settled. A failure is logged and the next
    run tries again: it never ends the periodic."""
    ctxt = nl_context.get_admin_context()

    @periodics.periodic(interval)
    def settle_block_storage():
        try:
            settled = settle(ctxt, conf)
        except Exception:
            LOG.exception("Block storage's settling failed; trying again "
                          "in %s s", interval)
            return
        for item, outcome in settled:
            LOG.info("Block storage's settling: %s of volume %s: %s",
                     item['operation'], item['volume'], outcome)
    return settle_block_storage


def check_interval(conf):
    """The smallest positive ``export_check_interval`` of ``conf``'s
    enabled backends, or 0."""
    intervals = [d.export_check_interval()
                 for d in drivers.get_backends(conf).values()]
    return min([i for i in intervals if i > 0], default=0)


def watch_exports(conf, interval):
    """A ``futurist.periodics`` callable that makes every enabled
    backend export again what its target daemon lost, at once (when the
    process starts) and every ``interval`` seconds; the leftovers of dead
    processes are block storage's settling's (``settle_every``)."""
    ctxt = nl_context.get_admin_context()
    settling = local_settling(conf)

    @periodics.periodic(interval, run_immediately=True)
    def watch_block_storage_exports():
        for volume_id, outcome in settling.ensure_exports(ctxt):
            LOG.info("Block storage's export check: volume %s: %s",
                     volume_id, outcome)
    return watch_block_storage_exports


class PeriodicSettling(object):
    """Block storage's settling every ``[recovery] settle_interval``
    seconds (none when it is 0) and the export check every
    ``check_interval`` seconds (none when it is 0), on periodics of their
    own (``service.Periodics``). ``stop()`` ends them and returns at
    once, ``wait()`` waits for a run in progress."""

    name = 'block-storage-settling'

    def __init__(self, conf):
        self.conf = conf
        self._periodics = None

    def start(self):
        callables = []
        interval = self.conf.recovery.settle_interval
        if interval > 0:
            callables.append(settle_every(self.conf, interval))
        check = check_interval(self.conf)
        if check > 0:
            callables.append(watch_exports(self.conf, check))
        if callables:
            self._periodics = service.Periodics(
                callables, '%s-%s' % (self.name, self.conf.host)).start()
        return self

    @property
    def running(self):
        return self._periodics is not None

    def stop(self):
        if self._periodics is not None:
            self._periodics.stop()

    def wait(self):
        if self._periodics is not None:
            self._periodics.wait()
            self._periodics = None
