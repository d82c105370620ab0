"""Private volume types and who may use them (Cinder's volume type
access): ``POST /v3/types/{id}/action`` ``addProjectAccess`` and
``removeProjectAccess``, ``GET /v3/types/{id}/os-volume-type-access``,
and what a private type looks like to everyone else."""

from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_lite import context
from nova_lite.db import api as db_api
from nova_lite.db import models
from tests.functional.volume import base
from tests.functional.volume import test_multiattach

PRIVATE = {'os-volume-type-access:is_public': False}


@db_api.context_manager.reader
def _access_rows(ctxt, type_id):
    return ctxt.session.execute(
        sa.select(models.VolumeTypeProject.project_id).where(
            models.VolumeTypeProject.volume_type_id == type_id).order_by(
            models.VolumeTypeProject.project_id)).scalars().all()


class TypeAccessTest(base.VolumeTestCase):

    def setUp(self):
        super().setUp()
        self.other = self.api.as_(token='alice:other',
                                  volume_version=base.LATEST)

    def action(self, type_id, name, project, api=None):
        return (api or self.admin).post(
            '/v3/types/%s/action' % type_id,
            body={name: {'project': project}})

    def access(self, type_id, api=None):
        return (api or self.admin).get(
            '/v3/types/%s/os-volume-type-access' % type_id)

    def names(self, api, query=''):
        """The types listed, but the default type (public, so always
        listed)."""
        return sorted(t['name'] for t in api.get(
            '/v3/types' + query).body['volume_types']
            if t['name'] != '__DEFAULT__')

    def test_add_list_remove(self):
        vtype = self.create_type('gold', **PRIVATE)
        path = '/v3/types/%s' % vtype['id']
        self.assertFalse(vtype['os-volume-type-access:is_public'])
        # Without access the type does not exist for the project.
        self.assertEqual(404, self.vol.get(path).status)
        self.assertEqual([], self.names(self.vol))
        self.assertEqual(404, self.create_volume(
            volume_type=vtype['id'], expect=404).status)
        self.assertEqual(404, self.create_volume(
            volume_type='gold', expect=404).status)

        self.assertEqual(202, self.action(
            vtype['id'], 'addProjectAccess', 'demo').status)
        self.assertEqual(202, self.action(
            vtype['id'], 'addProjectAccess', 'third').status)
        self.assertEqual(['demo', 'third'], _access_rows(
            context.get_admin_context(), vtype['id']))
        resp = self.access(vtype['id'])
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual({'volume_type_access': [
            {'volume_type_id': vtype['id'], 'project_id': 'demo'},
            {'volume_type_id': vtype['id'], 'project_id': 'third'}]},
            resp.body)

        # The project sees and uses it; another project still does not.
        shown = self.vol.get(path)
        self.assertEqual(200, shown.status, shown.text)
        self.assertFalse(shown.body['volume_type']['is_public'])
        self.assertEqual(['gold'], self.names(self.vol))
        volume = self.create_volume(volume_type='gold')
        self.assertEqual('gold', volume['volume_type'])
        self.assertEqual(404, self.other.get(path).status)
        self.assertEqual([], self.names(self.other))
        self.assertEqual(404, self.create_volume(
            api=self.other, volume_type='gold', expect=404).status)

        self.assertEqual(202, self.action(
            vtype['id'], 'removeProjectAccess', 'demo').status)
        self.assertEqual(['third'], _access_rows(
            context.get_admin_context(), vtype['id']))
        self.assertEqual(404, self.vol.get(path).status)
        self.assertEqual(404, self.create_volume(
            volume_type='gold', expect=404).status)
        # The volume made meanwhile keeps its type.
        self.assertEqual('gold', self.show_volume(volume['id'])[
            'volume_type'])

    def test_duplicate_add_is_409_and_missing_remove_is_404(self):
        vtype = self.create_type('gold', **PRIVATE)
        self.assertEqual(202, self.action(
            vtype['id'], 'addProjectAccess', 'demo').status)
        resp = self.action(vtype['id'], 'addProjectAccess', 'demo')
        self.assertEqual(409, resp.status)
        self.assertEqual(
            'Volume type access for %s / demo combination already '
            'exists.' % vtype['id'],
            resp.body['conflictingRequest']['message'])
        resp = self.action(vtype['id'], 'removeProjectAccess', 'other')
        self.assertEqual(404, resp.status)
        self.assertEqual(
            'Volume type access not found for %s / other combination.' %
            vtype['id'], resp.body['itemNotFound']['message'])
        self.assertEqual(['demo'], _access_rows(
            context.get_admin_context(), vtype['id']))

    def test_public_type_has_no_access_list(self):
        vtype = self.create_type('plain')
        for name in ('addProjectAccess', 'removeProjectAccess'):
            resp = self.action(vtype['id'], name, 'demo')
            self.assertEqual(400, resp.status)
            self.assertEqual(
                'Invalid volume type: Type access modification is not '
                'applicable to public volume type.',
                resp.body['badRequest']['message'])
        resp = self.access(vtype['id'])
        self.assertEqual(404, resp.status)
        self.assertEqual('Access list not available for public volume '
                         'types.', resp.body['itemNotFound']['message'])
        self.assertEqual([], _access_rows(context.get_admin_context(),
                                          vtype['id']))

    def test_unknown_type_is_404(self):
        missing = uuidutils.generate_uuid()
        for name in ('addProjectAccess', 'removeProjectAccess'):
            self.assertEqual(404, self.action(missing, name, 'demo').status)
        self.assertEqual(404, self.access(missing).status)

    def test_only_administrators_manage_access(self):
        vtype = self.create_type('gold', **PRIVATE)
        for name in ('addProjectAccess', 'removeProjectAccess'):
            self.assertEqual(403, self.action(vtype['id'], name, 'demo',
                                              api=self.vol).status)
        self.assertEqual(403, self.access(vtype['id'], api=self.vol).status)
        self.assertEqual([], _access_rows(context.get_admin_context(),
                                          vtype['id']))

    def test_bad_bodies_are_400(self):
        vtype = self.create_type('gold', **PRIVATE)
        path = '/v3/types/%s/action' % vtype['id']
        for body in ({'addProjectAccess': {}},
                     {'addProjectAccess': {'project': ''}},
                     {'addProjectAccess': {'project': 'x' * 256}},
                     {'addProjectAccess': {'project': 'demo', 'x': 1}},
                     {'removeProjectAccess': None},
                     {'addProjectAccess': {'project': 'demo'},
                      'removeProjectAccess': {'project': 'demo'}},
                     {'grantAccess': {'project': 'demo'}}):
            self.assertEqual(400, self.admin.post(path, body=body).status,
                             body)
        self.assertEqual([], _access_rows(context.get_admin_context(),
                                          vtype['id']))

    def test_list_filter_is_public(self):
        self.create_type('public')
        mine = self.create_type('mine', **PRIVATE)
        self.create_type('theirs', **PRIVATE)
        self.action(mine['id'], 'addProjectAccess', 'demo')
        self.action(mine['id'], 'addProjectAccess', 'admin')
        # Users: public types and their project's private ones, whatever
        # they ask for.
        for query in ('', '?is_public=false', '?is_public=none',
                      '?is_public=bogus'):
            self.assertEqual(['mine', 'public'], self.names(self.vol, query),
                             query)
        # Administrators: the same for their own project by default;
        # false is every private type, none every type.
        self.assertEqual(['mine', 'public'], self.names(self.admin))
        self.assertEqual(['mine', 'public'],
                         self.names(self.admin, '?is_public=true'))
        self.assertEqual(['mine', 'theirs'],
                         self.names(self.admin, '?is_public=false'))
        self.assertEqual(['mine', 'public', 'theirs'],
                         self.names(self.admin, '?is_public=None'))
        resp = self.admin.get('/v3/types?is_public=bogus')
        self.assertEqual(400, resp.status)
        self.assertIn('Invalid is_public filter [bogus]', resp.text)

    def test_extra_specs_of_a_private_type(self):
        vtype = self.create_type('gold', extra_specs={'multiattach': 'x'},
                                 **PRIVATE)
        path = '/v3/types/%s/extra_specs' % vtype['id']
        self.assertEqual(404, self.vol.get(path).status)
        self.assertEqual(404, self.vol.get(path + '/multiattach').status)
        self.action(vtype['id'], 'addProjectAccess', 'demo')
        self.assertEqual({'extra_specs': {'multiattach': 'x'}},
                         self.vol.get(path).body)

    def test_retype_to_a_private_type(self):
        vtype = self.create_type('gold', **PRIVATE)
        volume = self.create_volume()
        path = '/v3/volumes/%s/action' % volume['id']
        body = {'os-retype': {'new_type': 'gold'}}
        self.assertEqual(404, self.vol.post(path, body=body).status)
        self.assertEqual('__DEFAULT__',
                         self.show_volume(volume['id'])['volume_type'])
        self.action(vtype['id'], 'addProjectAccess', 'demo')
        resp = self.vol.post(path, body=body)
        self.assertEqual(202, resp.status, resp.text)
        self.assertEqual('gold', self.show_volume(volume['id'])[
            'volume_type'])

    def test_administrators_use_any_private_type(self):
        vtype = self.create_type('gold', **PRIVATE)
        self.assertEqual(200, self.admin.get(
            '/v3/types/%s' % vtype['id']).status)
        volume = self.create_volume(api=self.admin, volume_type='gold')
        self.assertEqual('gold', volume['volume_type'])

    def test_deleting_a_type_deletes_its_access(self):
        vtype = self.create_type('gold', **PRIVATE)
        self.action(vtype['id'], 'addProjectAccess', 'demo')
        self.action(vtype['id'], 'addProjectAccess', 'other')
        self.assertEqual(202, self.admin.delete(
            '/v3/types/%s' % vtype['id']).status)
        self.assertEqual([], _access_rows(context.get_admin_context(),
                                          vtype['id']))
        # A new type of the same name starts with no access.
        again = self.create_type('gold', **PRIVATE)
        self.assertEqual([], self.access(again['id']).body[
            'volume_type_access'])
        self.assertEqual(404, self.vol.get(
            '/v3/types/%s' % again['id']).status)

    def test_type_made_public_and_private_again(self):
        vtype = self.create_type('gold', **PRIVATE)
        self.action(vtype['id'], 'addProjectAccess', 'demo')
        path = '/v3/types/%s' % vtype['id']
        self.admin.put(path, body={'volume_type': {'is_public': True}})
        self.assertEqual(200, self.other.get(path).status)
        self.assertEqual(404, self.access(vtype['id']).status)
        # Access rows survive, as in Cinder, and count again once private.
        self.admin.put(path, body={'volume_type': {'is_public': False}})
        self.assertEqual(404, self.other.get(path).status)
        self.assertEqual(200, self.vol.get(path).status)


class TypeAccessFieldPolicyTest(test_multiattach.PolicyFileTest):
    """``volume_extension:volume_type_access`` decides who sees
    ``os-volume-type-access:is_public``."""

    POLICY = ('"volume_extension:volume_type_access": '
              '"rule:context_is_admin"\n')

    def test_field_only_for_those_allowed(self):
        self.create_type('plain')
        user = self.api.as_(volume_version=base.LATEST)
        admin = self.admin_api.as_(volume_version=base.LATEST)
        listed = user.get('/v3/types').body['volume_types'][0]
        self.assertNotIn('os-volume-type-access:is_public', listed)
        self.assertTrue(listed['is_public'])
        shown = user.get('/v3/types/%s' % listed['id']).body['volume_type']
        self.assertNotIn('os-volume-type-access:is_public', shown)
        listed = admin.get('/v3/types').body['volume_types'][0]
        self.assertTrue(listed['os-volume-type-access:is_public'])
