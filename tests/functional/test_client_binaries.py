"""The real client binaries against the embedded default, configured only
by what nova-lite-all writes.

The system is served on a real port; ``embedded.write_client_files``
writes ``clouds.yaml`` and the openrc files exactly as ``nova-lite-all``
does at start. ``openstack`` (python-openstackclient) reads
``clouds.yaml`` (``OS_CLIENT_CONFIG_FILE``, ``OS_CLOUD``); ``cinder`` and
``nova``, which do not read it, run in a shell that sourced the openrc
file, as a user would. Every client authenticates with a password at
``/identity`` and finds its endpoints in the token's catalog: nothing is
overridden.
"""

import json
import os
import re
import subprocess
import sys

import fixtures
import yaml

from nova_lite.api import microversion
from nova_lite import embedded
from tests.fixtures import system
from tests.functional.compute import base

BIN = os.path.dirname(sys.executable)
DEMO = 'nova-lite-demo'
ADMIN = 'nova-lite'


def table(text):
    """The rows of a prettytable (cinder/nova CLI output): [[cell, ...]]."""
    return [[cell.strip() for cell in line.strip('|').split('|')]
            for line in text.splitlines() if line.startswith('|')]


def properties(text):
    """A ``| Property | Value |`` table as a dict."""
    return {row[0]: row[1] for row in table(text)[1:]}


class ClientBinariesTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        server = self.useFixture(system.HTTPServer(self.sys.app))
        self.base_url = server.base_url
        self.clouds = embedded.write_client_files(self.conf, self.base_url)
        self.state = os.path.dirname(self.clouds)
        home = self.useFixture(fixtures.TempDir()).path
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith('OS_')}
        self.env.update(HOME=home, OS_CLIENT_CONFIG_FILE=self.clouds,
                        PATH=BIN + os.pathsep + os.environ.get('PATH', ''))

    def run_client(self, argv, env, expect_rc=0):
        proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=180)
        self.assertEqual(expect_rc, proc.returncode, '%s\n%s%s' % (
            ' '.join(argv), proc.stdout, proc.stderr))
        return proc

    def openstack(self, *args, cloud=DEMO, expect_rc=0):
        """``openstack --os-cloud`` (JSON output parsed when asked)."""
        proc = self.run_client(
            [os.path.join(BIN, 'openstack')] + list(args),
            dict(self.env, OS_CLOUD=cloud), expect_rc)
        if expect_rc == 0 and '-f' in args and 'json' in args:
            return json.loads(proc.stdout)
        return proc.stdout if expect_rc == 0 else proc.stderr

    def sourced(self, *args, user='demo', expect_rc=0):
        """``args`` in a shell that sourced ``<user>-openrc``."""
        rc_file = os.path.join(self.state, '%s-openrc' % user)
        proc = self.run_client(
            ['/bin/sh', '-c', '. "$0" && exec "$@"', rc_file] + list(args),
            self.env, expect_rc)
        return proc.stdout if expect_rc == 0 else proc.stderr


class OpenStackDiscoveryTest(ClientBinariesTestCase):
    def test_versions_show(self):
        versions = self.openstack('versions', 'show', '-f', 'json',
                                  cloud=ADMIN)
        current = {(v['Service Type'], v['Endpoint']):
                   (v['Min Microversion'], v['Max Microversion'])
                   for v in versions if v['Status'] == 'CURRENT'}
        self.assertEqual({
            ('compute', self.base_url + '/v2.1/'):
                (str(microversion.COMPUTE.min), str(microversion.COMPUTE.max)),
            ('block-storage', self.base_url + '/volume/v3/'):
                (str(microversion.VOLUME.min), str(microversion.VOLUME.max)),
            ('identity', self.base_url + '/identity/v3/'): (None, None),
        }, current)

    def test_quota_limits_and_token(self):
        quota = {q['Resource']: q['Limit'] for q in self.openstack(
            'quota', 'show', '-f', 'json', cloud=ADMIN)}
        self.assertEqual(self.conf.quota.instances, quota['instances'])
        self.assertEqual(self.conf.quota.cores, quota['cores'])
        self.assertEqual(self.conf.quota.volumes, quota['volumes'])
        self.create_volume()  # the demo project's
        limits = {q['Name']: q['Value'] for q in self.openstack(
            'limits', 'show', '--absolute', '-f', 'json')}
        self.assertEqual(self.conf.quota.instances,
                         limits['max_total_instances'])
        self.assertEqual(1, limits['total_volumes_used'])
        self.assertEqual(0, limits['total_instances_used'])
        token = self.openstack('token', 'issue', '-f', 'json')
        self.assertEqual(('demo:demo', 'demo', 'demo'), (
            token['id'], token['project_id'], token['user_id']))

    def test_admin_and_member(self):
        services = self.openstack('compute', 'service', 'list', '-f', 'json',
                                  cloud=ADMIN)
        self.assertIn(('nova-lite-compute', 'compute1', 'up'),
                      [(s['Binary'], s['Host'], s['State'])
                       for s in services])
        err = self.openstack('compute', 'service', 'list', expect_rc=1)
        self.assertIn('403', err)

    def test_a_wrong_password_is_refused(self):
        with open(self.clouds) as f:
            clouds = yaml.safe_load(f)
        clouds['clouds'][DEMO]['auth']['password'] += 'x'
        wrong = os.path.join(self.state, 'wrong.yaml')
        with open(wrong, 'w') as f:
            yaml.safe_dump(clouds, f)
        self.env['OS_CLIENT_CONFIG_FILE'] = wrong
        err = self.openstack('server', 'list', expect_rc=1)
        self.assertIn('requires authentication. (HTTP 401)', err)


class OpenStackServerAndVolumeTest(ClientBinariesTestCase):
    def test_lifecycle(self):
        # No image service: a server boots from a volume (the API and
        # openstacksdk take any UUID as imageRef; the CLI asks Glance).
        boot = self.openstack('volume', 'create', '--size', '1', 'boot',
                              '-f', 'json')
        self.assertEqual(('available', 'boot'),
                         (boot['status'], boot['name']))
        data = self.openstack('volume', 'create', '--size', '2', 'data',
                              '-f', 'json')
        self.assertEqual(
            {('boot', 1, 'available'), ('data', 2, 'available')},
            {(v['Name'], v['Size'], v['Status'])
             for v in self.openstack('volume', 'list', '-f', 'json')})
        self.assertEqual(data['id'], self.openstack(
            'volume', 'show', 'data', '-f', 'json')['id'])

        server = self.openstack(
            '--os-compute-api-version', '2.37', 'server', 'create',
            '--flavor', 'm1.small', '--volume', 'boot', '--no-network',
            '--wait', 'vm1', '-f', 'json')
        self.assertEqual(('ACTIVE', 'vm1'), (server['status'],
                                             server['name']))
        self.assertEqual([('vm1', 'ACTIVE')], [
            (s['Name'], s['Status'])
            for s in self.openstack('server', 'list', '-f', 'json')])
        shown = self.openstack('server', 'show', 'vm1', '-f', 'json')
        self.assertEqual(server['id'], shown['id'])
        self.assertEqual([boot['id']],
                         [v['id'] for v in shown['volumes_attached']])

        # 2.101: the attach is accepted at once; the volume becomes in-use.
        attached = self.openstack(
            '--os-compute-api-version', '2.101', 'server', 'add', 'volume',
            'vm1', 'data', '-f', 'json')
        self.assertEqual(data['id'], attached['Volume ID'])
        self.wait_for_volume_status(data['id'], 'in-use')
        listed = self.openstack('server', 'volume', 'list', 'vm1',
                                '-f', 'json')
        self.assertEqual({(boot['id'], '/dev/vda'), (data['id'], '/dev/vdb')},
                         {(a['Volume ID'], a['Device']) for a in listed})
        self.openstack('server', 'remove', 'volume', 'vm1', 'data')
        self.wait_for_volume_status(data['id'], 'available')

        self.openstack('server', 'delete', '--wait', 'vm1')
        self.assertEqual([], self.openstack('server', 'list', '-f', 'json'))
        self.wait_for_volume_status(boot['id'], 'available')
        self.openstack('volume', 'delete', 'boot', 'data')
        self.assertEqual([], self.openstack('volume', 'list', '-f', 'json'))

    def test_volume_attachments(self):
        server_id = self.create_server(name='vm2')
        volume = self.openstack('volume', 'create', '--size', '1', 'att',
                                '-f', 'json')

        def attachment(version, *args):
            return self.openstack('--os-volume-api-version', version,
                                  'volume', 'attachment', *args)
        # openstacksdk 4.22 sends "mode": null below 3.54, which Cinder's
        # schema (and so nova_lite's) refuses: create from 3.54. The
        # other commands work from 3.27, complete from 3.44.
        for version, mode in (('3.54', ['--mode', 'rw']), ('3.71', [])):
            created = attachment(version, 'create', volume['id'],
                                 '--server', server_id, *mode,
                                 '-f', 'json')
            self.assertEqual(('reserved', server_id),
                             (created['Status'], created['Instance ID']))
            updated = attachment(
                '3.27', 'set', created['ID'], '--host', 'compute1',
                '--initiator', 'iqn.1993-08.org.debian:01:a', '-f', 'json')
            self.assertEqual('attaching', updated['Status'])
            attachment('3.44', 'complete', created['ID'])
            shown = attachment('3.27', 'show', created['ID'], '-f', 'json')
            self.assertEqual(('attached', volume['id']),
                             (shown['Status'], shown['Volume ID']))
            self.assertEqual('in-use',
                             self.show_volume(volume['id'])['status'])
            self.assertEqual([created['ID']], [
                a['ID'] for a in attachment('3.27', 'list', '-f', 'json')])
            attachment('3.27', 'delete', created['ID'])
            self.assertEqual([], attachment('3.27', 'list', '-f', 'json'))
            self.assertEqual('available',
                             self.show_volume(volume['id'])['status'])


class CinderCLITest(ClientBinariesTestCase):
    def test_volumes_and_attachments(self):
        created = properties(self.sourced('cinder', 'create', '--name',
                                          'c1', '1'))
        self.assertEqual(('c1', '1'), (created['name'], created['size']))
        self.wait_for_volume_status(created['id'], 'available')
        rows = table(self.sourced('cinder', 'list'))
        self.assertEqual(['ID', 'Status', 'Name', 'Size'], rows[0][:4])
        self.assertEqual([[created['id'], 'available', 'c1', '1']],
                         [row[:4] for row in rows[1:]])
        self.assertEqual('available', properties(self.sourced(
            'cinder', 'show', 'c1'))['status'])
        versions = self.sourced('cinder', 'version-list')
        self.assertIn('| v3.0 | CURRENT |', versions)

        server_id = self.create_server(name='vm3')
        cinder = ['cinder', '--os-volume-api-version', '3.44']
        attachment = properties(self.sourced(*cinder + [
            'attachment-create', created['id'], server_id]))
        self.assertEqual(('reserved', server_id),
                         (attachment['status'], attachment['instance']))
        rows = table(self.sourced(*cinder + ['attachment-list']))
        self.assertEqual([[attachment['id'], created['id'], 'reserved',
                           server_id]], rows[1:])
        updated = properties(self.sourced(*cinder + [
            'attachment-update', attachment['id'], '--host', 'compute1',
            '--initiator', 'iqn.1993-08.org.debian:01:b']))
        self.assertEqual('attaching', updated['status'])
        self.sourced(*cinder + ['attachment-complete', attachment['id']])
        self.assertEqual('attached', properties(self.sourced(*cinder + [
            'attachment-show', attachment['id']]))['status'])
        self.assertEqual('in-use', self.show_volume(created['id'])['status'])
        self.sourced(*cinder + ['attachment-delete', attachment['id']])
        self.assertEqual('available',
                         self.show_volume(created['id'])['status'])

        self.sourced('cinder', 'delete', 'c1')
        system.wait_for(lambda: len(table(self.sourced('cinder', 'list')))
                        == 1, timeout=30, message='c1 never deleted')

    def test_list_with_count(self):
        self.create_volume()
        self.create_volume()
        out = self.sourced('cinder', '--os-volume-api-version', '3.45',
                           'list', '--with-count')
        self.assertEqual(2, len(table(out)) - 1)
        self.assertIn('Volume in total: 2\n', out)


class NovaCLITest(ClientBinariesTestCase):
    def test_servers_and_volume_attachments(self):
        server_id = self.create_server(name='vm4')
        volume_id = self.create_volume()
        rows = table(self.sourced('nova', 'list'))
        self.assertEqual([[server_id, 'vm4', 'ACTIVE']],
                         [row[:3] for row in rows[1:]])
        self.assertEqual('vm4', properties(self.sourced(
            'nova', 'show', 'vm4'))['name'])
        # novaclient 18 speaks up to 2.96: it negotiates that.
        attached = properties(self.sourced('nova', 'volume-attach', 'vm4',
                                           volume_id))
        self.assertEqual((volume_id, '/dev/vdb'),
                         (attached['volumeId'], attached['device']))
        self.wait_for_volume_status(volume_id, 'in-use')
        rows = table(self.sourced('nova', 'volume-attachments', 'vm4'))
        self.assertEqual(['/dev/vdb', server_id, volume_id],
                         rows[1][:3])
        self.assertTrue(re.match(r'^[0-9a-f-]{36}$', rows[1][3]), rows)
        self.sourced('nova', 'volume-detach', 'vm4', volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual(1, len(table(self.sourced(
            'nova', 'volume-attachments', 'vm4'))))
