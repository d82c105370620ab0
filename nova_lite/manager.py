"""Base class of the RPC endpoints a service runs (conductor, compute).

A manager is a doorway: it declares its oslo.messaging ``target`` (namespace
and version), locks and validates, and hands long work to the workflow
modules named after it. ``periodic_tasks`` is called by the service every
``periodic_interval`` seconds (a ``futurist`` periodic: ``service``).
"""


class Manager(object):
    target = None
    periodic_interval = None

    def __init__(self, conf, host):
        self.conf = conf
        self.host = host

    def init_host(self, context):
        """Called at start before anything else: before RPC is served and
        before the service registers (and is seen up): the host's
        unfinished work is settled first."""

    def periodic_tasks(self, context):
        """Housekeeping, run by the service's periodics (on a thread of
        their pool, never twice at once)."""

    def cleanup_host(self):
        """Called when the service stops."""
