"""oslo.policy enforcement.

Defaults are in code (``nova_lite.policies``); an operator's policy file
overrides them (``[oslo_policy] policy_file``). ``tox -e genpolicy`` writes the
sample. An enforcer is built per configuration by ``init(conf)``; the API
attaches it to each request's context.

Cost
----
oslo.policy's ``Enforcer.enforce()`` looks for the policy file and
``policy.d`` in every configuration directory (``load_rules``: a dozen
``stat`` calls when there is no policy file) on every call. ``Enforcer``
below keeps oslo.policy's semantics and answers, and looks at the policy
files at most once every ``POLICY_FILE_CHECK_SECONDS``: a changed policy
file applies within a second instead of at the very next check. Every
question is answered by oslo.policy; nothing is remembered across
requests. (Within one request, a view that asks the same question for
every item of a list asks it once; see ``nova_lite.volume.views``.)
"""

import threading
import time

from oslo_config import cfg
from oslo_policy import policy as oslo_policy

from nova_lite import exception
from nova_lite import policies

_ENFORCER = None
_LOCK = threading.Lock()

# Seconds between two looks for a changed policy file (see above).
POLICY_FILE_CHECK_SECONDS = 1.0


class Enforcer(oslo_policy.Enforcer):
    """oslo.policy's Enforcer with the policy file look-ups throttled (see
    the module docstring)."""

    def __init__(self, conf, *args, **kwargs):
        self._next_file_check = 0.0
        super().__init__(conf, *args, **kwargs)

    def load_rules(self, force_reload=False):
        now = time.monotonic()
        if (not force_reload and self.rules and
                now < self._next_file_check):
            return
        self._next_file_check = now + POLICY_FILE_CHECK_SECONDS
        super().load_rules(force_reload)


def _make_enforcer(conf):
    enforcer = Enforcer(conf)
    enforcer.register_defaults(policies.list_rules())
    enforcer.load_rules()
    return enforcer


def init(conf):
    """Build (once per process) the enforcer for ``conf``."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is None or _ENFORCER.conf is not conf:
            _ENFORCER = _make_enforcer(conf)
        return _ENFORCER


def reset():
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is not None:
            _ENFORCER.clear()
        _ENFORCER = None


def get_enforcer():
    """Entry point for ``oslopolicy-*`` tools (oslo.policy.enforcer)."""
    conf = cfg.ConfigOpts()
    conf([], project='nova_lite')
    return _make_enforcer(conf)


def authorize(context, action, target, fatal=True):
    """Check ``action`` for ``context`` on ``target``.

    Returns True/False when not ``fatal``; raises ``PolicyNotAuthorized``
    (403) otherwise. An unregistered rule is a programming error.
    """
    enforcer = getattr(context, 'enforcer', None) or _ENFORCER
    if enforcer is None:
        raise RuntimeError('policy.init(conf) was not called')
    try:
        return enforcer.authorize(action, target, context, do_raise=fatal,
                                  exc=exception.PolicyNotAuthorized,
                                  action=action)
    except oslo_policy.PolicyNotRegistered:
        raise
    except oslo_policy.InvalidScope:
        if fatal:
            raise exception.PolicyNotAuthorized(action=action)
        return False
