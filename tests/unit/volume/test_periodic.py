"""Block storage's periodic settling (nova_lite.volume_service.periodic): it
runs the settling every ``[recovery] settle_interval`` seconds, logs what was
settled, outlives a failed run, and does not run with 0. No database: the
settling itself (a database and backends' matter) is replaced here; the
functional tests run the real one (tests/functional/volume/
test_volume_actions.py)."""

import threading
import time
from unittest import mock

import fixtures

from nova_lite.volume_service import drivers
from nova_lite.volume_service import periodic
from nova_lite.volume_service import settling as settling_mod
from tests import base
from tests.fixtures import system


class PeriodicSettlingTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_lite.volume_service.periodic'))
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

    def iscsi_backend(self, check_interval):
        self.conf.set_override('enabled_backends', ['iscsi1'],
                               group='volume')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('volume_driver', 'iscsi', group='iscsi1')
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('export_check_interval', check_interval,
                               group='iscsi1')

    def test_the_export_check_runs_at_start_whatever_settle_interval(self):
        # tgtd restarted: its exports come back at the next check, not at
        # the next settling (none here).
        self.conf.set_override('settle_interval', 0, group='recovery')
        self.iscsi_backend(1)
        self.assertEqual(1, periodic.check_interval(self.conf))
        checks = []

        def ensure_exports(_settling, ctxt, stalled_before=None):
            checks.append((ctxt.is_admin, stalled_before))
            return [('v1', 'exported')] if len(checks) == 1 else []
        patcher = mock.patch.object(settling_mod.Settling, 'ensure_exports',
                                    autospec=True, side_effect=ensure_exports)
        patcher.start()
        self.addCleanup(patcher.stop)
        settling = periodic.PeriodicSettling(self.conf).start()
        self.addCleanup(settling.wait)
        self.addCleanup(settling.stop)
        self.assertTrue(settling.running)
        system.wait_for(lambda: len(checks) >= 2, timeout=10,
                        interval=0.05)
        # Exports only: the leftovers are the settling's.
        self.assertEqual([(True, None), (True, None)], checks[:2])
        self.assertIn("Block storage's export check: volume v1: exported",
                      self.log.output)
        self.assertEqual([], self.runs)

    def test_no_export_check_when_no_backend_asks(self):
        self.conf.set_override('settle_interval', 0, group='recovery')
        self.iscsi_backend(0)
        self.assertIn('iscsi1', drivers.get_backends(self.conf))
        self.assertEqual(0, periodic.check_interval(self.conf))
        settling = periodic.PeriodicSettling(self.conf).start()
        self.assertFalse(settling.running)
