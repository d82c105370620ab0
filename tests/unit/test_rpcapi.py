"""RPC client and server versions stay in step, and what a send is
worth."""

import threading
import time

import oslo_messaging as messaging
from oslo_utils import uuidutils
import testtools

from nova_lite import baserpc
from nova_lite.compute import api as compute_api
from nova_lite.compute.host import manager as compute_manager
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import manager as conductor_manager
from nova_lite.conductor import rpcapi as conductor_rpcapi
from nova_lite import context as nl_context
from nova_lite import rpc
from nova_lite.volume import rpcapi as volume_rpcapi
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


class VolumeVersionCapTest(testtools.TestCase):
    """``[upgrade_levels] volume`` caps what block storage sends to the
    volume service, as the compute and conductor caps do."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf

    def test_uncapped_by_default(self):
        client = volume_rpcapi.VolumeAPI(self.conf).client
        self.assertIsNone(client.version_cap)
        self.assertTrue(client.can_send_version(
            volume_rpcapi.RPC_API_VERSION))

    def test_capped(self):
        self.conf.set_override('volume', '1.0', group='upgrade_levels')
        client = volume_rpcapi.VolumeAPI(self.conf).client
        self.assertEqual('1.0', client.version_cap)
        self.assertTrue(client.can_send_version('1.0'))
        self.assertFalse(client.can_send_version('1.1'))


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


class _SlowConductor(object):
    """A conductor endpoint whose attach takes ``seconds`` (a live peer
    that works long: the RPC server heartbeats meanwhile)."""

    target = messaging.Target(namespace=conductor_rpcapi.NAMESPACE,
                              version=conductor_rpcapi.RPC_API_VERSION)

    def __init__(self, seconds):
        self.seconds = seconds
        self.release = threading.Event()

    def attach_volume(self, context, instance, volume_id, device, tag,
                      delete_on_termination, multiattach):
        self.release.wait(self.seconds)
        return '/dev/vdb'


class BoundedCallsTest(testtools.TestCase):
    """The long calls (a synchronous attach) over a real transport (the
    in-process one, whose call monitor behaves as RabbitMQ's): a silent
    peer fails the call after rpc_response_timeout, a live one that
    heartbeats keeps it until long_rpc_timeout."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.conf.set_override('transport_url', 'inproc:///bounded-%s' %
                               uuidutils.generate_uuid())
        # The RPC server heartbeats every rpc_response_timeout / 2 s, at
        # least every second.
        self.conf.set_override('rpc_response_timeout', 2)
        self.conf.set_override('long_rpc_timeout', 3600)
        self.addCleanup(rpc.cleanup, self.conf)
        self.ctxt = nl_context.get_admin_context()

    def _attach(self):
        """Run the call in a thread: (result or exception, seconds);
        fails the test instead of waiting long_rpc_timeout."""
        outcome = []

        def run():
            start = time.monotonic()
            try:
                result = conductor_rpcapi.ConductorAPI(
                    self.conf).attach_volume(self.ctxt, 'i', 'v', None,
                                             None, False, False)
            except Exception as exc:
                result = exc
            outcome.append((result, time.monotonic() - start))
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(30)
        self.assertEqual(1, len(outcome), 'the call was not bounded')
        return outcome[0]

    def test_silent_peer_fails_after_rpc_response_timeout(self):
        # No conductor consumes the message (stopped, partitioned).
        result, took = self._attach()
        self.assertIsInstance(result, messaging.MessagingTimeout)
        self.assertLess(took, 10)

    def test_live_peer_keeps_the_call(self):
        endpoint = _SlowConductor(seconds=5)
        server = rpc.get_server(
            self.conf, messaging.Target(topic=conductor_rpcapi.TOPIC,
                                        server='conductor1'), [endpoint])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        self.addCleanup(endpoint.release.set)
        result, took = self._attach()
        # Longer than rpc_response_timeout: the heartbeats kept it.
        self.assertEqual('/dev/vdb', result)
        self.assertGreater(took, 4)
