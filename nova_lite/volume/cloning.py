"""A volume created from another volume (Cinder's ``source_volid``).

``volume.api.API.create`` runs these steps when it is given a source:

1. ``check_source``: the source (read, and its policy checked, by the
   caller: an unknown or hidden one is 404) is ``available`` or ``in-use``
   and not migrating, and the size asked (the source's when none is) is
   at least the source's (400, Cinder's messages);
2. ``backend_for``: the clone has the source's type unless another is
   asked, and lives on the source's backend (a
   clone is made by the backend that holds the data, as Cinder's
   scheduler sends it to the source's backend); a type that backend
   cannot host is 400, as Cinder's "requested type is not compatible";
3. the row is made ``creating`` with ``source_volid``, in a transaction
   that locks the source's row and checks its status again
   (``volume_db.volume_create``); from then on the source cannot be
   deleted until the clone's create ends (``volume_delete_start``);
4. ``clone_on_backend``: the volume service of the backend makes the
   clone's storage from the source's (``VolumeDriver.create_cloned_volume``
   over ``volume.rpcapi``), beating the clone's ``updated_at`` while it
   copies (``volume_service.manager``); the clone is then ``available``, or
   ``error`` when the backend failed (or its service did not answer).

A process (the API's, or the volume service) that dies during step 4
leaves the clone ``creating``; block
storage's settling makes a volume stalled ``creating`` for ``[recovery]
stalled_after`` seconds ``error`` (``settling``, Cinder's volume service
does so at its start), after which the source can be deleted again and
the clone deleted (the backend's delete takes whatever storage the clone
had by then).
"""

from oslo_log import log as logging

from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import placement
from nova_lite.volume import services as volume_services
from nova_lite.volume import status as st

LOG = logging.getLogger(__name__)


def check_source(source, size):
    """The size of the clone of ``source`` (``size``, or the source's when
    None), once the source may be cloned to it."""
    if source.status not in st.CLONE_FROM:
        raise exception.InvalidVolume(reason=_(
            "Originating source volume status must be one of '%s' "
            "values") % ', '.join(st.CLONE_FROM))
    if st.is_migrating(source.migration_status):
        raise exception.InvalidVolume(reason=_(
            'Originating source volume %s is migrating.') % source.id)
    if size is None:
        size = source.size
    if isinstance(size, int) and 0 < size < source.size:
        raise exception.InvalidInput(reason=_(
            "Volume size '%(size)s'GB cannot be smaller than original "
            "volume size  %(source_size)sGB. They must be >= original "
            "volume size.") % {'size': size, 'source_size': source.size})
    return size


def backend_for(ctxt, conf, source, vtype, specs, multiattach):
    """The backend of the clone: the source's. 400 when the type does not
    fit it; None when it cannot be reached (not enabled here, its
    services disabled or down, or not answering): the clone is then
    ``error``, as a volume no backend can host."""
    backend = source.host
    if backend not in placement.enabled(conf) or \
            backend in volume_services.unschedulable_backends(ctxt, conf):
        return None
    caps = placement.capability(conf, backend)
    if caps is None:
        return None
    if not backend_conf.fits(caps, specs, multiattach):
        raise exception.InvalidInput(reason=_(
            'Invalid volume_type provided: %s (requested type is not '
            'compatible; recommend omitting the type argument).') %
            (vtype.name if vtype is not None else None))
    return backend


def clone_on_backend(ctxt, conf, volume, backends):
    """Step 4 (the module docstring): the backend makes ``volume``'s
    storage from its source's (read again: what names its storage now);
    ``volume`` ends ``available`` or ``error``."""
    crashpoint.hit(crashpoint.VOLUME_CLONE_AFTER_CREATE)
    source_id = volume.source_volid
    try:
        source = volume_db.volume_get(ctxt, source_id)
        updates = backends.create_cloned_volume(
            ctxt, volume.host, volume=backend_conf.volume_dict(volume),
            src_volume=backend_conf.volume_dict(source)) or {}
    except Exception:
        LOG.exception('Cloning volume %s into volume %s on backend %s '
                      'failed', source_id, volume.id, volume.host)
        volume_db.volume_move(ctxt, volume.id, 'create_failed')
        return
    if not volume_db.volume_move(ctxt, volume.id, 'create_done',
                                 values=updates):
        LOG.warning('Volume %s was cloned from %s but is no longer '
                    'creating: left as it is', volume.id, source_id)
        return
    LOG.info('Volume %s cloned from volume %s', volume.id, source_id)
