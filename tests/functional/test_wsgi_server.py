"""The embedded WSGI server keeps HTTP/1.1 connections open, and closes
them whenever the next request could not be read reliably."""

import http.client
import socket

import fixtures
import testtools

from nova_lite.wsgi import server as wsgi_server


def app(environ, start_response):
    path = environ['PATH_INFO']
    if path == '/fail':
        raise RuntimeError('boom')
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
    def setUp(self):
        super().setUp()
        self.server = wsgi_server.make_server('127.0.0.1', 0, app)
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
