"""How compute and conductor reach block storage.

``get_client(conf)`` returns the ``VolumeClient`` for ``[volume] client``;
``service_context(ctxt)`` makes a context act as the compute service;
``delete_attachment(ctxt, client, attachment_id)`` deletes one as the
service, one already gone being fine; ``roll_detaching(ctxt, client,
volume_id)`` undoes a volume's ``detaching``, one not detaching or gone
being fine. The contract every client keeps is in ``base``; ``local``
calls ``nova_lite.volume.api`` directly, ``cinder`` goes over REST with
python-cinderclient (imported only when it is configured).
"""

from nova_lite import context as nl_context
from nova_lite.volume_client import base

VolumeClient = base.VolumeClient
service_context = nl_context.service_context
delete_attachment = base.delete_attachment
roll_detaching = base.roll_detaching


def get_client(conf):
    """The VolumeClient for ``[volume] client``."""
    if conf.volume.client == 'cinder':
        from nova_lite.volume_client import cinder
        return cinder.CinderClient(conf)
    from nova_lite.volume_client import local
    return local.LocalClient(conf)
