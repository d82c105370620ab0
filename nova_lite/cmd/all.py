"""nova-lite-all: the whole system in one process (the embedded default).

With no configuration at all it syncs a SQLite database under
``[DEFAULT] state_path`` (``./state``), runs the conductor and one compute
host on threads over the in-process transport, and serves the API on
``[wsgi] bind_host``:``bind_port`` (127.0.0.1:8774) with noauth2. Ctrl-C
stops it cleanly.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging

from nova_lite.conf import base as conf_base
from nova_lite import config
from nova_lite import embedded
from nova_lite.wsgi import embedded_server

LOG = logging.getLogger(__name__)

CLOUDS_YAML = """\
# Written by nova-lite-all: point openstacksdk / openstackclient here with
#   export OS_CLIENT_CONFIG_FILE=%(path)s OS_CLOUD=nova-lite
clouds:
  nova-lite:
    auth_type: admin_token
    auth:
      endpoint: %(base)s
      token: %(token)s
    compute_endpoint_override: %(base)s/v2.1
    block_storage_endpoint_override: %(base)s/v3
    volume_endpoint_override: %(base)s/v3
    identity_api_version: '3'
    identity_endpoint_override: %(base)s/identity/v3
    region_name: RegionOne
  nova-lite-demo:
    auth_type: admin_token
    auth:
      endpoint: %(base)s
      token: demo:demo
    compute_endpoint_override: %(base)s/v2.1
    block_storage_endpoint_override: %(base)s/v3
    volume_endpoint_override: %(base)s/v3
    identity_api_version: '3'
    identity_endpoint_override: %(base)s/identity/v3
    region_name: RegionOne
"""


def write_clouds_yaml(conf, base):
    path = conf_base.state_path(conf, 'clouds.yaml')
    with open(path, 'w') as f:
        f.write(CLOUDS_YAML % {'path': path, 'base': base,
                               'token': 'admin:admin'})
    return path


def main(argv=None):
    conf = cfg.ConfigOpts()
    config.parse_args(conf, sys.argv[1:] if argv is None else argv)
    system = embedded.EmbeddedSystem(conf).start()
    server = embedded_server.Server(system.app, conf.wsgi.bind_host,
                                    conf.wsgi.bind_port, conf.wsgi.threads)
    base = 'http://%s:%s' % (server.host, server.port)
    clouds = write_clouds_yaml(conf, base)
    LOG.info('nova-lite-all serving on %s', base)
    LOG.info('compute API: %s/v2.1  block storage API: %s/v3', base, base)
    LOG.info('database: %s', conf.database.connection)
    LOG.info('clouds.yaml for openstacksdk/openstackclient: %s (export '
             'OS_CLIENT_CONFIG_FILE=%s OS_CLOUD=nova-lite); template: '
             'etc/nova-lite/clouds.yaml.sample', clouds, clouds)
    try:
        signum = server.serve_until_signalled()
        LOG.info('Signal %s received, stopping', signum)
    finally:
        system.stop()
        LOG.info('nova-lite-all stopped')
    return 0


if __name__ == '__main__':
    sys.exit(main())
