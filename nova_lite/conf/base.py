"""[DEFAULT] options shared by every nova_lite service."""

import os
import socket

from oslo_config import cfg

ALL_OPTS = [
    cfg.StrOpt(
        'state_path',
        default='./state',
        help="""
Top-level directory for the state nova_lite keeps on local disk.

The embedded default (``nova-lite-all``) keeps its SQLite database and the
sparse files of the ``file`` volume backend here. A relative path is taken
relative to the working directory the service was started from.

Related options:

* ``[database] connection``: defaults to a SQLite file under this directory.
"""),
    cfg.HostDomainOpt(
        'host',
        default=socket.gethostname(),
        sample_default='<current_hostname>',
        help="""
Name of this node, as it appears in the ``services`` table and as the RPC
server name of ``nova-lite-compute``.

Every compute service must have a unique name; servers are scheduled onto
and addressed by it. ``nova-lite-compute --host NAME`` overrides it on the
command line so that several compute services can share one machine.
"""),
    cfg.IntOpt(
        'report_interval',
        default=10,
        min=1,
        help="""
Seconds between two heartbeats a service writes to the ``services`` table.

Related options:

* ``service_down_time``: must be larger than this value.
"""),
    cfg.IntOpt(
        'service_down_time',
        default=60,
        min=1,
        help="""
Maximum seconds since the last heartbeat for a service to be considered up,
not counting the times in which the database took no write from any nova_lite
process (a stalled database does not make services down).

The API refuses operations that need a compute host (409) and the conductor
schedules no new server onto a host that has not reported within this time.

Related options:

* ``report_interval``: should be well below this value.
"""),
]


def state_path(conf, *parts):
    """Absolute path under ``[DEFAULT] state_path``."""
    return os.path.join(os.path.abspath(conf.state_path), *parts)


def register_opts(conf):
    conf.register_opts(ALL_OPTS)


def list_opts():
    return {'DEFAULT': ALL_OPTS}
