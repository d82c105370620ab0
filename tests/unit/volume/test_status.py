"""The status machine table of nova_lite.volume.status, row by row.

Each row of the module's table is checked in both directions: the move is
allowed from every listed status and from no other. (The same rows are
exercised against a database through volume/api.py in
tests/functional/volume/test_status_machine.py.)
"""

import testtools

from nova_lite.volume import status as st

ALL_VOLUME_STATUSES = (
    'available', 'reserved', 'attaching', 'in-use', 'detaching',
    'downloading', 'creating', 'deleting', 'deleted', 'error',
    'error_deleting', 'error_restoring', 'error_extending',
    'error_managing', 'maintenance', 'uploading', 'retyping', 'extending')


class VolumeMovesTest(testtools.TestCase):
    def _check(self, move, allowed, target):
        expected, to = st.VOLUME_MOVES[move]
        self.assertEqual(target, to)
        self.assertEqual(set(allowed), set(expected))
        for status in ALL_VOLUME_STATUSES:
            self.assertEqual(status in allowed, status in expected,
                             '%s from %s' % (move, status))

    def test_reserve(self):
        self._check('reserve', ('available', 'downloading'), 'reserved')
        self.assertEqual(('available', 'downloading'),
                         st.reserve_from(False))

    def test_reserve_multiattach(self):
        self._check('reserve_multiattach',
                    ('available', 'in-use', 'downloading'), 'reserved')
        self.assertEqual(('available', 'in-use', 'downloading'),
                         st.reserve_from(True))

    def test_reserve_not_while_reserved_or_attaching(self):
        # API-CONTRACT 5.4: a second reservation waits for the first.
        for multiattach in (False, True):
            self.assertNotIn('reserved', st.reserve_from(multiattach))
            self.assertNotIn('attaching', st.reserve_from(multiattach))

    def test_reserve_same_instance(self):
        self._check('reserve_same_instance', ('in-use',), 'reserved')

    def test_connect(self):
        self._check('connect', ('reserved', 'attaching', 'in-use'),
                    'attaching')

    def test_complete_has_no_precondition(self):
        expected, target = st.VOLUME_MOVES['complete']
        self.assertIsNone(expected)
        self.assertEqual('in-use', target)
        self.assertEqual(('deleting', 'deleted'), st.NOT_COMPLETABLE)

    def test_begin_detaching(self):
        self._check('begin_detaching', ('in-use',), 'detaching')

    def test_roll_detaching(self):
        self._check('roll_detaching', ('detaching',), 'in-use')

    def test_delete(self):
        self._check('delete', ('available', 'error', 'error_restoring',
                               'error_extending', 'error_managing'),
                    'deleting')

    def test_create(self):
        self._check('create_done', ('creating',), 'available')
        self._check('create_failed', ('creating',), 'error')
        # A create whose process died (a clone's too).
        self._check('create_settled', ('creating',), 'error')
        # Cinder's SRC_VOL_PROCEED_STATUS.
        self.assertEqual(('available', 'in-use'), st.CLONE_FROM)

    def test_delete_failed(self):
        self._check('delete_failed', ('deleting',), 'error_deleting')

    def test_delete_busy(self):
        self._check('delete_busy', ('deleting',), 'available')

    def test_extend(self):
        # An in-use one too (Cinder's 3.42: the API says which it
        # takes); the end recomputes the status from the attachments.
        self._check('extend', ('available', 'in-use'), 'extending')
        self._check('extend_done', ('extending',), 'available')
        self._check('extend_failed', ('extending',), 'error_extending')
        self._check('extend_settled', ('extending',), 'available')
        self._check('extend_unsettled', ('extending',), 'error_extending')

    def test_extending_is_not_deletable_but_its_error_is(self):
        self.assertNotIn('extending', st.VOLUME_MOVES['delete'][0])
        self.assertIn('error_extending', st.VOLUME_MOVES['delete'][0])
        self.assertIn('extending', st.RESETTABLE)
        self.assertIn('error_extending', st.RESETTABLE)

    def test_legacy_reserve(self):
        self._check('legacy_reserve', ('available',), 'attaching')
        self._check('legacy_reserve_multiattach', ('available', 'in-use'),
                    'attaching')
        self.assertEqual(('available',), st.legacy_reserve_from(False))
        self.assertEqual(('available', 'in-use'),
                         st.legacy_reserve_from(True))

    def test_legacy_attach(self):
        self._check('legacy_attach', ('available', 'attaching'), 'in-use')
        self._check('legacy_attach_multiattach',
                    ('available', 'attaching', 'in-use'), 'in-use')
        self.assertNotIn('in-use', st.legacy_attach_from(False))
        self.assertIn('in-use', st.legacy_attach_from(True))
        # A volume reserved by the attachments API is not attached the
        # legacy way (its reservation must finish first).
        self.assertNotIn('reserved', st.legacy_attach_from(True))

    def test_unreserve_and_readonly_only_from_one_status(self):
        self.assertEqual(('attaching',), st.UNRESERVE_FROM)
        self.assertEqual(('available',), st.READONLY_UPDATE_FROM)

    def test_unreserve_recomputes(self):
        # os-unreserve sets what the attachments say.
        self.assertEqual(('available', 'detached'),
                         st.recompute('attaching', None, []))
        self.assertEqual(('in-use', 'attached'),
                         st.recompute('attaching', None, ['attached']))


class LegacyAttachRulesTest(testtools.TestCase):
    def test_readonly_value_is_cinders(self):
        self.assertEqual('True', st.readonly_value(True))
        self.assertEqual('False', st.readonly_value(False))

    def test_attach_mode_allowed(self):
        for readonly in (None, 'False'):
            for mode in ('rw', 'ro'):
                self.assertTrue(st.attach_mode_allowed(readonly, mode))
        self.assertTrue(st.attach_mode_allowed('True', 'ro'))
        self.assertFalse(st.attach_mode_allowed('True', 'rw'))

    def test_visible_admin_metadata(self):
        self.assertEqual({'readonly': 'True'}, st.visible_admin_metadata(
            [('readonly', 'True'), ('attached_mode', 'rw'), ('x', 'y')]))
        self.assertEqual({}, st.visible_admin_metadata([]))


class AttachmentMovesTest(testtools.TestCase):
    def test_reserve_makes_a_reserved_row(self):
        self.assertEqual((None, 'reserved'), st.ATTACHMENT_MOVES['reserve'])

    def test_connect(self):
        self.assertEqual((('reserved', 'attaching', 'attached'), 'attaching'),
                         st.ATTACHMENT_MOVES['connect'])

    def test_connect_failed(self):
        self.assertEqual(
            (('reserved', 'attaching', 'attached'), 'error_attaching'),
            st.ATTACHMENT_MOVES['connect_failed'])

    def test_complete(self):
        self.assertEqual((('reserved', 'attaching', 'attached'), 'attached'),
                         st.ATTACHMENT_MOVES['complete'])

    def test_error_attachments_cannot_be_connected_or_completed(self):
        for move in ('connect', 'complete'):
            self.assertNotIn('error_attaching',
                             st.ATTACHMENT_MOVES[move][0])

    def test_delete(self):
        self.assertEqual(('live', 'detached'), st.ATTACHMENT_MOVES['delete'])


class RecomputeTest(testtools.TestCase):
    """The volume after an attachment is deleted or fails (5.4)."""

    def test_rows(self):
        rows = [
            # (volume status, migration, remaining attachments) -> result
            ('in-use', None, [], ('available', 'detached')),
            ('in-use', None, ['attached'], ('in-use', 'attached')),
            ('reserved', None, ['reserved'], ('reserved', 'reserved')),
            ('attaching', None, ['attaching'], ('attaching', 'attaching')),
            ('detaching', None, ['detaching'], ('detaching', 'detaching')),
            # attached > attaching > detaching > reserved
            ('reserved', None, ['reserved', 'attached'],
             ('in-use', 'attached')),
            ('reserved', None, ['reserved', 'attaching'],
             ('attaching', 'attaching')),
            ('reserved', None, ['reserved', 'detaching'],
             ('detaching', 'detaching')),
            # error attachments do not count
            ('reserved', None, ['error_attaching'],
             ('available', 'detached')),
            ('in-use', None, ['error_attaching', 'attached'],
             ('in-use', 'attached')),
            # not while deleting, nor migrating/uploading with none left
            ('deleting', None, [], ('deleting', 'detached')),
            ('in-use', 'migrating', [], ('in-use', 'detached')),
            ('uploading', None, [], ('uploading', 'detached')),
            ('in-use', 'migrating', ['attached'], ('in-use', 'attached')),
        ]
        for volume_status, migration, attachments, result in rows:
            self.assertEqual(
                result, st.recompute(volume_status, migration, attachments),
                (volume_status, migration, attachments))

    def test_attach_status_summary(self):
        self.assertEqual('detached', st.attach_status_of([]))
        self.assertEqual('attached',
                         st.attach_status_of(['reserved', 'attached']))
        self.assertEqual('reserved', st.attach_status_of(['reserved']))

    def test_or_str(self):
        self.assertEqual('available or downloading',
                         st.or_str(('available', 'downloading')))
