"""nova_lite's own WSGI middlewares (plain WSGI: they pass the environ on
and watch the response go by)."""

import logging

import fixtures
from oslo_serialization import jsonutils
import testtools
import webob

from nova_lite.api import auth
from nova_lite.api import deploy
from nova_lite.api import fault
from nova_lite.api import requestlog
from nova_lite import exception


def _app(status='200 OK', body=b'{"x": 1}', raises=None, seen=None):
    def app(environ, start_response):
        if seen is not None:
            seen.append(dict(environ))
        if raises is not None:
            raise raises
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(body)))])
        return [body]
    return app


class RequestLogTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name=requestlog.__name__, level=logging.INFO))

    def test_one_line_with_what_the_client_got(self):
        req = webob.Request.blank('/v2.1/servers?limit=2', method='GET',
                                  remote_addr='192.0.2.7')
        req.environ['nova_lite.microversion'] = '2.100'
        resp = req.get_response(requestlog.RequestLog(_app()))
        self.assertEqual(200, resp.status_int)
        self.assertEqual(b'{"x": 1}', resp.body)
        line = self.log.output.strip()
        self.assertEqual(1, len(line.splitlines()))
        self.assertIn('192.0.2.7 "GET /v2.1/servers?limit=2" status: 200 '
                      'len: 8 microversion: 2.100 time: ', line)

    def test_fault_is_logged_with_its_status(self):
        app = requestlog.RequestLog(fault.FaultWrapper(_app(
            raises=exception.InstanceNotFound(instance_id='i'))))
        resp = webob.Request.blank('/v2.1/servers/i').get_response(app)
        self.assertEqual(404, resp.status_int)
        self.assertIn('"GET /v2.1/servers/i" status: 404 len: %d '
                      'microversion: - ' % len(resp.body), self.log.output)


class FaultWrapperTest(testtools.TestCase):
    def test_exception_becomes_fault_response(self):
        app = fault.FaultWrapper(_app(raises=exception.Invalid(reason='no')))
        resp = webob.Request.blank('/').get_response(app)
        self.assertEqual(400, resp.status_int)
        self.assertEqual('application/json', resp.content_type)
        self.assertEqual(400, jsonutils.loads(resp.body)['badRequest']['code'])

    def test_unexpected_exception_is_500_without_traceback(self):
        self.useFixture(fixtures.FakeLogger(name=fault.__name__))
        app = fault.FaultWrapper(_app(raises=ValueError('secret detail')))
        resp = webob.Request.blank('/').get_response(app)
        self.assertEqual(500, resp.status_int)
        self.assertNotIn(b'secret detail', resp.body)
        self.assertNotIn(b'Traceback', resp.body)

    def test_response_passes_unchanged(self):
        app = fault.FaultWrapper(_app(status='202 Accepted', body=b''))
        resp = webob.Request.blank('/').get_response(app)
        self.assertEqual(202, resp.status_int)
        self.assertEqual(b'', resp.body)

    def test_exception_after_the_response_started_is_raised(self):
        def app(environ, start_response):
            start_response('200 OK', [])
            raise ValueError('late')
        self.assertRaises(ValueError, webob.Request.blank('/').get_response,
                          fault.FaultWrapper(app))


class URLMapTest(testtools.TestCase):
    def test_dispatch_on_first_segment(self):
        seen = {'root': [], 'doc': [], 'api': []}
        urlmap = deploy.URLMap(_app(seen=seen['root']), {
            'v3': (_app(seen=seen['doc']), _app(seen=seen['api']))})
        for path in ('/v3/volumes/x', '/v3', '/v3/', '/', '/other'):
            webob.Request.blank(path).get_response(urlmap)
        api = seen['api'][0]
        self.assertEqual(('/v3', '/volumes/x'),
                         (api['SCRIPT_NAME'], api['PATH_INFO']))
        self.assertEqual(2, len(seen['doc']))
        self.assertEqual(['/', '/other'],
                         [e['PATH_INFO'] for e in seen['root']])


class NoAuthTest(testtools.TestCase):
    def test_token_becomes_identity_headers_and_context(self):
        seen = []
        app = auth.NoAuthMiddleware(auth.ContextMiddleware(
            _app(seen=seen), enforcer=None))
        req = webob.Request.blank('/', headers={'X-Auth-Token': 'admin:p1'})
        self.assertEqual(200, req.get_response(app).status_int)
        ctxt = seen[0][auth.CONTEXT_KEY]
        self.assertEqual(('admin', 'p1', True),
                         (ctxt.user_id, ctxt.project_id, ctxt.is_admin))
        self.assertEqual('Confirmed', seen[0]['HTTP_X_IDENTITY_STATUS'])

    def test_no_token_raises_not_authenticated(self):
        app = auth.NoAuthMiddleware(_app())
        self.assertRaises(exception.NotAuthenticated,
                          webob.Request.blank('/').get_response, app)
