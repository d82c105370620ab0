"""Base class of the RPC endpoints a service runs (conductor, compute).

A manager is a doorway: it declares its oslo.messaging ``target`` (namespace
and version), locks and validates, and hands long work to the workflow
modules named after it. ``periodic_tasks`` is called by the service every
``periodic_interval`` seconds.
"""


class Manager(object):
    target = None
    periodic_interval = None

    def __init__(self, conf, host):
        self.conf = conf
        self.host = host

    def init_host(self, context):
        """Called once the service row exists, before RPC is served."""

    def periodic_tasks(self, context):
        """Housekeeping, run by the service on its own thread."""

    def cleanup_host(self):
        """Called when the service stops."""
