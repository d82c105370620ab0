"""Build the API WSGI application from configuration."""

from oslo_config import cfg

from nova_lite.api import deploy
from nova_lite import config
from nova_lite.db import api as db_api
from nova_lite import objects
from nova_lite import service
from nova_lite.volume import drivers as volume_drivers
from nova_lite.volume import periodic as volume_periodic

# What init_application(clock_tick=True) started in this process: (clock
# ticker, block storage's settling) pairs (``stop_periodics``).
_PERIODICS = []


def init_application(conf=None, argv=None, clock_tick=False):
    """Parse configuration (unless ``conf`` is ready), configure the
    database and return the WSGI application. ``clock_tick``: this is an
    API process of its own (uWSGI worker, ``nova-lite-api``), which ticks
    the services' liveness clock (``nova_lite.service.ClockTicker``) and
    runs block storage's settling (``nova_lite.volume.periodic``): an API
    process serves block storage and drives its backends, and settles
    what such a process left when it died."""
    if conf is None:
        conf = cfg.ConfigOpts()
        config.parse_args(conf, argv or [])
    objects.register_all()
    # A request never waits for the database to come up: it answers 503.
    db_api.configure(conf, wait_for_database=False)
    # The /v3 API drives the block-storage backends in this process: a
    # wrong backend configuration fails here, at start, not on first use.
    volume_drivers.get_backends(conf)
    app = deploy.loadapp(conf)
    if clock_tick:
        _PERIODICS.append((service.ClockTicker(conf).start(),
                           volume_periodic.PeriodicSettling(conf).start()))
    return app


def stop_periodics():
    """Stop what ``init_application(clock_tick=True)`` started in this
    process (an API process's run ends with the process: this is for
    those that embed it, and for tests)."""
    while _PERIODICS:
        ticker, settling = _PERIODICS.pop()
        settling.stop()
        ticker.stop()
        settling.wait()
