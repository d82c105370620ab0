"""A service's liveness (nova_lite.objects.service): Nova's heartbeat age,
minus the database's silences since the heartbeat. No database: the
objects are given what a read of the row and the clock gives them."""

import datetime

from oslo_utils import fixture as utils_fixture
import testtools

from nova_lite import objects
from nova_lite.objects import service as service_obj

NOW = datetime.datetime(2026, 11, 26, 12, 0, 0)
DOWN_TIME = 60


def service(seen_ago, excluded_at_beat=None, clock=None, forced_down=False):
    svc = objects.Service(
        host='compute1', binary='nova-lite-compute', forced_down=forced_down,
        last_seen_up=NOW - datetime.timedelta(seconds=seen_ago),
        updated_at=None, created_at=None)
    svc._excluded_at_beat = excluded_at_beat
    svc._clock = clock
    return svc


class LivenessTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        objects.register_all()
        # Nova's rule (no clock) reads the local clock.
        self.useFixture(utils_fixture.TimeFixture(NOW))

    def test_without_a_clock_nova_rule(self):
        self.assertTrue(service(59).is_up(DOWN_TIME))
        self.assertFalse(service(61).is_up(DOWN_TIME))

    def test_the_databases_now_is_the_reference(self):
        # The reader's clock says nothing when the database's is known.
        later = (NOW + datetime.timedelta(seconds=600), 0)
        self.assertFalse(service(0, 0, later).is_up(DOWN_TIME))
        self.assertTrue(service(0, 0, (NOW, 0)).is_up(DOWN_TIME))

    def test_silent_while_the_database_took_writes_is_down(self):
        # 100 s without a heartbeat, nothing excluded: down, as in Nova.
        self.assertFalse(service(100, 5000, (NOW, 5000)).is_up(DOWN_TIME))

    def test_the_databases_silence_is_not_counted(self):
        # The last heartbeat 100 s ago, 95 s of which the database took no
        # write from anyone: 5 s old.
        self.assertTrue(service(100, 5000, (NOW, 100000)).is_up(DOWN_TIME))
        # Only what was excluded since the heartbeat counts.
        self.assertFalse(service(100, 100000, (NOW, 100000)).is_up(
            DOWN_TIME))

    def test_forced_down_is_down(self):
        self.assertFalse(service(0, 0, (NOW, 0), forced_down=True).is_up(
            DOWN_TIME))

    def test_no_heartbeat_since_the_clock_exists_nova_rule(self):
        # excluded_at_beat NULL: an older service's row.
        self.assertFalse(service(100, None, (NOW, 100000)).is_up(DOWN_TIME))

    def test_excess_of_a_gap(self):
        gap = datetime.timedelta(seconds=25)
        self.assertEqual(5000, service_obj._excess_ms(gap, 20000))
        self.assertEqual(0, service_obj._excess_ms(gap, 30000))
        # A clock that went back is no silence.
        self.assertEqual(0, service_obj._excess_ms(-gap, 20000))
