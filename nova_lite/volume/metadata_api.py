"""The block-storage service layer for volume metadata.

``Metadata`` is ``nova_lite.volume.api.API().metadata``, a volume's user
metadata (``api.get`` is its volume lookup: 404 for a volume of another
project, ``volume:get``). The rules
are Cinder's (``nova_lite.volume.metadata`` says them): policies
``volume:{get,create,update,delete}_volume_metadata``; no change while the
volume is in ``maintenance`` or ``uploading``; the status and If-Match
checks run under the volume's row lock, in the change's transaction
(``nova_lite.volume.db.volumes``). Metadata is free of quota, as in
Cinder.

A volume's views show its metadata to whoever may see the volume
(``API.get(..., with_metadata=True)``), as Cinder's do; the metadata
policies govern ``/v3/volumes/{id}/metadata``.
"""

from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import volume_metadata as policies
from nova_lite.policies import volumes as volume_policies
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import metadata as vmeta
from nova_lite.volume import status as st


def _target(project_id):
    return {'project_id': project_id}


def _check(volume_id, if_match=None, deleting=False):
    """What ``volume_db.volume_metadata_update``/``_delete`` run under the
    volume's row lock before changing anything: Cinder's status rule, then
    If-Match."""
    def check(status, current):
        if status in st.METADATA_FROZEN:
            message = (_('Deleting volume metadata is not allowed for '
                         'volumes in %s status.') if deleting else
                       _('Updating volume metadata is not allowed for '
                         'volumes in %s status.'))
            raise exception.InvalidVolume(reason=message % status)
        if not vmeta.etag_matches(current, if_match):
            raise exception.MetadataChanged(volume_id=volume_id)
    return check


class Metadata(object):
    """``volume.api.API().metadata``: ``get_volume(ctxt, volume_id)``
    reads a volume the caller may see (``API.get``)."""

    def __init__(self, get_volume):
        self.get_volume = get_volume

    def get(self, ctxt, volume_id):
        """The volume's metadata, ``{key: value}`` by key."""
        # The volume and its metadata read in one transaction.
        with db_api.context_manager.reader.using(ctxt):
            volume = self.get_volume(ctxt, volume_id)
            ctxt.can(policies.GET, target=_target(volume.project_id))
            return volume_db.volume_metadata_get(ctxt, volume_id)

    def create(self, ctxt, volume_id, metadata):
        """Set the keys of ``metadata`` and keep the others (Cinder's
        POST); returns the whole metadata after."""
        volume = self.get_volume(ctxt, volume_id)
        ctxt.can(policies.CREATE, target=_target(volume.project_id))
        return volume_db.volume_metadata_update(ctxt, volume_id, metadata,
                                                check=_check(volume_id))

    def update(self, ctxt, volume_id, metadata, replace=False,
               if_match=None):
        """With ``replace``, make ``metadata`` the whole metadata
        (Cinder's PUT of ``metadata``: the other keys go); otherwise set
        its keys (the PUT of one key). ``if_match``: the ETags of an
        If-Match header (None: any); the metadata must still have one of
        them (412 otherwise). Returns the whole metadata after."""
        volume = self.get_volume(ctxt, volume_id)
        ctxt.can(policies.UPDATE, target=_target(volume.project_id))
        return volume_db.volume_metadata_update(
            ctxt, volume_id, metadata, replace=replace,
            check=_check(volume_id, if_match=if_match))

    def delete(self, ctxt, volume_id, key):
        """Remove ``key`` (404 when the metadata has no such key)."""
        volume = self.get_volume(ctxt, volume_id)
        ctxt.can(policies.DELETE, target=_target(volume.project_id))
        volume_db.volume_metadata_delete(
            ctxt, volume_id, key, check=_check(volume_id, deleting=True))

    def summary(self, ctxt, all_tenants=False):
        """The metadata of Cinder's volume summary (3.36): each key of the
        metadata of the caller's volumes (every project's, with an
        administrator's ``all_tenants``) with every value it has."""
        ctxt.can(volume_policies.GET_ALL, target=_target(ctxt.project_id))
        project_id = (None if (ctxt.is_admin and all_tenants)
                      else ctxt.project_id)
        return volume_db.volume_metadata_summary(ctxt, project_id)
