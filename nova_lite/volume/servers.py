"""How block storage asks the compute service for what only it can do:
swap a server's disk to a migration's temporary volume, and have the
guests of an attached volume that grew see its new size.

Cinder calls Nova's ``PUT /servers/{id}/os-volume_attachments/{volume}``
with a service token when it migrates an attached volume; nova_lite's
block storage and compute share one deployment, so this is the in-process
equivalent: the compute service layer's swap (its checks, its task on the
server's mapping, the cast to the server's host), called with a context
that acts as the service. It is the only module of ``nova_lite.volume``
that imports the compute side (``setup.cfg``'s import-linter contract
``volume-reaches-compute-here``); if compute and block storage ever get
separate deployments, it becomes that REST call.

Likewise Cinder sends Nova's ``POST /os-server-external-events`` with a
``volume-extended`` event per attached server once it extended an in-use
volume; ``volume_extended`` is the in-process equivalent (the compute
service layer's external events, ``compute.external_events``).
"""

from oslo_log import log as logging

from nova_lite.compute import api as compute_api
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume import status as st

LOG = logging.getLogger(__name__)


def swap(conf, ctxt, instance_uuid, old_volume_id, new_volume_id):
    """Have the compute service swap server ``instance_uuid``'s
    ``old_volume_id`` for ``new_volume_id`` (``ctxt`` a service context).
    Returns once the compute side took it (its own 202); raises what its
    checks raise."""
    api = compute_api.get_api(conf)
    instance = api.get(ctxt, instance_uuid)
    api.volumes.swap(ctxt, instance, old_volume_id, new_volume_id)


def volume_extended(conf, ctxt, volume_id):
    """Send ``volume-extended`` of ``volume_id`` to each server it is
    attached to (``ctxt`` a service context), so that their hosts resize
    the guests' disks; a volume attached to none sends nothing. As
    Cinder's, a failure is logged, not raised: the volume grew."""
    uuids = sorted({a.instance_uuid for a in
                    attachment_db.attachments_of_volume(ctxt, volume_id)
                    if a.instance_uuid and a.attach_status == st.ATTACHED})
    if not uuids:
        return
    try:
        results = compute_api.get_api(conf).events.volume_extended(
            ctxt, volume_id, uuids)
    except Exception:
        LOG.exception('Could not tell the compute service that volume %s '
                      'grew (servers %s)', volume_id, ', '.join(uuids))
        return
    for code, event in results:
        if code != 200:
            LOG.warning('The compute service refused volume-extended of '
                        'volume %s for server %s: %s', volume_id,
                        event['server_uuid'], code)
