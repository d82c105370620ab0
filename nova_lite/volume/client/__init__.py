"""How compute and conductor reach block storage.

``get_client(conf)`` returns the ``VolumeClient`` for ``[volume] client``;
``service_context(ctxt)`` makes a context act as the compute service;
``delete_attachment(ctxt, client, attachment_id)`` deletes one as the
service, one already gone being fine; ``roll_detaching(ctxt, client,
volume_id)`` undoes a volume's ``detaching``, one not detaching or gone
being fine; ``check_backends(conf)`` fails at a service's start on a
wrong configuration of the backends this process drives (the ``local``
client's). The contract every client keeps is in ``base``; ``local``
calls ``nova_lite.volume.api`` directly, ``cinder`` goes over REST with
python-cinderclient (imported only when it is configured).
"""

from nova_lite.volume.client import base

VolumeClient = base.VolumeClient
service_context = base.service_context
delete_attachment = base.delete_attachment
roll_detaching = base.roll_detaching


def get_client(conf):
    """The VolumeClient for ``[volume] client``."""
    if conf.volume.client == 'cinder':
        from nova_lite.volume.client import cinder
        return cinder.CinderClient(conf)
    from nova_lite.volume.client import local
    return local.LocalClient(conf)


def check_backends(conf):
    """With the ``local`` client this process drives the block-storage
    backends itself: load them, failing on a wrong configuration. The
    ``cinder`` client has nothing here to check."""
    if conf.volume.client == 'local':
        from nova_lite.volume.client import local
        local.check_backends(conf)
