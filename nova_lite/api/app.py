"""Build the API WSGI application from configuration."""

from oslo_config import cfg

from nova_lite.api import deploy
from nova_lite import config
from nova_lite.db import api as db_api
from nova_lite import objects
from nova_lite import service
from nova_lite.volume import backends as backend_conf

# What init_application(clock_tick=True) started in this process: clock
# tickers (``stop_periodics``).
_PERIODICS = []


def init_application(conf=None, argv=None, clock_tick=False):
    """Parse configuration (unless ``conf`` is ready), configure the
    database and return the WSGI application. ``clock_tick``: this is an
    API process of its own (uWSGI worker, ``nova-lite-api``), which ticks
    the services' liveness clock (``nova_lite.service.ClockTicker``).
    Block storage's backends are the volume service's
    (``nova-lite-volume``): the API loads no driver and runs no settling
    of theirs; it reaches them over RPC (``nova_lite.volume.rpcapi``)."""
    if conf is None:
        conf = cfg.ConfigOpts()
        config.parse_args(conf, argv or [])
    objects.register_all()
    # A request never waits for the database to come up: it answers 503.
    db_api.configure(conf, wait_for_database=False)
    # The backends' groups (their names and backend_host, which the
    # volumes' views show): registered here, no driver loaded (the
    # volume service loads them, and fails at its start on an unknown
    # volume_driver).
    backend_conf.register_common_opts(conf)
    app = deploy.loadapp(conf)
    if clock_tick:
        _PERIODICS.append(service.ClockTicker(conf).start())
    return app


def stop_periodics():
    """Stop what ``init_application(clock_tick=True)`` started in this
    process (an API process's run ends with the process: this is for
    those that embed it, and for tests)."""
    while _PERIODICS:
        _PERIODICS.pop().stop()
