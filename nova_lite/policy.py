"""oslo.policy enforcement.

Defaults are in code (``nova_lite.policies``); an operator's policy file
overrides them (``[oslo_policy] policy_file``). ``tox -e genpolicy`` writes the
sample. An enforcer is built per configuration by ``init(conf)``; the API
attaches it to each request's context.

Cost
----
oslo.policy's ``Enforcer.enforce()`` is slow for what it does (about 150 us a
check on this project's machine kind, and an attach and detach asks some 25
questions): on every call it looks for the policy file and ``policy.d`` in
every configuration directory (``load_rules``: a dozen ``stat`` calls when
there is no policy file), and it runs ``inspect.getfullargspec`` on every
node of the rule's check tree. ``Enforcer`` below keeps oslo.policy's
semantics and takes both off the request path:

* the policy files are looked at (``load_rules``) at most once every
  ``POLICY_FILE_CHECK_SECONDS``: a changed policy file applies within a
  second instead of at the very next check;
* an answer is remembered for its (rule, target, credentials) when the
  rule's check tree is made only of oslo.policy's own pure checks (roles,
  ``field:%(value)s`` comparisons, other rules, and/or/not, ``@``, ``!``),
  whose answer depends on nothing else; answers of rules that use
  ``http:`` or other extension checks are not. A denial is remembered
  when it was returned (``fatal=False``, as views ask whether to show an
  attribute); a remembered denial asked with ``fatal=True`` raises what
  ``enforce()`` raises (``exc(*args, **kwargs)``); a denial that was raised
  is not remembered. Every change of the rules (a reload that changed
  something, ``set_rules``, ``clear``, a registered default) forgets
  everything remembered; a look at unchanged files keeps it. A remembered
  answer costs about 2 us.
"""

import operator
import threading
import time

from oslo_config import cfg
from oslo_context import context as oslo_context
from oslo_policy import _checks
from oslo_policy import policy as oslo_policy

from nova_lite import exception
from nova_lite import policies

_ENFORCER = None
_LOCK = threading.Lock()

# Seconds between two looks for a changed policy file (see above).
POLICY_FILE_CHECK_SECONDS = 1.0

# Remembered answers beyond this many are all forgotten (a bound, not an
# LRU: the working set is the rules times the projects and roles in use).
_MAX_REMEMBERED = 10000

_UNKNOWN = object()

# oslo.policy check classes whose answer depends only on the target and the
# credentials (RuleCheck: on the rule it names, checked the same way).
_PURE_CHECKS = frozenset([
    _checks.TrueCheck, _checks.FalseCheck, _checks.RoleCheck,
    _checks.GenericCheck, _checks.RuleCheck, _checks.AndCheck,
    _checks.OrCheck, _checks.NotCheck,
])


# What oslo.context's RequestContext.to_policy_values() holds, in order;
# ``_credentials_key`` checks the list against it once per context class.
_POLICY_ATTRS = (
    'user_id', 'user_domain_id', 'system_scope', 'domain_id', 'project_id',
    'project_domain_id', 'roles', 'is_admin_project', 'service_user_id',
    'service_user_domain_id', 'service_project_id',
    'service_project_domain_id', 'service_roles',
)
_read_policy_attrs = operator.attrgetter(*_POLICY_ATTRS)
_ROLES = _POLICY_ATTRS.index('roles')
_SERVICE_ROLES = _POLICY_ATTRS.index('service_roles')
# Context class -> whether its policy values are exactly _POLICY_ATTRS.
_READS_ATTRS = {}
# Marks a key read from attributes (never equal to a frozen mapping's).
_FROM_ATTRS = object()


def _reads_attrs(cls, creds):
    known = _READS_ATTRS.get(cls)
    if known is None:
        known = (getattr(cls, 'to_policy_values', None) is
                 oslo_context.RequestContext.to_policy_values and
                 tuple(creds.to_policy_values()) == _POLICY_ATTRS)
        _READS_ATTRS[cls] = known
    return known


def _policy_values(creds):
    """What oslo.policy checks ``creds`` (a context or a mapping) with."""
    return (creds.to_policy_values()
            if hasattr(creds, 'to_policy_values') else creds)


def _credentials_key(creds):
    """A hashable image of the credentials ``authorize`` is given: equal
    for two credentials exactly when their policy values are equal."""
    if _reads_attrs(type(creds), creds):
        values = list(_read_policy_attrs(creds))
        values[_ROLES] = tuple(values[_ROLES])
        values[_SERVICE_ROLES] = tuple(values[_SERVICE_ROLES])
        values.append(_FROM_ATTRS)
        return tuple(values)
    return _freeze(_policy_values(creds))


def _freeze(mapping):
    """A hashable image of a flat mapping (lists become tuples); raises
    TypeError when a value cannot be hashed."""
    items = []
    for key, value in mapping.items():
        if isinstance(value, list):
            value = tuple(value)
        hash(value)
        items.append((key, value))
    items.sort()
    return tuple(items)


class Enforcer(oslo_policy.Enforcer):
    """oslo.policy's Enforcer with the file look-ups throttled and allowed
    answers of pure rules remembered (see the module docstring)."""

    def __init__(self, conf, *args, **kwargs):
        self._remembered = {}
        self._pure = {}
        self._generation = 0
        self._next_file_check = 0.0
        super().__init__(conf, *args, **kwargs)

    def _forget(self):
        self._generation += 1
        self._remembered = {}
        self._pure = {}

    def load_rules(self, force_reload=False):
        now = time.monotonic()
        if (not force_reload and self.rules and
                now < self._next_file_check):
            return
        self._next_file_check = now + POLICY_FILE_CHECK_SECONDS
        before = self._rules_image()
        super().load_rules(force_reload)
        # A reload may have changed rules in place (defaults, deprecated
        # rules, a new Rules object), not only through set_rules(), which
        # forgets by itself. A look that changed nothing keeps what is
        # remembered.
        if self._rules_image() != before:
            self._forget()

    def _rules_image(self):
        """Which rules object, and which check object under each name: a
        reload that changes anything replaces at least one of them."""
        rules = self.rules
        return id(rules), {name: id(check) for name, check in rules.items()}

    def set_rules(self, *args, **kwargs):
        self._forget()
        super().set_rules(*args, **kwargs)

    def clear(self):
        self._forget()
        super().clear()

    def register_default(self, default):
        self._forget()
        super().register_default(default)

    def _is_pure(self, check, seen=()):
        if type(check) not in _PURE_CHECKS:
            return False
        if isinstance(check, _checks.RuleCheck):
            if check.match in seen:
                return False
            rule = self.rules.get(check.match)
            return rule is None or self._is_pure(
                rule, seen + (check.match,))
        if isinstance(check, (_checks.AndCheck, _checks.OrCheck)):
            return all(self._is_pure(c, seen) for c in check.rules)
        if isinstance(check, _checks.NotCheck):
            return self._is_pure(check.rule, seen)
        return True

    def _rule_is_pure(self, name):
        pure = self._pure.get(name)
        if pure is None:
            rule = self.rules.get(name)
            pure = rule is not None and self._is_pure(rule)
            self._pure[name] = pure
        return pure

    def authorize(self, rule, target, creds, do_raise=False, exc=None,
                  *args, **kwargs):
        self.load_rules()
        try:
            key = (rule, _freeze(target), _credentials_key(creds))
        except (TypeError, AttributeError):
            key = None  # not flat or not hashable: not remembered
        if key is not None:
            answer = self._remembered.get(key, _UNKNOWN)
            if answer is not _UNKNOWN:
                if not answer and do_raise:
                    # What enforce() raises for a denial.
                    if exc:
                        raise exc(*args, **kwargs)
                    raise oslo_policy.PolicyNotAuthorized(
                        rule, target, dict(_policy_values(creds)))
                return answer
        generation = self._generation
        # An answer that was raised (a denial with do_raise) is not
        # remembered: the next one goes through oslo.policy again.
        answer = super().authorize(rule, target, creds, do_raise, exc,
                                   *args, **kwargs)
        if (key is not None and generation == self._generation and
                self._rule_is_pure(rule)):
            if len(self._remembered) >= _MAX_REMEMBERED:
                self._remembered = {}
            self._remembered[key] = answer
        return answer


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
