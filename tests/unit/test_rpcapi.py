"""RPC client and server versions stay in step, and what a send is
worth."""

import testtools

from nova_lite import baserpc
from nova_lite.compute import api as compute_api
from nova_lite.compute.host import manager as compute_manager
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import manager as conductor_manager
from nova_lite.conductor import rpcapi as conductor_rpcapi
from tests.fixtures import conf as conf_fixture


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


class SendGuaranteesTest(testtools.TestCase):
    """What a send is worth (nova_lite.rpc): every client publishes with
    the mandatory flag; the API's clients give up on an unreachable broker
    after [DEFAULT] rpc_send_retries, the services' never do."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf

    def test_api_clients_bounded_and_mandatory(self):
        self.conf.set_override('rpc_send_retries', 3)
        api = compute_api.API(self.conf)
        for client in (api.compute_rpcapi.client,
                       api.conductor_rpcapi.client):
            context = client.prepare()
            self.assertEqual(3, context.retry)
            self.assertTrue(context.transport_options.at_least_once)

    def test_services_clients_wait_for_the_broker(self):
        for client in (compute_rpcapi.ComputeAPI(self.conf).client,
                       conductor_rpcapi.ConductorAPI(self.conf).client,
                       baserpc.BaseAPI(self.conf, 'conductor').client):
            context = client.prepare()
            self.assertIsNone(context.retry)
            self.assertTrue(context.transport_options.at_least_once)

    def test_minus_one_means_no_limit(self):
        self.conf.set_override('rpc_send_retries', -1)
        api = compute_api.API(self.conf)
        self.assertIsNone(api.compute_rpcapi.client.prepare().retry)
