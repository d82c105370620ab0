"""Run one RPC service until SIGINT/SIGTERM (shared by the worker
commands)."""

import argparse
import sys

from oslo_config import cfg
from oslo_log import log as logging

from nova_lite import config
from nova_lite.db import api as db_api
from nova_lite import objects
from nova_lite import rpc
from nova_lite import stop_signals

LOG = logging.getLogger(__name__)


def _split_host(argv):
    """``--host NAME`` overrides ``[DEFAULT] host`` (which oslo.config
    does not take on the command line), so several computes can share a
    machine and a config file."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument('--host')
    known, rest = parser.parse_known_args(argv)
    return known.host, rest


def run(factory, argv=None):
    host, argv = _split_host(sys.argv[1:] if argv is None else argv)
    conf = cfg.ConfigOpts()
    config.parse_args(conf, argv)
    if host:
        conf.set_override('host', host)
    objects.register_all()
    db_api.configure(conf)
    svc = factory(conf)
    signals = stop_signals.StopSignals()
    svc.start()
    try:
        signum = signals.wait()
        LOG.info('Signal %s received, stopping', signum)
    finally:
        svc.stop()
        svc.wait()
        rpc.cleanup(conf)
    return 0
