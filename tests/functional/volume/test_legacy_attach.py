"""Cinder's legacy (pre-3.27) attach actions on /v3/volumes/{id}/action:
os-reserve, os-unreserve, os-attach, os-detach, os-update_readonly_flag,
as tempest's VolumesActionsTest and its negative tests use them; their
attachments as the attachments API and the volume view show them."""

from oslo_utils import uuidutils

from nova_lite import context
from nova_lite.volume.db import volumes as volume_db
from tests.functional.compute import base as compute_base
from tests.functional.volume import base

MOUNTPOINT = '/dev/vdc'


class LegacyAttachTest(base.VolumeTestCase):

    def action(self, volume_id, body, api=None, expect=202):
        resp = (api or self.vol).post('/v3/volumes/%s/action' % volume_id,
                                      body=body)
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def legacy_attach(self, volume_id, expect=202, api=None, **fields):
        body = {'mountpoint': MOUNTPOINT}
        if 'host_name' not in fields:
            body['instance_uuid'] = uuidutils.generate_uuid()
        body.update(fields)
        return self.action(volume_id, {'os-attach': body}, api=api,
                           expect=expect)

    def attach_status(self, volume_id):
        return volume_db.volume_get(context.get_admin_context(),
                                    volume_id).attach_status

    def live_attachments(self, volume_id):
        resp = self.vol.get('/v3/attachments?volume_id=%s' % volume_id)
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['attachments']

    # -- os-reserve / os-unreserve ----------------------------------------
    def test_reserve_unreserve(self):
        volume_id = self.create_volume()['id']
        self.action(volume_id, {'os-reserve': None})
        self.assertEqual('attaching', self.status(volume_id))
        # A reserved volume cannot be reserved again (tempest's negative
        # status test), nor reserved by the attachments API.
        resp = self.action(volume_id, {'os-reserve': None}, expect=400)
        self.assertIn('Volume status must be available to reserve, but the '
                      'status is attaching', resp.text)
        self.reserve(volume_id, expect=400)
        self.action(volume_id, {'os-unreserve': None})
        self.assertEqual('available', self.status(volume_id))
        # Nothing to unreserve: nothing happens, as in Cinder.
        self.action(volume_id, {'os-unreserve': {}})
        self.assertEqual('available', self.status(volume_id))
        self.assertEqual([], self.live_attachments(volume_id))

    def test_reserve_in_use_multiattach_and_unreserve_to_in_use(self):
        self.create_type('multiattach',
                         extra_specs={'multiattach': '<is> True'})
        volume_id = self.create_volume(volume_type='multiattach')['id']
        self.legacy_attach(volume_id)
        self.assertEqual('in-use', self.status(volume_id))
        self.action(volume_id, {'os-reserve': None})
        self.assertEqual('attaching', self.status(volume_id))
        self.action(volume_id, {'os-unreserve': None})
        # It still has its attachment: in-use again.
        self.assertEqual('in-use', self.status(volume_id))

    def test_reserve_in_use_volume_is_400(self):
        volume_id = self.create_volume()['id']
        self.legacy_attach(volume_id)
        self.action(volume_id, {'os-reserve': None}, expect=400)
        self.assertEqual('in-use', self.status(volume_id))

    # -- os-attach / os-detach --------------------------------------------
    def test_attach_detach_as_tempest(self):
        volume_id = self.create_volume()['id']
        server_id = uuidutils.generate_uuid()
        self.action(volume_id, {'os-reserve': None})
        self.legacy_attach(volume_id, instance_uuid=server_id)
        volume = self.show_volume(volume_id)
        self.assertEqual('in-use', volume['status'])
        [attachment] = volume['attachments']
        self.assertEqual(MOUNTPOINT, attachment['device'])
        self.assertEqual(server_id, attachment['server_id'])
        self.assertEqual(volume_id, attachment['id'])
        self.assertEqual(volume_id, attachment['volume_id'])
        self.assertEqual({'readonly': 'False'}, volume['metadata'])
        self.assertEqual('attached', self.attach_status(volume_id))
        # The attachments API sees the same attachment, attached.
        [listed] = self.live_attachments(volume_id)
        self.assertEqual(attachment['attachment_id'], listed['id'])
        self.assertEqual('attached', listed['status'])
        self.assertEqual(server_id, listed['instance'])
        admin_view = self.show_volume(volume_id, api=self.admin)
        self.assertIsNone(admin_view['attachments'][0]['host_name'])

        self.action(volume_id, {'os-detach': {}})
        volume = self.show_volume(volume_id)
        self.assertEqual('available', volume['status'])
        self.assertEqual([], volume['attachments'])
        self.assertEqual([], self.live_attachments(volume_id))
        self.assertEqual('detached', self.attach_status(volume_id))

    def test_attach_to_host_and_detach_by_attachment_id(self):
        volume_id = self.create_volume()['id']
        self.legacy_attach(volume_id, host_name='backup-host', mode='ro')
        [attachment] = self.show_volume(volume_id, api=self.admin)[
            'attachments']
        self.assertEqual('backup-host', attachment['host_name'])
        self.assertIsNone(attachment['server_id'])
        resp = self.vol.get('/v3/attachments/%s' %
                            attachment['attachment_id'])
        self.assertEqual('ro', resp.body['attachment']['attach_mode'])
        self.action(volume_id, {'os-detach': {
            'attachment_id': attachment['attachment_id']}})
        self.assertEqual('available', self.status(volume_id))

    def test_attach_again_is_idempotent_and_a_second_instance_is_400(self):
        volume_id = self.create_volume()['id']
        server_id = uuidutils.generate_uuid()
        self.legacy_attach(volume_id, instance_uuid=server_id)
        self.legacy_attach(volume_id, instance_uuid=server_id)
        self.assertEqual(1, len(self.live_attachments(volume_id)))
        resp = self.legacy_attach(volume_id, expect=400)
        self.assertIn('multiple attachments are not enabled', resp.text)
        self.assertEqual(1, len(self.live_attachments(volume_id)))

    def test_multiattach_detach_needs_attachment_id(self):
        self.create_type('multiattach',
                         extra_specs={'multiattach': '<is> True'})
        volume_id = self.create_volume(volume_type='multiattach')['id']
        self.legacy_attach(volume_id)
        self.legacy_attach(volume_id)
        attachments = self.show_volume(volume_id)['attachments']
        self.assertEqual(2, len(attachments))
        resp = self.action(volume_id, {'os-detach': None}, expect=400)
        self.assertIn('More than one attachment', resp.text)
        self.action(volume_id, {'os-detach': {
            'attachment_id': attachments[0]['attachment_id']}})
        self.assertEqual('in-use', self.status(volume_id))
        self.action(volume_id, {'os-detach': None})
        self.assertEqual('available', self.status(volume_id))

    def test_new_style_and_legacy_attachments_see_each_other(self):
        volume_id = self.create_volume()['id']
        attachment = self.reserve(volume_id)
        # Reserved by the attachments API: no legacy reservation or attach.
        self.action(volume_id, {'os-reserve': None}, expect=400)
        self.legacy_attach(volume_id, expect=400)
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        self.assertEqual('in-use', self.status(volume_id))
        # Not held by a server: the user may detach it the legacy way.
        self.action(volume_id, {'os-detach': {
            'attachment_id': attachment['id']}})
        self.assertEqual('available', self.status(volume_id))
        # A legacy attachment is deleted by the attachments API too.
        self.legacy_attach(volume_id)
        [legacy] = self.live_attachments(volume_id)
        self.assertEqual(200, self.vol.delete(
            '/v3/attachments/%s' % legacy['id']).status)
        volume = self.show_volume(volume_id, api=self.admin)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))

    def test_detach_without_attachment_and_unknown_attachment(self):
        volume_id = self.create_volume()['id']
        self.action(volume_id, {'os-reserve': None})
        # As Cinder: nothing to detach settles the volume.
        self.action(volume_id, {'os-detach': {}})
        self.assertEqual('available', self.status(volume_id))
        self.legacy_attach(volume_id)
        self.action(volume_id, {'os-detach': {
            'attachment_id': uuidutils.generate_uuid()}})
        self.assertEqual('in-use', self.status(volume_id))

    def test_detach_of_another_volumes_attachment_is_400(self):
        first = self.create_volume()['id']
        second = self.create_volume()['id']
        self.legacy_attach(first)
        [attachment] = self.live_attachments(first)
        self.action(second, {'os-detach': {
            'attachment_id': attachment['id']}}, expect=400)
        self.assertEqual('in-use', self.status(first))

    # -- the OSSA-2023-003 rule -------------------------------------------
    def test_user_cannot_detach_a_servers_attachment(self):
        volume_id = self.create_volume()['id']
        attachment = self.reserve(volume_id)
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        base.server_holding(attachment)
        for body in ({'os-detach': {}},
                     {'os-detach': {'attachment_id': attachment['id']}}):
            resp = self.action(volume_id, body, expect=409)
            self.assertIn('conflictingRequest', resp.body)
            resp = self.action(volume_id, body, api=self.admin, expect=409)
        self.assertEqual('in-use', self.status(volume_id))
        # The compute service (a service token) may.
        service = self.api.as_(token='service:demo', volume_version='3.0')
        self.action(volume_id, {'os-detach': {}}, api=service)
        self.assertEqual('available', self.status(volume_id))

    # -- os-update_readonly_flag ------------------------------------------
    def test_readonly_flag(self):
        volume_id = self.create_volume()['id']
        self.assertEqual({}, self.show_volume(volume_id)['metadata'])
        for readonly, shown in ((True, 'True'), ('false', 'False'),
                                ('1', 'True')):
            self.action(volume_id, {'os-update_readonly_flag': {
                'readonly': readonly}})
            self.assertEqual({'readonly': shown},
                             self.show_volume(volume_id)['metadata'])
        # Lists show it too (detail and its summary-less siblings).
        resp = self.vol.get('/v3/volumes/detail')
        self.assertEqual({'readonly': 'True'},
                         resp.body['volumes'][0]['metadata'])
        # A read-only volume is attached read-only only.
        resp = self.legacy_attach(volume_id, expect=400)
        self.assertIn("Invalid attaching mode 'rw'", resp.text)
        self.assertEqual('available', self.status(volume_id))
        self.legacy_attach(volume_id, mode='ro')
        # Only while available (Cinder's rule).
        resp = self.action(volume_id, {'os-update_readonly_flag': {
            'readonly': False}}, expect=400)
        self.assertIn('must be available to update readonly flag', resp.text)
        self.assertEqual({'readonly': 'True'},
                         self.show_volume(volume_id)['metadata'])

    def test_readonly_volume_reserved_without_mode_is_ro(self):
        volume_id = self.create_volume()['id']
        self.action(volume_id, {'os-update_readonly_flag': {
            'readonly': True}})
        attachment = self.reserve(volume_id)
        self.assertEqual('ro', self.connect(attachment['id'])['attach_mode'])
        self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.action(volume_id, {'os-update_readonly_flag': {
            'readonly': False}})
        attachment = self.reserve(volume_id)
        self.assertEqual('rw', self.connect(attachment['id'])['attach_mode'])

    # -- bad requests -----------------------------------------------------
    def test_unknown_volume_is_404(self):
        missing = uuidutils.generate_uuid()
        for body in ({'os-reserve': None}, {'os-unreserve': None},
                     {'os-attach': {'instance_uuid': missing,
                                    'mountpoint': MOUNTPOINT}},
                     {'os-detach': {}},
                     {'os-update_readonly_flag': {'readonly': True}}):
            self.action(missing, body, expect=404)
            self.action('not-a-uuid', body, expect=404)

    def test_bad_bodies_are_400(self):
        volume_id = self.create_volume()['id']
        server_id = uuidutils.generate_uuid()
        for body in (
                {'os-attach': {'instance_uuid': server_id}},
                {'os-attach': {'mountpoint': MOUNTPOINT}},
                {'os-attach': {'instance_uuid': 'not-a-uuid',
                               'mountpoint': MOUNTPOINT}},
                {'os-attach': {'instance_uuid': server_id,
                               'mountpoint': MOUNTPOINT, 'mode': 'wo'}},
                {'os-attach': {'instance_uuid': server_id,
                               'mountpoint': ''}},
                {'os-attach': None},
                {'os-detach': {'attachment_id': 'not-a-uuid'}},
                {'os-detach': {'bogus': 1}},
                {'os-update_readonly_flag': {}},
                {'os-update_readonly_flag': {'readonly': 'maybe'}},
                {'os-update_readonly_flag': None},
                {'os-reserve': None, 'os-unreserve': None}):
            self.action(volume_id, body, expect=400)
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', {}),
                         (volume['status'], volume['metadata']))

    def test_other_projects_volume_is_404_and_reader_is_403(self):
        volume_id = self.create_volume()['id']
        other = self.api.as_(token='demo:other', volume_version=base.LATEST)
        self.action(volume_id, {'os-reserve': None}, api=other, expect=404)
        self.assertEqual('available', self.status(volume_id))


class LegacyAttachWithNovaTest(compute_base.TestCase):
    """Nova's attach flow and the legacy actions on one volume."""

    def test_server_attachment_is_refused_and_shown(self):
        server_id = self.create_server()
        volume_id = self.create_volume()
        api = self.volume_api().as_(volume_version='3.0')
        self.attach(server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        path = '/v3/volumes/%s/action' % volume_id
        # Attached by Nova: no legacy reserve or second attach.
        self.assertEqual(400, api.post(path, body={
            'os-reserve': None}).status)
        self.assertEqual(400, api.post(path, body={'os-attach': {
            'instance_uuid': uuidutils.generate_uuid(),
            'mountpoint': MOUNTPOINT}}).status)
        # Nor a legacy detach by its user (OSSA-2023-003).
        resp = api.post(path, body={'os-detach': {}})
        self.assertEqual(409, resp.status, resp.text)
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        self.assertEqual(1, len(self.attachments(server_id)))
        # Nova detaches it.
        self.detach(server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        # Nova's attach checks see a legacy attachment (to another
        # instance): the volume is in-use.
        self.assertEqual(202, api.post(path, body={'os-attach': {
            'instance_uuid': uuidutils.generate_uuid(),
            'mountpoint': MOUNTPOINT}}).status)
        self.attach(server_id, volume_id, expect=400)
        self.assertEqual([], self.attachments(server_id))
        self.assertEqual(202, api.post(path, body={
            'os-detach': None}).status)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
