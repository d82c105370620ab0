"""Base class of the integration tier: one real deployment per test class
and backend, shared by the tests of that class in one test process.

Subclass per backend::

    class _MyTests(object):
        def test_something(self):
            resp = self.admin_api.get('/v2.1/os-services')
            ...

    class TestMyThingMariaDB(_MyTests, base.IntegrationTestCase):
        BACKEND = 'mysql'

    class TestMyThingPostgreSQL(_MyTests, base.IntegrationTestCase):
        BACKEND = 'postgresql'

The deployment (``tests.integration.deployment.Deployment``) starts with the
first test of the class that runs in a process and stops in
``tearDownClass``; starting processes and waiting for heartbeats takes
seconds, so tests share it as tempest's tests share their servers. A test
may stop and start services; ``setUp`` restarts whatever a failed test left
stopped and waits until every service is up again. Tests create their own
resources (servers, volumes) and never depend on what other tests left.

When a test fails, the log of every process and the config file are
attached to it as details.

The HTTP helpers below (servers, volumes, attachments) follow the wire
contract (``shared/design/API-CONTRACT.md``); they are the building blocks
of the attach scenarios that join this tier as those features land.
"""

import unittest

import fixtures
import testtools

from tests.fixtures import required
from tests.integration import deployment as deploy

# {test class: Deployment, or the exception its start raised}. Per class,
# so that each backend has its own; per process (stestr workers).
_DEPLOYMENTS = {}

# Deadline of the asynchronous steps the helpers wait for.
ACTION_TIMEOUT = 60


class IntegrationTestCase(testtools.TestCase):
    BACKEND = None  # 'mysql' (MariaDB) or 'postgresql'
    # {section: {option: value}} for the class's deployment.
    EXTRA_CONF = None

    def setUp(self):
        super().setUp()
        self.addOnException(self._attach_logs)
        self.deployment = self._class_deployment()
        self.deployment.ensure_running()
        base_url = self.deployment.base_url
        self.api = deploy.HTTPClient(base_url, token='demo:demo')
        self.admin_api = deploy.HTTPClient(base_url, token=deploy.ADMIN_TOKEN)

    @classmethod
    def _class_deployment(cls):
        entry = _DEPLOYMENTS.get(cls)
        if entry is None:
            entry = cls.make_deployment()
            try:
                entry.setUp()
            except fixtures.MultipleExceptions as e:
                # The fixture cleaned itself up; keep the first cause (a
                # skip stays a skip).
                cause = required.first_cause(e)
                cause.details = entry.log_details()
                _DEPLOYMENTS[cls] = cause
                raise cause
            _DEPLOYMENTS[cls] = entry
            return entry
        if isinstance(entry, (unittest.SkipTest, required.Unavailable)):
            raise entry
        if isinstance(entry, BaseException):
            raise AssertionError(
                'the %s deployment failed to start in an earlier test: %s'
                % (cls.BACKEND, entry))
        return entry

    @classmethod
    def make_deployment(cls):
        """The class's deployment (not started yet)."""
        return deploy.Deployment(cls.BACKEND, extra_conf=cls.EXTRA_CONF)

    @classmethod
    def tearDownClass(cls):
        entry = _DEPLOYMENTS.pop(cls, None)
        if isinstance(entry, deploy.Deployment):
            entry.cleanUp()
        super().tearDownClass()

    def _attach_logs(self, exc_info):
        entry = _DEPLOYMENTS.get(type(self))
        if isinstance(entry, deploy.Deployment):
            details = entry.log_details()
        else:
            details = getattr(entry, 'details', None) or {}
        for name, detail in details.items():
            self.addDetail(name, detail)

    # -- waiting --------------------------------------------------------------

    def wait_for(self, predicate, timeout=ACTION_TIMEOUT, message=None):
        return deploy.wait_for(predicate, timeout, message=message)

    def wait_for_service_state(self, binary, host, state,
                               timeout=deploy.START_TIMEOUT):
        return self.deployment.wait_for_services(
            {(binary, host): state}, timeout=timeout)

    # -- servers (compute API) ------------------------------------------------

    # An image id: nova_lite has no image service and takes it as opaque.
    IMAGE_REF = '155d900f-4e14-4e4c-a73d-069cbf4541e6'

    def create_server(self, api=None, **fields):
        """POST /v2.1/servers (flavor 1, ``IMAGE_REF``); returns the id at
        once, the server still building: the conductor places it on the
        up compute host with the fewest servers."""
        api = api or self.api
        server = {'name': 'integration-%s' % self.getUniqueString(),
                  'flavorRef': '1', 'imageRef': self.IMAGE_REF}
        server.update(fields)
        resp = api.post('/v2.1/servers', body={'server': server})
        self.assertEqual(202, resp.status, resp)
        server_id = resp.body['server']['id']
        self.addCleanup(self._delete_server, server_id)
        return server_id

    def create_server_on_each_host(self):
        """One ACTIVE server per compute host: {host: server id}.

        Placement is "fewest servers", and tests delete what they create,
        so servers made one after the other land one per host. (Made at
        once, concurrent builds may all see the same counts and pick the
        same host, as Nova's scheduler would without placement claims.)
        """
        by_host = {}
        for _ in self.deployment.compute_hosts:
            server_id = self.create_server()
            server = self.wait_for_server_status(server_id, 'ACTIVE')
            by_host[server['OS-EXT-SRV-ATTR:host']] = server_id
        self.assertEqual(set(self.deployment.compute_hosts), set(by_host))
        return by_host

    def _delete_server(self, server_id):
        resp = self.admin_api.delete('/v2.1/servers/%s' % server_id)
        if resp.status == 404:
            return
        self.assertIn(resp.status, (202, 204), resp)
        self.wait_for(lambda: self.admin_api.get(
            '/v2.1/servers/%s' % server_id).status == 404)

    def show_server(self, server_id, api=None):
        resp = (api or self.admin_api).get('/v2.1/servers/%s' % server_id)
        self.assertEqual(200, resp.status, resp)
        return resp.body['server']

    def wait_for_server_status(self, server_id, status, host=None):
        """Poll until the server has ``status`` (and is on ``host``,
        admin's ``OS-EXT-SRV-ATTR:host``, if given); return its view."""
        seen = {}

        def check():
            server = seen['server'] = self.show_server(server_id)
            if server['status'] == 'ERROR' and status != 'ERROR':
                raise AssertionError('server went to ERROR: %s' % server)
            return server['status'] == status and (
                host is None or server.get('OS-EXT-SRV-ATTR:host') == host)

        self.wait_for(check, message=lambda: 'server %s not %s%s: %s' % (
            server_id, status, ' on %s' % host if host else '',
            seen.get('server')))
        return seen['server']

    def server_action(self, server_id, action, api=None):
        """POST /v2.1/servers/{id}/action with ``action`` (a dict such as
        ``{'shelve': None}``); 202 expected."""
        resp = (api or self.api).post(
            '/v2.1/servers/%s/action' % server_id, body=action)
        self.assertEqual(202, resp.status, resp)
        return resp

    # -- volumes (block-storage API) ------------------------------------------

    def create_volume(self, size=1, api=None, project_id='demo', **fields):
        """POST /v3/{project_id}/volumes; waits until ``available`` and
        returns the volume id."""
        api = api or self.api
        volume = {'size': size, 'name': 'integration-%s' %
                  self.getUniqueString()}
        volume.update(fields)
        resp = api.post('/v3/%s/volumes' % project_id,
                        body={'volume': volume})
        self.assertEqual(202, resp.status, resp)
        volume_id = resp.body['volume']['id']
        self.addCleanup(self._delete_volume, volume_id, project_id)
        self.wait_for_volume_status(volume_id, 'available', project_id)
        return volume_id

    def _delete_volume(self, volume_id, project_id):
        path = '/v3/%s/volumes/%s' % (project_id, volume_id)
        resp = self.admin_api.get(path)
        if resp.status == 404:
            return
        # Cleanups run newest first: a volume goes before the server it may
        # still be attached to (2.20: the server may be shelved).
        for attachment in resp.body['volume']['attachments']:
            self.assertEqual(202, self.detach_volume(
                attachment['server_id'], volume_id,
                api=self.admin_api.as_(compute_version='2.20')).status)
        if resp.body['volume']['attachments']:
            self.wait_for_volume_status(volume_id, 'available', project_id)
        resp = self.admin_api.delete(path)
        if resp.status == 404:
            return
        self.assertEqual(202, resp.status, resp)
        self.wait_for(lambda: self.admin_api.get(path).status == 404)

    def show_volume(self, volume_id, project_id='demo'):
        resp = self.admin_api.get('/v3/%s/volumes/%s' % (
            project_id, volume_id))
        self.assertEqual(200, resp.status, resp)
        return resp.body['volume']

    def wait_for_volume_status(self, volume_id, status, project_id='demo'):
        seen = {}

        def check():
            volume = seen['volume'] = self.show_volume(volume_id, project_id)
            if volume['status'] == 'error' and status != 'error':
                raise AssertionError('volume went to error: %s' % volume)
            return volume['status'] == status

        self.wait_for(check, message=lambda: 'volume %s not %s: %s' % (
            volume_id, status, seen.get('volume')))
        return seen['volume']

    # -- attachments (compute API) --------------------------------------------

    def attach_volume(self, server_id, volume_id, api=None, **fields):
        """POST /v2.1/servers/{id}/os-volume_attachments. Below 2.101 the
        answer is 200 with the attachment; from 2.101 it is 202 and the
        attach finishes asynchronously (wait with wait_for_attachment)."""
        api = api or self.api
        attachment = {'volumeId': volume_id}
        attachment.update(fields)
        return api.post('/v2.1/servers/%s/os-volume_attachments' % server_id,
                        body={'volumeAttachment': attachment})

    def list_attachments(self, server_id, api=None):
        resp = (api or self.api).get(
            '/v2.1/servers/%s/os-volume_attachments' % server_id)
        self.assertEqual(200, resp.status, resp)
        return resp.body['volumeAttachments']

    def detach_volume(self, server_id, volume_id, api=None):
        """DELETE .../os-volume_attachments/{volume_id}: 202, asynchronous."""
        return (api or self.api).delete(
            '/v2.1/servers/%s/os-volume_attachments/%s' % (
                server_id, volume_id))

    def wait_for_attachment(self, server_id, volume_id, present=True):
        """Poll the server's attachment list until ``volume_id`` is in it
        (``present``) or gone; return the list."""
        seen = {}

        def check():
            attachments = seen['list'] = self.list_attachments(server_id)
            ids = [a['volumeId'] for a in attachments]
            return (volume_id in ids) == present

        self.wait_for(check, message=lambda: 'volume %s %s server %s: %s' % (
            volume_id, 'not attached to' if present else 'still on',
            server_id, seen.get('list')))
        return seen['list']
