"""[conductor] options."""

from oslo_config import cfg

conductor_group = cfg.OptGroup(
    'conductor',
    title='Conductor options',
    help='Options of nova-lite-conductor, which runs multi-step workflows.')

ALL_OPTS = [
    cfg.IntOpt(
        'workers',
        default=8,
        min=1,
        help="""
Number of threads that handle incoming conductor RPC messages in one
conductor process. Each running workflow (an attach, a build) holds one while
it waits on a compute host or the block storage.
"""),
]


def register_opts(conf):
    conf.register_group(conductor_group)
    conf.register_opts(ALL_OPTS, group=conductor_group)


def list_opts():
    return {conductor_group: ALL_OPTS}
