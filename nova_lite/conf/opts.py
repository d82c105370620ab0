"""Option discovery for oslo-config-generator (``tox -e genconfig``)."""

import collections

from nova_lite import conf as nl_conf
from nova_lite.volume_service import drivers


def list_opts():
    """Every group's options, and one group per volume driver named like
    it (a valid backend group as it is; the volume service registers a
    backend's group from ``[volume] enabled_backends``)."""
    merged = collections.OrderedDict()
    for module in nl_conf.MODULES:
        for group, opts in module.list_opts().items():
            merged.setdefault(group, []).extend(opts)
    for group, opts in drivers.sample_opts().items():
        merged.setdefault(group, []).extend(opts)
    return [(g, o) for g, o in merged.items()]


def set_defaults():
    """Hook of ``oslo.config.opts.defaults``, called by the config generator
    only: show nova_lite's defaults for options that other libraries own
    (``[database] connection`` and ``pool_timeout``, ``control_exchange``)
    in the sample file.
    Services set these per ConfigOpts in ``nova_lite.conf``. (nova_lite's
    ``transport_url`` default, ``inproc://``, has no public setter in
    oslo.messaging: the sample shows oslo.messaging's.)"""
    from oslo_config import cfg
    from oslo_db import options as db_options
    import oslo_messaging

    from nova_lite.conf import database
    from nova_lite.conf import rpc
    cfg.set_defaults(db_options.database_opts,
                     connection=database.DEFAULT_CONNECTION,
                     pool_timeout=database.DEFAULT_POOL_TIMEOUT)
    oslo_messaging.set_transport_defaults(rpc.CONTROL_EXCHANGE)
