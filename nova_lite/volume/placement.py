"""What block storage's service layer knows of the backends, with no
driver loaded: their names (``[volume] enabled_backends``) and the
capabilities their volume services report (``volume.rpcapi``
``get_capabilities``), as Cinder's scheduler reads the reports of its
volume services.

``capabilities(conf)`` asks the volume service of each enabled backend,
and keeps an answer ``[volume] capabilities_cache_time`` seconds (the
service keeps its driver's as long: a report is at most twice that
old); a backend whose service does not answer within ``[DEFAULT]
rpc_response_timeout`` is left out (nothing is placed there: a volume no
backend can take is ``error``, as Cinder's ``NoValidBackend``), and asked
again at the next placement.
"""

import threading
import time
import weakref

from oslo_log import log as logging

from nova_lite import context as nl_context
from nova_lite.volume import backends as backend_conf
from nova_lite.volume import rpcapi

LOG = logging.getLogger(__name__)

_LOCK = threading.Lock()
# id(conf) -> (weakref to conf, {backend: (monotonic time, caps)})
_CACHE = {}


def enabled(conf):
    """The names of the enabled backends, in the configured order."""
    return list(conf.volume.enabled_backends)


def _cache(conf):
    with _LOCK:
        entry = _CACHE.get(id(conf))
        if entry is None or entry[0]() is not conf:
            entry = (weakref.ref(conf), {})
            _CACHE[id(conf)] = entry
        return entry[1]


def capability(conf, backend, refresh=False, volume_api=None):
    """``backend``'s capabilities as its volume service last reported
    them (``refresh``: asked now), or None when its service does not
    answer."""
    max_age = 0 if refresh else conf.volume.capabilities_cache_time
    cache = _cache(conf)
    now = time.monotonic()
    cached = cache.get(backend)
    if cached is not None and max_age > 0 and now - cached[0] <= max_age:
        return cached[1]
    api = volume_api or rpcapi.VolumeAPI(conf)
    try:
        caps = api.get_capabilities(nl_context.get_admin_context(), backend,
                                    max_age)
    except Exception as e:
        LOG.warning('The volume service of backend %s did not report its '
                    'capabilities: %s', backend, e)
        cache.pop(backend, None)
        return None
    cache[backend] = (now, caps)
    return caps


def capabilities(conf, refresh=False, exclude=()):
    """``{backend name: capabilities}`` of the enabled backends whose
    volume services answer; those of ``exclude`` are not asked."""
    api = rpcapi.VolumeAPI(conf)
    result = {}
    for name in enabled(conf):
        if name in exclude:
            continue
        caps = capability(conf, name, refresh, volume_api=api)
        if caps is not None:
            result[name] = caps
    return result


def choose_backend(conf, extra_specs, multiattach, exclude=()):
    """The backend name for a new volume, or None if none fits;
    ``exclude``: backends that take no new volume (their services
    disabled or down: not asked)."""
    for name, caps in capabilities(conf, exclude=exclude).items():
        if backend_conf.fits(caps, extra_specs, multiattach):
            return name
    return None
