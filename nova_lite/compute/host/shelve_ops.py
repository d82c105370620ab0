"""Host-side steps of shelving, run by the compute manager under the
instance lock (API-CONTRACT.md 3, the volume-ops-when-shelved spec).

* ``shelve``: power the guest off; the server is ``shelved`` and keeps its
  host (and its volumes' connections): volume operations go through the
  host as for a stopped server.
* ``offload``: destroy the guest and close every volume's connection to
  this host while keeping the volume attached to the server: each
  attachment is replaced by one reserved and completed without a
  connector (the volume stays ``in-use``), as the offloaded-attach path
  makes them; then the server is ``shelved_offloaded`` with no host.
* ``unshelve``: back on this host. A server shelved here is powered on.
  An offloaded one gets device names for the volumes attached while it was
  offloaded, every volume is connected (``attachment_update`` with this
  host's connector, then completed) and the guest spawned with them.

  If a volume cannot be connected, nothing stays half-attached: the
  connections made so far are closed again (attachments kept), the guest
  is destroyed and the server is ``shelved_offloaded`` again with no host,
  its fault naming the volume (``UnshelveVolumeConnectFailed``). The user
  can detach that volume and unshelve again.
"""

from oslo_log import log as logging

from nova_lite.compute.host import volume_ops
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite import states
from nova_lite import utils
from nova_lite import volume_client as block_storage

LOG = logging.getLogger(__name__)


def _svc(context):
    return block_storage.service_context(context)


def _volume_bdms(context, instance):
    """The server's volumes that have an attachment (a pending attach has
    none yet: its own workflow connects it, or fails)."""
    return [b for b in bdm_obj.BlockDeviceMapping.get_all_by_instance(
        context, instance.uuid) if b.is_volume and b.attachment_id]


def disconnect_keeping_attachment(context, volume_client, bdm, driver):
    """Close the volume's connection to the host but keep it attached to
    the server: a new attachment, reserved and completed without a
    connector, replaces the connected one, whose deletion closes the
    connection (and the host's side of it, ``driver``, unless another
    attachment on the host shares it). The new one is made first, so the
    volume is never free for another server meanwhile."""
    svc = _svc(context)
    old_info = bdm.get_connection_info()
    new = volume_client.attachment_create(svc, bdm.volume_id,
                                          bdm.instance_uuid,
                                          mode=bdm.attach_mode)
    try:
        volume_client.attachment_complete(svc, new['id'])
        old = bdm.attachment_id
        bdm.attachment_id = new['id']
        bdm.set_connection_info(None)
        bdm.save()
    except Exception:
        volume_ops._delete_attachment(context, volume_client, new['id'])
        raise
    volume_ops.release_connection_logged(context, driver, volume_client,
                                         bdm.volume_id, old, old_info)


def shelve(context, conf, driver, instance):
    """Power off; returns True if the server is to be offloaded now
    (``[DEFAULT] shelved_offload_time = 0``)."""
    driver.power_off(instance)
    offload_now = conf.shelved_offload_time == 0
    states.move(instance, 'shelved_to_offload' if offload_now else 'shelved',
                power_state=states.SHUTDOWN, shelved_at=utils.utcnow())
    return offload_now


def offload(context, driver, volume_client, instance):
    """Release the host (``task_state`` is ``shelving_offloading``)."""
    bdms = _volume_bdms(context, instance)
    driver.destroy(context, instance, None)
    for bdm in bdms:
        if bdm.connection_info:
            try:
                disconnect_keeping_attachment(context, volume_client, bdm,
                                              driver=driver)
            except Exception:
                # Still attached; unshelve connects it to the new host.
                LOG.exception('Could not close the connection of volume %s '
                              'of %s', bdm.volume_id, instance.uuid)
    states.move(instance, 'offloaded', power_state=states.NOSTATE,
                host=None)


def _name_devices(context, driver, instance, bdms):
    """Device names for the volumes attached while offloaded (the unique
    constraint still guards against another process)."""
    used = [b.device_name for b in bdm_obj.BlockDeviceMapping
            .get_all_by_instance(context, instance.uuid) if b.device_name]
    for bdm in bdms:
        if bdm.device_name:
            continue
        bdm.device_name = driver.get_device_name_for_instance(instance, used)
        bdm.save()
        used.append(bdm.device_name)


def _connect(context, driver, volume_client, host, instance, bdms, touched):
    """Connect each volume to this host; ``touched`` collects the mappings
    whose connection was attempted (for the rollback)."""
    disks = []
    for bdm in bdms:
        touched.append(bdm)
        try:
            info, mode = volume_ops.connect(context, driver, volume_client,
                                            instance, bdm)
        except Exception as exc:
            reason = (exc.format_message()
                      if isinstance(exc, exception.NovaLiteException)
                      else type(exc).__name__)
            raise exception.UnshelveVolumeConnectFailed(
                volume_id=bdm.volume_id, host=host, reason=reason)
        bdm.set_connection_info(info)
        bdm.save()
        disks.append({'mount_device': bdm.device_name,
                      'connection_info': info, 'mode': mode})
    return disks


def _roll_back(context, driver, volume_client, instance, touched):
    """Back to shelved_offloaded with every volume attached and none
    connected."""
    _back_to_offloaded(context, driver, volume_client, instance, touched,
                       'unshelve_failed')


def _connected(context, volume_client, bdm):
    try:
        return bool(volume_client.attachment_get(
            _svc(context), bdm.attachment_id).get('connection_info'))
    except exception.VolumeAttachmentNotFound:
        return False


def _back_to_offloaded(context, driver, volume_client, instance, bdms,
                       move, only_connected=False):
    """The guest destroyed; each of ``bdms`` attached to the server and
    not connected to this host (only those whose attachment has a
    connection, ``only_connected``); the server shelved_offloaded (by
    ``move``)."""
    try:
        driver.destroy(context, instance, None)
    except Exception:
        LOG.exception('Could not destroy the guest of %s', instance.uuid)
    for bdm in bdms:
        if only_connected and not _connected(context, volume_client, bdm):
            continue
        try:
            # A connected attachment is completed first: block storage
            # takes a new reservation for the same server only next to an
            # attached one. (The one that failed to connect is in an error
            # state and no longer holds its volume: completing it fails.)
            volume_client.attachment_complete(_svc(context), bdm.attachment_id)
        except Exception as exc:
            LOG.debug('Attachment %s not completed: %s', bdm.attachment_id,
                      exc)
        try:
            disconnect_keeping_attachment(context, volume_client, bdm,
                                          driver=driver)
        except Exception:
            LOG.exception('Could not close the connection of volume %s of '
                          '%s', bdm.volume_id, instance.uuid)
    states.move(instance, move, power_state=states.NOSTATE, host=None)


def release_interrupted_unshelve(context, driver, volume_client, instance,
                                 bdms):
    """At the host's restart, a server placed here to be unshelved from
    offloaded whose unshelve did not finish: back to shelved_offloaded
    as when the unshelve fails, every volume attached and none connected
    (an attachment the unshelve connected is replaced by one completed
    without a connector)."""
    _back_to_offloaded(
        context, driver, volume_client, instance,
        [b for b in bdms if b.is_volume and b.attachment_id],
        'unshelve_interrupted', only_connected=True)


def _power_on(driver, instance):
    """A server shelved on this host: its guest is still here."""
    try:
        driver.power_on(instance)
    except Exception:
        states.move(instance, 'abandon', from_task=states.SPAWNING)
        raise


def unshelve(context, driver, volume_client, host, instance):
    """Back on this host (``task_state`` is ``unshelving``)."""
    states.move(instance, 'unshelve')
    if instance.vm_state == states.SHELVED:
        _power_on(driver, instance)
    else:
        bdms = _volume_bdms(context, instance)
        touched = []
        try:
            _name_devices(context, driver, instance, bdms)
            disks = _connect(context, driver, volume_client, host, instance,
                             bdms, touched)
            crashpoint.hit(crashpoint.COMPUTE_UNSHELVE_AFTER_CONNECT)
            driver.spawn(context, instance, disks)
            for bdm in bdms:
                volume_client.attachment_complete(_svc(context),
                                                  bdm.attachment_id)
        except Exception:
            LOG.warning('Unshelving %s on %s failed; it goes back to '
                        'shelved_offloaded', instance.uuid, host)
            _roll_back(context, driver, volume_client, instance, touched)
            raise
    states.move(instance, 'unshelved', power_state=states.RUNNING,
                shelved_at=None)
