"""nova_lite behind a real Keystone (``auth_strategy = keystone``).

One deployment (uWSGI API, conductor, one compute host, RabbitMQ, MariaDB)
with ``tests.fixtures.keystone.KeystoneServer``: tokens come from Keystone
by password, keystonemiddleware validates them, roles map to the policies,
and the compute side reaches block storage through the Keystone catalog
with the user's token plus a service token. The openstack CLI and
openstacksdk run here with ``auth_type: password``, as users run them.
"""

import json
import os
import subprocess
import sys

import fixtures
import openstack
import requests

from tests.fixtures import keystone
from tests.integration import base
from tests.integration import deployment as deploy

SERVER = {'name': 'ks-server', 'flavorRef': '1',
          'imageRef': '70a599e0-31e7-49b7-b260-868f441e862b',
          'networks': 'none'}


class KeystoneTest(base.IntegrationTestCase):
    BACKEND = 'mysql'

    @classmethod
    def make_deployment(cls):
        return deploy.Deployment(
            cls.BACKEND, compute_hosts=('compute1',),
            keystone=keystone.KeystoneServer(deploy.executable('uwsgi')))

    def setUp(self):
        super().setUp()
        self.ks = self.deployment.keystone
        self.project = self.ks.projects['demo'].id
        self.member = self.client('demo')
        self.admin_api = deploy.HTTPClient(self.deployment.base_url,
                                           token=self.ks.token())

    def client(self, user, project=None, **versions):
        token = self.ks.token(user, keystone.USER_PASSWORD,
                              project or user.split('-')[0])
        return deploy.HTTPClient(self.deployment.base_url, token=token,
                                 **versions)

    def volumes_path(self, project=None):
        return '/v3/%s/volumes' % (project or self.project)

    def create_volume(self, api):
        resp = api.post(self.volumes_path(), body={'volume': {'size': 1}})
        self.assertEqual(202, resp.status, resp.text)
        volume_id = resp.body['volume']['id']
        self.wait_for(lambda: api.get('%s/%s' % (
            self.volumes_path(), volume_id)).body['volume']['status'] ==
            'available')
        return volume_id

    def volume(self, api, volume_id):
        return api.get('%s/%s' % (self.volumes_path(), volume_id)).body[
            'volume']

    def create_server(self, api):
        resp = api.post('/v2.1/servers', body={'server': SERVER})
        self.assertEqual(202, resp.status, resp.text)
        server_id = resp.body['server']['id']
        self.wait_for(lambda: api.get('/v2.1/servers/%s' % server_id).body[
            'server']['status'] == 'ACTIVE')
        return server_id

    def test_no_token_or_a_bad_one_is_401(self):
        for path in ('/v2.1/servers', self.volumes_path()):
            resp = requests.get(self.deployment.base_url + path, timeout=30)
            self.assertEqual(401, resp.status_code, path)
            self.assertEqual('Keystone uri="%s"' % self.ks.url,
                             resp.headers['WWW-Authenticate'])
            resp = requests.get(self.deployment.base_url + path, timeout=30,
                                headers={'X-Auth-Token': 'not-a-token'})
            self.assertEqual(401, resp.status_code, path)
        # The version documents need no token, as in Nova and Cinder.
        self.assertEqual(200, requests.get(
            self.deployment.base_url + '/v2.1/', timeout=30).status_code)

    def test_revoked_token_is_401(self):
        # (A token validated before its revocation stays accepted by a
        # worker for [keystone_authtoken] token_cache_time at most.)
        token = self.ks.token('demo', keystone.USER_PASSWORD, 'demo')
        api = deploy.HTTPClient(self.deployment.base_url, token=token)
        self.ks.revoke(token)
        for path in ('/v2.1/servers', self.volumes_path()):
            self.assertEqual(401, api.get(path).status, path)
        self.assertEqual(200, self.member.get('/v2.1/servers').status)

    def test_roles_map_to_policies(self):
        reader = self.client('demo-reader', 'demo')
        other = self.client('alt_demo')
        volume_id = self.create_volume(self.member)
        # reader: sees the project's volumes, may not create or delete.
        self.assertEqual([volume_id], [
            v['id'] for v in reader.get(self.volumes_path()).body['volumes']
            if v['id'] == volume_id])
        resp = reader.post(self.volumes_path(), body={'volume': {'size': 1}})
        self.assertEqual(403, resp.status, resp.text)
        self.assertIn('forbidden', resp.body)
        resp = reader.delete('%s/%s' % (self.volumes_path(), volume_id))
        self.assertEqual(403, resp.status, resp.text)
        # another project's member: not even there.
        alt = self.ks.projects['alt_demo'].id
        resp = other.get('%s/%s' % (self.volumes_path(alt), volume_id))
        self.assertEqual(404, resp.status, resp.text)
        # admin: everything, and admin-only fields.
        shown = self.admin_api.get('/v3/%s/volumes/%s' % (
            self.ks.projects['admin'].id, volume_id)).body['volume']
        self.assertEqual(self.project,
                         shown['os-vol-tenant-attr:tenant_id'])
        self.assertEqual(403, self.member.get(
            '/v2.1/os-services').status)
        self.assertEqual(200, self.admin_api.get('/v2.1/os-services').status)

    def test_attach_through_the_catalog_with_a_service_token(self):
        # The compute side creates, updates and completes the attachment
        # with the member's token at the member's project URL of the
        # catalog, adding the nova_lite user's service token.
        api = self.member.as_(compute_version='2.60')
        server_id = self.create_server(api)
        volume_id = self.create_volume(self.member)
        resp = api.post('/v2.1/servers/%s/os-volume_attachments' % server_id,
                        body={'volumeAttachment': {'volumeId': volume_id}})
        self.assertEqual(200, resp.status, resp.text)
        self.wait_for(lambda: self.volume(self.member, volume_id)['status'] ==
                      'in-use')
        attachment_id = self.volume(self.member, volume_id)['attachments'][0][
            'attachment_id']
        # The user alone may not delete what the compute side holds
        # (OSSA-2023-003): only a request with a service token may.
        volume_api = self.member.as_(volume_version='3.44')
        resp = volume_api.delete('/v3/%s/attachments/%s' % (
            self.project, attachment_id))
        self.assertEqual(409, resp.status, resp.text)
        resp = api.delete('/v2.1/servers/%s/os-volume_attachments/%s' % (
            server_id, volume_id))
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for(lambda: self.volume(self.member, volume_id)['status'] ==
                      'available')
        self.assertEqual([], self.volume(self.member, volume_id)[
            'attachments'])

    def test_unreachable_keystone_fails_closed(self):
        token = self.ks.token('demo', keystone.USER_PASSWORD, 'demo')
        api = deploy.HTTPClient(self.deployment.base_url, token=token)
        self.ks.stop()
        self.addCleanup(self.ks.start)
        # A token no worker has validated yet: it cannot be checked.
        resp = api.get(self.volumes_path())
        self.assertIn(resp.status, (401, 503), resp.text)
        self.ks.start()
        self.assertEqual(200, api.get(self.volumes_path()).status)

    # -- openstacksdk and the openstack CLI with password authentication:
    # the catalog, not endpoint overrides, tells them where nova_lite is.

    def _clouds(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        clouds = os.path.join(tmp, 'clouds.yaml')
        with open(clouds, 'w') as f:
            json.dump({'clouds': {'demo': {
                'auth_type': 'password',
                'auth': {'auth_url': self.ks.url, 'username': 'demo',
                         'password': keystone.USER_PASSWORD,
                         'project_name': 'demo',
                         'user_domain_name': 'Default',
                         'project_domain_name': 'Default'},
                'identity_api_version': '3',
                'region_name': keystone.REGION}}}, f)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith('OS_')}
        self.env.update(OS_CLIENT_CONFIG_FILE=clouds, OS_CLOUD='demo',
                        HOME=tmp)
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_CLIENT_CONFIG_FILE', clouds))
        self.useFixture(fixtures.EnvironmentVariable('OS_CLOUD'))

    def openstack(self, *args):
        cmd = [os.path.join(os.path.dirname(sys.executable), 'openstack'),
               '--os-volume-api-version', '3.71',
               '--os-compute-api-version', '2.60'] + list(args)
        proc = subprocess.run(cmd, env=self.env, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(0, proc.returncode, '%s\n%s%s' % (
            ' '.join(args), proc.stdout, proc.stderr))
        if args[-2:] == ('-f', 'json'):
            return json.loads(proc.stdout)
        return proc.stdout

    def test_openstacksdk_with_password(self):
        self._clouds()
        conn = openstack.connect(cloud='demo')
        self.addCleanup(conn.close)
        volume = conn.block_storage.create_volume(size=1, name='sdk-ks')
        volume = conn.block_storage.wait_for_status(volume, 'available',
                                                    wait=60)
        self.assertEqual(self.ks.projects['demo'].id,
                         conn.block_storage.get_volume(volume.id).project_id)
        server = conn.compute.create_server(
            name='sdk-ks', flavor_id='1', image_id=SERVER['imageRef'],
            networks='none')
        server = conn.compute.wait_for_server(server, wait=60)
        conn.compute.create_volume_attachment(server, volume_id=volume.id)
        conn.block_storage.wait_for_status(volume, 'in-use', wait=60)
        self.assertEqual([volume.id], [
            a.volume_id for a in conn.compute.volume_attachments(server)])
        conn.compute.delete_volume_attachment(server, volume.id)
        conn.block_storage.wait_for_status(volume, 'available', wait=60)
        conn.block_storage.delete_volume(volume)

    def test_openstack_cli_with_password(self):
        self._clouds()
        volumes = []
        for name in ('cli-ks-boot', 'cli-ks'):
            volume = self.openstack('volume', 'create', '--size', '1',
                                    name, '-f', 'json')
            self.wait_for(lambda: self.openstack(
                'volume', 'show', volume['id'], '-f', 'json')['status'] ==
                'available')
            volumes.append(volume)
        boot, volume = volumes
        # No image service: the server boots from a volume.
        server = self.openstack(
            'server', 'create', '--flavor', '1', '--volume', boot['id'],
            '--nic', 'none', '--wait', 'cli-ks', '-f', 'json')
        self.assertEqual('ACTIVE', server['status'])
        self.openstack('server', 'add', 'volume', server['id'],
                       volume['id'], '-f', 'json')
        self.wait_for(lambda: self.openstack(
            'volume', 'show', volume['id'], '-f', 'json')['status'] ==
            'in-use')
        self.openstack('server', 'remove', 'volume', server['id'],
                       volume['id'])
        self.wait_for(lambda: self.openstack(
            'volume', 'show', volume['id'], '-f', 'json')['status'] ==
            'available')
        self.openstack('volume', 'delete', volume['id'])
        self.openstack('server', 'delete', '--wait', server['id'])
        self.assertNotIn(server['id'], [
            s['ID'] for s in self.openstack('server', 'list', '-f', 'json')])
        # The boot volume is released with the server.
        self.assertEqual('available', self.openstack(
            'volume', 'show', boot['id'], '-f', 'json')['status'])
