"""Option discovery for oslo-config-generator (``tox -e genconfig``)."""

import collections

from nova_lite import conf as nl_conf


def list_opts():
    merged = collections.OrderedDict()
    for module in nl_conf._MODULES:
        for group, opts in module.list_opts().items():
            merged.setdefault(group, []).extend(opts)
    return [(g, o) for g, o in merged.items()]


def set_defaults(conf=None):
    """Hook of ``oslo.config.opts.defaults``: nova_lite's defaults for
    options other libraries own ([database] connection, transport_url)."""
    from nova_lite.conf import database
    if conf is None:
        from oslo_config import cfg
        conf = cfg.CONF
    database.register_opts(conf)
    import oslo_messaging as messaging
    messaging.set_transport_defaults(control_exchange='nova_lite')
