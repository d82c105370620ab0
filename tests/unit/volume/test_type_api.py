"""Who sees which volume types: the private type rules as data (Cinder's
volume type access and its reading of ``GET /types?is_public=``)."""

import testtools

from nova_lite import context
from nova_lite import exception
from nova_lite.volume import type_api


def _ctxt(is_admin, project_id='p1'):
    return context.RequestContext(user_id='u', project_id=project_id,
                                  is_admin=is_admin)


class VisibleToTest(testtools.TestCase):

    def test_administrators_see_every_type(self):
        self.assertIsNone(type_api.visible_to(_ctxt(True)))

    def test_users_see_their_projects_types(self):
        self.assertEqual('p1', type_api.visible_to(_ctxt(False)))


class ListFilterTest(testtools.TestCase):

    def test_users_always_get_public_and_their_private_types(self):
        user = _ctxt(False)
        for given in (None, 'true', 'false', 'none', 'bogus', ''):
            self.assertEqual((True, 'p1'), type_api.list_filter(user, given),
                             given)

    def test_administrators_default_to_public_and_their_private_types(self):
        self.assertEqual((True, 'p1'),
                         type_api.list_filter(_ctxt(True), None))

    def test_administrators_filter(self):
        admin = _ctxt(True)
        self.assertEqual((True, 'p1'), type_api.list_filter(admin, 'true'))
        self.assertEqual((True, 'p1'), type_api.list_filter(admin, 'YES'))
        self.assertEqual((False, 'p1'), type_api.list_filter(admin, 'false'))
        self.assertEqual((False, 'p1'), type_api.list_filter(admin, '0'))
        self.assertEqual((None, None), type_api.list_filter(admin, 'none'))
        self.assertEqual((None, None), type_api.list_filter(admin, 'None'))

    def test_administrators_bad_value_is_400(self):
        for given in ('bogus', ''):
            e = self.assertRaises(exception.InvalidInput,
                                  type_api.list_filter, _ctxt(True), given)
            self.assertEqual(400, e.code)
            self.assertIn('Invalid is_public filter [%s]' % given,
                          e.format_message())
