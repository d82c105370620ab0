"""Functional test base for the compute side: servers and volumes on the
whole system in-process (real conductor, compute hosts and block storage),
with helpers that poll with a deadline, never sleep."""

import contextlib
import threading
from unittest import mock

import sqlalchemy as sa

from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite.db import models
from tests.fixtures import system
from tests.functional import base
from tests.fuzz import invariants

IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'


class TestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        # Whatever a test did, no available volume is left exported to a
        # host (the backend's own record, not the database's).
        self.addCleanup(self.assert_no_available_exports)

    def assert_no_available_exports(self):
        self.assertEqual([], invariants.available_exports(self.conf),
                         'backend connections of available volumes')

    def create_server(self, api=None, name='server', wait=True, **extra):
        api = api or self.api.as_(compute_version='2.37')
        server = {'name': name, 'flavorRef': '1', 'imageRef': IMAGE,
                  'networks': 'none'}
        server.update(extra)
        resp = api.post('/v2.1/servers', body={'server': server})
        self.assertEqual(202, resp.status, resp.text)
        server_id = resp.body['server']['id']
        if wait:
            self.wait_for_server_status(server_id, 'ACTIVE')
        return server_id

    def show_server(self, server_id, api=None):
        resp = (api or self.admin_api).get('/v2.1/servers/%s' % server_id)
        return resp.body['server'] if resp.status == 200 else None

    def wait_for_server_status(self, server_id, status, api=None,
                               timeout=10):
        def check():
            server = self.show_server(server_id, api=api)
            if server and server['status'] == status and \
                    server['OS-EXT-STS:task_state'] is None:
                return server
            return None
        return system.wait_for(
            check, timeout=timeout,
            message='server %s never reached %s (last: %s)' % (
                server_id, status, self.show_server(server_id)))

    def wait_for_server_gone(self, server_id, timeout=10):
        system.wait_for(
            lambda: self.admin_api.get(
                '/v2.1/servers/%s' % server_id).status == 404,
            timeout=timeout, message='server %s not deleted' % server_id)

    def volume_api(self, api=None):
        return (api or self.api).as_(volume_version='3.27')

    def create_volume(self, api=None, size=1, multiattach=False, **extra):
        api = self.volume_api(api)
        volume = {'size': size}
        if multiattach:
            volume['volume_type'] = self.multiattach_type()
        volume.update(extra)
        resp = api.post('/v3/volumes', body={'volume': volume})
        self.assertEqual(202, resp.status, resp.text)
        volume_id = resp.body['volume']['id']
        self.wait_for_volume_status(volume_id, 'available', api=api)
        return volume_id

    def multiattach_type(self):
        if not getattr(self, '_multiattach_type', None):
            admin = self.volume_api(self.admin_api)
            resp = admin.post('/v3/types', body={'volume_type': {
                'name': 'multiattach',
                'extra_specs': {'multiattach': '<is> True'}}})
            self.assertEqual(200, resp.status, resp.text)
            self._multiattach_type = resp.body['volume_type']['id']
        return self._multiattach_type

    def show_volume(self, volume_id, api=None):
        resp = self.volume_api(api or self.admin_api).get(
            '/v3/volumes/%s' % volume_id)
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['volume']

    def wait_for_volume_status(self, volume_id, status, api=None,
                               timeout=10):
        return system.wait_for(
            lambda: (lambda v: v if v['status'] == status else None)(
                self.show_volume(volume_id, api=api)),
            timeout=timeout,
            message='volume %s never reached %s (last: %s)' % (
                volume_id, status, self.show_volume(volume_id)['status']))

    def attach(self, server_id, volume_id, api=None, expect=200, **extra):
        api = api or self.api
        attachment = {'volumeId': volume_id}
        attachment.update(extra)
        resp = api.post('/v2.1/servers/%s/os-volume_attachments' % server_id,
                        body={'volumeAttachment': attachment})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def detach(self, server_id, volume_id, api=None, expect=202):
        resp = (api or self.api).delete(
            '/v2.1/servers/%s/os-volume_attachments/%s' % (server_id,
                                                           volume_id))
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def attachments(self, server_id, api=None):
        resp = (api or self.api).get(
            '/v2.1/servers/%s/os-volume_attachments' % server_id)
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['volumeAttachments']

    def update_compute_services(self, host=None, **values):
        """Write ``values`` on the ``services`` rows of the compute hosts
        (of ``host`` only, if given): an old version, disabled, ..."""
        where = [models.Service.binary == 'nova-lite-compute']
        if host is not None:
            where.append(models.Service.host == host)

        @db_api.context_manager.writer
        def update(context):
            context.session.execute(
                sa.update(models.Service).where(*where).values(**values))
        update(nl_context.get_admin_context())

    def compute_manager(self, host='compute1'):
        for svc in self.sys.system.services:
            if svc.binary == 'nova-lite-compute' and svc.host == host:
                return svc.manager
        raise AssertionError('no compute service on %s' % host)

    @contextlib.contextmanager
    def reservations_held(self, host='compute1', timeout=30):
        """While inside, device-name reservations on ``host`` wait (a busy
        compute host); they go on when the block ends. Yields the list of
        server uuids whose reservation is waiting, to poll on."""
        driver = self.compute_manager(host).driver
        original = driver.get_device_name_for_instance
        gate = threading.Event()
        waiting = []

        def held(instance, *args, **kwargs):
            waiting.append(instance.uuid)
            gate.wait(timeout)
            return original(instance, *args, **kwargs)
        with mock.patch.object(driver, 'get_device_name_for_instance',
                               side_effect=held):
            try:
                yield waiting
            finally:
                gate.set()
