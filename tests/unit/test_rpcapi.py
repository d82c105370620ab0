"""RPC client and server versions stay in step."""

import testtools

from nova_lite import baserpc
from nova_lite.compute import manager as compute_manager
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import manager as conductor_manager
from nova_lite.conductor import rpcapi as conductor_rpcapi


class VersionsInSyncTest(testtools.TestCase):
    def test_conductor(self):
        self.assertEqual(conductor_rpcapi.RPC_API_VERSION,
                         conductor_manager.ConductorManager.target.version)
        self.assertIn('* %s -' % conductor_rpcapi.RPC_API_VERSION,
                      conductor_rpcapi.__doc__)

    def test_compute(self):
        self.assertEqual(compute_rpcapi.RPC_API_VERSION,
                         compute_manager.ComputeManager.target.version)
        self.assertIn('* %s -' % compute_rpcapi.RPC_API_VERSION,
                      compute_rpcapi.__doc__)

    def test_base(self):
        self.assertEqual(baserpc.RPC_API_VERSION,
                         baserpc.BaseRPCAPI.target.version)
