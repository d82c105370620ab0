"""Parse the command line and configuration files of a nova_lite process."""

import os

from keystonemiddleware import auth_token
from oslo_log import log as logging

from nova_lite import conf as nl_conf
from nova_lite import version

_LOGGING_READY = set()


def default_config_files():
    """``OS_NOVA_LITE_CONFIG_FILE`` (a file or ``:``-separated list),
    else oslo.config's standard search (``/etc/nova-lite/nova-lite.conf``,
    ``~/.nova-lite/``...)."""
    env = os.environ.get('OS_NOVA_LITE_CONFIG_FILE')
    if env:
        return [p for p in env.split(':') if p]
    return None


def prepare(conf):
    """Register every option nova_lite reads on ``conf`` (idempotent),
    keystonemiddleware's ``[keystone_authtoken]`` included (it registers
    them again, the same, when the keystone strategy builds it)."""
    nl_conf.register_opts(conf)
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    if id(conf) not in _LOGGING_READY:
        logging.register_options(conf)
        _LOGGING_READY.add(id(conf))
    return conf


def parse_args(conf, argv, default_config_files=None, cli_opts=()):
    prepare(conf)
    if cli_opts:
        conf.register_cli_opts(cli_opts)
    conf(argv, project='nova-lite', prog=None,
         version=version.version_string(),
         default_config_files=(default_config_files or
                               default_config_files_from_env()))
    logging.set_defaults(default_log_levels=logging.get_default_log_levels()
                         + ['routes.middleware=WARN', 'stevedore=WARN',
                            'oslo_policy=WARN', 'alembic=WARN'])
    logging.setup(conf, 'nova_lite')
    return conf


def default_config_files_from_env():
    return default_config_files()
