"""Reserving a volume, patient with a busy multiattach volume: block
storage is the in-memory ``FakeVolumeClient`` (Cinder's status machine,
checked against the VolumeClient contract), where another server's attach
holds the volume; time is a fake clock (no sleeping)."""

from oslo_utils import uuidutils

from nova_lite.conductor import reservations
from nova_lite import exception
from tests import base
from tests.unit.compute import fakes

SERVER = uuidutils.generate_uuid()
OTHER_SERVER = uuidutils.generate_uuid()


class Volumes(fakes.FakeVolumeClient):
    """Also records the mode each reservation asked for."""

    def __init__(self):
        super().__init__()
        self.modes = []

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mode=None):
        self.modes.append(mode)
        return super().attachment_create(ctxt, volume_id, instance_uuid,
                                         connector=connector, mode=mode)

    def creates(self):
        return len([c for c in self.calls if c[0] == 'attachment_create'])


class Clock(object):
    """Monotonic time that moves only when slept; each pause runs the
    next of ``meanwhile`` (what other services do during it)."""

    def __init__(self, meanwhile=()):
        self.now = 0.0
        self.pauses = []
        self.meanwhile = list(meanwhile)

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.pauses.append(seconds)
        self.now += seconds
        if self.meanwhile:
            self.meanwhile.pop(0)()


class ReserveTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.volumes = Volumes()

    def held_by_another_attach(self, multiattach=True):
        """A volume another server's attach has reserved; returns the
        volume and that attachment's id."""
        volume_id = self.volumes.create_volume(multiattach=multiattach)
        other = self.volumes.attachment_create(None, volume_id,
                                               OTHER_SERVER)
        self.volumes.calls.clear()
        self.volumes.modes.clear()
        self.assertEqual('reserved', self.volumes.volumes[volume_id]['status'])
        return volume_id, other['id']

    def reserve(self, volume_id, timeout=60.0, meanwhile=()):
        clock = Clock(meanwhile)
        result = reservations.reserve(None, self.volumes, volume_id, SERVER,
                                      mode='ro', timeout=timeout,
                                      clock=clock, sleep=clock.sleep)
        return result, clock

    def test_first_try(self):
        volume_id = self.volumes.create_volume(multiattach=True)
        result, clock = self.reserve(volume_id)
        [attachment] = self.volumes.live_attachments(volume_id)
        self.assertEqual((attachment['id'], SERVER, volume_id),
                         (result['id'], attachment['instance'],
                          attachment['volume_id']))
        self.assertEqual((['ro'], []), (self.volumes.modes, clock.pauses))

    def test_waits_while_another_attach_holds_it(self):
        volume_id, other = self.held_by_another_attach()
        connector = {'host': 'compute2', 'mode': 'rw'}
        # Meanwhile the other server's host connects (still reserved, then
        # attaching) and completes (in-use: reservable again).
        result, clock = self.reserve(volume_id, meanwhile=[
            lambda: None,
            lambda: self.volumes.attachment_update(None, other, connector),
            lambda: self.volumes.attachment_complete(None, other)])
        self.assertEqual(SERVER,
                         self.volumes.attachments[result['id']]['instance'])
        self.assertEqual(4, self.volumes.creates())
        self.assertEqual(['ro'] * 4, self.volumes.modes)
        # Growing pauses.
        self.assertEqual([0.02, 0.04, 0.08], clock.pauses)

    def test_gives_up_at_the_deadline(self):
        volume_id, _other = self.held_by_another_attach()
        self.assertRaises(exception.InvalidVolume, self.reserve, volume_id,
                          timeout=2.0)
        self.assertLess(self.volumes.creates(), 15)
        self.assertGreater(self.volumes.creates(), 1)
        self.assertEqual([OTHER_SERVER], [
            a['instance'] for a in self.volumes.live_attachments(volume_id)])

    def test_other_refusals_fail_at_once(self):
        not_multiattach, _other = self.held_by_another_attach(
            multiattach=False)
        for volume_id in (
                self.volumes.create_volume(status='error', multiattach=True),
                not_multiattach,
                self.volumes.create_volume(status='maintenance',
                                           multiattach=True)):
            self.volumes.calls.clear()
            self.assertRaises(exception.InvalidVolume, self.reserve,
                              volume_id)
            self.assertEqual(1, self.volumes.creates())
            self.assertEqual([], [
                a for a in self.volumes.live_attachments(volume_id)
                if a['instance'] == SERVER])

    def test_no_timeout_fails_at_once(self):
        volume_id, _other = self.held_by_another_attach()
        self.assertRaises(exception.InvalidVolume, self.reserve, volume_id,
                          timeout=0.0)
        self.assertEqual(1, self.volumes.creates())
