"""The attach workflow (API-CONTRACT.md 2.5, steps behind 10b).

1. The compute host reserves the device name: an RPC *call* that creates
   the block device mapping under the instance lock.
2. Block storage reserves the volume: ``attachment_create`` without a
   connector (volume ``reserved``); its id is stored on the mapping. Two
   attaches of one non-multiattach volume cannot both get here: the volume
   service's compare-and-swap lets one win.
3. The ``attach_volume`` instance action is recorded.
4. A *cast* to the compute host connects and attaches
   (``compute.volume_ops.attach``).

Any failure undoes what came before it (the attachment is deleted, the
mapping destroyed) and re-raises, so nothing stays ``reserved``. If the
reservation call times out, the host may still have created the mapping:
it is looked up and removed. The workflow does not care whether the API
called it (below 2.101, it returns the device name to the user) or cast it.
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import instance_action
from nova_lite.volume import client as volume_client

LOG = logging.getLogger(__name__)

EVENT = 'conductor_attach_volume'


def _remove_orphan_bdm(context, instance, volume_id):
    try:
        bdm = objects.BlockDeviceMapping.get_by_volume_and_instance(
            context, volume_id, instance.uuid)
    except exception.VolumeBDMNotFound:
        return
    if bdm.attachment_id is None:
        LOG.info('Removing the mapping of volume %s to %s left by a timed '
                 'out reservation', volume_id, instance.uuid)
        bdm.destroy()


def _record_failure(context, instance, exc):
    """Visible only when the request already has an action (the API
    records it first when it does not wait for the result)."""
    if instance_action.record_failure(context, instance.uuid, EVENT, exc):
        try:
            objects.InstanceFault.record(context, instance.uuid, exc)
        except Exception:
            LOG.exception('Could not record the fault of %s', instance.uuid)


def attach_volume(context, compute_rpcapi, volume_api, instance, volume_id,
                  device=None, tag=None, delete_on_termination=False,
                  multiattach=False):
    """Reserve, record, cast; returns the reserved device name."""
    try:
        bdm = compute_rpcapi.reserve_block_device_name(
            context, instance, device, volume_id, tag=tag,
            multiattach=multiattach,
            delete_on_termination=delete_on_termination)
    except messaging.MessagingTimeout as exc:
        with excutils.save_and_reraise_exception():
            _remove_orphan_bdm(context, instance, volume_id)
            _record_failure(context, instance, exc)
    except Exception as exc:
        with excutils.save_and_reraise_exception():
            _record_failure(context, instance, exc)

    attachment_id = None
    try:
        attachment = volume_api.attachment_create(context, volume_id,
                                                  instance.uuid)
        attachment_id = attachment['id']
        bdm.attachment_id = attachment_id
        bdm.save()
        instance_action.InstanceAction.action_start(
            context, instance.uuid, instance_action.ATTACH_VOLUME)
        compute_rpcapi.attach_volume(context, instance, bdm)
    except Exception as exc:
        with excutils.save_and_reraise_exception():
            LOG.info('Attaching volume %s to %s failed before the compute '
                     'host was asked: %s', volume_id, instance.uuid, exc)
            if attachment_id:
                try:
                    volume_api.attachment_delete(
                        volume_client.service_context(context),
                        attachment_id)
                except Exception:
                    LOG.exception('Could not delete attachment %s',
                                  attachment_id)
            bdm.destroy()
            _record_failure(context, instance, exc)
    return bdm.device_name
