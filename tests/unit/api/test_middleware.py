"""nova_lite's own WSGI middlewares (plain WSGI: they pass the environ on
and watch the response go by)."""

import io
import logging

import fixtures
from oslo_middleware import request_id
from oslo_serialization import jsonutils
from oslo_utils import uuidutils
import testtools
import webob

from nova_lite.api import auth
from nova_lite.api import deploy
from nova_lite.api import fault
from nova_lite.api import requestlog
from nova_lite import exception
from tests.fixtures import conf as conf_fixture


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


def _serve(app, req):
    """What a WSGI server does with ``req``: call the application, send
    (here: join) the body, then close it (PEP 3333)."""
    status, _headers, app_iter = req.call_application(app)
    try:
        return status, b''.join(app_iter)
    finally:
        getattr(app_iter, 'close', lambda: None)()


class RequestLogTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name=requestlog.__name__, level=logging.INFO))

    def test_one_line_with_what_the_client_got(self):
        req = webob.Request.blank('/v2.1/servers?limit=2', method='GET',
                                  remote_addr='192.0.2.7')
        req.environ['nova_lite.microversion'] = '2.100'
        status, body = _serve(requestlog.RequestLog(_app()), req)
        self.assertEqual(('200 OK', b'{"x": 1}'), (status, body))
        line = self.log.output.strip()
        self.assertEqual(1, len(line.splitlines()))
        self.assertIn('192.0.2.7 "GET /v2.1/servers?limit=2" status: 200 '
                      'len: 8 microversion: 2.100 time: ', line)

    def test_fault_is_logged_with_its_status(self):
        app = requestlog.RequestLog(fault.FaultWrapper(_app(
            raises=exception.InstanceNotFound(instance_id='i'))))
        status, body = _serve(app, webob.Request.blank('/v2.1/servers/i'))
        self.assertEqual('404 Not Found', status)
        self.assertIn('"GET /v2.1/servers/i" status: 404 len: %d '
                      'microversion: - ' % len(body), self.log.output)

    def _environ(self, path='/v2.1/servers'):
        return webob.Request.blank(path, remote_addr='192.0.2.7').environ

    def test_line_is_written_when_the_server_closes_the_body(self):
        # PEP 3333: the server sends the body, then calls close(); the
        # line waits for close(), so the client is answered first.
        result = requestlog.RequestLog(_app())(
            self._environ(), lambda status, headers, exc_info=None: None)
        self.assertIsInstance(result, list)  # still one write, sized
        self.assertEqual([b'{"x": 1}'], list(result))
        self.assertEqual('', self.log.output)
        result.close()
        self.assertIn('"GET /v2.1/servers" status: 200 len: 8 ',
                      self.log.output)
        result.close()  # a second close() writes nothing more
        self.assertEqual(1, len(self.log.output.strip().splitlines()))

    def test_time_is_the_application_s_not_the_wait_for_close(self):
        clock = iter([100.0, 100.25, 500.0])
        self.useFixture(fixtures.MonkeyPatch(
            'nova_lite.api.requestlog.time.monotonic',
            lambda: next(clock)))
        result = requestlog.RequestLog(_app())(
            self._environ(), lambda status, headers, exc_info=None: None)
        result.close()
        self.assertIn(' time: 0.2500', self.log.output)

    def test_body_s_own_close_runs_before_the_line(self):
        events = []
        log = self.log

        class Body(list):
            def close(self):
                events.append('inner close: %s' % log.output.strip())

        def app(environ, start_response):
            start_response('204 No Content', [])
            return Body([b''])
        result = requestlog.RequestLog(app)(
            self._environ(), lambda status, headers, exc_info=None: None)
        result.close()
        self.assertEqual(['inner close: '], events)
        self.assertIn('status: 204 len: None', self.log.output)

    def test_body_that_is_not_a_list_is_logged_at_once(self):
        def app(environ, start_response):
            start_response('200 OK', [('Content-Type', 'text/plain')])
            return iter([b'a', b'b'])
        result = requestlog.RequestLog(app)(
            self._environ(), lambda status, headers, exc_info=None: None)
        self.assertIn('status: 200 len: None', self.log.output)
        self.assertEqual([b'a', b'b'], list(result))

    def test_path_is_what_webob_gives(self):
        for path in ('/v2.1/servers', '/v3/p/volumes?limit=2&marker=x',
                     '/v2.1/servers/a%20b', '/v3/%C3%A9t%C3%A9?q=%C3%A9',
                     "/v2.1/~!$&'()*+,;=:@", '/v2.1/a%2Fb%3F'):
            req = webob.Request.blank(path)
            req.script_name = '/compute'
            self.assertEqual(req.path_qs, requestlog.path_qs(req.environ),
                             path)

    def test_path_that_is_not_utf8_is_logged(self):
        environ = webob.Request.blank('/').environ
        environ['PATH_INFO'] = '/v3/\xff'
        self.assertEqual('/v3/%FF', requestlog.path_qs(environ))


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

    def test_identity_headers_of_the_client_are_replaced(self):
        seen = []
        app = auth.NoAuthMiddleware(auth.ContextMiddleware(
            _app(seen=seen), enforcer=None))
        req = webob.Request.blank('/', headers={
            'X-Auth-Token': 'demo:p1', 'X-Roles': 'admin',
            'X-Project-Id': 'other', 'X-Identity-Status': 'Invalid'})
        self.assertEqual(200, req.get_response(app).status_int)
        ctxt = seen[0][auth.CONTEXT_KEY]
        self.assertEqual(('demo', 'p1', False, ['member', 'reader']),
                         (ctxt.user_id, ctxt.project_id, ctxt.is_admin,
                          ctxt.roles))

    def test_unconfirmed_identity_is_refused(self):
        app = auth.ContextMiddleware(_app(), enforcer=None)
        req = webob.Request.blank('/', headers={
            'X-User-Id': 'u', 'X-Project-Id': 'p',
            'X-Identity-Status': 'Invalid'})
        self.assertRaises(exception.NotAuthenticated, req.get_response, app)

    def test_no_token_raises_not_authenticated(self):
        app = auth.NoAuthMiddleware(_app())
        self.assertRaises(exception.NotAuthenticated,
                          webob.Request.blank('/').get_response, app)


class RequestIdTest(testtools.TestCase):
    GLOBAL = 'req-%s' % uuidutils.generate_uuid()

    def test_new_id_in_environ_and_on_the_response(self):
        seen = []
        resp = webob.Request.blank('/').get_response(
            request_id.RequestId(_app(seen=seen)))
        req_id = seen[0][request_id.ENV_REQUEST_ID]
        self.assertRegex(req_id, request_id.ID_FORMAT)
        self.assertEqual(req_id, resp.headers['x-openstack-request-id'])
        # A new one per request.
        resp2 = webob.Request.blank('/').get_response(
            request_id.RequestId(_app()))
        self.assertNotEqual(req_id, resp2.headers['x-openstack-request-id'])

    def test_on_error_responses_too(self):
        resp = webob.Request.blank('/').get_response(request_id.RequestId(
            fault.FaultWrapper(_app(raises=ZeroDivisionError()))))
        self.assertEqual(500, resp.status_int)
        self.assertTrue(resp.headers['x-openstack-request-id'].startswith(
            'req-'))

    def test_global_request_id_kept_only_when_well_formed(self):
        for inbound, expected in ((self.GLOBAL, self.GLOBAL),
                                  ('req-not-a-uuid', None)):
            seen = []
            webob.Request.blank(
                '/', headers={'X-Openstack-Request-Id': inbound}).get_response(
                request_id.RequestId(_app(seen=seen)))
            self.assertEqual(expected,
                             seen[0].get(request_id.GLOBAL_REQ_ID))
            # The response carries this request's own id, not the caller's.
            self.assertNotEqual(inbound,
                                seen[0][request_id.ENV_REQUEST_ID])

    def test_header_the_application_set_is_not_repeated(self):
        def app(environ, start_response):
            start_response('200 OK', [('X-OpenStack-Request-Id', 'mine'),
                                      ('Content-Length', '0')])
            return [b'']
        resp = webob.Request.blank('/').get_response(request_id.RequestId(app))
        self.assertEqual(['mine'],
                         resp.headers.getall('x-openstack-request-id'))


class BodySizeLimiterTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.seen = []

        def app(environ, start_response):
            self.seen.append(environ['wsgi.input'].read())
            start_response('204 No Content', [])
            return [b'']
        conf = self.useFixture(conf_fixture.ConfFixture()).conf
        # oslo.middleware's limiter registers its option.
        self.limiter = fault.FaultWrapper(deploy._OversizeFault(app, conf))
        conf.set_override('max_request_body_size', 10,
                          group='oslo_middleware')

    def _post(self, body, chunked=False):
        req = webob.Request.blank('/', method='POST',
                                  headers={'Accept': 'application/json'})
        req.body_file = io.BytesIO(body)
        if chunked:
            req.content_length = None
            req.headers['Transfer-Encoding'] = 'chunked'
        else:
            req.content_length = len(body)
        return req.get_response(self.limiter), self.seen

    def test_body_within_the_limit_reaches_the_application(self):
        resp, seen = self._post(b'0123456789')
        self.assertEqual(204, resp.status_int)
        self.assertEqual([b'0123456789'], seen)

    def test_declared_body_over_the_limit_is_a_413_fault(self):
        resp, seen = self._post(b'0123456789X')
        self.assertEqual(413, resp.status_int)
        self.assertEqual([], seen)  # the application never ran
        fault_body = jsonutils.loads(resp.body)
        self.assertEqual(413, fault_body['overLimit']['code'])
        self.assertIn('max_request_body_size (10)',
                      fault_body['overLimit']['message'])

    def test_undeclared_body_over_the_limit_is_a_413_fault(self):
        resp, seen = self._post(b'0123456789X', chunked=True)
        self.assertEqual(413, resp.status_int)
        self.assertEqual(413, jsonutils.loads(resp.body)['overLimit']['code'])

    def test_request_without_a_body_goes_on_untouched(self):
        stream = io.BytesIO(b'')
        req = webob.Request.blank('/', method='GET')
        req.environ['wsgi.input'] = stream
        req.environ.pop('CONTENT_LENGTH', None)
        self.assertEqual(204, req.get_response(self.limiter).status_int)
        self.assertEqual([b''], self.seen)

    def test_unreadable_content_length_counts_as_undeclared(self):
        # WebOb's reading: not a number is no length; with a
        # Transfer-Encoding the body is read through the limiter.
        req = webob.Request.blank('/', method='POST')
        req.body_file = io.BytesIO(b'0123456789X')
        req.environ['CONTENT_LENGTH'] = 'ten'
        req.environ['HTTP_TRANSFER_ENCODING'] = 'chunked'
        resp = req.get_response(self.limiter)
        self.assertEqual(413, resp.status_int)
        self.assertEqual(413, jsonutils.loads(resp.body)['overLimit']['code'])

    def test_undeclared_body_within_the_limit_is_read_whole(self):
        resp, seen = self._post(b'01234', chunked=True)
        self.assertEqual(204, resp.status_int)
        self.assertEqual([b'01234'], seen)

    def test_413_of_the_application_passes_unchanged(self):
        def app(environ, start_response):
            start_response('413 Request Entity Too Large',
                           [('Content-Type', 'text/plain')])
            return [b'quota']
        conf = self.useFixture(conf_fixture.ConfFixture()).conf
        req = webob.Request.blank('/', method='POST', body=b'01')
        resp = req.get_response(deploy._OversizeFault(app, conf))
        self.assertEqual((413, b'quota'), (resp.status_int, resp.body))
