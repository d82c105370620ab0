"""Silent or fenced: what a compute host that does not answer allows.

A host whose service misses its heartbeats for ``service_down_time`` is
``down``: silent, which proves nothing (a paused process, a stalled
database, a partition: its guests may still run and write their disks).
Work on it waits: a detach answers 409 as Nova's does, a delete keeps the
server's volumes until the host answers, and the conductor leaves the
host's work alone.

A host an administrator forced down (``PUT /v2.1/os-services/{id}`` with
``forced_down: true``, microversion 2.53; what Nova asks before an
evacuate) is *fenced*: the administrator vouches that its guests no
longer run, or will be stopped before they touch a disk again. Then, and
only then, a detach and a delete of its servers are done without it, the
conductor settles its work in flight at once, and the host itself, when
it comes back, removes what it no longer owns before it takes work
(``compute.host.recovery.reap``): a guest that does not let go of such a
disk is stopped. Each volume freed without the host is recorded as a
stale disk of the host (``objects.stale_disk``) until the host saw its
guest without it; a host with stale disks cannot be let go
(``forced_down: false`` answers 409 naming the servers,
``check_let_go``).

A host with no service row at all (it never started) is ``down``: nothing
says it is stopped.
"""

from nova_lite import exception
from nova_lite.objects import service as service_obj
from nova_lite.objects import stale_disk

UP = 'up'
DOWN = 'down'
FENCED = 'fenced'


def _service(context, host):
    try:
        return service_obj.Service.get_by_host_and_binary(
            context, host, service_obj.COMPUTE_BINARY)
    except exception.ServiceNotFound:
        return None


def host_state(context, conf, host):
    """``UP``, ``DOWN`` (silent) or ``FENCED`` for compute host
    ``host``."""
    svc = _service(context, host)
    if svc is None:
        return DOWN
    if svc.forced_down:
        return FENCED
    return UP if svc.is_up(conf.service_down_time) else DOWN


def is_fenced(context, host):
    svc = _service(context, host)
    return svc is not None and bool(svc.forced_down)


def fenced_hosts(context):
    """The compute hosts forced down."""
    return {s.host for s in service_obj.Service.list(
        context, service_obj.COMPUTE_BINARY) if s.forced_down}


def fenced_owners(context):
    """Owner names (``<binary>:<host>``) of the services forced down."""
    return {service_obj.owner_name(s.binary, s.host)
            for s in service_obj.Service.list(context) if s.forced_down}


def force_down(context, host):
    """Force compute host ``host`` down (fence it): what ``PUT
    /v2.1/os-services/{id}`` with ``forced_down: true`` does."""
    svc = _service(context, host)
    if svc is not None and not svc.forced_down:
        svc.update_admin_state(forced_down=True)


def stale_servers(context, host):
    """The servers whose guests on ``host`` may still have a volume freed
    without the host (its stale disks), sorted."""
    return sorted({d.instance_uuid
                   for d in stale_disk.get_by_host(context, host)})


def check_let_go(context, host):
    """Whether compute host ``host`` (forced down) may be let go
    (``forced_down: false``): ``HostHoldsStaleDisks`` (409) while it may
    still give a guest a volume freed without it; it must come back and
    remove the disks first (its guests that do not let go are
    stopped)."""
    servers = stale_servers(context, host)
    if servers:
        raise exception.HostHoldsStaleDisks(host=host,
                                            servers=', '.join(servers))
