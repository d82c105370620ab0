"""``[volume] client = local``: the VolumeClient as direct calls into
``nova_lite.volume.api`` (nova-lite-all, and any deployment whose compute
and block storage share the database and the message broker: the
backends are the volume service's, reached over RPC).

Results are built with the same views as the ``/v3`` REST API, at the
microversions the ``cinder`` client uses, so callers cannot tell the two
apart. Policy applies as over REST: the context is the caller's (the
user's, or ``nova_lite.volume_client.service_context`` for service
requests).
"""

import copy

from nova_lite import api_version
from nova_lite.volume import api as volume_api
from nova_lite.volume import views
from nova_lite.volume_client import base


class LocalClient(base.VolumeClient):
    def __init__(self, conf):
        super().__init__(conf)
        self.api = volume_api.API(conf)

    # With its metadata, as the REST client's answers have it (the
    # client contract: both answer alike).
    def get(self, ctxt, volume_id):
        volume = self.api.get(ctxt, volume_id, with_metadata=True)
        return base.client_volume(views.volume_detail(
            ctxt, volume, api_version.CLIENT_VOLUME_VERSION, conf=self.conf))

    def get_all(self, ctxt, limit=None, offset=None):
        volumes = self.api.get_all(ctxt, limit=limit, offset=offset,
                                   with_metadata=True)
        return [base.client_volume(views.volume_detail(
            ctxt, volume, api_version.CLIENT_VOLUME_VERSION, conf=self.conf))
            for volume in volumes]

    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None):
        volume = self.api.create(
            ctxt, size, name=name, description=description,
            volume_type=volume_type, availability_zone=availability_zone,
            snapshot_id=snapshot_id, metadata=metadata or None)
        return base.client_volume(views.volume_detail(
            ctxt, volume, api_version.CLIENT_VOLUME_VERSION, conf=self.conf))

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mode=None):
        attachment = self.api.attachments.create(
            ctxt, volume_id, instance_uuid, connector=connector, mode=mode)
        return base.client_attachment(views.attachment_detail(attachment))

    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        if mountpoint and 'mountpoint' not in connector:
            # As Nova does: the mountpoint travels in the connector.
            connector = copy.deepcopy(connector)
            connector['mountpoint'] = mountpoint
        attachment = self.api.attachments.update(ctxt, attachment_id,
                                                 connector)
        return base.client_attachment(views.attachment_detail(attachment))

    def attachment_complete(self, ctxt, attachment_id):
        self.api.attachments.complete(ctxt, attachment_id)

    def attachment_get(self, ctxt, attachment_id):
        attachment, shared = self.api.attachments.get(ctxt, attachment_id)
        return base.client_attachment(views.attachment_detail(attachment),
                                      shared=shared)

    def attachment_get_all(self, ctxt, instance_id=None, volume_id=None):
        filters = {key: value for key, value in (
            ('instance_uuid', instance_id), ('volume_id', volume_id))
            if value}
        return [base.client_attachment(views.attachment_detail(a))
                for a in self.api.attachments.get_all(ctxt, filters=filters)]

    def attachment_delete(self, ctxt, attachment_id):
        _remaining, shared = self.api.attachments.delete(
            ctxt, attachment_id, with_remaining=False)
        return {'shared_connections': list(shared)}

    def begin_detaching(self, ctxt, volume_id):
        self.api.begin_detaching(ctxt, volume_id)

    def roll_detaching(self, ctxt, volume_id):
        self.api.roll_detaching(ctxt, volume_id)

    def delete(self, ctxt, volume_id):
        self.api.delete(ctxt, volume_id)

    def migrate_volume_completion(self, ctxt, volume_id, new_volume_id,
                                  error=False):
        return {'save_volume_id': self.api.migrate_volume_completion(
            ctxt, volume_id, new_volume_id, error=error)}
