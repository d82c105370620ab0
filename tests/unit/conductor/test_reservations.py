"""Reserving a volume, patient with a busy multiattach volume."""

from nova_lite.conductor import reservations
from nova_lite import exception
from tests import base


class FakeVolumes(object):
    """attachment_create refuses while ``busy`` answers remain."""

    def __init__(self, statuses, multiattach=True):
        # The volume status seen after each refusal; when exhausted, the
        # reservation succeeds.
        self.statuses = list(statuses)
        self.multiattach = multiattach
        self.calls = 0
        self.current = None

    def attachment_create(self, ctxt, volume_id, instance_uuid, mode=None):
        self.calls += 1
        if self.statuses:
            self.current = self.statuses.pop(0)
            raise exception.InvalidVolume(reason='status %s' % self.current)
        return {'id': 'att-%d' % self.calls, 'attach_mode': mode}

    def get(self, ctxt, volume_id):
        return {'id': volume_id, 'multiattach': self.multiattach,
                'status': self.current}


class Clock(object):
    def __init__(self):
        self.now = 0.0
        self.pauses = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.pauses.append(seconds)
        self.now += seconds


class ReserveTest(base.TestCase):
    def reserve(self, volumes, timeout=60.0):
        clock = Clock()
        result = reservations.reserve(None, volumes, 'vol', 'server',
                                      mode='ro', timeout=timeout,
                                      clock=clock, sleep=clock.sleep)
        return result, clock

    def test_first_try(self):
        volumes = FakeVolumes([])
        result, clock = self.reserve(volumes)
        self.assertEqual(({'id': 'att-1', 'attach_mode': 'ro'}, []),
                         (result, clock.pauses))

    def test_waits_while_another_attach_holds_it(self):
        volumes = FakeVolumes(['reserved', 'attaching', 'in-use'])
        result, clock = self.reserve(volumes)
        self.assertEqual('att-4', result['id'])
        # Growing pauses.
        self.assertEqual([0.02, 0.04, 0.08], clock.pauses)

    def test_gives_up_at_the_deadline(self):
        volumes = FakeVolumes(['reserved'] * 100)
        self.assertRaises(exception.InvalidVolume, self.reserve, volumes,
                          timeout=2.0)
        self.assertLess(volumes.calls, 15)

    def test_other_refusals_fail_at_once(self):
        for statuses, multiattach in ((['error'], True),
                                      (['reserved'], False),
                                      (['maintenance'], True)):
            volumes = FakeVolumes(statuses, multiattach=multiattach)
            self.assertRaises(exception.InvalidVolume, self.reserve,
                              volumes)
            self.assertEqual(1, volumes.calls)

    def test_no_timeout_fails_at_once(self):
        volumes = FakeVolumes(['reserved'])
        self.assertRaises(exception.InvalidVolume, self.reserve, volumes,
                          timeout=0.0)
        self.assertEqual(1, volumes.calls)
