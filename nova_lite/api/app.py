"""Build the API WSGI application from configuration."""

from oslo_config import cfg

from nova_lite.api import deploy
from nova_lite import config
from nova_lite.db import api as db_api
from nova_lite import objects
from nova_lite.volume import drivers as volume_drivers


def init_application(conf=None, argv=None):
    """Parse configuration (unless ``conf`` is ready), configure the
    database and return the WSGI application."""
    if conf is None:
        conf = cfg.ConfigOpts()
        config.parse_args(conf, argv or [])
    objects.register_all()
    db_api.configure(conf)
    # The /v3 API drives the block-storage backends in this process: a
    # wrong backend configuration fails here, at start, not on first use.
    volume_drivers.get_backends(conf)
    return deploy.loadapp(conf)
