"""nova_lite.service.Periodics: futurist periodics on a small pool."""

import threading
import time

from futurist import periodics
import testtools

from nova_lite import service


class PeriodicsTest(testtools.TestCase):

    def _run_until(self, periodics_, done, timeout=10):
        periodics_.start()
        self.addCleanup(periodics_.wait)
        self.addCleanup(periodics_.stop)
        deadline = time.monotonic() + timeout
        while not done() and time.monotonic() < deadline:
            time.sleep(0.01)

    def test_each_callable_runs_on_a_thread_named_for_the_service(self):
        # What the query counts of the functional tier leave out, and what
        # log lines show: '<name>-periodic', not the pool's 'Thread-N'.
        seen = {}

        @periodics.periodic(0.01, run_immediately=True)
        def beat():
            seen.setdefault('beat', threading.current_thread().name)

        @periodics.periodic(0.01, run_immediately=True)
        def settle():
            seen.setdefault('settle', threading.current_thread().name)

        self._run_until(service.Periodics([beat, settle], 'svc-h1'),
                        lambda: len(seen) == 2)
        self.assertEqual({'beat': 'svc-h1-periodic',
                          'settle': 'svc-h1-periodic'}, seen)
        self.assertNotEqual('svc-h1-periodic',
                            threading.current_thread().name)

    def test_the_spacing_of_each_callable_is_kept(self):
        runs = []

        @periodics.periodic(3600, run_immediately=True)
        def hourly():
            runs.append('hourly')

        @periodics.periodic(0.01, run_immediately=True)
        def often():
            runs.append('often')

        self._run_until(service.Periodics([hourly, often], 'svc'),
                        lambda: runs.count('often') >= 5)
        self.assertGreaterEqual(runs.count('often'), 5)
        self.assertEqual(1, runs.count('hourly'))
