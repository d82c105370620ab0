"""oslo.policy enforcement.

Defaults are in code (``nova_lite.policies``); an operator's policy file
overrides them (``[oslo_policy] policy_file``). ``tox -e genpolicy`` writes the
sample. An enforcer is built per configuration by ``init(conf)``; the API
attaches it to each request's context.
"""

import threading

from oslo_config import cfg
from oslo_policy import policy as oslo_policy

from nova_lite import exception
from nova_lite import policies

_ENFORCER = None
_LOCK = threading.Lock()


def _make_enforcer(conf):
    enforcer = oslo_policy.Enforcer(conf)
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
