"""The api-ref samples of /v3 volumes, types, attachments and backends.

Run with NOVA_LITE_WRITE_SAMPLES=1 to (re)write
api-ref/source/samples/{volumes,volume-types,attachments,capabilities}/
*.json; otherwise
the test fails when a sample no longer matches what the API does. Ids,
times, URLs and paths are replaced by fixed values so samples are stable.
"""

import os

from tests.functional import api_samples
from tests.functional.volume import base

FIXED_UUIDS = [
    '6edbc2f4-1507-44f8-ac0d-eed1d2608d38',
    '3b0b5a2b-6e2c-4f0e-8f3a-5c2a0d9e1f47',
    'c8a2f0a4-5b7d-4c1e-9e2f-7d3b1a6c8e05',
    'a3b9c7d1-2e4f-4a6b-8c0d-1e2f3a4b5c6d',
    'f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9',
]


def Scrubber(base_url, state_path):
    return api_samples.Scrubber(
        base_url, texts=[(os.path.abspath(state_path),
                          '/var/lib/nova-lite')],
        fixed_uuids=FIXED_UUIDS)


class APISamplesTest(api_samples.SampleAssertions, base.VolumeTestCase):

    def _call(self, api, method, path, folder, name, body=None,
              status=200):
        if body is not None:
            self._sample(folder, name + '-req.json', body)
        resp = api.request(method, path, body=body)
        self.assertEqual(status, resp.status, resp.text)
        if resp.body is not None:
            self._sample(folder, name + '-resp.json', resp.body)
        return resp.body

    def test_samples(self):
        self.scrub = Scrubber('http://localhost', self.conf.state_path)
        admin, vol = self.admin, self.vol
        vtype = self._call(admin, 'POST', '/v3/types', 'volume-types',
                           'volume-type-create', body={'volume_type': {
                               'name': 'multiattach',
                               'description': 'Volumes that several '
                                              'servers may attach',
                               'extra_specs': {
                                   'multiattach': '<is> True'}}})
        self._call(vol, 'GET', '/v3/types', 'volume-types',
                   'volume-types-list')
        self._call(vol, 'GET', '/v3/types/default', 'volume-types',
                   'volume-type-default-show')
        self._call(admin, 'POST', '/v3/types/%s/extra_specs' %
                   vtype['volume_type']['id'], 'volume-types',
                   'volume-type-extra-specs-create', body={
                       'extra_specs': {'volume_backend_name': 'file'}})

        volume = self._call(vol, 'POST', '/v3/volumes', 'volumes',
                            'volume-create', status=202, body={'volume': {
                                'size': 10, 'name': 'data',
                                'description': 'database files',
                                'volume_type': 'multiattach',
                                'metadata': {'purpose': 'database'}}})[
                                    'volume']
        path = '/v3/volumes/%s' % volume['id']
        self._call(vol, 'GET', '/v3/volumes?with_count=true', 'volumes',
                   'volumes-list')

        attachment = self._call(
            vol, 'POST', '/v3/attachments', 'attachments',
            'attachment-create', body={'attachment': {
                'volume_uuid': volume['id'],
                'instance_uuid': 'c8a2f0a4-5b7d-4c1e-9e2f-7d3b1a6c8e05',
                'mode': 'rw'}})['attachment']
        apath = '/v3/attachments/%s' % attachment['id']
        self._call(vol, 'PUT', apath, 'attachments', 'attachment-update',
                   body={'attachment': {'connector': {
                       'host': 'compute1', 'initiator':
                       'iqn.1993-08.org.debian:01:cad181614cec',
                       'ip': '192.0.2.10', 'platform': 'x86_64',
                       'os_type': 'linux', 'multipath': False,
                       'mountpoint': '/dev/vdb'}}})
        self._call(vol, 'POST', apath + '/action', 'attachments',
                   'attachment-complete', body={'os-complete': None},
                   status=204)
        self._call(vol, 'GET', path, 'volumes', 'volume-show')
        self._call(vol, 'GET', '/v3/volumes/detail', 'volumes',
                   'volumes-list-detailed')
        self._call(vol, 'GET', apath, 'attachments', 'attachment-show')
        self._call(vol, 'GET', '/v3/attachments', 'attachments',
                   'attachments-list')
        self._call(vol, 'GET', '/v3/attachments/detail', 'attachments',
                   'attachments-list-detailed')
        self._call(vol, 'DELETE', apath, 'attachments', 'attachment-delete')


class MultiattachSamplesTest(APISamplesTest):
    """Samples of retype, force detach, extend, force delete, encryption
    specs, the backend views and an administrator's volume show."""

    def test_samples(self):
        self.scrub = Scrubber('http://localhost', self.conf.state_path)
        admin, vol = self.admin, self.vol
        self.create_type('multiattach', extra_specs={
            'multiattach': '<is> True'})
        volume_id = self.create_volume(name='shared')['id']
        action = '/v3/volumes/%s/action' % volume_id
        self._call(vol, 'POST', action, 'volumes', 'volume-retype',
                   status=202, body={'os-retype': {
                       'new_type': 'multiattach',
                       'migration_policy': 'never'}})
        attachments = []
        for host in ('compute1', 'compute2'):
            attachment = self.reserve(volume_id, connector={'host': host})
            self.complete(attachment['id'])
            attachments.append(attachment['id'])
        self._call(admin, 'POST', action, 'volumes', 'volume-force-detach',
                   status=202, body={'os-force_detach': {
                       'attachment_id': attachments[0],
                       'connector': {'host': 'compute1',
                                     'initiator': 'iqn.1993-08.org.debian:'
                                                  '01:cad181614cec'}}})

        self._call(admin, 'GET', '/v3/capabilities/file', 'capabilities',
                   'backend-capabilities-show')

        self.scrub.uuids.clear()
        other = self.create_volume(name='grown')['id']
        other_action = '/v3/volumes/%s/action' % other
        self._call(vol, 'POST', other_action, 'volumes', 'volume-extend',
                   status=202, body={'os-extend': {'new_size': 2}})
        self._call(admin, 'GET', '/v3/volumes/%s' % other, 'volumes',
                   'volume-show-admin')
        self._call(admin, 'POST', other_action, 'volumes',
                   'volume-force-delete', status=202,
                   body={'os-force_delete': {}})
        self._call(admin, 'GET', '/v3/scheduler-stats/get_pools?detail=true',
                   'capabilities', 'pools-list-detailed')

        self.scrub.uuids.clear()
        plain = admin.post('/v3/types', body={'volume_type': {
            'name': 'encrypted'}}).body['volume_type']
        path = '/v3/types/%s/encryption' % plain['id']
        self._call(admin, 'POST', path, 'volume-types',
                   'volume-type-encryption-create', body={'encryption': {
                       'provider': 'luks', 'control_location': 'front-end',
                       'cipher': 'aes-xts-plain64', 'key_size': 256}})
        self._call(admin, 'GET', path, 'volume-types',
                   'volume-type-encryption-show')


class MetadataSamplesTest(APISamplesTest):
    """Samples of a volume's metadata."""

    def test_samples(self):
        self.scrub = Scrubber('http://localhost', self.conf.state_path)
        vol = self.vol
        volume_id = self.create_volume(name='data', metadata={
            'purpose': 'database'})['id']
        path = '/v3/volumes/%s/metadata' % volume_id
        self._call(vol, 'POST', path, 'volumes', 'volume-metadata-create',
                   body={'metadata': {'owner': 'dba-team',
                                      'tier': 'gold'}})
        self._call(vol, 'GET', path, 'volumes', 'volume-metadata-show')
        self._call(vol, 'PUT', path, 'volumes', 'volume-metadata-update',
                   body={'metadata': {'purpose': 'database',
                                      'tier': 'silver'}})
        self._call(vol, 'GET', path + '/tier', 'volumes',
                   'volume-metadata-show-key')
        self._call(vol, 'PUT', path + '/tier', 'volumes',
                   'volume-metadata-update-key',
                   body={'meta': {'tier': 'bronze'}})
        self._call(vol, 'DELETE', path + '/tier', 'volumes',
                   'volume-metadata-delete-key')
        self.assertEqual({'purpose': 'database'},
                         vol.get(path).body['metadata'])


class TypeAccessSamplesTest(APISamplesTest):
    """Samples of volume type access (private types)."""

    def test_samples(self):
        self.scrub = Scrubber('http://localhost', self.conf.state_path)
        admin = self.admin
        vtype = self.create_type(
            'gold', **{'os-volume-type-access:is_public': False})
        action = '/v3/types/%s/action' % vtype['id']
        project = 'f270b245cb11498ca4031deb7e141cfa'
        self._call(admin, 'POST', action, 'volume-types',
                   'volume-type-access-add', status=202,
                   body={'addProjectAccess': {'project': project}})
        self._call(admin, 'GET',
                   '/v3/types/%s/os-volume-type-access' % vtype['id'],
                   'volume-types', 'volume-type-access-list')
        self._call(admin, 'POST', action, 'volume-types',
                   'volume-type-access-remove', status=202,
                   body={'removeProjectAccess': {'project': project}})


class LegacyAttachSamplesTest(APISamplesTest):
    """Samples of Cinder's legacy (pre-3.27) attach actions."""

    def test_samples(self):
        self.scrub = Scrubber('http://localhost', self.conf.state_path)
        vol = self.vol.as_(volume_version='3.0')
        volume_id = self.create_volume(name='legacy')['id']
        action = '/v3/volumes/%s/action' % volume_id
        self._call(vol, 'POST', action, 'volumes',
                   'volume-update-readonly-flag', status=202,
                   body={'os-update_readonly_flag': {'readonly': False}})
        self._call(vol, 'POST', action, 'volumes', 'volume-reserve',
                   status=202, body={'os-reserve': None})
        self._call(vol, 'POST', action, 'volumes', 'volume-unreserve',
                   status=202, body={'os-unreserve': None})
        self._call(vol, 'POST', action, 'volumes', 'volume-attach',
                   status=202, body={'os-attach': {
                       'instance_uuid': 'c8a2f0a4-5b7d-4c1e-9e2f-'
                                        '7d3b1a6c8e05',
                       'mountpoint': '/dev/vdc', 'mode': 'rw'}})
        attachment_id = self.show_volume(volume_id)['attachments'][0][
            'attachment_id']
        self._call(vol, 'POST', action, 'volumes', 'volume-detach',
                   status=202, body={'os-detach': {
                       'attachment_id': attachment_id}})
