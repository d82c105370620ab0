"""The user guide's openstacksdk scripts (doc/source/user/examples) run
as a user runs them, against the embedded system on a real port with the
clouds.yaml nova-lite-all writes, and print what the guide shows."""

import os
import subprocess
import sys

import fixtures

from nova_lite import embedded
from tests.fixtures import system
from tests.functional import base

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                        'source', 'user', 'examples')
UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'


class ExamplesTest(base.TestCase):
    def setUp(self):
        super().setUp()
        server = self.useFixture(system.HTTPServer(self.sys.app))
        clouds = embedded.write_client_files(self.conf, server.base_url)
        home = self.useFixture(fixtures.TempDir()).path
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith('OS_')}
        self.env.update(HOME=home, OS_CLIENT_CONFIG_FILE=clouds)

    def run_example(self, name):
        proc = subprocess.run(
            [sys.executable, os.path.join(EXAMPLES, name)], env=self.env,
            capture_output=True, text=True, timeout=300)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        return proc.stdout.splitlines()

    def test_journey(self):
        lines = self.run_example('journey.py')
        self.assertEqual('server sdk-vm ACTIVE', lines[0])
        self.assertRegex(lines[1], '^attached %s /dev/vdb$' % UUID)
        self.assertEqual([
            'attach read-only: 202',
            'attach_mode ro device /dev/vdc',
            "shelved: [('-', True), ('/dev/vdb', False), "
            "('/dev/vdc', False)]",
            "unshelved: [('/dev/vdb', False), ('/dev/vdc', False), "
            "('/dev/vdd', True)]",
            'left: [] []'], lines[2:])

    def test_journey_cleans_up_when_a_step_fails(self):
        # Two volumes allowed: the third create (sdk-later, while the
        # server is shelved) answers 413 and the script stops there.
        resp = self.admin_api.as_(volume_version='3.0').put(
            '/v3/admin/os-quota-sets/demo',
            body={'quota_set': {'volumes': 2}})
        self.assertEqual(200, resp.status, resp.text)
        proc = subprocess.run(
            [sys.executable, os.path.join(EXAMPLES, 'journey.py')],
            env=self.env, capture_output=True, text=True, timeout=300)
        self.assertNotEqual(0, proc.returncode, proc.stdout)
        self.assertIn('413', proc.stderr)
        self.assertEqual('attach_mode ro device /dev/vdc',
                         proc.stdout.splitlines()[-1])
        # Its server and both volumes are gone all the same.
        self.assertEqual([], self.api.get('/v2.1/servers').body['servers'])
        self.assertEqual([], self.api.get('/v3/volumes').body['volumes'])

    def test_shared_root(self):
        self.assertEqual([
            'volume shared-root multiattach True',
            'create: 202',
            'server reader-1 ACTIVE',
            'server reader-2 ACTIVE',
            'volume in-use 2 attachments',
            'attachment attached ro',
            'attachment attached ro',
            'volume available 0 attachments'],
            self.run_example('shared_root.py'))
