"""Block storage's periodic settling (nova_lite.volume.periodic): it runs
the settling every ``[recovery] settle_interval`` seconds, logs what was
settled, outlives a failed run, and does not run with 0. No database: the
settling itself (a database and backends' matter) is replaced here; the
functional tests run the real one (tests/functional/volume/
test_volume_actions.py)."""

import threading
import time
from unittest import mock

import fixtures

from nova_lite.volume import periodic
from tests import base
from tests.fixtures import system


class PeriodicSettlingTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_lite.volume.periodic'))
        self.runs = []
        self.results = []
        self._lock = threading.Lock()
        patcher = mock.patch.object(periodic, 'settle', autospec=True,
                                    side_effect=self._settle)
        self.settle = patcher.start()
        self.addCleanup(patcher.stop)

    def _settle(self, ctxt, conf):
        with self._lock:
            self.runs.append((time.monotonic(), ctxt, conf))
            result = self.results.pop(0) if self.results else []
        if isinstance(result, Exception):
            raise result
        return result

    def test_runs_the_settling_and_logs_what_it_settled(self):
        self.results = [[
            (periodic.VolumeOperation(volume='v1', operation='extend'),
             'available'),
            (periodic.VolumeOperation(volume='v2', operation='export'),
             'exported')]]
        run = periodic.settle_every(self.conf, 7)
        self.assertIsNone(run())
        [(_when, ctxt, conf)] = self.runs
        self.assertIs(self.conf, conf)
        self.assertTrue(ctxt.is_admin)
        self.assertIn("Block storage's settling: extend of volume v1: "
                      "available", self.log.output)
        self.assertIn("Block storage's settling: export of volume v2: "
                      "exported", self.log.output)

    def test_a_failed_run_is_logged_and_the_next_one_runs(self):
        self.results = [RuntimeError('the database went away'), []]
        run = periodic.settle_every(self.conf, 7)
        self.assertIsNone(run())
        self.assertIn("Block storage's settling failed; trying again in "
                      "7 s", self.log.output)
        self.assertIn('the database went away', self.log.output)
        self.assertIsNone(run())
        self.assertEqual(2, len(self.runs))

    def test_runs_every_settle_interval_and_outlives_a_failure(self):
        self.conf.set_override('settle_interval', 1, group='recovery')
        self.results = [RuntimeError('the database went away')]
        settling = periodic.PeriodicSettling(self.conf)
        started = time.monotonic()
        settling.start()
        self.addCleanup(settling.wait)
        self.addCleanup(settling.stop)
        self.assertTrue(settling.running)
        # The first run one interval after the start, not at it; the
        # failed first run does not end the periodic.
        system.wait_for(lambda: len(self.runs) >= 2, timeout=10,
                        interval=0.05)
        self.assertGreaterEqual(self.runs[0][0] - started, 0.9)
        self.assertGreaterEqual(self.runs[1][0] - self.runs[0][0], 0.9)
        settling.stop()
        settling.wait()
        self.assertFalse(settling.running)

    def test_settle_interval_0_runs_nothing(self):
        self.conf.set_override('settle_interval', 0, group='recovery')
        settling = periodic.PeriodicSettling(self.conf).start()
        self.assertFalse(settling.running)
        settling.stop()
        settling.wait()
        self.assertEqual([], self.runs)
