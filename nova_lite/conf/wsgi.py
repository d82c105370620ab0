"""[wsgi] options of the embedded API server (waitress)."""

from oslo_config import cfg

wsgi_group = cfg.OptGroup(
    'wsgi',
    title='WSGI server options',
    help="""
Where and with how many threads ``nova-lite-all`` and ``nova-lite-api``
serve the API (with waitress). In production the API runs under uWSGI
(``etc/nova-lite/nova-lite-api-uwsgi.ini``), which has its own
``http-socket``/``socket`` and ``threads`` settings and ignores these.
""")

DEFAULT_CONNECTION_LIMIT = 1000
DEFAULT_CLIENT_SOCKET_TIMEOUT = 60

ALL_OPTS = [
    cfg.HostAddressOpt(
        'bind_host',
        default='127.0.0.1',
        help='IP address the API listens on.'),
    cfg.PortOpt(
        'bind_port',
        default=8774,
        help='TCP port the API listens on.'),
    cfg.IntOpt(
        'threads',
        default=8,
        min=1,
        help="""
Most requests the API serves at the same time: the number of threads that run
the application. Connections are not tied to a thread (waitress reads and
writes them on one loop thread, see ``connection_limit``); a request that
arrives while every thread is busy waits for one.

Related options:

* ``connection_limit``
"""),
    cfg.IntOpt(
        'connection_limit',
        default=DEFAULT_CONNECTION_LIMIT,
        min=10,
        help="""
Most client connections open at once. An open connection costs a file
descriptor and no thread, so the limit is high: idle connections (kept alive
by clients, or opened and left silent) must not keep new clients out. Beyond
it, new connections wait in the listen backlog until one closes. The server
raises the process's open-files limit (``RLIMIT_NOFILE``) to fit when it may,
and lowers this limit, with a warning, when it may not.

Related options:

* ``client_socket_timeout``: how soon an idle connection is closed.
"""),
    cfg.IntOpt(
        'client_socket_timeout',
        default=DEFAULT_CLIENT_SOCKET_TIMEOUT,
        min=1,
        help="""
Seconds after which a connection with no request in progress and no traffic
is closed (checked every few seconds, so it closes up to 10 seconds later).
Clients reconnect on their next request.

Related options:

* ``connection_limit``
"""),
]


def register_opts(conf):
    conf.register_group(wsgi_group)
    conf.register_opts(ALL_OPTS, group=wsgi_group)


def list_opts():
    return {wsgi_group: ALL_OPTS}
