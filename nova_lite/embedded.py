"""The whole of nova_lite in one process: the embedded default.

``EmbeddedSystem`` brings up the database (migrated), the conductor, one or
more compute hosts and the API application on one in-process transport.
``nova-lite-all`` serves it over HTTP; the functional tests use it as is.
"""

import os

from oslo_log import log as logging

from nova_lite.api import app as api_app
from nova_lite.conf import base as conf_base
from nova_lite.db import api as db_api
from nova_lite.db import migration
from nova_lite import objects
from nova_lite import rpc
from nova_lite import services

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
        self.services.append(services.conductor_service(self.conf))
        for host in self.compute_hosts:
            self.services.append(services.compute_service(self.conf, host))
        for svc in self.services:
            svc.start()
        self.app = api_app.init_application(conf=self.conf)
        return self

    def stop(self):
        # Stop every service first, then wait for them: their RPC servers
        # drain in parallel.
        for svc in reversed(self.services):
            try:
                svc.stop()
            except Exception:
                LOG.exception('Stopping %s failed', svc.binary)
        for svc in reversed(self.services):
            try:
                svc.wait()
            except Exception:
                LOG.exception('Waiting for %s failed', svc.binary)
        self.services = []
        rpc.cleanup(self.conf)
