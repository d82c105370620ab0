"""/v2.1/servers/{id}/os-instance-actions: what happened to a server."""

import fixtures

from nova_lite import context as nl_context
from nova_lite import objects
from tests.fixtures import system
from tests.functional.compute import base


class InstanceActionsTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.server_id = self.create_server()
        self.volume_id = self.create_volume()
        self.attach(self.server_id, self.volume_id)
        self.wait_for_volume_status(self.volume_id, 'in-use')
        self.url = '/v2.1/servers/%s/os-instance-actions' % self.server_id

    def actions(self, api, query=''):
        resp = api.get(self.url + query)
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['instanceActions']

    def show(self, api, request_id):
        resp = api.get('%s/%s' % (self.url, request_id))
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['instanceAction']

    def test_list_by_microversion(self):
        actions = self.actions(self.api)
        self.assertEqual(['attach_volume', 'create'],
                         [a['action'] for a in actions])
        self.assertEqual({'action', 'instance_uuid', 'message',
                          'project_id', 'request_id', 'start_time',
                          'user_id'}, set(actions[0]))
        actions = self.actions(self.api.as_(compute_version='2.58'))
        self.assertIn('updated_at', actions[0])

    def test_paging_from_2_58(self):
        api = self.api.as_(compute_version='2.58')
        first = self.actions(api, '?limit=1')
        self.assertEqual(['attach_volume'], [a['action'] for a in first])
        rest = self.actions(api, '?marker=%s' % first[0]['request_id'])
        self.assertEqual(['create'], [a['action'] for a in rest])
        resp = api.get(self.url + '?limit=1')
        self.assertIn('marker=', resp.body['links'][0]['href'])
        # limit=0 (found by the fuzz tier: a 500).
        resp = api.get(self.url + '?limit=0')
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual([], resp.body['instanceActions'])
        self.assertNotIn('links', resp.body)
        self.assertEqual(400, api.get(self.url + '?marker=nope').status)
        self.assertEqual(400, api.get(self.url + '?foo=1').status)
        self.assertEqual(200, self.api.get(self.url + '?foo=1').status)
        since = self.actions(api, '?changes-since=2000-01-01T00:00:00Z')
        self.assertEqual(2, len(since))
        self.assertEqual([], self.actions(
            api, '?changes-since=2999-01-01T00:00:00Z'))
        self.assertEqual(400, api.get(
            self.url + '?changes-before=2000-01-01T00:00:00Z').status)
        self.assertEqual([], self.actions(
            self.api.as_(compute_version='2.66'),
            '?changes-before=2000-01-01T00:00:00Z'))

    def test_events_by_role_and_microversion(self):
        request_id = self.actions(self.api)[0]['request_id']
        # The volume is in-use before the host's event is ended (the
        # event ends after the attachment is completed): wait for it.
        system.wait_for(lambda: all(
            e['finish_time'] for e in self.show(
                self.admin_api, request_id)['events']))
        # Before 2.51 only administrators see events.
        self.assertNotIn('events', self.show(
            self.api.as_(compute_version='2.50'), request_id))
        # Newest first: the host's step, then the conductor's.
        [event, conductor] = self.show(self.admin_api, request_id)['events']
        self.assertEqual({'event', 'start_time', 'finish_time', 'result',
                          'traceback'}, set(event))
        self.assertEqual(
            [('compute_attach_volume', 'Success'),
             ('conductor_attach_volume', 'Success')],
            [(e['event'], e['result']) for e in (event, conductor)])
        [event, _] = self.show(self.api.as_(compute_version='2.51'),
                               request_id)['events']
        self.assertNotIn('traceback', event)
        [event, _] = self.show(self.api.as_(compute_version='2.62'),
                               request_id)['events']
        self.assertEqual(56, len(event['hostId']))
        self.assertNotIn('host', event)
        [event, conductor] = self.show(
            self.admin_api.as_(compute_version='2.84'), request_id)['events']
        # The embedded conductor runs as [DEFAULT] host.
        self.assertEqual(('compute1', self.conf.host),
                         (event['host'], conductor['host']))
        self.assertIsNone(event['details'])
        [event, _] = self.show(self.api.as_(compute_version='2.84'),
                               request_id)['events']
        self.assertNotIn('details', event)

    def _detach_event(self):
        """Detach; the compute host's event of that request, once ended."""
        request_id = self.detach(self.server_id, self.volume_id).headers[
            'x-openstack-request-id']

        def ended():
            events = self.show(self.admin_api, request_id)['events']
            return [e for e in events if e['event'] ==
                    'compute_detach_volume' and e['finish_time']]
        [event] = system.wait_for(ended)
        return event

    def test_detach_event_ends_with_the_mapping(self):
        event = self._detach_event()
        self.assertEqual('Success', event['result'])
        self.assertEqual([], self.attachments(self.server_id))
        self.assertEqual('available',
                         self.show_volume(self.volume_id)['status'])

    def test_detach_event_is_an_error_when_the_mapping_stays(self):
        # The mapping's delete and the event's end share a transaction: a
        # delete that fails ends the event as an error, the mapping's row
        # kept (stepped aside, its detach at ``releasing``: the host's
        # settling finishes it), while the volume, detached, is free.
        self.useFixture(fixtures.MockPatchObject(
            objects.BlockDeviceMapping, 'destroy',
            side_effect=RuntimeError('database gone')))
        event = self._detach_event()
        self.assertEqual('Error', event['result'])
        self.assertIn('database gone', event['traceback'])
        self.assertEqual([], self.attachments(self.server_id))
        [row] = objects.BlockDeviceMapping.get_all_by_instance(
            nl_context.get_admin_context(), self.server_id)[1:]
        self.assertEqual(('detaching', 'releasing', None),
                         (row.task, row.task_step, row.volume_id))
        self.assertEqual(self.volume_id, row.get_task_data()['volume_id'])
        self.assertEqual('available',
                         self.show_volume(self.volume_id)['status'])

    def test_not_found(self):
        resp = self.api.get(self.url + '/req-nope')
        self.assertEqual(404, resp.status)
        self.assertEqual('Action for request_id req-nope on instance %s not '
                         'found' % self.server_id,
                         resp.body['itemNotFound']['message'])
        other = self.api.as_(token='other:other')
        self.assertEqual(404, other.get(self.url).status)
