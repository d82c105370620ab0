"""The layer contracts of setup.cfg ``[importlinter]`` hold: block storage
(``volume``, ``volume_service``) and the volume client never import the
API; block storage never imports the compute side (it loads
``volume.servers``' ComputeCalls by entry point); the client never
imports the volume service, and the REST client none of block storage but
its status names; objects never import compute or the conductor; the
conductor reaches block storage through the volume client only; only the
volume service's processes import ``volume_service`` (the drivers); the
block-storage clients do not import each other; the virt drivers never
import the compute host's service; host-side steps are imported by the
compute host alone; volumes are reserved by the conductor alone; and only
the embedded mode and ``cmd`` use the embedded pieces."""

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
        self.assertEqual(12, kept)
        self.assertIn('%d kept, 0 broken' % kept, result.stdout)
