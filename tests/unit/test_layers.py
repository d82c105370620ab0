"""The layer contracts of setup.cfg ``[importlinter]`` hold: block storage
never imports the API and reaches the compute side through
``volume.servers`` only, objects never import compute or the conductor, the
REST block-storage client never imports the service it talks to, the
conductor reaches block storage through the volume client only, the
block-storage clients do not import each other, host-side volume steps are
imported by the compute host alone, volumes are reserved by the conductor
alone, and only the embedded mode and ``cmd`` use the embedded pieces."""

import os
import subprocess
import sys

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class LayerContractsTest(testtools.TestCase):

    def test_contracts_are_kept(self):
        lint = os.path.join(os.path.dirname(sys.executable), 'lint-imports')
        result = subprocess.run(
            [lint, '--no-cache'], cwd=ROOT, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, timeout=300)
        self.assertEqual(0, result.returncode, result.stdout[-5000:])
        kept = sum(1 for line in open(os.path.join(ROOT, 'setup.cfg'))
                   if line.startswith('[importlinter:contract:'))
        self.assertEqual(10, kept)
        self.assertIn('%d kept, 0 broken' % kept, result.stdout)
