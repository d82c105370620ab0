"""Versioned notifications of volume operations on servers.

Emitted by the compute host over oslo.messaging's notifier (topic
``versioned_notifications``; ``[oslo_messaging_notifications] driver``
decides where they go, unset means nowhere), shaped as Nova's:

* ``instance.volume_attach.start`` / ``.end`` (INFO), ``.error`` (ERROR,
  with a ``fault``);
* ``instance.volume_detach.start`` / ``.end`` (INFO).

The payload is an ``InstanceActionVolumePayload`` in the versioned-object
envelope (``nova_object.name``/``version``/``data``), with the server's
identity and state, the ``volume_id`` and (1.1) the volume's mapping as a
``BlockDevicePayload`` in ``block_device``: ``boot_index``,
``delete_on_termination``, ``device_name``, ``tag``, ``volume_id`` and
``attach_mode`` (``ro``/``rw``, volume-multiattach-enhancements).
"""

import traceback as tb_module

from oslo_log import log as logging

from nova_lite import rpc
from nova_lite import utils

LOG = logging.getLogger(__name__)

VOLUME_ATTACH = 'volume_attach'
VOLUME_DETACH = 'volume_detach'

START = 'start'
END = 'end'
ERROR = 'error'

PAYLOAD_NAME = 'InstanceActionVolumePayload'
# 1.1: block_device (a BlockDevicePayload, with attach_mode).
PAYLOAD_VERSION = '1.1'
BDM_PAYLOAD_NAME = 'BlockDevicePayload'
BDM_PAYLOAD_VERSION = '1.0'


def _exception_payload(exc):
    frames = tb_module.extract_tb(exc.__traceback__) if \
        exc.__traceback__ else []
    last = frames[-1] if frames else None
    return {
        'nova_object.name': 'ExceptionPayload',
        'nova_object.namespace': 'nova_lite',
        'nova_object.version': '1.0',
        'nova_object.data': {
            'module_name': (type(exc).__module__),
            'function_name': last.name if last else None,
            'exception': type(exc).__name__,
            'exception_message': str(exc),
            'traceback': ''.join(tb_module.format_exception(
                type(exc), exc, exc.__traceback__)),
        },
    }


def block_device_payload(bdm):
    """A mapping as a ``BlockDevicePayload`` (None without one)."""
    if bdm is None:
        return None
    return {
        'nova_object.name': BDM_PAYLOAD_NAME,
        'nova_object.namespace': 'nova_lite',
        'nova_object.version': BDM_PAYLOAD_VERSION,
        'nova_object.data': {
            'boot_index': bdm.boot_index,
            'delete_on_termination': bdm.delete_on_termination,
            'device_name': bdm.device_name,
            'tag': bdm.tag,
            'volume_id': bdm.volume_id,
            'attach_mode': bdm.effective_attach_mode,
        },
    }


def volume_payload(instance, volume_id, exc=None, bdm=None):
    """The payload of an ``instance.volume_*`` notification."""
    data = {
        'uuid': instance.uuid,
        'display_name': instance.display_name,
        'tenant_id': instance.project_id,
        'user_id': instance.user_id,
        'host': instance.host,
        'availability_zone': instance.availability_zone,
        'flavor_id': instance.flavor_id,
        'image_uuid': instance.image_ref or '',
        'state': instance.vm_state,
        'task_state': instance.task_state,
        'power_state': instance.power_state,
        'locked': instance.locked,
        'launched_at': utils.isotime(instance.launched_at),
        'volume_id': volume_id,
        'block_device': block_device_payload(bdm),
        'fault': _exception_payload(exc) if exc is not None else None,
    }
    return {
        'nova_object.name': PAYLOAD_NAME,
        'nova_object.namespace': 'nova_lite',
        'nova_object.version': PAYLOAD_VERSION,
        'nova_object.data': data,
    }


class Notifier(object):
    """Sends one host's notifications (publisher ``nova-lite-compute:H``)."""

    def __init__(self, conf, host, binary='nova-lite-compute'):
        self.notifier = rpc.get_notifier(conf, '%s:%s' % (binary, host))
        # No driver (the default) or only ``noop`` means nowhere: then no
        # payload is built (as Nova's notifications check
        # NOTIFIER.is_enabled(), which does not count an empty list as
        # nowhere). The drivers are read when the notifier is made, as
        # oslo.messaging does.
        self.enabled = any(
            name != 'noop'
            for name in conf.oslo_messaging_notifications.driver)

    def notify_volume(self, context, instance, operation, phase, volume_id,
                      exc=None, bdm=None):
        if not self.enabled:
            return
        event_type = 'instance.%s.%s' % (operation, phase)
        payload = volume_payload(instance, volume_id, exc, bdm=bdm)
        send = (self.notifier.error if phase == ERROR
                else self.notifier.info)
        try:
            send(context, event_type, payload)
        except Exception:
            # A notification is never worth failing the operation for.
            LOG.exception('Could not send %s for %s', event_type,
                          instance.uuid)
