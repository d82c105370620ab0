"""nova_lite configuration options.

Options live in one module per group. Nothing is registered at import time:
``register_opts(conf)`` fills the ConfigOpts it is given, so tests and
in-process fixtures can build as many isolated configurations as they need.
Only the command entry points (``nova_lite.cmd``) and the WSGI entry point use
the process-wide ``CONF`` below.
"""

from oslo_config import cfg

from nova_lite.conf import api
from nova_lite.conf import base
from nova_lite.conf import compute
from nova_lite.conf import conductor
from nova_lite.conf import database
from nova_lite.conf import libvirt
from nova_lite.conf import quota
from nova_lite.conf import recovery
from nova_lite.conf import rpc
from nova_lite.conf import volume
from nova_lite.conf import wsgi

CONF = cfg.ConfigOpts()

MODULES = (base, api, wsgi, database, rpc, conductor, compute, libvirt,
           volume, recovery, quota)


def register_opts(conf):
    """Register every nova_lite option group on ``conf``."""
    for module in MODULES:
        module.register_opts(conf)
