"""The whole of nova_lite in one process: the embedded default.

``EmbeddedSystem`` brings up the database (migrated), the volume service
(``nova_lite.volume_service.service``: the backends' drivers and block
storage's settling), the conductor, one or more compute hosts and the API
application on one in-process transport. The services' heartbeats keep
the liveness clock: the API here does not tick it.
``nova-lite-all`` serves it over HTTP; the functional tests use it as is.

``write_client_files`` writes what the clients need to reach it: a
``clouds.yaml`` (openstacksdk, python-openstackclient) and the
``admin-openrc``/``demo-openrc`` environment files (the ``cinder`` and
``nova`` CLIs, which do not read ``clouds.yaml``), with the users'
generated passwords, each readable by its owner only.
"""

import os

from oslo_log import log as logging

from nova_lite.api import app as api_app
from nova_lite.api.handlers import identity
from nova_lite.compute.host import service as compute_service
from nova_lite.conductor import service as conductor_service
from nova_lite.conf import base as conf_base
from nova_lite.db import api as db_api
from nova_lite.db import migration
from nova_lite import objects
from nova_lite import rpc
from nova_lite.volume_service import service as volume_service

LOG = logging.getLogger(__name__)


class EmbeddedSystem(object):
    def __init__(self, conf, compute_hosts=None, sync_db=True):
        self.conf = conf
        self.compute_hosts = compute_hosts or [conf.host]
        self.sync_db = sync_db
        self.services = []
        self.app = None

    def start(self):
        os.makedirs(conf_base.state_path(self.conf), exist_ok=True)
        objects.register_all()
        db_api.configure(self.conf)
        if self.sync_db:
            migration.upgrade(self.conf)
        # The volume service first: the others reach the backends
        # through it.
        self.services.append(volume_service.create(self.conf))
        self.services.append(conductor_service.create(self.conf))
        for host in self.compute_hosts:
            self.services.append(compute_service.create(self.conf, host))
        for svc in self.services:
            svc.start()
        self.app = api_app.init_application(conf=self.conf)
        return self

    @property
    def volume_service(self):
        """The volume service (None once stopped)."""
        for svc in self.services:
            if svc.binary == volume_service.BINARY:
                return svc
        return None

    @property
    def settling(self):
        """Block storage's settling, run by the volume service."""
        svc = self.volume_service
        return svc.settling if svc is not None else None

    def stop(self):
        # Stop every service first, then wait for them: their RPC servers
        # and a settling run in progress end in parallel. The volume
        # service goes last, once the others are done: their work in
        # progress (an attach's connect, a rollback's disconnect) calls
        # it, and a call it no longer takes would wait out its timeout.
        volume = [svc for svc in self.services
                  if svc.binary == volume_service.BINARY]
        others = [svc for svc in reversed(self.services)
                  if svc.binary != volume_service.BINARY]
        for stage in (others, volume):
            for svc in stage:
                try:
                    svc.stop()
                except Exception:
                    LOG.exception('Stopping %s failed', svc.binary)
            for svc in stage:
                try:
                    svc.wait()
                except Exception:
                    LOG.exception('Waiting for %s failed', svc.binary)
        self.services = []
        rpc.cleanup(self.conf)


CLOUDS_YAML_HEADER = """\
# Written by nova-lite-all at each start (it holds passwords: mode 0600).
#   export OS_CLIENT_CONFIG_FILE=%(path)s
#   export OS_CLOUD=nova-lite        # or nova-lite-demo, a member
#   openstack versions show
"""

# One cloud per user (identity.USERS): nova-lite is the administrator,
# nova-lite-demo a member of the project demo. Endpoints come from the
# token's catalog (served at /identity, see api/handlers/identity.py).
CLOUD = """\
  %(cloud)s:
    auth_type: password
    auth:
      auth_url: %(base)s/identity
      username: %(user)s
      password: '%(password)s'
      project_name: %(user)s
      user_domain_name: Default
      project_domain_name: Default
    identity_api_version: '3'
    region_name: %(region)s
"""

OPENRC = """\
# Written by nova-lite-all at each start (it holds a password: mode 0600).
# For the cinder and nova CLIs, which do not read clouds.yaml (the
# openstack CLI reads these too):  . %(path)s
unset OS_CLOUD
export OS_AUTH_TYPE=password
export OS_AUTH_URL=%(base)s/identity
export OS_IDENTITY_API_VERSION=3
export OS_USERNAME=%(user)s
export OS_PASSWORD='%(password)s'
export OS_PROJECT_NAME=%(user)s
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_REGION_NAME=%(region)s
"""

CLOUD_NAMES = {'admin': 'nova-lite', 'demo': 'nova-lite-demo'}


def clouds(base, passwords):
    """The ``clouds:`` mapping of ``clouds.yaml`` for the API at ``base``
    (``etc/nova-lite/clouds.yaml.sample`` ends with it)."""
    text = 'clouds:\n'
    for user in identity.USERS:
        text += CLOUD % {'cloud': CLOUD_NAMES[user], 'base': base,
                         'user': user, 'password': passwords[user],
                         'region': identity.REGION}
    return text


def clouds_yaml(base, passwords, path):
    """The text of ``clouds.yaml`` at ``path``."""
    return CLOUDS_YAML_HEADER % {'path': path} + clouds(base, passwords)


def openrc(base, user, password, path):
    return OPENRC % {'base': base, 'user': user, 'password': password,
                     'region': identity.REGION, 'path': path}


def write_client_files(conf, base):
    """Write ``clouds.yaml`` and ``<user>-openrc`` for the API at ``base``
    into the state directory (the users' passwords are generated once,
    see ``identity.ensure_passwords``); the path of ``clouds.yaml``."""
    passwords = identity.ensure_passwords(conf)
    path = conf_base.state_path(conf, 'clouds.yaml')
    identity.write_private(path, clouds_yaml(base, passwords, path))
    for user in identity.USERS:
        rc = conf_base.state_path(conf, '%s-openrc' % user)
        identity.write_private(rc, openrc(base, user, passwords[user], rc))
    return path
