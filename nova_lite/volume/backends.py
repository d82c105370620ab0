"""Block-storage backends as the configuration names them, read without
loading any driver (the API processes load none: the volume service does,
``nova_lite.volume_service.drivers``).

Each name in ``[volume] enabled_backends`` is a backend with a config
group of the same name, as Cinder operators know it::

    [volume]
    enabled_backends = fast, slow

    [fast]
    volume_driver = file
    volume_backend_name = gold

    [slow]
    volume_driver = fake
    connect_delay = 2.0

Each group holds ``COMMON_OPTS`` (registered here on first use by
``register_common_opts(conf)``: their names come from the configuration,
so they cannot be registered earlier) and its driver's own options
(registered by the volume service that loads the driver).

Each backend is one pool, named like the backend. A volume's ``host``
column holds the name of its backend; Cinder's ``host@backend#pool`` form,
which clients see in ``os-vol-host-attr:host`` and as pool names, is
composed from it (``volume_host``): ``host`` is the backend's
``backend_host`` or ``[DEFAULT] host``. Where a client names a backend,
both forms are accepted (``backend_of``).

Whether a backend can host a volume of a type is ``fits``, read from the
capabilities its volume service reports (``volume.placement``).
"""

from oslo_config import cfg

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


def register_common_opts(conf):
    """Register ``COMMON_OPTS`` in the group of every enabled backend on
    ``conf`` (idempotent)."""
    for backend in conf.volume.enabled_backends:
        conf.register_opts(COMMON_OPTS, group=backend)


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
        register_common_opts(conf)
        host = conf[backend].backend_host
    # Read from the configuration, no driver loaded (the API processes
    # load none): a backend's pool is named like it
    # (``VolumeDriver.host_name``).
    return '%s@%s#%s' % (host or conf.host, backend, backend)


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
