"""Waiting for SIGINT or SIGTERM: how the long-running commands
(``nova-lite-all``, ``nova-lite-api``, the RPC workers) know to stop."""

import signal
import threading


class StopSignals(object):
    """Catches SIGINT and SIGTERM from its creation on (create it before
    starting what a signal should stop); ``wait()`` blocks until one came
    and returns its number. Must be made in the main thread."""

    def __init__(self):
        self.received = None
        self._event = threading.Event()
        signal.signal(signal.SIGINT, self._set)
        signal.signal(signal.SIGTERM, self._set)

    def _set(self, signum, frame):
        self.received = signum
        self._event.set()

    def wait(self):
        # A timed wait: the main thread must wake up to run the handler.
        while not self._event.wait(1):
            pass
        return self.received
