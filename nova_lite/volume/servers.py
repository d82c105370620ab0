"""How block storage asks the compute service for what only it can do:
swap a server's disk to a migration's temporary volume.

Cinder calls Nova's ``PUT /servers/{id}/os-volume_attachments/{volume}``
with a service token when it migrates an attached volume; nova_lite's
block storage and compute share one deployment, so this is the in-process
equivalent: the compute service layer's swap (its checks, its task on the
server's mapping, the cast to the server's host), called with a context
that acts as the service. It is the only module of ``nova_lite.volume``
that imports the compute side (``setup.cfg``'s import-linter contract
``volume-reaches-compute-here``); if compute and block storage ever get
separate deployments, it becomes that REST call.
"""

from nova_lite.compute import api as compute_api


def swap(conf, ctxt, instance_uuid, old_volume_id, new_volume_id):
    """Have the compute service swap server ``instance_uuid``'s
    ``old_volume_id`` for ``new_volume_id`` (``ctxt`` a service context).
    Returns once the compute side took it (its own 202); raises what its
    checks raise."""
    api = compute_api.get_api(conf)
    instance = api.get(ctxt, instance_uuid)
    api.volumes.swap(ctxt, instance, old_volume_id, new_volume_id)
