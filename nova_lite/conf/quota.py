"""[quota] options: the default limits of every project."""

from oslo_config import cfg

quota_group = cfg.OptGroup(
    'quota',
    title='Quota options',
    help="""
The default per-project limits, as Nova's ``[quota]`` and Cinder's
``quota_*`` options set them. An administrator overrides them for one
project with ``os-quota-sets`` (both APIs), and for every project of the
block-storage API with the quota class ``default``
(``os-quota-class-sets``). -1 is unlimited. Usage is counted from the
servers and volumes themselves, so it is never out of date.
""")


def _limit(name, default, help):
    return cfg.IntOpt(name, default=default, min=-1, max=2 ** 31 - 1,
                      help=help)


COMPUTE_OPTS = [
    _limit('instances', 10, 'Servers per project (compute API).'),
    _limit('cores', 20, 'Virtual CPUs of the servers of a project, by '
                        'their flavors (compute API).'),
    _limit('ram', 50 * 1024, 'MiB of RAM of the servers of a project, by '
                             'their flavors (compute API).'),
    _limit('metadata_items', 128, 'Metadata items per server (reported; '
                                  'nova_lite keeps no server metadata).'),
    _limit('key_pairs', 100, 'Key pairs per user (reported; nova_lite '
                             'keeps no key pairs).'),
    _limit('server_groups', 10, 'Server groups per project (reported; '
                                'nova_lite keeps no server groups).'),
    _limit('server_group_members', 10, 'Servers per server group '
                                       '(reported).'),
]

VOLUME_OPTS = [
    _limit('volumes', 10, 'Volumes per project (block-storage API); '
                          '``volumes_<type>`` limits default to -1.'),
    _limit('gigabytes', 1000, 'GiB of the volumes of a project '
                              '(block-storage API); ``gigabytes_<type>`` '
                              'limits default to -1.'),
    _limit('per_volume_gigabytes', -1, 'The largest volume, in GiB.'),
    _limit('snapshots', 10, 'Snapshots per project (reported; nova_lite '
                            'keeps no snapshots).'),
    _limit('backups', 10, 'Backups per project (reported).'),
    _limit('backup_gigabytes', 1000, 'GiB of backups per project '
                                     '(reported).'),
    _limit('groups', 10, 'Volume groups per project (reported).'),
]

ALL_OPTS = COMPUTE_OPTS + VOLUME_OPTS


def register_opts(conf):
    conf.register_group(quota_group)
    conf.register_opts(ALL_OPTS, group=quota_group)


def list_opts():
    return {quota_group: ALL_OPTS}
