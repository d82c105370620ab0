"""[volume] options: the block-storage service and how compute reaches it.

Backend groups (one per name in ``enabled_backends``) are registered by
``nova_lite.volume.drivers`` when the volume service starts, since their names
are only known from the configuration.
"""

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


def register_opts(conf):
    conf.register_group(volume_group)
    conf.register_opts(ALL_OPTS, group=volume_group)


def list_opts():
    return {volume_group: ALL_OPTS}
