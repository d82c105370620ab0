"""The embedded WSGI server (waitress) over real sockets: what reaches the
application, what is refused before it, and how the server stops."""

import http.client
import logging
import socket
import threading

import fixtures
import testtools

from nova_lite.api import requestlog
from nova_lite.wsgi import embedded_server
from tests.fixtures import system

ENVIRON_KEYS = ('PATH_INFO', 'QUERY_STRING', 'CONTENT_LENGTH',
                'CONTENT_TYPE', 'SERVER_PROTOCOL', 'SCRIPT_NAME',
                'REMOTE_ADDR', 'HTTP_X_MANY', 'HTTP_X_ROLES',
                'HTTP_TRANSFER_ENCODING', 'HTTP_X_FORWARDED_PROTO')


class Recorder(object):
    """A WSGI application that answers ``<METHOD> <body>`` and records,
    per request, the environ keys above, the body it read and the thread
    that ran it."""

    def __init__(self):
        self.seen = []
        self.threads = set()
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        if environ['PATH_INFO'] == '/fail':
            raise RuntimeError('boom')
        body = environ['wsgi.input'].read()
        with self.lock:
            self.threads.add(threading.get_ident())
            self.seen.append(dict(
                {k: environ[k] for k in ENVIRON_KEYS if k in environ},
                body=body))
        text = environ['REQUEST_METHOD'].encode() + b' ' + body
        start_response('200 OK', [('Content-Type', 'text/plain'),
                                  ('Content-Length', str(len(text)))])
        return [text]


class ServerTest(testtools.TestCase):
    threads = 2
    server_kwargs = {}

    def setUp(self):
        super().setUp()
        self.app = Recorder()
        self.server = embedded_server.Server(
            self.wsgi_app(), '127.0.0.1', 0, self.threads,
            **self.server_kwargs).start()
        self.addCleanup(self.server.stop)
        self.port = self.server.port

    def wsgi_app(self):
        return self.app

    def connect(self):
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=10)
        self.addCleanup(conn.close)
        return conn

    def request(self, conn, method, path, body=None, headers=None):
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp, resp.read()

    def raw(self, data, reset_ok=False):
        """Send ``data``; everything the server answers until it closes
        (or, ``reset_ok``, resets the connection: it does when it closes
        with part of the request unread)."""
        with socket.create_connection(('127.0.0.1', self.port), 10) as sock:
            sock.sendall(data)
            received = b''
            while True:
                try:
                    chunk = sock.recv(65536)
                except ConnectionResetError:
                    if not reset_ok:
                        raise
                    return received
                if not chunk:
                    return received
                received += chunk


class ConnectionTest(ServerTest):
    def test_port_zero_binds_a_free_port(self):
        self.assertNotEqual(0, self.port)
        self.assertEqual('127.0.0.1', self.server.host)

    def test_requests_share_one_connection(self):
        conn = self.connect()
        resp, body = self.request(conn, 'GET', '/')
        self.assertEqual((200, b'GET '), (resp.status, body))
        sock = conn.sock
        for i in range(3):
            resp, body = self.request(conn, 'POST', '/', body=b'x%d' % i)
            self.assertEqual(b'POST x%d' % i, body)
        self.assertIs(sock, conn.sock)
        self.assertEqual('nova-lite', resp.getheader('Server'))

    def test_client_asks_to_close(self):
        conn = self.connect()
        resp, body = self.request(conn, 'GET', '/',
                                  headers={'Connection': 'close'})
        self.assertEqual('close', resp.getheader('Connection'))
        self.assertIsNone(conn.sock)

    def test_http_1_0_closes(self):
        data = self.raw(b'GET / HTTP/1.0\r\n\r\n')
        self.assertTrue(data.startswith(b'HTTP/1.0 200'), data)
        self.assertTrue(data.endswith(b'GET '), data)

    def test_pipelined_requests_are_delimited_by_content_length(self):
        data = self.raw(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3'
                        b'\r\n\r\nabcGET / HTTP/1.1\r\nHost: x\r\n'
                        b'Connection: close\r\n\r\n')
        self.assertEqual(2, data.count(b'HTTP/1.1 200'), data)
        self.assertIn(b'POST abc', data)
        self.assertTrue(data.endswith(b'GET '), data)

    def test_application_error_is_500(self):
        self.useFixture(fixtures.FakeLogger(name='waitress'))
        resp, _body = self.request(self.connect(), 'GET', '/fail')
        self.assertEqual(500, resp.status)

    def test_connections_share_the_bounded_threads(self):
        # Six connections at once, three requests each: the application
        # runs on at most ``threads`` threads, never one per connection.
        errors = []

        def client():
            conn = http.client.HTTPConnection('127.0.0.1', self.port,
                                              timeout=10)
            try:
                for i in range(3):
                    conn.request('GET', '/')
                    conn.getresponse().read()
            except Exception as exc:
                errors.append(exc)
            finally:
                conn.close()
        clients = [threading.Thread(target=client) for _ in range(6)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(30)
        self.assertEqual([], errors)
        self.assertEqual(18, len(self.app.seen))
        self.assertLessEqual(len(self.app.threads), self.threads)

    def test_stop_closes_the_port_and_the_connections(self):
        conn = self.connect()
        self.assertEqual(200, self.request(conn, 'GET', '/')[0].status)
        self.server.stop()
        self.assertNotIn('wsgi-server',
                         [t.name for t in threading.enumerate()])
        # The kept connection was closed by the server...
        self.assertRaises((http.client.RemoteDisconnected,
                           ConnectionError),
                          self.request, conn, 'GET', '/')
        # ...and nothing listens any more.
        self.assertRaises(ConnectionRefusedError, socket.create_connection,
                          ('127.0.0.1', self.port), 10)
        self.assertEqual(1, len(self.app.seen))


class RequestTest(ServerTest):
    """What the application sees of a request, and what never reaches
    it."""

    def assertRefused(self, request, status=400):
        data = self.raw(request)
        self.assertRegex(data, rb'^HTTP/1\.[01] %d ' % status)
        self.assertEqual([], self.app.seen)  # the application never ran

    def test_environ(self):
        conn = self.connect()
        conn.putrequest('POST', '/a%20b?x=1&y=%20')
        conn.putheader('X-Many', 'one')
        conn.putheader('X-Many', 'two')
        conn.putheader('Content-Type', 'application/json')
        conn.putheader('Content-Length', '2')
        conn.endheaders(b'{}')
        self.assertEqual(200, conn.getresponse().status)
        self.assertEqual([{
            'PATH_INFO': '/a b', 'QUERY_STRING': 'x=1&y=%20',
            'HTTP_X_MANY': 'one, two', 'CONTENT_TYPE': 'application/json',
            'CONTENT_LENGTH': '2', 'SERVER_PROTOCOL': 'HTTP/1.1',
            'SCRIPT_NAME': '', 'REMOTE_ADDR': '127.0.0.1', 'body': b'{}'}],
            self.app.seen)

    def test_content_length_with_a_sign_is_refused(self):
        self.assertRefused(b'POST / HTTP/1.1\r\nHost: x\r\n'
                           b'Content-Length: +3\r\n\r\nabc')

    def test_negative_or_non_numeric_content_length_is_refused(self):
        self.assertRefused(b'POST / HTTP/1.1\r\nHost: x\r\n'
                           b'Content-Length: -1\r\n\r\n')
        self.assertRefused(b'POST / HTTP/1.1\r\nHost: x\r\n'
                           b'Content-Length: x\r\n\r\n')

    def test_header_name_with_a_space_is_refused(self):
        self.assertRefused(b'GET / HTTP/1.1\r\nHost: x\r\n'
                           b'X Roles: admin\r\n\r\n')

    def test_folded_header_reaches_the_application_unfolded(self):
        # RFC 9112 section 5.2: replaced with spaces, never a new line.
        data = self.raw(b'GET / HTTP/1.1\r\nHost: x\r\nX-Many: a\r\n'
                        b'  folded\r\nConnection: close\r\n\r\n')
        self.assertTrue(data.startswith(b'HTTP/1.1 200 '), data)
        self.assertEqual('a  folded', self.app.seen[0]['HTTP_X_MANY'])

    def test_chunked_body_reaches_the_application_dechunked(self):
        # A Content-Length beside the chunked encoding is not what the
        # application is told: it gets the decoded body and its size.
        data = self.raw(b'POST / HTTP/1.1\r\nHost: x\r\n'
                        b'Transfer-Encoding: chunked\r\nContent-Length: 2\r\n'
                        b'Connection: close\r\n\r\n'
                        b'3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n')
        self.assertTrue(data.endswith(b'POST abcde'), data)
        self.assertEqual([{'CONTENT_LENGTH': '5', 'body': b'abcde',
                           'PATH_INFO': '/', 'QUERY_STRING': '',
                           'SERVER_PROTOCOL': 'HTTP/1.1',
                           'SCRIPT_NAME': '', 'REMOTE_ADDR': '127.0.0.1'}],
                         self.app.seen)

    def test_header_with_an_underscore_is_dropped(self):
        # X_Roles would otherwise become HTTP_X_ROLES, the key X-Roles has.
        resp, _body = self.request(self.connect(), 'GET', '/',
                                   headers={'X_Roles': 'admin'})
        self.assertEqual(200, resp.status)
        self.assertNotIn('HTTP_X_ROLES', self.app.seen[0])
        resp, _body = self.request(self.connect(), 'GET', '/',
                                   headers={'X-Roles': 'member',
                                            'X_Roles': 'admin'})
        self.assertEqual('member', self.app.seen[1]['HTTP_X_ROLES'])

    def test_proxy_headers_are_left_to_the_application(self):
        # [oslo_middleware] enable_proxy_headers_parsing decides, not the
        # server.
        self.request(self.connect(), 'GET', '/',
                     headers={'X-Forwarded-Proto': 'https'})
        self.assertEqual('https', self.app.seen[0]['HTTP_X_FORWARDED_PROTO'])

    def test_expect_100_continue(self):
        data = self.raw(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2'
                        b'\r\nExpect: 100-continue\r\nConnection: close'
                        b'\r\n\r\nhi')
        self.assertTrue(data.startswith(b'HTTP/1.1 100 Continue\r\n\r\n'
                                        b'HTTP/1.1 200 OK'), data)
        self.assertTrue(data.endswith(b'POST hi'), data)


class HeaderLimitTest(ServerTest):
    """Request headers beyond uWSGI's buffer or Python's field count are
    431 before the application runs, and the connection closes."""

    def request_with(self, fields):
        return (b'GET / HTTP/1.1\r\nHost: x\r\n' + b''.join(fields) +
                b'Connection: close\r\n\r\n')

    def assertRefused431(self, request):
        served = len(self.app.seen)
        data = self.raw(request, reset_ok=True)
        self.assertRegex(data, rb'^HTTP/1\.[01] 431 Request Header Fields '
                               rb'Too Large\r\n')
        self.assertIn(b'Connection: close\r\n', data)
        self.assertEqual(served, len(self.app.seen))  # the app never ran

    def test_70000_bytes_of_headers_are_431(self):
        self.assertRefused431(self.request_with(
            [b'X-Big: ' + b'a' * 70000 + b'\r\n']))

    def test_headers_at_the_size_limit_are_431(self):
        # Request line and headers of exactly MAX_REQUEST_HEADER_SIZE
        # bytes, before the blank line.
        head = self.request_with([b'X-Big: '])[:-4]
        pad = embedded_server.MAX_REQUEST_HEADER_SIZE - len(head) - 2
        self.assertRefused431(
            head[:-len(b'Connection: close')] + b'a' * pad +
            b'\r\nConnection: close\r\n\r\n')

    def test_headers_just_below_the_size_limit_are_served(self):
        pad = embedded_server.MAX_REQUEST_HEADER_SIZE - 100
        data = self.raw(self.request_with([b'X-Many: ' + b'a' * pad +
                                           b'\r\n']))
        self.assertTrue(data.startswith(b'HTTP/1.1 200 '), data[:100])
        self.assertEqual(pad, len(self.app.seen[0]['HTTP_X_MANY']))

    def test_150_header_lines_are_431(self):
        self.assertRefused431(self.request_with(
            [b'X-H%d: v\r\n' % i for i in range(150)]))

    def test_repeated_header_lines_count_each(self):
        self.assertRefused431(self.request_with(
            [b'X-Many: v\r\n' for _ in range(150)]))

    def test_the_field_limit_itself_is_served(self):
        # Host, Connection and 98 more: MAX_HEADER_FIELDS fields.
        fields = embedded_server.MAX_HEADER_FIELDS - 2
        data = self.raw(self.request_with(
            [b'X-H%d: v\r\n' % i for i in range(fields - 1)] +
            [b'X-Many: a\r\n  folded\r\n']))
        self.assertTrue(data.startswith(b'HTTP/1.1 200 '), data[:100])
        self.assertEqual('a  folded', self.app.seen[0]['HTTP_X_MANY'])
        self.assertRefused431(self.request_with(
            [b'X-H%d: v\r\n' % i for i in range(fields + 1)]))

    def test_the_connection_is_served_again_after_a_431(self):
        self.assertRefused431(self.request_with(
            [b'X-H%d: v\r\n' % i for i in range(150)]))
        resp, body = self.request(self.connect(), 'GET', '/')
        self.assertEqual((200, b'GET '), (resp.status, body))


class IdleConnectionTest(ServerTest):
    """Idle connections cost a descriptor, not a place: many of them do
    not keep a client out, and each is closed once idle too long."""

    IDLE = 300
    server_kwargs = {'idle_timeout': 1}

    def idle_socket(self):
        sock = socket.create_connection(('127.0.0.1', self.port), 10)
        self.addCleanup(sock.close)
        return sock

    def test_a_request_is_answered_while_300_connections_are_idle(self):
        idle = [self.idle_socket() for _ in range(self.IDLE)]
        # Waitress's default limit, 100, left this request waiting until
        # idle sockets timed out; nova_lite's accepts them all.
        resp, body = self.request(self.connect(), 'GET', '/')
        self.assertEqual((200, b'GET '), (resp.status, body))
        # The idle connections were accepted too: each still answers.
        idle[0].sendall(b'GET /first HTTP/1.1\r\nHost: x\r\n\r\n')
        idle[-1].sendall(b'GET /last HTTP/1.1\r\nHost: x\r\n\r\n')
        self.assertTrue(idle[0].recv(4096).startswith(b'HTTP/1.1 200 '))
        self.assertTrue(idle[-1].recv(4096).startswith(b'HTTP/1.1 200 '))

    def test_an_idle_connection_is_closed_after_the_timeout(self):
        sock = self.idle_socket()
        conn = self.connect()
        self.assertEqual(200, self.request(conn, 'GET', '/')[0].status)
        # Both the silent socket and the kept-alive connection close (a
        # recv of b''); they were idle for more than a second.
        sock.settimeout(15)
        self.assertEqual(b'', sock.recv(1))
        conn.sock.settimeout(15)
        self.assertEqual(b'', conn.sock.recv(1))


class RequestLogThroughServerTest(ServerTest):
    """The request log line is written when the server closes the
    response (PEP 3333), after sending it."""

    def wsgi_app(self):
        return requestlog.RequestLog(self.app)

    def test_line_is_written_after_the_response(self):
        log = self.useFixture(fixtures.FakeLogger(
            name=requestlog.__name__, level=logging.INFO))
        resp, body = self.request(self.connect(), 'POST', '/echo?x=1',
                                  body=b'hi')
        self.assertEqual((200, b'POST hi'), (resp.status, body))
        system.wait_for(lambda: '/echo?x=1' in log.output,
                        message='no log line')
        self.assertIn('"POST /echo?x=1" status: 200 len: 7 ', log.output)
