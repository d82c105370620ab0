"""Which stalled or orphaned work a conductor settles
(``conductor.recovery._due``): its own at start, a down or stalled
conductor's, a stalled API process's, never a compute host's."""

import datetime

import testtools

from nova_lite.conductor import recovery
from nova_lite import objects

NOW = datetime.datetime(2026, 11, 24, 12, 0, 0)
STALLED_BEFORE = NOW - datetime.timedelta(seconds=60)
ME = 'nova-lite-conductor:c1'


def _bdm(owner, seconds_ago):
    objects.register_all()
    bdm = objects.BlockDeviceMapping()
    bdm.task = 'attaching'
    bdm.task_owner = owner
    bdm.task_updated_at = NOW - datetime.timedelta(seconds=seconds_ago)
    return bdm


class DueTest(testtools.TestCase):
    def due(self, owner, seconds_ago, at_start=False,
            down=('nova-lite-conductor:c2',)):
        return recovery._due(_bdm(owner, seconds_ago), ME, set(down),
                             STALLED_BEFORE, at_start)

    def test_own_work_at_start_or_when_stalled(self):
        self.assertTrue(self.due(ME, 1, at_start=True))
        self.assertFalse(self.due(ME, 1))
        self.assertTrue(self.due(ME, 61))

    def test_another_conductors_work_when_down_or_stalled(self):
        self.assertTrue(self.due('nova-lite-conductor:c2', 1))
        self.assertFalse(self.due('nova-lite-conductor:c3', 1))
        self.assertTrue(self.due('nova-lite-conductor:c3', 61))

    def test_an_api_process_work_when_stalled(self):
        self.assertFalse(self.due('nova-lite-api:a1', 59))
        self.assertTrue(self.due('nova-lite-api:a1', 61))

    def test_never_a_compute_hosts_work(self):
        self.assertFalse(self.due('nova-lite-compute:h1', 600,
                                  at_start=True,
                                  down=('nova-lite-compute:h1',)))
