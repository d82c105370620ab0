"""Block-storage backends, chosen by ``[volume] enabled_backends``.

Each name in ``enabled_backends`` is a backend with a config group of the
same name, as Cinder operators know it::

    [volume]
    enabled_backends = fast, slow

    [fast]
    volume_driver = file
    volume_backend_name = gold

    [slow]
    volume_driver = fake
    connect_delay = 2.0

``volume_driver`` names one of ``DRIVERS``; when unset, the backend name
itself is taken as the driver name (so the default ``enabled_backends =
file`` needs no group at all). The groups are registered on first use by
``register_backend_opts(conf)`` (their names come from the configuration,
so they cannot be registered earlier); ``get_backends(conf)`` returns the
drivers, built once per ConfigOpts.

Each backend is one pool, named like the backend (a driver may name it
otherwise with ``pool_name``). A volume's ``host`` column holds the name of
its backend; Cinder's ``host@backend#pool`` form, which clients see in
``os-vol-host-attr:host`` and as pool names, is composed from it
(``volume_host``): ``host`` is the backend's ``backend_host`` or
``[DEFAULT] host``. Where a client names a backend, both forms are accepted
(``backend_of``).

A new volume goes to the first enabled backend whose
``volume_backend_name`` matches its type's ``volume_backend_name`` extra
spec (or ``capabilities:volume_backend_name``, as Cinder's capabilities
filter reads it; any backend when the type has none) and, for a
multiattach type,
that reports the ``multiattach`` capability. Placement reads the
capabilities each backend last reported (``capabilities(conf)``), asked
again once older than ``[volume] capabilities_cache_time`` seconds, as
Cinder's scheduler reads the periodic reports of its volume services:
a request that no backend can serve is refused at once.
"""

import threading
import weakref

from oslo_config import cfg
from oslo_utils import importutils

from nova_lite import exception

DRIVERS = {
    'fake': 'nova_lite.volume.drivers.fake.FakeDriver',
    'file': 'nova_lite.volume.drivers.file.FileDriver',
    'iscsi': 'nova_lite.volume.drivers.iscsi.ISCSIDriver',
    'rbd': 'nova_lite.volume.drivers.rbd.RBDDriver',
}

COMMON_OPTS = [
    cfg.StrOpt(
        'volume_driver',
        help="""
The driver of this backend: ``file`` (each volume a sparse file),
``iscsi`` (each volume a sparse file exported by tgtd over iSCSI),
``rbd`` (each volume an RBD image in a Ceph pool) or ``fake`` (no
storage; for tests and benchmarks). Unset means the driver
named like the backend group itself.
"""),
    cfg.StrOpt(
        'volume_backend_name',
        help="""
The name volume types use to ask for this backend (their
``volume_backend_name`` extra spec). Unset means the backend group's name.
Several backends may share one name.
"""),
    cfg.HostDomainOpt(
        'backend_host',
        help="""
The host part of this backend's ``host@backend#pool`` name, which
administrators see as a volume's ``os-vol-host-attr:host`` and as the
backend's pool name (Cinder's form). Unset means ``[DEFAULT] host``. Set
it to one value on every node that serves the block-storage API (as
Cinder's ``backend_host`` of active-active volume services) so that every
node names the backend's volumes alike.
"""),
]

_LOCK = threading.Lock()
# id(conf) -> (weakref to conf, {backend name: driver})
_BACKENDS = {}


def _driver_name(conf, backend):
    return conf[backend].volume_driver or backend


def register_backend_opts(conf):
    """Register the group of every enabled backend on ``conf``
    (idempotent; call again after changing a group's ``volume_driver`` to
    register that driver's options)."""
    for backend in conf.volume.enabled_backends:
        conf.register_opts(COMMON_OPTS, group=backend)
        name = _driver_name(conf, backend)
        if name in DRIVERS:
            conf.register_opts(_driver_class(name).OPTS, group=backend)


def _driver_class(name):
    if name not in DRIVERS:
        raise exception.NovaLiteException(
            message='Unknown volume_driver %r (known: %s)' % (
                name, ', '.join(sorted(DRIVERS))))
    return importutils.import_class(DRIVERS[name])


def volume_dict(volume):
    """What a driver is given about a volume (a row of ``volumes``)."""
    return {
        'id': volume.id,
        'name_id': volume.name_id or volume.id,
        'size': volume.size,
        'host': volume.host,
        'provider_location': volume.provider_location,
        'provider_auth': volume.provider_auth,
        'multiattach': bool(volume.multiattach),
        'encrypted': bool(volume.encrypted),
    }


def get_backends(conf):
    """``{backend name: driver}`` of ``conf``'s enabled backends, in the
    configured order."""
    key = id(conf)
    with _LOCK:
        entry = _BACKENDS.get(key)
        if entry is not None and entry[0]() is conf:
            return entry[1]
        register_backend_opts(conf)
        backends = {}
        for backend in conf.volume.enabled_backends:
            driver_cls = _driver_class(_driver_name(conf, backend))
            backends[backend] = driver_cls(conf, backend)
        for stale in [k for k, (ref, _b) in _BACKENDS.items()
                      if ref() is None]:
            del _BACKENDS[stale]
        _BACKENDS[key] = (weakref.ref(conf), backends)
        return backends


def get_driver(conf, backend):
    """The driver of ``backend`` (a volume's ``host``)."""
    driver = get_backends(conf).get(backend)
    if driver is None:
        raise exception.VolumeBackendAPIException(
            data='the backend %s of this volume is not enabled on this '
                 'service ([volume] enabled_backends)' % backend)
    return driver


def backend_of(hostname):
    """The backend name in a ``host@backend#pool`` name (Cinder's form,
    as ``os-vol-host-attr:host`` shows it), or ``hostname`` itself when it
    is a plain backend name."""
    return hostname.partition('#')[0].rpartition('@')[2]


def volume_host(conf, backend):
    """Cinder's ``host@backend#pool`` of ``backend`` (a volume's ``host``
    column): the backend's ``backend_host`` (else ``[DEFAULT] host``), the
    backend, its pool. None for None (a volume no backend took). A backend
    no longer enabled here is named with ``[DEFAULT] host`` and a pool
    named like it."""
    if backend is None:
        return None
    if backend not in conf.volume.enabled_backends:
        return '%s@%s#%s' % (conf.host, backend, backend)
    try:
        host = conf[backend].backend_host
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        register_backend_opts(conf)
        host = conf[backend].backend_host
    # Read from the configuration, no driver loaded (the API processes
    # load none): a backend's pool is named like it
    # (``VolumeDriver.host_name``).
    return '%s@%s#%s' % (host or conf.host, backend, backend)


def capabilities(conf, refresh=False):
    """``{backend name: capabilities}`` of the enabled backends, as last
    reported (see ``VolumeDriver.reported_capabilities``); ``refresh``
    asks every backend again."""
    max_age = 0 if refresh else conf.volume.capabilities_cache_time
    return {name: driver.reported_capabilities(max_age)
            for name, driver in get_backends(conf).items()}


def fits(caps, extra_specs, multiattach):
    """Whether a backend with capabilities ``caps`` can host a volume of a
    type with ``extra_specs`` (multiattach or not)."""
    specs = extra_specs or {}
    # Cinder's capabilities filter reads the key with or without its
    # "capabilities:" scope.
    wanted = (specs.get('volume_backend_name') or
              specs.get('capabilities:volume_backend_name'))
    if wanted and caps.get('volume_backend_name') != wanted:
        return False
    if multiattach and not caps.get('multiattach'):
        return False
    return True


def choose_backend(conf, extra_specs, multiattach, exclude=()):
    """The backend name for a new volume, or None if none fits;
    ``exclude``: backends that take no new volume (disabled)."""
    for name, caps in capabilities(conf).items():
        if name not in exclude and fits(caps, extra_specs, multiattach):
            return name
    return None


def sample_opts():
    """Options of the sample configuration: one group per driver, named
    like it (a valid backend group as it is)."""
    result = {}
    for name, path in sorted(DRIVERS.items()):
        result[name] = COMMON_OPTS + importutils.import_class(path).OPTS
    return result
