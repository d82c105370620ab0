"""[volume] options: the block-storage service and how compute reaches it.

Backend groups (one per name in ``enabled_backends``) are registered by
``nova_lite.volume.backends`` (their common options) and
``nova_lite.volume_service.drivers`` (their drivers' options, when the
volume service starts), since their names are only known from the
configuration.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

volume_group = cfg.OptGroup(
    'volume',
    title='Block storage options',
    help='Options of the block-storage service and of its clients.')

ALL_OPTS = [
    cfg.ListOpt(
        'enabled_backends',
        default=['file'],
        help="""
Names of the backends the block-storage service uses, each with a config
group of the same name that sets at least ``volume_driver``, as Cinder
operators know it. Example::

    [volume]
    enabled_backends = fake1

    [fake1]
    volume_driver = fake
    connect_delay = 2.0

A name with no group of its own uses the driver of the same name with its
defaults (the embedded default ``file`` backend works this way).
"""),
    cfg.StrOpt(
        'default_volume_type',
        default='__DEFAULT__',
        help="""
Name of the volume type a volume created without one gets (Cinder's
``default_volume_type``), and what ``GET /v3/types/default`` shows. The
schema creates ``__DEFAULT__`` (as Cinder does); that type, or the one
named here, cannot be deleted. If no type has this name, creating a volume
without a type fails (500) until it is created or this is corrected.
"""),
    cfg.IntOpt(
        'capabilities_cache_time',
        default=60,
        min=0,
        help="""
Seconds the block storage keeps what each backend reported about its
capabilities (``multiattach``, ``volume_backend_name``...) before asking it
again (each process that places volumes asks the backend's volume
service, which keeps its driver's report as long). Volume creation and
retype check a volume type against these cached reports, and refuse at
once (400) a multiattach volume that no enabled backend can host, rather
than leaving a volume in ``error``. 0 asks the
backends on every request. ``GET /v3/capabilities/{backend}`` always asks
the backend and refreshes the cache.
"""),
    cfg.StrOpt(
        'client',
        default='local',
        choices=[
            ('local', 'Call the in-process block-storage service directly '
                      '(nova-lite-all and single-database deployments).'),
            ('cinder', 'Call a Cinder v3 REST endpoint with '
                       'python-cinderclient: nova_lite\'s own /v3 or a real '
                       'Cinder.'),
        ],
        help='How compute and conductor reach the block storage.'),
    cfg.URIOpt(
        'endpoint_override',
        help="""
Block-storage endpoint (``http://host:8774/v3``) for ``client = cinder``,
instead of looking it up in the Keystone catalog.
"""),
]


cinder_group = cfg.OptGroup(
    'cinder',
    title='Block-storage REST client options',
    help="""
How compute and conductor authenticate to the block-storage REST API when
``[volume] client = cinder``.

Requests are made with the token of the user whose request is being served
(the request context), at the endpoint ``[volume] endpoint_override`` or, with
Keystone, the ``block-storage`` endpoint of the token's catalog. Requests
made as the service (detaching a server's volume, the OSSA-2023-003 rule)
also carry a service token: with ``[api] auth_strategy = keystone`` it is
obtained with the auth plugin configured in this group (``auth_type`` and its
options, e.g. ``password``); with ``noauth2`` noauth2's service token
``service:service`` is sent instead.
""")

CINDER_OPTS = [
    cfg.StrOpt(
        'region_name',
        help="""
Region of the block-storage endpoint to look up in the Keystone catalog when
``[volume] endpoint_override`` is not set.
"""),
    cfg.StrOpt(
        'interface',
        default='public',
        choices=['public', 'internal', 'admin'],
        help="""
Endpoint interface of the block-storage endpoint to look up in the Keystone
catalog when ``[volume] endpoint_override`` is not set.
"""),
]


def register_opts(conf):
    conf.register_group(volume_group)
    conf.register_opts(ALL_OPTS, group=volume_group)
    conf.register_group(cinder_group)
    conf.register_opts(CINDER_OPTS, group=cinder_group)
    ks_loading.register_session_conf_options(conf, cinder_group.name)
    ks_loading.register_auth_conf_options(conf, cinder_group.name)


def list_opts():
    # The auth plugin's own options (auth_url, username...) depend on
    # auth_type; keystoneauth registers them when the plugin is loaded.
    cinder_opts = (CINDER_OPTS + ks_loading.get_session_conf_options() +
                   ks_loading.get_auth_common_conf_options())
    # The backend groups' options are the drivers'
    # (``nova_lite.conf.opts``).
    return {volume_group: ALL_OPTS, cinder_group: cinder_opts}
