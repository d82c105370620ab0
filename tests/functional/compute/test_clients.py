"""Real clients against the embedded system over a real socket:
openstacksdk's compute proxy and the ``openstack`` CLI attach, list and
detach volumes, and the volume reaches ``in-use`` and ``available``."""

import os
import subprocess
import sys

import fixtures
import openstack
from openstack import exceptions as sdk_exc

from tests.fixtures import system
from tests.functional.compute import base

OPENSTACK = os.path.join(os.path.dirname(sys.executable), 'openstack')

CLOUDS = """\
clouds:
  test:
    auth_type: admin_token
    auth:
      endpoint: %(base)s
      token: demo:demo
    compute_endpoint_override: %(base)s/v2.1
    block_storage_endpoint_override: %(base)s/v3
    volume_endpoint_override: %(base)s/v3
    region_name: RegionOne
"""


class ClientTestCase(base.TestCase):
    def setUp(self):
        super().setUp()
        self.base_url = self.useFixture(
            system.HTTPServer(self.sys.app)).base_url
        self.conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': self.base_url, 'token': 'demo:demo'},
            compute_endpoint_override=self.base_url + '/v2.1',
            block_storage_endpoint_override=self.base_url + '/v3')
        self.addCleanup(self.conn.close)


class OpenStackSDKTest(ClientTestCase):
    def test_attach_list_detach(self):
        server_id = self.create_server()
        volume = self.conn.block_storage.create_volume(size=1)
        self.conn.block_storage.wait_for_status(volume, 'available',
                                                wait=10)
        attachment = self.conn.compute.create_volume_attachment(
            server_id, volume_id=volume.id)
        self.assertEqual(volume.id, attachment.volume_id)
        self.assertEqual('/dev/vdb', attachment.device)
        self.conn.block_storage.wait_for_status(volume, 'in-use', wait=10)
        [listed] = list(self.conn.compute.volume_attachments(server_id))
        self.assertEqual((volume.id, '/dev/vdb'),
                         (listed.volume_id, listed.device))
        # openstacksdk negotiates 2.89 here: the Cinder attachment id.
        self.assertIsNotNone(listed.attachment_id)
        self.assertIsNotNone(listed.bdm_id)
        self.assertRaises(sdk_exc.BadRequestException,
                          self.conn.compute.create_volume_attachment,
                          server_id, volume_id=volume.id)
        self.conn.compute.delete_volume_attachment(server_id, volume.id)
        self.conn.block_storage.wait_for_status(volume, 'available',
                                                wait=10)
        self.assertEqual(
            [], list(self.conn.compute.volume_attachments(server_id)))
        self.assertRaises(sdk_exc.NotFoundException,
                          self.conn.compute.delete_volume_attachment,
                          server_id, volume.id, ignore_missing=False)

    def test_servers_and_flavors(self):
        flavor = self.conn.compute.find_flavor('m1.small')
        self.assertEqual('2', flavor.id)
        server = self.conn.compute.create_server(
            name='sdk', flavor_id=flavor.id, image_id=base.IMAGE,
            networks='none')
        server = self.conn.compute.wait_for_server(server, wait=10)
        self.assertEqual('ACTIVE', server.status)
        self.conn.compute.stop_server(server)
        self.conn.compute.wait_for_server(server, status='SHUTOFF', wait=10)
        self.conn.compute.delete_server(server)
        self.conn.compute.wait_for_delete(server, wait=10)


class CLITest(ClientTestCase):
    def openstack(self, *args):
        env = dict(os.environ, OS_CLIENT_CONFIG_FILE=self.clouds,
                   OS_CLOUD='test')
        proc = subprocess.run([OPENSTACK] + list(args), env=env,
                              capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stdout.strip(), proc.stderr

    def setUp(self):
        super().setUp()
        directory = self.useFixture(fixtures.TempDir()).path
        self.clouds = os.path.join(directory, 'clouds.yaml')
        with open(self.clouds, 'w') as f:
            f.write(CLOUDS % {'base': self.base_url})

    def test_server_add_list_remove_volume(self):
        server_id = self.create_server(name='cli')
        volume_id = self.create_volume(name='data')
        rc, out, err = self.openstack('server', 'add', 'volume', 'cli',
                                      'data', '-f', 'value', '-c', 'Device')
        self.assertEqual((0, '/dev/vdb'), (rc, out), err)
        self.wait_for_volume_status(volume_id, 'in-use')
        rc, out, err = self.openstack('server', 'volume', 'list', 'cli',
                                      '-f', 'value', '-c', 'Volume ID',
                                      '-c', 'Device')
        self.assertEqual((0, '/dev/vdb %s' % volume_id), (rc, out), err)
        # The same volume twice: the 400 reaches the user.
        rc, out, err = self.openstack('server', 'add', 'volume', 'cli',
                                      'data')
        self.assertEqual(1, rc)
        self.assertIn('is already attached to instances: %s' % server_id,
                      err)
        rc, out, err = self.openstack('server', 'remove', 'volume', 'cli',
                                      'data')
        self.assertEqual(0, rc, err)
        self.wait_for_volume_status(volume_id, 'available')
