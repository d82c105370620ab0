"""The block-storage services and hosts, under Cinder's names.

nova_lite has no volume process and no scheduler process: ``volume/api.py``
runs in whatever process calls it, and a new volume's backend is chosen in
that call (``drivers.choose_backend``). What does run, heartbeat and open
the backends at start (``services._check_volume_backends``) is the
conductor. So ``/v3/os-services`` and ``/v3/os-hosts`` show, for every
``nova-lite-conductor`` service row (host ``H``):

* ``cinder-scheduler`` on host ``H``: the backend choice that conductor's
  deployment makes;
* ``cinder-volume`` on host ``H@<backend>`` for every backend of
  ``[volume] enabled_backends`` (of the process answering).

Their ``state`` and ``updated_at`` are the conductor's heartbeat; their
status (enabled or disabled, and why) is the administrator's, kept in a
status row of the ``services`` table (``Service.set_status``). A
``cinder-volume`` backend whose every ``H@<backend>`` service is disabled
gets no new volumes; disabling ``cinder-scheduler`` is recorded only.
"""

import collections

import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import service as service_obj
from nova_lite.volume import drivers

VOLUME_BINARY = service_obj.VOLUME_BINARY
SCHEDULER_BINARY = service_obj.SCHEDULER_BINARY
DEFAULT_ZONE = 'nova'

VolumeService = collections.namedtuple('VolumeService', [
    'binary', 'host', 'backend', 'zone', 'disabled', 'disabled_reason',
    'up', 'updated_at'])


def backend_host(host, backend):
    """Cinder's name of a backend's volume service: ``host@backend``."""
    return '%s@%s' % (host, backend)


def host_matches(service_host, wanted):
    """Cinder's host filter: ``wanted`` itself, or any backend or pool
    under it (``H`` matches ``H@b`` and ``H@b#p``; ``H@b`` matches
    ``H@b#p``)."""
    if service_host == wanted:
        return True
    if '#' not in wanted and service_host.startswith(wanted + '#'):
        return True
    return ('@' not in wanted and '#' not in wanted and
            service_host.startswith(wanted + '@'))


def derive(conductors, backends, statuses, down_time, shared_hosts=None):
    """The block-storage services of ``conductors`` (Service objects of
    ``nova-lite-conductor``) and the backend names ``backends``.

    ``statuses``: ``{(host, binary): (disabled, disabled_reason)}`` as
    recorded; a service without one is enabled. ``shared_hosts``:
    ``{backend: backend_host}`` for the backends with a ``backend_host``
    (Cinder's active-active name): each of those is one ``cinder-volume``
    service, ``backend_host@backend``, up while any conductor is, the
    name its volumes' ``os-vol-host-attr:host`` starts with.
    """
    shared_hosts = shared_hosts or {}
    result = []
    for conductor in conductors:
        up = conductor.is_up(down_time)
        updated_at = conductor.last_seen_up or conductor.updated_at
        names = [(SCHEDULER_BINARY, conductor.host, None)] + [
            (VOLUME_BINARY, backend_host(conductor.host, b), b)
            for b in backends if b not in shared_hosts]
        for binary, host, backend in names:
            disabled, reason = statuses.get((host, binary), (False, None))
            result.append(VolumeService(
                binary, host, backend, DEFAULT_ZONE, disabled, reason, up,
                updated_at))
    if conductors:
        up = any(c.is_up(down_time) for c in conductors)
        updated_at = max(c.last_seen_up or c.updated_at for c in conductors)
        for b in backends:
            if b in shared_hosts:
                host = backend_host(shared_hosts[b], b)
                disabled, reason = statuses.get((host, VOLUME_BINARY),
                                                (False, None))
                result.append(VolumeService(
                    VOLUME_BINARY, host, b, DEFAULT_ZONE, disabled, reason,
                    up, updated_at))
    return result


def disabled_backends(services):
    """Backends all of whose ``cinder-volume`` services are disabled."""
    enabled, seen = set(), set()
    for svc in services:
        if svc.binary == VOLUME_BINARY:
            seen.add(svc.backend)
            if not svc.disabled:
                enabled.add(svc.backend)
    return seen - enabled


def _statuses(ctxt):
    rows = []
    for binary in service_obj.BLOCK_STORAGE_BINARIES:
        rows.extend(service_obj.Service.list(ctxt, binary))
    return {(r.host, r.binary): (r.disabled, r.disabled_reason)
            for r in rows}


def get_all(ctxt, conf, host=None, binary=None):
    """The block-storage services, optionally only those on ``host``
    (Cinder's match, see ``host_matches``) and of ``binary``."""
    backends = drivers.get_backends(conf)
    shared = {name: driver.backend_conf.backend_host
              for name, driver in backends.items()
              if driver.backend_conf.backend_host}
    services = derive(
        service_obj.Service.list(ctxt, service_obj.CONDUCTOR_BINARY),
        list(backends), _statuses(ctxt), conf.service_down_time,
        shared_hosts=shared)
    return [s for s in services
            if (host is None or host_matches(s.host, host)) and
            (binary is None or s.binary == binary)]


def set_status(ctxt, conf, host, binary, disabled, reason=None):
    """Enable or disable the service ``binary`` on ``host`` (exact
    names). Unknown host: HostNotFound; unknown binary on a known host:
    ServiceNotFound (both 404, as Cinder)."""
    services = [s for s in get_all(ctxt, conf) if s.host == host]
    if not services:
        raise exception.HostNotFound(host=host)
    if binary not in [s.binary for s in services]:
        raise exception.ServiceNotFound(service_id=binary)
    service_obj.Service.set_status(ctxt, host, binary, disabled,
                                   reason if disabled else None)
    return [s for s in get_all(ctxt, conf, host=host, binary=binary)
            if s.host == host][0]


def unschedulable_backends(ctxt, conf):
    """Backends that must get no new volume: every one of their
    ``cinder-volume`` services is disabled."""
    if not any(r.disabled for r in
               service_obj.Service.list(ctxt, VOLUME_BINARY)):
        return set()   # the common case: one query
    return disabled_backends(get_all(ctxt, conf, binary=VOLUME_BINARY))


@db_api.context_manager.reader
def _usage_by_project(ctxt, backend):
    volumes = models.Volume.__table__
    return ctxt.session.execute(
        sa.select(volumes.c.project_id,
                  sa.func.count().label('volumes'),
                  sa.func.coalesce(sa.func.sum(volumes.c.size),
                                   0).label('gigabytes'))
        .where(volumes.c.host == backend, volumes.c.deleted.is_(False))
        .group_by(volumes.c.project_id)
        .order_by(volumes.c.project_id)).all()


def host_usage(ctxt, conf, host):
    """``[(project, volume count, gigabytes)]`` of the volume service
    ``host`` (``H@backend``): first ``(total)``, then each project with
    volumes there. Not a volume service: HostNotFound (404)."""
    services = [s for s in get_all(ctxt, conf, binary=VOLUME_BINARY)
                if s.host == host]
    if not services:
        raise exception.HostNotFound(host=host)
    rows = _usage_by_project(ctxt, services[0].backend)
    total = ('(total)', sum(r.volumes for r in rows),
             sum(r.gigabytes for r in rows))
    return [total] + [(r.project_id, r.volumes, r.gigabytes) for r in rows]


def check_known_host(ctxt, conf, host):
    """Cinder's freeze/thaw answer for a host without a volume service:
    400."""
    if not [s for s in get_all(ctxt, conf, binary=VOLUME_BINARY)
            if host_matches(s.host, host)]:
        raise exception.InvalidInput(
            reason=_('No service found with host=%s') % host)


def backend_state(conf, backend):
    """Cinder's ``backend_state`` (3.49): ``down`` if the backend cannot
    report its capabilities (or reports itself down), else ``up``."""
    try:
        caps = drivers.get_backends(conf)[backend].reported_capabilities(
            conf.volume.capabilities_cache_time)
    except Exception:
        return 'down'
    return 'down' if caps.get('backend_state') == 'down' else 'up'
