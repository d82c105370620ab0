"""Test doubles for the compute side's unit tests: an in-memory
VolumeClient that keeps Cinder's status machine, and object stand-ins."""

import threading

from oslo_utils import uuidutils

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import objects
from nova_lite.virt import fake as virt_fake
from nova_lite import volume_client as client
from tests import base


# The attachment dict's keys (nova_lite.volume_client's contract).
ATTACHMENT_KEYS = ('id', 'status', 'instance', 'volume_id', 'attached_at',
                   'detached_at', 'attach_mode', 'connection_info')


class FakeVolumeClient(client.VolumeClient):
    """The VolumeClient contract in memory. ``fail`` maps a method name
    to an exception to raise from it; ``calls`` records every call.

    Its answers have the shapes of the ``local`` client's (checked by
    tests/functional/volume/test_clients.py): a connection_info of the
    ``fake`` volume driver type, the mode granted and the attachment id.
    """

    def __init__(self, conf=None):
        super().__init__(conf)
        self.volumes = {}
        self.attachments = {}
        self.fail = {}
        self.calls = []
        self._lock = threading.Lock()

    def create_volume(self, size=1, multiattach=False, status='available',
                      migration_status=None, name=None, description=None,
                      volume_type=None, metadata=None):
        volume_id = uuidutils.generate_uuid()
        self.volumes[volume_id] = {
            'id': volume_id, 'status': status, 'attach_status': 'detached',
            'size': size, 'name': name, 'description': description,
            'created_at': '2026-11-21T20:36:%02d.000000' % (
                len(self.volumes) % 60),
            'snapshot_id': None, 'metadata': dict(metadata or {}),
            'multiattach': multiattach, 'bootable': False,
            'availability_zone': 'nova', 'migration_status': migration_status,
            # Block storage's default type when none is asked.
            'volume_type': volume_type or '__DEFAULT__', 'encrypted': False}
        return volume_id

    def _record(self, name, *args):
        self.calls.append((name,) + args)
        if name in self.fail:
            raise self.fail[name]

    def _volume(self, volume_id):
        if volume_id not in self.volumes:
            raise exception.VolumeNotFound(volume_id=volume_id)
        return self.volumes[volume_id]

    def _attachment(self, attachment_id):
        if attachment_id not in self.attachments:
            raise exception.VolumeAttachmentNotFound(
                attachment_id=attachment_id)
        return self.attachments[attachment_id]

    def _recompute(self, volume):
        live = [a for a in self.attachments.values()
                if a['volume_id'] == volume['id']]
        if not live:
            volume['status'], volume['attach_status'] = (
                'available', 'detached')
            return
        status = sorted(a['status'] for a in live)[0]
        volume['status'] = 'in-use' if status == 'attached' else status
        volume['attach_status'] = status

    @staticmethod
    def _sees_hosts(ctxt):
        roles = [r.lower() for r in getattr(ctxt, 'roles', None) or []]
        return bool(getattr(ctxt, 'is_admin', False)) or 'service' in roles

    def _view(self, volume_id, ctxt=None):
        volume = dict(self._volume(volume_id))
        volume['metadata'] = dict(volume['metadata'])
        show_host = self._sees_hosts(ctxt)
        volume['attachments'] = [
            {'attachment_id': a['id'], 'server_id': a['instance'],
             'host_name': a['host'] if show_host else None,
             'device': a['mountpoint'], 'attached_at': a['attached_at']}
            for a in self.attachments.values()
            if a['volume_id'] == volume_id and a['status'] == 'attached']
        return volume

    @staticmethod
    def _answer(attachment):
        answer = {key: attachment[key] for key in ATTACHMENT_KEYS}
        answer['connection_info'] = dict(answer['connection_info'])
        return answer

    def get(self, ctxt, volume_id):
        self._record('get', volume_id)
        return self._view(volume_id, ctxt)

    def get_all(self, ctxt, limit=None, offset=None):
        self._record('get_all', limit, offset)
        # Newest first, as Cinder lists them.
        ids = list(reversed(list(self.volumes)))[offset or 0:]
        if limit is not None:
            ids = ids[:limit]
        return [self._view(volume_id, ctxt) for volume_id in ids]

    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None):
        self._record('create', size, name)
        if snapshot_id:
            raise exception.SnapshotNotFound(snapshot_id=snapshot_id)
        if not isinstance(size, int) or size <= 0:
            raise exception.InvalidInput(
                reason="Volume size '%s' must be an integer and greater "
                       "than 0" % size)
        return self._view(self.create_volume(
            size=size, name=name, description=description,
            volume_type=volume_type, metadata=metadata), ctxt)

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mode=None):
        self._record('attachment_create', volume_id, instance_uuid)
        with self._lock:
            volume = self._volume(volume_id)
            allowed = (('available', 'in-use') if volume['multiattach']
                       else ('available',))
            # Cinder's exception: the instance already has an attached
            # attachment of the volume (it is moving or being reconnected).
            same_instance = volume['status'] == 'in-use' and any(
                a['volume_id'] == volume_id and
                a['instance'] == instance_uuid and a['status'] == 'attached'
                for a in self.attachments.values())
            if volume['status'] not in allowed and not same_instance:
                raise exception.InvalidVolume(
                    reason='Volume %s status must be available to reserve, '
                           'but the current status is %s.' % (
                               volume_id, volume['status']))
            attachment = {'id': uuidutils.generate_uuid(),
                          'volume_id': volume_id, 'instance': instance_uuid,
                          'status': 'reserved', 'attach_mode': 'null',
                          'attached_at': '', 'detached_at': '',
                          'connection_info': {}, 'host': None,
                          'mountpoint': None}
            self.attachments[attachment['id']] = attachment
            volume['status'] = 'reserved'
            return self._answer(attachment)

    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        self._record('attachment_update', attachment_id, connector,
                     mountpoint)
        with self._lock:
            attachment = self._attachment(attachment_id)
            mode = connector.get('mode', 'rw')
            attachment.update(
                status='attaching', mountpoint=mountpoint, attach_mode=mode,
                host=connector.get('host'),
                connection_info={'driver_volume_type': 'fake',
                                 'access_mode': mode,
                                 'attachment_id': attachment_id,
                                 'volume_id': attachment['volume_id']})
            self._recompute(self._volume(attachment['volume_id']))
            return self._answer(attachment)

    def attachment_complete(self, ctxt, attachment_id):
        self._record('attachment_complete', attachment_id)
        with self._lock:
            attachment = self._attachment(attachment_id)
            attachment.update(status='attached',
                              attached_at='2026-11-21T20:37:00.000000')
            self._recompute(self._volume(attachment['volume_id']))

    def attachment_get(self, ctxt, attachment_id):
        self._record('attachment_get', attachment_id)
        with self._lock:
            attachment = self._attachment(attachment_id)
            answer = self._answer(attachment)
            answer['shared_connections_by_attachment'] = [
                a['id'] for a in self.attachments.values()
                if a['id'] != attachment_id and
                a['volume_id'] == attachment['volume_id'] and
                a['host'] is not None and a['host'] == attachment['host']]
        return answer

    def attachment_get_all(self, ctxt, instance_id=None, volume_id=None):
        self._record('attachment_get_all', instance_id, volume_id)
        with self._lock:
            return [self._answer(a) for a in self.attachments.values()
                    if instance_id in (None, a['instance']) and
                    volume_id in (None, a['volume_id'])]

    def attachment_delete(self, ctxt, attachment_id):
        self._record('attachment_delete', attachment_id)
        with self._lock:
            attachment = self.attachments.pop(attachment_id, None)
            if attachment is None:
                raise exception.VolumeAttachmentNotFound(
                    attachment_id=attachment_id)
            self._recompute(self._volume(attachment['volume_id']))
            shared = [a['id'] for a in self.attachments.values()
                      if a['volume_id'] == attachment['volume_id'] and
                      a['host'] is not None and
                      a['host'] == attachment['host']]
        return {'shared_connections': shared}

    def begin_detaching(self, ctxt, volume_id):
        self._record('begin_detaching', volume_id)
        volume = self._volume(volume_id)
        if volume['status'] != 'in-use':
            raise exception.InvalidVolume(
                reason="Unable to detach volume. Volume status must be "
                       "'in-use' and attach_status must be 'attached' to "
                       "detach.")
        volume['status'] = 'detaching'

    def roll_detaching(self, ctxt, volume_id):
        self._record('roll_detaching', volume_id)
        volume = self._volume(volume_id)
        if volume['status'] == 'detaching':
            volume['status'] = 'in-use'

    def delete(self, ctxt, volume_id):
        self._record('delete', volume_id)
        volume = self._volume(volume_id)
        if volume['status'] not in ('available', 'error'):
            raise exception.InvalidVolume(reason='volume is attached')
        del self.volumes[volume_id]

    def migrate_volume_completion(self, ctxt, volume_id, new_volume_id,
                                  error=False):
        """Block storage's answer: the migrated volume keeps its id (the
        new one's attachments become its own); nothing else is kept of
        the migration here."""
        self._record('migrate_volume_completion', volume_id, new_volume_id,
                     error)
        if not error:
            for attachment in self.attachments.values():
                if attachment['volume_id'] == new_volume_id:
                    attachment['volume_id'] = volume_id
        return {'save_volume_id': volume_id}

    def live_attachments(self, volume_id):
        return [a for a in self.attachments.values()
                if a['volume_id'] == volume_id]


class FakeInstance(object):
    """Enough of objects.Instance for the guards and the workflows."""

    def __init__(self, **kwargs):
        self.uuid = kwargs.pop('uuid', uuidutils.generate_uuid())
        self.vm_state = kwargs.pop('vm_state', 'active')
        self.task_state = kwargs.pop('task_state', None)
        self.launched_at = kwargs.pop('launched_at', '2026-01-01')
        self.locked = kwargs.pop('locked', False)
        self.locked_by = kwargs.pop('locked_by', None)
        self.host = kwargs.pop('host', 'compute1')
        self.project_id = kwargs.pop('project_id', 'demo')
        self.user_id = kwargs.pop('user_id', 'demo')
        self.display_name = kwargs.pop('display_name', 'server')
        self.root_device_name = kwargs.pop('root_device_name', '/dev/vda')
        self.power_state = kwargs.pop('power_state', 1)
        self.availability_zone = 'nova'
        self.flavor_id = '1'
        self.image_ref = ''
        for key, value in kwargs.items():
            setattr(self, key, value)


class HostTestCase(base.TestCase):
    """The setting of the host-side unit tests: a member's context
    (``ctxt``), an in-memory block storage (``volumes``) and the fake
    virt driver of host ``compute1`` (``driver``)."""

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.ctxt = nl_context.RequestContext('demo', 'demo',
                                              roles=['member'])
        self.volumes = FakeVolumeClient()
        self.driver = virt_fake.FakeDriver(self.conf, 'compute1')
