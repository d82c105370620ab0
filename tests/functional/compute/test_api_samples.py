"""The api-ref samples of the compute resources: servers, server actions,
flavors, os-volume_attachments, os-instance-actions and os-services.

Run with NOVA_LITE_WRITE_SAMPLES=1 to (re)write
api-ref/source/samples/{servers,flavors,os-volume_attachments,
os-instance-actions,os-services}/; otherwise the test fails when a sample
no longer matches what the API does. Ids, times, hashes, passwords and URLs are
replaced by fixed values so that samples are stable.
"""

import re

from tests.functional import api_samples
from tests.functional.compute import base

_HOST_ID = re.compile(r'\b[0-9a-f]{56}\b')
_RESERVATION = re.compile(r'"r-[0-9a-f]{8}"')


class Scrubber(api_samples.Scrubber):
    def __init__(self, base_url):
        super().__init__(base_url, patterns=[
            (_RESERVATION, '"r-3f2a9c1e"'),
            (_HOST_ID, 'c5a3b3e4a1c7f5d2a9b8e6f4d3c2b1a0'
                       '9f8e7d6c5b4a3f2e1d0c9b8a')])

    def prepare(self, data):
        if isinstance(data, dict) and 'adminPass' in data.get('server', {}):
            data['server']['adminPass'] = 'kJ8sF5rT2wQz'
        return data


class APISamplesTest(api_samples.SampleAssertions, base.TestCase):

    def _call(self, api, version, method, path, folder, name, body=None,
              status=200):
        folder = folder if version == '2.1' else '%s/v%s' % (folder,
                                                             version)
        if body is not None:
            self._sample(folder, name + '-req.json', body)
        resp = api.as_(compute_version=version).request(method, path,
                                                        body=body)
        self.assertEqual(status, resp.status, resp.text)
        if resp.body is not None:
            self._sample(folder, name + '-resp.json', resp.body)
        return resp.body

    def test_samples(self):
        self.scrub = Scrubber('http://localhost')
        self._flavors()
        server_id = self._servers()
        self._volume_attachments(server_id)
        self._instance_actions(server_id)
        self._async_attach(server_id)
        self._services()

    def _flavors(self):
        for version in ('2.1', '2.75'):
            self._call(self.api, version, 'GET', '/v2.1/flavors',
                       'flavors', 'flavors-list')
            self._call(self.api, version, 'GET', '/v2.1/flavors/detail',
                       'flavors', 'flavors-detail')
            self._call(self.api, version, 'GET', '/v2.1/flavors/1',
                       'flavors', 'flavor-get')
        self._call(self.api, '2.102', 'GET', '/v2.1/flavors/detail?name=large',
                   'flavors', 'flavors-detail')
        self._call(self.api, '2.102', 'GET', '/v2.1/flavors/1', 'flavors',
                   'flavor-get')

    def _servers(self):
        created = self._call(
            self.api, '2.37', 'POST', '/v2.1/servers', 'servers',
            'server-create', status=202, body={'server': {
                'name': 'web-1', 'flavorRef': '1', 'imageRef': base.IMAGE,
                'networks': 'none', 'security_groups': [{'name': 'default'}]}})
        server_id = created['server']['id']
        self.wait_for_server_status(server_id, 'ACTIVE')
        boot = self.create_volume(name='boot')
        self._call(self.api, '2.37', 'POST', '/v2.1/servers', 'servers',
                   'server-create-boot-from-volume', status=202, body={
                       'server': {
                           'name': 'db-1', 'flavorRef': '2',
                           'networks': 'none',
                           'block_device_mapping_v2': [{
                               'source_type': 'volume',
                               'destination_type': 'volume',
                               'uuid': boot, 'boot_index': 0,
                               'delete_on_termination': True}]}})
        self.wait_for_volume_status(boot, 'in-use')
        path = '/v2.1/servers/%s' % server_id
        for version in ('2.1', '2.100'):
            self._call(self.api, version, 'GET', path, 'servers',
                       'server-get')
        self._call(self.admin_api, '2.100', 'GET', path, 'servers',
                   'server-get-admin')
        self._call(self.api, '2.1', 'GET', '/v2.1/servers?name=web',
                   'servers', 'servers-list')
        self._call(self.api, '2.100', 'GET', '/v2.1/servers/detail'
                   '?name=web', 'servers', 'servers-details')
        self._call(self.api, '2.1', 'PUT', path, 'servers', 'server-update',
                   body={'server': {'name': 'web-1-renamed',
                                    'accessIPv4': '192.0.2.10'}})
        self._call(self.api, '2.94', 'PUT', path, 'servers', 'server-update',
                   body={'server': {'description': 'web tier',
                                    'hostname': 'web-1.example.org'}})
        action = path + '/action'
        for name, body in [('server-action-stop', {'os-stop': None}),
                           ('server-action-start', {'os-start': None}),
                           ('server-action-pause', {'pause': None}),
                           ('server-action-unpause', {'unpause': None}),
                           ('server-action-unlock', {'unlock': None}),
                           ('server-action-shelve', {'shelve': None}),
                           ('server-action-shelve-offload',
                            {'shelveOffload': None}),
                           ('server-action-unshelve', {'unshelve': None}),
                           ('server-action-restore', {'restore': None}),
                           ('server-action-force-delete',
                            {'forceDelete': None})]:
            self._sample('servers', name + '-req.json', body)
        self._sample('servers/v2.77', 'server-action-unshelve-req.json',
                     {'unshelve': {'availability_zone': 'nova'}})
        self._sample('servers/v2.91', 'server-action-unshelve-req.json',
                     {'unshelve': {'availability_zone': None,
                                   'host': 'compute2'}})
        self._call(self.api, '2.73', 'POST', action, 'servers',
                   'server-action-lock', status=202,
                   body={'lock': {'locked_reason': 'maintenance window'}})
        self._call(self.api, '2.73', 'POST', action, 'servers',
                   'server-action-unlock', status=202,
                   body={'unlock': None})
        return server_id

    def _volume_attachments(self, server_id):
        folder = 'os-volume_attachments'
        url = '/v2.1/servers/%s/os-volume_attachments' % server_id
        volumes = []
        for version, extra in [('2.1', {}),
                               ('2.49', {'tag': 'database'}),
                               ('2.70', {'tag': 'logs'}),
                               ('2.79', {'tag': 'data',
                                         'delete_on_termination': True})]:
            volume_id = self.create_volume(name='data-%s' % version)
            attachment = {'volumeId': volume_id}
            attachment.update(extra)
            self._call(self.api, version, 'POST', url, folder,
                       'attach-volume-to-server',
                       body={'volumeAttachment': attachment})
            self.wait_for_volume_status(volume_id, 'in-use')
            volumes.append(volume_id)
        for version in ('2.1', '2.70', '2.79', '2.89'):
            self._call(self.api, version, 'GET', url, folder,
                       'list-volume-attachments')
            self._call(self.api, version, 'GET',
                       '%s/%s' % (url, volumes[-1]), folder,
                       'volume-attachment-detail')
        self._call(self.api, '2.85', 'PUT', '%s/%s' % (url, volumes[0]),
                   folder, 'update-volume-attachment-delete-flag',
                   status=202, body={'volumeAttachment': {
                       'volumeId': volumes[0],
                       'delete_on_termination': True}})
        self._sample(folder, 'update-volume-req.json', {
            'volumeAttachment': {'volumeId': volumes[0]}})
        self._call(self.api, '2.1', 'DELETE', '%s/%s' % (url, volumes[0]),
                   folder, 'detach-volume', status=202)
        self.wait_for_volume_status(volumes[0], 'available')

    def _services(self):
        self._call(self.admin_api, '2.1', 'GET', '/v2.1/os-services',
                   'os-services', 'services-list-get')
        services = self._call(self.admin_api, '2.53', 'GET',
                              '/v2.1/os-services', 'os-services',
                              'services-list-get')['services']
        [compute] = [s['id'] for s in services
                     if s['binary'] == 'nova-lite-compute']
        url = '/v2.1/os-services/%s' % compute
        self._call(self.admin_api, '2.53', 'PUT', url, 'os-services',
                   'service-force-down-put', body={'forced_down': True})
        self._call(self.admin_api, '2.53', 'PUT', url, 'os-services',
                   'service-disable-put', body={
                       'status': 'disabled', 'disabled_reason': 'repair',
                       'forced_down': False})
        self.admin_api.as_(compute_version='2.53').put(
            url, body={'status': 'enabled'})

    def _instance_actions(self, server_id):
        folder = 'os-instance-actions'
        url = '/v2.1/servers/%s/os-instance-actions' % server_id
        for version in ('2.1', '2.58'):
            self._call(self.api, version, 'GET', url, folder,
                       'instance-actions-list')
        actions = self.api.get(url).body['instanceActions']
        attach = [a for a in actions if a['action'] == 'attach_volume'][-1]
        show = '%s/%s' % (url, attach['request_id'])
        self._call(self.api, '2.1', 'GET', show, folder,
                   'instance-action-get-non-admin')
        self._call(self.admin_api, '2.1', 'GET', show, folder,
                   'instance-action-get')
        self._call(self.admin_api, '2.84', 'GET', show, folder,
                   'instance-action-get')
        self._call(self.api, '2.84', 'GET', show, folder,
                   'instance-action-get-non-admin')

    def _async_attach(self, server_id):
        """2.101: 202 with ``Location``; the attachment hidden (404) until
        block storage reserved the volume, shown at 2.105 while the compute
        host has not reserved a device yet; then once attached."""
        folder = 'os-volume_attachments'
        url = '/v2.1/servers/%s/os-volume_attachments' % server_id
        volume_id = self.create_volume(name='data-async')
        with self.reservations_held():
            self._call(self.api, '2.101', 'POST', url, folder,
                       'attach-volume-to-server', status=202,
                       body={'volumeAttachment': {'volumeId': volume_id}})
            self.assertEqual(404, self.api.as_(compute_version='2.101').get(
                '%s/%s' % (url, volume_id)).status)
            self._call(self.api, '2.105', 'GET', '%s/%s' % (url, volume_id),
                       folder, 'volume-attachment-pending')
        self.wait_for_volume_status(volume_id, 'in-use')
        self._call(self.api, '2.101', 'GET', '%s/%s' % (url, volume_id),
                   folder, 'volume-attachment-detail')
