"""The production layout (doc/source/admin/deploy.rst, "The production
layout"), on one machine:

* the controller: two API nodes, each its own uWSGI instance of the
  shipped ini on a port of its own (``Deployment(api_nodes=2)``), without
  storage rights: ``tgtadm``, ``tgt-admin`` and ``rbd`` on their ``PATH``
  are shims that record the call and fail (``api_storage_shims``), and a
  conductor;
* the storage node: the volume service alone, with an ``iscsi`` backend
  on the node's tgtd (``tests.fixtures.tgt.Tgtd``: without tgtd the tests
  skip saying so, or fail with ``NOVA_LITE_REQUIRE_TGT=1``, as under CI);
* two compute hosts (the fake virt driver: its connector names the
  initiator ``iqn.2010-10.org.openstack:<host>``, which tgtd's ACL then
  admits).

What it proves:

* every process of both API nodes (uWSGI's master and workers) finds the
  shims first on its ``PATH``, and the volume service finds tgtd's
  ``tgtadm`` (and made its backend's sentinel target with it);
* volumes created, attached and detached through both API nodes in turn,
  asynchronously (2.101) and synchronously (2.100), are ``in-use`` with
  their attachment to the server, then ``available`` with none, as each
  API node shows them; tgtd exports an attached volume's target (its LUN
  the file the volume service made) to the server's host alone, and a
  detached one's to no host;
* with one API node stopped, the other serves attach and detach, and the
  stopped one, started again, shows the same;
* no API process ran a storage command: the shims' log stays empty.
"""

import os
import shutil

import requests

from nova_lite.volume_service.drivers import iscsi
from tests.fixtures import tgt as tgt_fixture
from tests.integration import base
from tests.integration import deployment as deploy

ISCSI = 'iscsi'
# The fake virt driver's connector (ComputeDriver's, nova_lite.virt.driver).
INITIATOR = 'iqn.2010-10.org.openstack:%s'
ASYNC = '2.101'
SYNC = '2.100'
ATTACHED = 'in-use'
DETACHED = 'available'


def environ(pid):
    """The environment process ``pid`` started with."""
    with open('/proc/%d/environ' % pid, 'rb') as f:
        entries = f.read().decode(errors='replace').split('\0')
    return dict(e.partition('=')[::2] for e in entries if e)


class ProductionLayoutDeployment(deploy.Deployment):
    """Two API nodes without storage rights, and the volume service with
    an ``iscsi`` backend on the node's tgtd."""

    def __init__(self, backend, **kwargs):
        super().__init__(backend, api_nodes=2, api_storage_shims=True,
                         **kwargs)

    def _setUp(self):
        # First: without tgtd nothing starts. Its cleanup (this
        # deployment's targets) runs after the processes stopped.
        self.tgtd = self.useFixture(tgt_fixture.Tgtd())
        backend = {'volume_driver': 'iscsi'}
        for key, value in self.tgtd.conf_overrides(ISCSI).items():
            backend[key.partition('.')[2]] = value
        self.extra_conf = dict(self.extra_conf)
        self.extra_conf.update({'volume': {'enabled_backends': ISCSI},
                                ISCSI: backend})
        super()._setUp()
        self.volumes_dir = os.path.join(self.path, 'state', 'volumes')

    def exported_to(self, volume_id):
        """The initiator names tgtd exports the volume's target to (None:
        no target), and its LUN 1's file."""
        target = self.tgtd.targets().get('%svolume-%s' % (
            self.tgtd.prefix, volume_id))
        if target is None:
            return None, None
        return target.acl, target.luns.get(1, {}).get('path')


class _ProductionLayoutTests(object):

    @classmethod
    def make_deployment(cls):
        return ProductionLayoutDeployment(cls.BACKEND,
                                          extra_conf=cls.EXTRA_CONF)

    def setUp(self):
        super().setUp()
        self.apis = {name: deploy.HTTPClient(url, token='demo:demo')
                     for name, url in self.deployment.api_urls.items()}

    # -- what each API node shows ---------------------------------------

    def seen_from(self, name, server_id, volume_ids):
        """What API node ``name`` shows of each volume: {volume id:
        (status, the servers of its attachments, on the server's
        attachment list)}."""
        api = self.apis[name]
        listed = [a['volumeId'] for a in self.list_attachments(
            server_id, api=api)]
        seen = {}
        for volume_id in volume_ids:
            resp = api.get('/v3/demo/volumes/%s' % volume_id)
            self.assertEqual(200, resp.status, resp)
            volume = resp.body['volume']
            seen[volume_id] = (
                volume['status'],
                [a['server_id'] for a in volume['attachments']],
                volume_id in listed)
        return seen

    def wait_seen(self, names, server_id, volume_ids, attached):
        """Poll until every API node of ``names`` shows the volumes
        attached to the server (``attached``) or detached."""
        state = ((ATTACHED, [server_id], True) if attached else
                 (DETACHED, [], False))
        expected = dict.fromkeys(volume_ids, state)
        last = {}

        def check():
            for name in names:
                last[name] = self.seen_from(name, server_id, volume_ids)
            return all(seen == expected for seen in last.values())

        self.wait_for(check, message=lambda: 'not %s: %s' % (
            expected, last))

    def devices(self, name, server_id):
        """{volume id: device} of the server's attachments, as API node
        ``name`` lists them."""
        return {a['volumeId']: a['device'] for a in self.list_attachments(
            server_id, api=self.apis[name])}

    # -- what tgtd holds --------------------------------------------------

    def wait_exported(self, volume_id, initiators):
        """Poll until tgtd exports the volume's target to ``initiators``
        alone, its LUN the volume's file in the volume service's
        ``volumes_dir``."""
        path = os.path.join(self.deployment.volumes_dir,
                            'volume-%s' % volume_id)
        self.wait_for(
            lambda: self.deployment.exported_to(volume_id) == (
                initiators, path),
            message=lambda: 'volume %s: tgtd exports %s, not %s' % (
                volume_id, self.deployment.exported_to(volume_id),
                (initiators, path)))

    def assert_no_storage_calls(self):
        self.assertEqual([], self.deployment.storage_calls())

    def active_server(self, api):
        server_id = self.create_server(api=api)
        server = self.wait_for_server_status(server_id, 'ACTIVE')
        return server_id, server['OS-EXT-SRV-ATTR:host']

    def attach(self, name, version, server_id, volume_id):
        """Attach through API node ``name`` at ``version``: 202 (async),
        or 200 and the device (sync)."""
        resp = self.attach_volume(server_id, volume_id, api=self.apis[
            name].as_(compute_version=version))
        if version == ASYNC:
            self.assertEqual(202, resp.status, resp)
            return None
        self.assertEqual(200, resp.status, resp)
        return resp.body['volumeAttachment']['device']

    def detach(self, name, version, server_id, volume_id):
        resp = self.detach_volume(server_id, volume_id, api=self.apis[
            name].as_(compute_version=version))
        self.assertEqual(202, resp.status, resp)

    # -- the tests --------------------------------------------------------

    def test_api_nodes_have_no_storage_rights(self):
        d = self.deployment
        self.assertEqual(('api', 'api2'), d.api_names)
        self.assertEqual(2, len(set(d.api_urls.values())))
        for name in d.api_names:
            workers = self.wait_for(lambda: d.uwsgi_workers(name))
            self.assertEqual(d.api_processes, len(workers))
            for pid in [d.processes[name].pid] + list(workers):
                path = environ(pid)['PATH']
                for tool in d.STORAGE_TOOLS:
                    self.assertEqual(os.path.join(d.shim_dir, tool),
                                     shutil.which(tool, path=path))
        # The volume service runs tgtd's tgtadm, and has: its backend's
        # sentinel target is on tgtd.
        path = environ(d.processes[d.VOLUME].pid)['PATH']
        self.assertEqual(shutil.which('tgtadm'),
                         shutil.which('tgtadm', path=path))
        self.assertNotEqual(os.path.join(d.shim_dir, 'tgtadm'),
                            shutil.which('tgtadm', path=path))
        self.assertIn(iscsi.sentinel_name(d.tgtd.prefix, ISCSI,
                                          d.volumes_dir), d.tgtd.targets())
        self.assert_no_storage_calls()

    def test_attach_and_detach_through_both_api_nodes(self):
        names = self.deployment.api_names
        server_id, host = self.active_server(self.apis['api2'])
        # Each node attaches one volume asynchronously and one
        # synchronously, the volumes made through it; the other node
        # detaches them.
        rounds = [('api', ASYNC), ('api2', SYNC), ('api', SYNC),
                  ('api2', ASYNC)]
        volume_ids = [self.create_volume(api=self.apis[name])
                      for name, _version in rounds]
        for volume_id in volume_ids:
            self.wait_exported(volume_id, [])
        devices = {}
        for (name, version), volume_id in zip(rounds, volume_ids):
            devices[volume_id] = self.attach(name, version, server_id,
                                             volume_id)
            self.wait_seen(names, server_id, [volume_id], attached=True)
        self.wait_seen(names, server_id, volume_ids, attached=True)
        # Both nodes list the same devices: those the sync attaches
        # answered.
        listed = self.devices('api', server_id)
        self.assertEqual(listed, self.devices('api2', server_id))
        self.assertEqual(len(volume_ids), len(set(listed.values())))
        for volume_id, device in devices.items():
            if device is not None:
                self.assertEqual(device, listed[volume_id])
            self.wait_exported(volume_id, [INITIATOR % host])
        for (name, version), volume_id in zip(rounds, volume_ids):
            other = names[1 - names.index(name)]
            self.detach(other, version, server_id, volume_id)
            self.wait_seen(names, server_id, [volume_id], attached=False)
            self.wait_exported(volume_id, [])
        self.wait_seen(names, server_id, volume_ids, attached=False)
        self.assert_no_storage_calls()

    def test_one_api_node_stopped_the_other_serves(self):
        d = self.deployment
        server_id, host = self.active_server(self.apis['api'])
        volume_ids = [self.create_volume(), self.create_volume()]
        # The first node, the one the test's own helpers use, goes (as
        # the load balancer's health check would see: GET / fails).
        self.assertTrue(d.stop('api'))
        self.addCleanup(d.ensure_running)
        self.assertRaises(requests.ConnectionError, requests.get,
                          d.api_urls['api'] + '/', timeout=5)
        self.assertIsNone(self.attach('api2', ASYNC, server_id,
                                      volume_ids[0]))
        device = self.attach('api2', SYNC, server_id, volume_ids[1])
        self.wait_seen(['api2'], server_id, volume_ids, attached=True)
        self.assertEqual(device, self.devices('api2', server_id)[
            volume_ids[1]])
        for volume_id in volume_ids:
            self.wait_exported(volume_id, [INITIATOR % host])
        self.detach('api2', SYNC, server_id, volume_ids[0])
        self.detach('api2', ASYNC, server_id, volume_ids[1])
        self.wait_seen(['api2'], server_id, volume_ids, attached=False)
        for volume_id in volume_ids:
            self.wait_exported(volume_id, [])
        # Started again, the first node shows the same.
        d.start('api')
        self.wait_seen(d.api_names, server_id, volume_ids, attached=False)
        self.assert_no_storage_calls()


class TestProductionLayoutMariaDB(_ProductionLayoutTests,
                                  base.IntegrationTestCase):
    BACKEND = 'mysql'
