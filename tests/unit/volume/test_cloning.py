"""The rules of a volume made from another (``nova_lite.volume.cloning``):
which sources may be cloned, and the clone's size. No database (the
whole flow is in tests/functional/volume/test_clone.py)."""

import collections

import testtools

from nova_lite import exception
from nova_lite.volume import cloning

Source = collections.namedtuple('Source', 'id status migration_status size')


def source(status='available', migration_status=None, size=2):
    return Source('7d1b0c4e-2f4a-4c55-9a3e-3b8f0e0c1a01', status,
                  migration_status, size)


class CheckSourceTest(testtools.TestCase):

    def test_available_and_in_use_sources(self):
        for status in ('available', 'in-use'):
            self.assertEqual(2, cloning.check_source(source(status), None))
            self.assertEqual(3, cloning.check_source(source(status), 3))
        # A migration that ended holds the volume no more.
        self.assertEqual(2, cloning.check_source(
            source(migration_status='success'), 2))

    def test_other_statuses_are_refused(self):
        for status in ('creating', 'error', 'reserved', 'attaching',
                       'detaching', 'deleting', 'extending', 'maintenance',
                       'error_extending'):
            error = self.assertRaises(exception.InvalidVolume,
                                      cloning.check_source, source(status),
                                      None)
            self.assertIn("Originating source volume status must be one of "
                          "'available, in-use' values", str(error))

    def test_migrating_source_is_refused(self):
        for migration_status in ('starting', 'migrating', 'completing',
                                 'target:8f5a8a1e'):
            self.assertRaises(exception.InvalidVolume, cloning.check_source,
                              source(migration_status=migration_status), 2)

    def test_smaller_size_is_refused(self):
        error = self.assertRaises(exception.InvalidInput,
                                  cloning.check_source, source(size=3), 2)
        self.assertIn("Volume size '2'GB cannot be smaller than original "
                      "volume size  3GB", str(error))

    def test_size_not_a_positive_integer_is_left_to_the_create(self):
        # The create's own check says what is wrong with it.
        self.assertEqual(0, cloning.check_source(source(), 0))
        self.assertEqual('x', cloning.check_source(source(), 'x'))
