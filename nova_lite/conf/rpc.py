"""Messaging options: transport default, RPC timeouts and version caps."""

import importlib

from oslo_config import cfg
from oslo_messaging import opts as msg_opts

# (module, option list, group) of the groups oslo.messaging reads but does
# not list publicly (see register_opts).
_UNLISTED_GROUPS = [
    ('oslo_messaging._metrics.client', 'oslo_messaging_metrics',
     'oslo_messaging_metrics'),
    ('oslo_messaging._tracing.client', 'oslo_messaging_tracing',
     'oslo_messaging_tracing'),
]

# The embedded default: nova_lite's in-process transport
# (nova_lite.transport.inproc), registered as the oslo.messaging driver
# ``inproc``. Production uses rabbit://.
DEFAULT_TRANSPORT_URL = 'inproc://'
# The exchange (RabbitMQ) all nova_lite services share.
CONTROL_EXCHANGE = 'nova_lite'

ALL_OPTS = [
    cfg.IntOpt(
        'long_rpc_timeout',
        default=1800,
        min=1,
        help="""
Timeout, in seconds, of RPC calls that may take long: the synchronous volume
attach (microversions below 2.101) waits for the conductor, which waits for
the compute host to reserve a device name.

Only a peer that works on the call is waited for that long: its RPC server
sends a heartbeat every ``rpc_response_timeout / 2`` seconds while it does,
and a call that gets neither an answer nor a heartbeat for
``rpc_response_timeout`` seconds fails (oslo.messaging's
``call_monitor_timeout``). A stopped or partitioned host fails a
synchronous attach in about ``rpc_response_timeout`` seconds (409).

Related options:

* ``rpc_response_timeout``: the timeout of every other RPC call, and how
  long a long call waits for a silent peer.
"""),
    cfg.IntOpt(
        'rpc_send_retries',
        default=2,
        min=-1,
        help="""
How many times an API request reconnects to an unreachable message broker
to send its message (an attach, a detach...) before it gives up: the request
then undoes what it wrote and answers 503 with ``Retry-After``. With
oslo.messaging's default reconnection timing (``[oslo_messaging_rabbit]
rabbit_retry_interval``, ``rabbit_retry_backoff``, ``kombu_reconnect_delay``)
2 retries give up after about 6 seconds. -1: wait for the broker as long as
it takes (the request waits too).

The conductor and the compute hosts always wait for the broker: the work
they send on was accepted already.
"""),
]

upgrade_group = cfg.OptGroup(
    'upgrade_levels',
    title='RPC version caps for rolling upgrades',
    help="""
Cap the RPC API version a service sends, so that new services can talk to
older ones during a rolling upgrade. Leave unset outside an upgrade.
""")

UPGRADE_OPTS = [
    cfg.StrOpt('compute',
               help='Highest compute RPC API version to send, e.g. ``1.0``.'),
    cfg.StrOpt('conductor',
               help='Highest conductor RPC API version to send.'),
    cfg.StrOpt('volume',
               help='Highest volume service (``nova-lite-volume``) RPC API '
                    'version to send: set it on the API nodes, conductors '
                    'and compute hosts while the storage nodes run the '
                    'older release.'),
]


def register_opts(conf):
    conf.register_opts(ALL_OPTS)
    conf.register_group(upgrade_group)
    conf.register_opts(UPGRADE_OPTS, group=upgrade_group)
    # [DEFAULT] transport_url, rpc_response_timeout and the
    # [oslo_messaging_*] groups belong to oslo.messaging; registering them
    # here lets nova_lite set its default and read them before a transport
    # exists.
    for group, opts in msg_opts.list_opts():
        conf.register_opts(opts, group=group)
    # oslo.messaging also reads [oslo_messaging_metrics] and
    # [oslo_messaging_tracing] on every call, but lists them in no public
    # opts function: it registers them on the global cfg.CONF only, and
    # nova_lite's ConfigOpts are its own. The one public way to register
    # them elsewhere is its test ConfFixture (which needs the test-only
    # package fixtures), so their option lists are read from the modules
    # that define them, like the in-process transport's driver bases: the
    # second place nova_lite reaches into oslo.messaging, inside the range
    # requirements.txt declares (tests/unit/test_private_imports.py).
    for module, attr, group in _UNLISTED_GROUPS:
        try:
            opts = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue  # not in this oslo.messaging release
        conf.register_opts(opts, group=group)
    conf.set_default('transport_url', DEFAULT_TRANSPORT_URL)
    conf.set_default('control_exchange', CONTROL_EXCHANGE)


def list_opts():
    return {'DEFAULT': ALL_OPTS, upgrade_group: UPGRADE_OPTS}
