"""The block-storage services and hosts, under Cinder's names.

nova_lite has no scheduler process: a new volume's backend is chosen in
the block-storage call that makes it (``placement.choose_backend``). The
backends are driven by the volume services (``nova-lite-volume``,
``volume_service.service``), each of which registers and beats one
``cinder-volume`` row per backend it enables, host ``H@<backend>``. So
``/v3/os-services`` and ``/v3/os-hosts`` show:

* ``cinder-volume`` on host ``H@<backend>``: those rows, their ``state``
  and ``updated_at`` the volume service's heartbeat;
* ``cinder-scheduler`` on host ``H`` for every ``nova-lite-conductor``
  service row (host ``H``): the backend choice that deployment makes,
  its ``state`` the conductor's heartbeat.

Their status (enabled or disabled, and why) is the administrator's, kept
in the same row (``Service.set_status``: a status row of its own for a
service that never ran). A backend none of whose ``H@<backend>``
services is up and enabled gets no new volumes (``unschedulable_backends``:
placement does not even ask it); disabling ``cinder-scheduler`` is
recorded only.
"""

import collections

import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import service as service_obj
from nova_lite.volume import placement
from nova_lite.volume import rpcapi as volume_rpcapi

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


def volume_services(rows, down_time):
    """The ``cinder-volume`` services of the volume services' rows
    (``rows``: Service objects of ``cinder-volume``; the status rows of
    services that never ran, which no volume service registered, are left
    out)."""
    return [VolumeService(
        VOLUME_BINARY, r.host, r.host.partition('@')[2], DEFAULT_ZONE,
        bool(r.disabled), r.disabled_reason, r.is_up(down_time),
        r.last_seen_up or r.updated_at)
        for r in rows if r.topic == volume_rpcapi.TOPIC]


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
    services = derive(
        service_obj.Service.list(ctxt, service_obj.CONDUCTOR_BINARY),
        [], _statuses(ctxt), conf.service_down_time)
    services += volume_services(
        service_obj.Service.list(ctxt, VOLUME_BINARY),
        conf.service_down_time)
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
    """Enabled backends that must get no new volume: none of their
    ``cinder-volume`` services is up and enabled (every one disabled, or
    down: no volume service runs it, as Cinder's scheduler leaves out a
    backend whose service is down). One query."""
    services = volume_services(
        service_obj.Service.list(ctxt, VOLUME_BINARY),
        conf.service_down_time)
    usable = {s.backend for s in services if s.up and not s.disabled}
    return set(placement.enabled(conf)) - usable


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
    caps = placement.capability(conf, backend)
    if caps is None:
        return 'down'
    return 'down' if caps.get('backend_state') == 'down' else 'up'
