"""Block-storage drivers: the backends the volume service enables
(``[volume] enabled_backends``; the groups' options and how a backend is
named are ``nova_lite.volume.backends``).

A backend's ``volume_driver`` names one of ``DRIVERS``; when unset, the
backend name itself is taken as the driver name (so the default
``enabled_backends = file`` needs no group at all).
``register_backend_opts(conf)`` registers each enabled backend's group
with its driver's options; ``get_backends(conf)`` returns the drivers,
built once per ConfigOpts. Only the volume service loads them
(``volume_service.manager``; in ``nova-lite-all``, the one it runs
in-process).
"""

import threading
import weakref

from oslo_utils import importutils

from nova_lite import exception
from nova_lite.volume import backends as backend_conf

DRIVERS = {
    'fake': 'nova_lite.volume_service.drivers.fake.FakeDriver',
    'file': 'nova_lite.volume_service.drivers.file.FileDriver',
    'iscsi': 'nova_lite.volume_service.drivers.iscsi.ISCSIDriver',
    'rbd': 'nova_lite.volume_service.drivers.rbd.RBDDriver',
}

_LOCK = threading.Lock()
# id(conf) -> (weakref to conf, {backend name: driver})
_BACKENDS = {}


def _driver_name(conf, backend):
    return conf[backend].volume_driver or backend


def register_backend_opts(conf):
    """Register the group of every enabled backend on ``conf``
    (idempotent; call again after changing a group's ``volume_driver`` to
    register that driver's options)."""
    backend_conf.register_common_opts(conf)
    for backend in conf.volume.enabled_backends:
        name = _driver_name(conf, backend)
        if name in DRIVERS:
            conf.register_opts(_driver_class(name).OPTS, group=backend)


def _driver_class(name):
    if name not in DRIVERS:
        raise exception.NovaLiteException(
            message='Unknown volume_driver %r (known: %s)' % (
                name, ', '.join(sorted(DRIVERS))))
    return importutils.import_class(DRIVERS[name])


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


def sample_opts():
    """Options of the sample configuration: one group per driver, named
    like it (a valid backend group as it is)."""
    result = {}
    for name, path in sorted(DRIVERS.items()):
        result[name] = (backend_conf.COMMON_OPTS +
                        importutils.import_class(path).OPTS)
    return result
