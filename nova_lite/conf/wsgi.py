"""[wsgi] options of the development API server."""

from oslo_config import cfg

wsgi_group = cfg.OptGroup(
    'wsgi',
    title='WSGI server options',
    help="""
Where ``nova-lite-all`` and ``nova-lite-api`` listen. In production the API
runs under uWSGI (``etc/nova-lite/nova-lite-api-uwsgi.ini``), which has its
own ``http-socket``/``socket`` settings and ignores these.
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
]


def register_opts(conf):
    conf.register_group(wsgi_group)
    conf.register_opts(ALL_OPTS, group=wsgi_group)


def list_opts():
    return {wsgi_group: ALL_OPTS}
