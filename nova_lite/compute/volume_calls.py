"""Block storage's calls into the compute service (``volume.servers``),
served by the compute service layer in the calling process: the swap of
a migrating volume (Nova's ``PUT
/servers/{id}/os-volume_attachments/{volume}``) and ``volume-extended``
(Nova's ``POST /os-server-external-events``). Registered as entry point
``local`` of group ``nova_lite.volume.compute`` (``setup.cfg``).
"""

from nova_lite.compute import api as compute_api
from nova_lite.volume import servers


class VolumeCalls(servers.ComputeCalls):

    def __init__(self, conf):
        self.conf = conf

    def swap(self, ctxt, instance_uuid, old_volume_id, new_volume_id):
        api = compute_api.get_api(self.conf)
        instance = api.get(ctxt, instance_uuid)
        api.volumes.swap(ctxt, instance, old_volume_id, new_volume_id)

    def volume_extended(self, ctxt, volume_id, instance_uuids):
        return compute_api.get_api(self.conf).events.volume_extended(
            ctxt, volume_id, instance_uuids)
