"""The platform end to end: discovery, microversions, auth, faults,
services and RPC, on the real app with conductor and compute in-process."""

import datetime

import oslo_messaging as messaging
import sqlalchemy as sa

from nova_lite.api.schemas import root as root_schema
from nova_lite import baserpc
from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite import objects
from nova_lite import rpc
from tests.fixtures import system
from tests.functional import base

import jsonschema


class DiscoveryTest(base.TestCase):
    def test_root_versions(self):
        resp = self.api.get('/', token='')
        self.assertEqual(200, resp.status)
        jsonschema.validate(resp.body, root_schema.VERSIONS_RESPONSE)
        by_id = {v['id']: v for v in resp.body['versions']}
        self.assertEqual('CURRENT', by_id['v2.1']['status'])
        self.assertEqual('2.1', by_id['v2.1']['min_version'])
        self.assertEqual('2.105', by_id['v2.1']['version'])
        # Only what is served is advertised: no legacy v2.0.
        self.assertEqual(['v2.1'], list(by_id))
        self.assertNotIn('OpenStack-API-Version', resp.headers)

    def test_v2_is_not_served(self):
        # An unversioned path like any other: 300, choices at /v2.1.
        for path in ('/v2', '/v2/', '/v2/servers'):
            resp = self.api.get(path, token='')
            self.assertEqual(300, resp.status, path)
            self.assertEqual(
                ['v2.1'], [c['id'] for c in resp.body['choices']])
            self.assertTrue(resp.body['choices'][0]['links'][0][
                'href'].endswith('/v2.1' + path), path)

    def test_compute_version_document(self):
        for path in ('/v2.1', '/v2.1/'):
            resp = self.api.get(path, token='')
            self.assertEqual(200, resp.status, path)
            jsonschema.validate(resp.body, root_schema.VERSION_RESPONSE)
            self.assertEqual('v2.1', resp.body['version']['id'])
            self.assertEqual(['self', 'describedby'],
                             [link['rel'] for link in
                              resp.body['version']['links']])

    def test_volume_versions(self):
        resp = self.api.get('/v3/', token='')
        self.assertEqual(200, resp.status)
        jsonschema.validate(resp.body, root_schema.VERSIONS_RESPONSE)
        version = resp.body['versions'][0]
        self.assertEqual(('v3.0', '3.0', '3.72'), (
            version['id'], version['min_version'], version['version']))

    def test_volume_mount_has_cinders_root(self):
        # /volume/ is Cinder's root: its version list with 300, where / is
        # Nova's with 200 (tempest's volume VersionsTest reads it there).
        for path in ('/volume', '/volume/', '/volume/anything'):
            resp = self.api.get(path, token='')
            self.assertEqual(300, resp.status, path)
            jsonschema.validate(resp.body, root_schema.VERSIONS_RESPONSE)
            self.assertEqual(
                'http://localhost/volume/v3/',
                resp.body['versions'][0]['links'][1]['href'])
        resp = self.api.get('/volume/v3/', token='')
        self.assertEqual(200, resp.status)
        self.assertEqual('v3.0', resp.body['versions'][0]['id'])
        self.assertEqual(401, self.api.get('/volume/v3/demo/volumes',
                                           token='').status)
        listed = self.api.get('/volume/v3/demo/volumes')
        self.assertEqual(200, listed.status, listed.text)
        self.assertEqual({'volumes': []}, listed.body)

    def test_other_unversioned_path_is_300(self):
        resp = self.api.get('/servers', token='')
        self.assertEqual(300, resp.status)
        self.assertIn('choices', resp.body)


class ProxyHeadersTest(base.TestCase):
    """``[oslo_middleware] enable_proxy_headers_parsing``: behind a
    TLS-terminating proxy, links carry the URL the client used."""

    def setUp(self):
        super().setUp()
        # The group is registered by the middleware, when the app is built.
        self.conf.set_override('enable_proxy_headers_parsing', True,
                               group='oslo_middleware')

    def _self_link(self, **headers):
        resp = self.api.get('/v2.1/', token='', headers=headers)
        self.assertEqual(200, resp.status)
        return {link['rel']: link['href'] for link in
                resp.body['version']['links']}['self']

    def test_forwarded_scheme_and_host_in_links(self):
        self.assertTrue(self._self_link().startswith('http://localhost'))
        self.assertEqual('https://api.example.test/v2.1/', self._self_link(
            **{'X-Forwarded-Proto': 'https',
               'X-Forwarded-Host': 'api.example.test'}))
        self.assertEqual('https://api.example.test/v2.1/', self._self_link(
            Forwarded='proto=https;host=api.example.test'))


class ProxyHeadersIgnoredTest(base.TestCase):
    def test_proxy_headers_ignored_by_default(self):
        resp = self.api.get('/v2.1/', token='', headers={
            'X-Forwarded-Proto': 'https',
            'X-Forwarded-Host': 'api.example.test'})
        links = [link['href'] for link in resp.body['version']['links']]
        self.assertTrue(links[0].startswith('http://localhost'), links)


class MicroversionTest(base.TestCase):
    def test_echoed_with_vary_on_success(self):
        api = self.admin_api.as_(compute_version='2.53')
        resp = api.get('/v2.1/os-services')
        self.assertEqual(200, resp.status)
        self.assertEqual('compute 2.53',
                         resp.headers['OpenStack-API-Version'])
        self.assertEqual('2.53',
                         resp.headers['X-OpenStack-Nova-API-Version'])
        vary = ','.join(resp.headers.getall('Vary'))
        self.assertIn('OpenStack-API-Version', vary)
        self.assertIn('X-OpenStack-Nova-API-Version', vary)

    def test_legacy_header_echoed(self):
        resp = self.admin_api.get(
            '/v2.1/os-services',
            headers={'X-OpenStack-Nova-API-Version': '2.11'})
        self.assertEqual('2.11',
                         resp.headers['X-OpenStack-Nova-API-Version'])
        self.assertIn('forced_down', resp.body['services'][0])

    def test_out_of_range_406_echoes_requested(self):
        resp = self.api.get(
            '/v2.1/os-services',
            headers={'OpenStack-API-Version': 'compute 2.999'})
        self.assertEqual(406, resp.status)
        self.assertEqual('compute 2.999',
                         resp.headers['OpenStack-API-Version'])
        self.assertEqual('2.999',
                         resp.headers['X-OpenStack-Nova-API-Version'])
        self.assertIn('Vary', resp.headers)
        self.assertEqual(406, resp.body['computeFault']['code'])
        self.assertIn('Minimum is 2.1 and maximum is 2.105',
                      resp.body['computeFault']['message'])

    def test_bad_format_400_without_version_headers(self):
        resp = self.api.get(
            '/v2.1/os-services',
            headers={'OpenStack-API-Version': 'compute 2.x'})
        self.assertEqual(400, resp.status)
        self.assertIn('badRequest', resp.body)
        self.assertNotIn('OpenStack-API-Version', resp.headers)

    def test_error_responses_carry_version_headers(self):
        resp = self.api.as_(compute_version='2.60').get('/v2.1/nowhere')
        self.assertEqual(404, resp.status)
        self.assertEqual('compute 2.60',
                         resp.headers['OpenStack-API-Version'])
        self.assertEqual({'itemNotFound': {
            'code': 404, 'message': 'The resource could not be found.'}},
            resp.body)

    def test_volume_version_headers(self):
        resp = self.api.as_(volume_version='3.44').get('/v3/demo/nothing')
        self.assertEqual(404, resp.status)
        self.assertEqual('volume 3.44',
                         resp.headers['OpenStack-API-Version'])
        self.assertEqual(['OpenStack-API-Version'],
                         resp.headers.getall('Vary'))
        resp = self.api.get('/v3/demo/nothing', headers={
            'OpenStack-API-Version': 'volume 3.73'})
        self.assertEqual(406, resp.status)
        resp = self.api.get('/v3/demo/nothing', headers={
            'OpenStack-API-Version': 'compute 2.60'})
        self.assertEqual(400, resp.status)


class AuthAndFaultTest(base.TestCase):
    def test_no_token_is_401(self):
        for path in ('/v2.1/os-services', '/v3/demo/volumes'):
            resp = self.api.get(path, token='')
            self.assertEqual(401, resp.status, path)
            self.assertEqual(401, resp.body['unauthorized']['code'])
            self.assertTrue(resp.headers.get('x-openstack-request-id'))

    def test_request_id_on_every_response(self):
        for resp in (self.api.get('/'), self.api.get('/v2.1/os-services'),
                     self.api.get('/v2.1/nowhere')):
            self.assertTrue(resp.headers['x-openstack-request-id']
                            .startswith('req-'))

    def test_body_over_max_request_body_size_is_413_and_creates_nothing(self):
        before = self.api.get('/v3/demo/volumes').body['volumes']
        # [oslo_middleware] max_request_body_size: 114688 bytes.
        resp = self.api.post('/v3/demo/volumes', {
            'volume': {'size': 1, 'name': 'x' * 120000}})
        self.assertEqual(413, resp.status)
        self.assertEqual(413, resp.body['overLimit']['code'])
        self.assertIn('max_request_body_size',
                      resp.body['overLimit']['message'])
        self.assertTrue(resp.headers['x-openstack-request-id'].startswith(
            'req-'))
        self.assertEqual(before, self.api.get('/v3/demo/volumes').body[
            'volumes'])

    def test_policy_denied_is_403(self):
        resp = self.api.get('/v2.1/os-services')
        self.assertEqual(403, resp.status)
        self.assertEqual(
            "Policy doesn't allow os_compute_api:os-services:list to be "
            "performed.", resp.body['forbidden']['message'])

    def test_wrong_method_is_405_with_allow(self):
        resp = self.admin_api.delete('/v2.1/os-services')
        self.assertEqual(405, resp.status)
        self.assertEqual('GET', resp.headers['Allow'])
        self.assertIn('badMethod', resp.body)

    def test_project_id_in_url(self):
        resp = self.admin_api.get('/v2.1/admin/os-services')
        self.assertEqual(200, resp.status)
        # A member may not name another project in the URL.
        resp = self.api.get('/v2.1/other/os-services')
        self.assertEqual(400, resp.status)
        # A trailing slash names no route, with or without the project
        # (tempest's show_volume('') must be a 404, not the list).
        for path in ('/v3/demo/volumes/', '/v3/volumes/',
                     '/v2.1/demo/servers/'):
            self.assertEqual(404, self.api.get(path).status, path)

    def test_unexpected_error_is_logged_500_without_traceback(self):
        from nova_lite.api.handlers import services as handler

        def boom(*args, **kwargs):
            raise ZeroDivisionError('internal detail')

        self.useFixture(system.fixtures.MonkeyPatch(
            'nova_lite.objects.Service.list', boom))
        logs = self.useFixture(system.fixtures.FakeLogger())
        resp = self.admin_api.get('/v2.1/os-services')
        self.assertEqual(500, resp.status)
        message = resp.body['computeFault']['message']
        self.assertIn("ZeroDivisionError", message)
        self.assertNotIn('internal detail', message)
        self.assertNotIn('Traceback', resp.text)
        self.assertIn('Traceback', logs.output)
        self.assertIsNotNone(handler)


class ServicesTest(base.TestCase):
    COMPUTE_HOSTS = ['compute1', 'compute2']

    def services(self):
        resp = self.admin_api.as_(compute_version='2.53').get(
            '/v2.1/os-services')
        self.assertEqual(200, resp.status)
        return {(s['binary'], s['host']): s for s in resp.body['services']}

    def test_all_services_registered_and_up(self):
        services = self.services()
        self.assertEqual(
            {('nova-lite-conductor', 'compute1'),
             ('nova-lite-compute', 'compute1'),
             ('nova-lite-compute', 'compute2')}, set(services))
        for svc in services.values():
            self.assertEqual('up', svc['state'])
            self.assertEqual('enabled', svc['status'])
        self.assertEqual('nova',
                         services[('nova-lite-compute', 'compute2')]['zone'])

    def test_filters(self):
        resp = self.admin_api.get(
            '/v2.1/os-services?binary=nova-lite-compute&host=compute2')
        self.assertEqual(['compute2'],
                         [s['host'] for s in resp.body['services']])

    def _last_seen(self, host):
        ctxt = nl_context.get_admin_context()
        return objects.Service.get_by_host_and_binary(
            ctxt, host, 'nova-lite-compute').last_seen_up

    def test_heartbeat_advances_and_silence_means_down(self):
        before = self._last_seen('compute2')
        # report_interval is 1 s in tests: the heartbeat moves on by itself.
        system.wait_for(lambda: self._last_seen('compute2') > before,
                        timeout=10)
        # Stop compute2's service and age its heartbeat past
        # service_down_time: the API must report it down.
        svc = [s for s in self.sys.system.services
               if s.host == 'compute2' and s.binary == 'nova-lite-compute'][0]
        svc.stop()
        svc.wait()
        self.sys.system.services.remove(svc)
        old = datetime.datetime.utcnow() - datetime.timedelta(
            seconds=self.conf.service_down_time + 5)

        @db_api.context_manager.writer
        def age(context):
            context.session.execute(
                sa.update(models.Service)
                .where(models.Service.host == 'compute2')
                .values(last_seen_up=old))
        age(nl_context.get_admin_context())
        services = self.services()
        self.assertEqual('down',
                         services[('nova-lite-compute', 'compute2')]['state'])
        self.assertEqual('up',
                         services[('nova-lite-compute', 'compute1')]['state'])
        from nova_lite.objects import service as service_obj
        self.assertEqual(['compute1'], service_obj.up_hosts(
            nl_context.get_admin_context(), self.conf))


class RPCTest(base.TestCase):
    def test_ping_conductor_and_each_compute(self):
        ctxt = nl_context.get_admin_context()
        reply = baserpc.BaseAPI(self.conf, 'conductor').ping(
            ctxt, 'hello', timeout=10)
        self.assertEqual({'service': 'nova-lite-conductor',
                          'arg': 'hello'}, reply)
        client = baserpc.BaseAPI(self.conf, 'compute')
        cctxt = client.client.prepare(server='compute1', timeout=10)
        self.assertEqual('nova-lite-compute',
                         cctxt.call(ctxt, 'ping', arg=1)['service'])

    def test_domain_error_crosses_rpc_as_itself(self):
        class Endpoint(object):
            target = messaging.Target(namespace='test', version='1.0')

            @messaging.expected_exceptions(exception.InstanceIsLocked)
            def fail(self, context):
                raise exception.InstanceIsLocked(instance_uuid='abc')

        server = rpc.get_server(
            self.conf, messaging.Target(topic='test-topic', server='h'),
            [Endpoint()])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        client = rpc.get_client(
            self.conf, messaging.Target(topic='test-topic',
                                        namespace='test', version='1.0'))
        exc = self.assertRaises(
            exception.InstanceIsLocked,
            client.prepare(timeout=10).call,
            nl_context.get_admin_context(), 'fail')
        self.assertEqual(409, exc.code)
        self.assertIn('Instance abc is locked', str(exc))
