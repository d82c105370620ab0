"""StopSignals: SIGINT and SIGTERM stop the long-running commands."""

import os
import signal
import threading

import testtools

from nova_lite import stop_signals


class StopSignalsTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        for signum in (signal.SIGINT, signal.SIGTERM):
            self.addCleanup(signal.signal, signum, signal.getsignal(signum))

    def _wait_for(self, signum):
        signals = stop_signals.StopSignals()
        # Sent once the main thread waits: the handler runs in it.
        sender = threading.Timer(0.05, os.kill, (os.getpid(), signum))
        sender.start()
        self.addCleanup(sender.cancel)
        return signals.wait()

    def test_sigterm_ends_the_wait(self):
        self.assertEqual(signal.SIGTERM, self._wait_for(signal.SIGTERM))

    def test_sigint_ends_the_wait(self):
        self.assertEqual(signal.SIGINT, self._wait_for(signal.SIGINT))

    def test_caught_from_creation_on(self):
        # A signal that comes before wait() (while the service starts) is
        # not lost, and does not kill the process.
        signals = stop_signals.StopSignals()
        os.kill(os.getpid(), signal.SIGTERM)
        self.assertEqual(signal.SIGTERM, signals.wait())
