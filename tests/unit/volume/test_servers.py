"""How block storage reaches the compute service (nova_lite.volume.servers):
the compute side's ``ComputeCalls``, loaded by entry point (block storage
imports nothing of the compute side), one per configuration. What it
sends is tested end to end (tests/functional/compute/test_external_events.py,
test_migration.py)."""

import testtools

from nova_lite.compute import volume_calls
from nova_lite.volume import servers
from tests.fixtures import conf as conf_fixture


class ComputeCallsTest(testtools.TestCase):

    def test_the_compute_sides_calls_are_loaded_by_entry_point(self):
        conf = self.useFixture(conf_fixture.ConfFixture()).conf
        calls = servers._calls(conf)
        self.assertIsInstance(calls, volume_calls.VolumeCalls)
        self.assertIsInstance(calls, servers.ComputeCalls)
        self.assertIs(conf, calls.conf)
        # One per configuration.
        self.assertIs(calls, servers._calls(conf))
        other = self.useFixture(conf_fixture.ConfFixture()).conf
        self.assertIsNot(calls, servers._calls(other))
