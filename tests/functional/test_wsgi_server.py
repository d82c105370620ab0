"""The embedded WSGI server keeps HTTP/1.1 connections open, and closes
them whenever the next request could not be read reliably."""

import http.client
import logging
import socket
import time

import fixtures
import testtools

from nova_lite.api import requestlog
from nova_lite.wsgi import server as wsgi_server


def app(environ, start_response):
    path = environ['PATH_INFO']
    if path == '/fail':
        raise RuntimeError('boom')
    if path == '/fail-late':
        start_response('200 OK', [('Content-Type', 'text/plain')])

        def late():
            yield b'partial'
            raise RuntimeError('boom after the start')
        return late()
    if path == '/short':
        start_response('200 OK', [('Content-Length', '10')])
        return iter([b'abc'])
    if path == '/unsized-list':
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'one', b'two']
    if path == '/no-content':
        start_response('204 No Content', [])
        return [b'']
    if path == '/legacy-write':
        write = start_response('200 OK', [('Content-Length', '5')])
        write(b'hel')
        return [b'lo']
    if path.startswith('/echo-environ'):
        keys = ('PATH_INFO', 'QUERY_STRING', 'HTTP_X_MANY', 'CONTENT_TYPE',
                'SERVER_PROTOCOL', 'SCRIPT_NAME', 'REMOTE_ADDR')
        text = '\n'.join('%s=%s' % (k, environ.get(k)) for k in keys)
        text = text.encode('latin-1')
        start_response('200 OK', [('Content-Length', str(len(text)))])
        return [text]
    if path == '/stream':
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return iter([b'a', b'b'])
    if path == '/ignore-body':
        body = b''
    else:
        body = environ['wsgi.input'].read()
    text = b'%s %s' % (environ['REQUEST_METHOD'].encode(), body)
    start_response('200 OK', [('Content-Type', 'text/plain'),
                              ('Content-Length', str(len(text)))])
    return [text]


class ServerTest(testtools.TestCase):
    app = staticmethod(app)

    def setUp(self):
        super().setUp()
        self.server = wsgi_server.make_server('127.0.0.1', 0, self.app)
        thread = wsgi_server.serve_in_thread(self.server)
        self.addCleanup(thread.join, 5)
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.port = self.server.server_address[1]

    def connect(self):
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=10)
        self.addCleanup(conn.close)
        return conn

    def request(self, conn, method, path, body=None, headers=None):
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp, resp.read()

    def test_requests_share_one_connection(self):
        conn = self.connect()
        resp, body = self.request(conn, 'GET', '/')
        self.assertEqual((200, b'GET '), (resp.status, body))
        self.assertIsNone(resp.getheader('Connection'))
        sock = conn.sock
        for i in range(3):
            resp, body = self.request(conn, 'POST', '/', body=b'x%d' % i)
            self.assertEqual(b'POST x%d' % i, body)
        self.assertIs(sock, conn.sock)

    def test_unread_body_is_skipped(self):
        conn = self.connect()
        resp, body = self.request(conn, 'POST', '/ignore-body',
                                  body=b'never read')
        self.assertEqual(b'POST ', body)
        sock = conn.sock
        resp, body = self.request(conn, 'GET', '/')
        self.assertEqual((200, b'GET '), (resp.status, body))
        self.assertIs(sock, conn.sock)

    def test_large_unread_body_closes(self):
        self.useFixture(fixtures.MockPatchObject(wsgi_server, 'MAX_SKIP', 4))
        conn = self.connect()
        resp, body = self.request(conn, 'POST', '/ignore-body',
                                  body=b'more than four bytes')
        self.assertEqual(200, resp.status)
        self.assertIsNone(conn.sock)  # the server said it closes
        resp, body = self.request(conn, 'GET', '/')  # a new connection
        self.assertEqual(b'GET ', body)

    def test_client_asks_to_close(self):
        conn = self.connect()
        resp, body = self.request(conn, 'GET', '/',
                                  headers={'Connection': 'close'})
        self.assertEqual('close', resp.getheader('Connection'))
        self.assertIsNone(conn.sock)

    def test_http_1_0_closes(self):
        with socket.create_connection(('127.0.0.1', self.port), 10) as sock:
            sock.sendall(b'GET / HTTP/1.0\r\n\r\n')
            data = b''
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break  # closed by the server
                data += chunk
        self.assertTrue(data.startswith(b'HTTP/1.0 200'), data)
        self.assertIn(b'Connection: close', data)
        self.assertTrue(data.endswith(b'GET '))

    def test_response_without_length_closes(self):
        conn = self.connect()
        resp, body = self.request(conn, 'GET', '/stream')
        self.assertEqual((200, b'ab'), (resp.status, body))
        self.assertEqual('close', resp.getheader('Connection'))

    def test_application_error_closes(self):
        conn = self.connect()
        resp, body = self.request(conn, 'GET', '/fail')
        self.assertEqual(500, resp.status)
        self.assertIsNone(conn.sock)

    def test_body_limited_to_content_length(self):
        # Two pipelined requests: the first one's body is exactly its
        # Content-Length, the second one is answered too.
        with socket.create_connection(('127.0.0.1', self.port), 10) as sock:
            sock.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3'
                         b'\r\n\r\nabcGET / HTTP/1.1\r\nHost: x\r\n'
                         b'Connection: close\r\n\r\n')
            data = b''
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        self.assertEqual(2, data.count(b'HTTP/1.1 200'), data)
        self.assertIn(b'POST abc', data)
        self.assertTrue(data.endswith(b'GET '), data)


class ParsingTest(ServerTest):
    """What the server makes of a request, and what it refuses."""

    def raw(self, data):
        """Send ``data``; everything the server answers until it closes."""
        with socket.create_connection(('127.0.0.1', self.port), 10) as sock:
            sock.sendall(data)
            received = b''
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return received
                received += chunk

    def test_environ(self):
        conn = self.connect()
        conn.putrequest('POST', '/echo-environ/a%20b?x=1&y=%20')
        conn.putheader('X-Many', 'one')
        conn.putheader('X-Many', 'two')
        conn.putheader('Content-Type', 'application/json')
        conn.putheader('Content-Length', '0')
        conn.endheaders()
        resp = conn.getresponse()
        lines = dict(line.split('=', 1)
                     for line in resp.read().decode().splitlines())
        self.assertEqual({
            'PATH_INFO': '/echo-environ/a b', 'QUERY_STRING': 'x=1&y=%20',
            'HTTP_X_MANY': 'one,two', 'CONTENT_TYPE': 'application/json',
            'SERVER_PROTOCOL': 'HTTP/1.1', 'SCRIPT_NAME': '',
            'REMOTE_ADDR': '127.0.0.1'}, lines)

    def test_date_and_server_headers(self):
        resp, _body = self.request(self.connect(), 'GET', '/')
        self.assertEqual('nova-lite', resp.getheader('Server'))
        self.assertTrue(resp.getheader('Date').endswith(' GMT'))

    def test_list_body_without_length_gets_one_and_keeps_the_connection(
            self):
        conn = self.connect()
        resp, body = self.request(conn, 'GET', '/unsized-list')
        self.assertEqual((b'onetwo', '6'),
                         (body, resp.getheader('Content-Length')))
        self.assertIsNone(resp.getheader('Connection'))
        resp, body = self.request(conn, 'GET', '/')
        self.assertEqual(b'GET ', body)

    def test_legacy_write_callable(self):
        resp, body = self.request(self.connect(), 'GET', '/legacy-write')
        self.assertEqual((200, b'hello'), (resp.status, body))

    def test_error_after_the_response_started_closes(self):
        data = self.raw(b'GET /fail-late HTTP/1.1\r\nHost: x\r\n\r\n'
                        b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        self.assertTrue(data.startswith(b'HTTP/1.1 200 OK'), data)
        self.assertTrue(data.endswith(b'partial'), data)
        self.assertEqual(1, data.count(b'HTTP/1.1'))  # not the second

    def test_body_shorter_than_its_length_closes(self):
        data = self.raw(b'GET /short HTTP/1.1\r\nHost: x\r\n\r\n'
                        b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        self.assertTrue(data.endswith(b'abc'), data)
        self.assertEqual(1, data.count(b'HTTP/1.1'))

    def test_expect_100_continue(self):
        data = self.raw(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2'
                        b'\r\nExpect: 100-continue\r\nConnection: close'
                        b'\r\n\r\nhi')
        self.assertTrue(data.startswith(b'HTTP/1.1 100 Continue\r\n\r\n'
                                        b'HTTP/1.1 200 OK'), data)
        self.assertTrue(data.endswith(b'POST hi'), data)

    def test_http_1_0_keep_alive_when_asked(self):
        data = self.raw(b'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n'
                        b'GET / HTTP/1.0\r\n\r\n')
        self.assertEqual(2, data.count(b'HTTP/1.0 200 OK'), data)
        first, second = data.split(b'HTTP/1.0 200 OK')[1:]
        self.assertIn(b'Connection: keep-alive\r\n', first)
        self.assertIn(b'Connection: close\r\n', second)

    def assertRefused(self, request, status):
        data = self.raw(request + b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        self.assertTrue(data.startswith(b'HTTP/1.1 %d ' % status), data)
        self.assertIn(b'Connection: close', data)
        self.assertEqual(1, data.count(b'HTTP/1.1 '), data)  # closed

    def test_bad_request_line(self):
        self.assertRefused(b'GET /\r\n\r\n', 400)
        self.assertRefused(b'GET / HTTP/1.1 extra\r\n\r\n', 400)
        self.assertRefused(b'GET / FTP/1.1\r\n\r\n', 400)
        self.assertRefused(b'get / HTTP/1.1\r\n\r\n', 400)

    def test_http_2_is_505(self):
        self.assertRefused(b'GET / HTTP/2.0\r\n\r\n', 505)

    def test_request_line_too_long_is_414(self):
        self.useFixture(fixtures.MockPatchObject(wsgi_server, 'MAX_LINE',
                                                 64))
        self.assertRefused(b'GET /%s HTTP/1.1\r\n\r\n' % (b'a' * 80), 414)

    def test_header_line_too_long_is_431(self):
        self.useFixture(fixtures.MockPatchObject(wsgi_server, 'MAX_LINE',
                                                 64))
        self.assertRefused(b'GET / HTTP/1.1\r\nX-Long: %s\r\n\r\n'
                           % (b'a' * 80), 431)

    def test_too_many_headers_is_431(self):
        self.useFixture(fixtures.MockPatchObject(wsgi_server, 'MAX_HEADERS',
                                                 3))
        self.assertRefused(b'GET / HTTP/1.1\r\n' +
                           b''.join(b'X-%d: v\r\n' % i for i in range(4)) +
                           b'\r\n', 431)

    def test_folded_or_malformed_header_is_400(self):
        self.assertRefused(b'GET / HTTP/1.1\r\nX-A: a\r\n  folded\r\n\r\n',
                           400)
        self.assertRefused(b'GET / HTTP/1.1\r\nno colon\r\n\r\n', 400)
        self.assertRefused(b'GET / HTTP/1.1\r\nX-A : a\r\n\r\n', 400)

    def test_bad_content_length_is_400(self):
        self.assertRefused(b'POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n',
                           400)
        self.assertRefused(b'POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n',
                           400)

    def test_head_has_the_headers_and_no_body(self):
        data = self.raw(b'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n'
                        b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close'
                        b'\r\n\r\n')
        first, second = data.split(b'HTTP/1.1 200 OK')[1:]
        self.assertIn(b'Content-Length: 5\r\n', first)  # "HEAD " of a GET
        self.assertTrue(first.endswith(b'\r\n\r\n'), first)
        self.assertTrue(second.endswith(b'GET '), second)

    def test_204_keeps_the_connection_without_a_length(self):
        data = self.raw(b'GET /no-content HTTP/1.1\r\nHost: x\r\n\r\n'
                        b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close'
                        b'\r\n\r\n')
        first, second = data.split(b'HTTP/1.1 ')[1:]
        self.assertTrue(first.startswith(b'204 No Content'), first)
        self.assertNotIn(b'Content-Length', first)
        self.assertNotIn(b'Connection: close', first)
        self.assertTrue(second.endswith(b'GET '), second)


class RequestLogThroughServerTest(ServerTest):
    """The request log line is written when the server closes the
    response (PEP 3333), after sending it."""

    app = staticmethod(requestlog.RequestLog(app))

    def test_line_is_written_after_the_response(self):
        log = self.useFixture(fixtures.FakeLogger(
            name=requestlog.__name__, level=logging.INFO))
        resp, body = self.request(self.connect(), 'POST', '/echo?x=1',
                                  body=b'hi')
        self.assertEqual((200, b'POST hi'), (resp.status, body))
        deadline = time.monotonic() + 10
        while '/echo?x=1' not in log.output:
            self.assertLess(time.monotonic(), deadline, 'no log line')
            time.sleep(0.01)
        self.assertIn('"POST /echo?x=1" status: 200 len: 7 ', log.output)
