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
writes them on one loop thread, and accepts at most 100); a request that
arrives while every thread is busy waits for one.
"""),
]


def register_opts(conf):
    conf.register_group(wsgi_group)
    conf.register_opts(ALL_OPTS, group=wsgi_group)


def list_opts():
    return {wsgi_group: ALL_OPTS}
