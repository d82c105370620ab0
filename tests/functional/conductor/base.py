"""The conductor's workflows on a real database (a fresh migrated SQLite
file per test, ``tests.fixtures.database.Database``), with fakes only where
another process answers:

* the compute hosts, behind ``compute.rpcapi.ComputeAPI``:
  ``FakeComputeRPC`` (below), which passes every argument and answer
  through the RPC serializer, as the transport does, and writes to the
  database what a host writes there;
* block storage, behind the ``VolumeClient`` contract:
  ``tests.unit.compute.fakes.FakeVolumeClient`` (checked against the
  contract by ``tests/functional/volume/test_clients.py``);
* the notifier (a message bus): an autospec mock of
  ``compute.notifications.Notifier``.

Everything else (objects, task moves, instance actions and their events,
faults, service heartbeats) runs for real, and the tests assert on what
they read back from the database.
"""

import datetime
from unittest import mock

import sqlalchemy as sa

from nova_lite.compute import notifications
from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite import rpc
from nova_lite import utils
from tests import base
from tests.fixtures import database
from tests.fixtures import rows
from tests.unit.compute import fakes


class FakeComputeRPC(object):
    """The compute hosts at the other end of ``ComputeAPI`` (same method
    signatures: ``test_attach`` checks them).

    Each message crosses ``rpc.RequestContextSerializer`` both ways, as
    over the transport: the host works on copies of the context and the
    objects (a new context: no transaction of the caller is shared), and
    the caller gets a copy of the answer. ``reserve_block_device_name``
    does on the database what a host does: writes the device name on the
    mapping given (RPC 1.2) or, for a host older than 1.2
    (``new_hosts=False``), creates the mapping with one. Casts are
    recorded in ``casts`` as ``(method, kwargs as the host got them)``.

    Faults, injected here at the boundary: ``reserve_error`` (the host
    refuses), ``reply_error`` (the host did its work, then the answer was
    lost: a timeout), ``cast_error`` (the cast could not be sent).
    ``observe(method, ctxt, **kwargs)``, when set, runs as each message
    leaves the caller (for a cast that then fails, too) and its result is
    kept in ``observed``: what the database said at that moment.
    """

    DEVICE = '/dev/vdb'

    def __init__(self, new_hosts=True):
        self.new_hosts = new_hosts
        self.reserve_error = None
        self.reply_error = None
        self.cast_error = None
        self.observe = None
        self.reserve_calls = []
        self.casts = []
        self.observed = []
        self._serializer = rpc.RequestContextSerializer()

    def _send(self, method, ctxt, **kwargs):
        """What the host receives: a copy of the context and arguments."""
        if self.observe is not None:
            self.observed.append((method, self.observe(method, ctxt,
                                                       **kwargs)))
        host_ctxt = self._serializer.deserialize_context(
            self._serializer.serialize_context(ctxt))
        received = {
            name: self._serializer.deserialize_entity(
                host_ctxt, self._serializer.serialize_entity(ctxt, value))
            for name, value in kwargs.items()}
        return host_ctxt, received

    def _reply(self, ctxt, host_ctxt, value):
        return self._serializer.deserialize_entity(
            ctxt, self._serializer.serialize_entity(host_ctxt, value))

    def _cast(self, method, ctxt, **kwargs):
        _host_ctxt, received = self._send(method, ctxt, **kwargs)
        if self.cast_error is not None:
            raise self.cast_error
        self.casts.append((method, received))

    def can_reserve_existing_bdm(self):
        return self.new_hosts

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  tag=None, multiattach=False,
                                  delete_on_termination=False, bdm=None):
        if bdm is not None and not self.new_hosts:
            # What ComputeAPI raises when the hosts cannot take RPC 1.2.
            raise exception.ServiceTooOld(reason='RPC 1.2')
        host_ctxt, call = self._send(
            'reserve_block_device_name', ctxt, instance=instance,
            device=device, volume_id=volume_id, tag=tag,
            multiattach=multiattach,
            delete_on_termination=delete_on_termination, bdm=bdm)
        self.reserve_calls.append(call)
        if self.reserve_error is not None:
            raise self.reserve_error
        name = device or self.DEVICE
        mapped = call['bdm']
        if mapped is None:
            # Compute RPC 1.1: the host creates the mapping.
            mapped = bdm_obj.BlockDeviceMapping.new_volume(
                host_ctxt, call['instance'].uuid, volume_id,
                device_name=name, tag=tag,
                delete_on_termination=delete_on_termination)
            mapped.create()
        else:
            mapped.device_name = name
            mapped.save()
        if self.reply_error is not None:
            raise self.reply_error
        return self._reply(ctxt, host_ctxt, mapped)

    def attach_volume(self, ctxt, instance, bdm):
        self._cast('attach_volume', ctxt, instance=instance, bdm=bdm)

    def detach_volume(self, ctxt, instance, volume_id, attachment_id,
                      task_ref=None):
        self._cast('detach_volume', ctxt, instance=instance,
                   volume_id=volume_id, attachment_id=attachment_id,
                   task_ref=task_ref)

    def swap_volume(self, ctxt, instance, old_volume_id, new_volume_id,
                    new_attachment_id, task_ref=None):
        self._cast('swap_volume', ctxt, instance=instance,
                   old_volume_id=old_volume_id, new_volume_id=new_volume_id,
                   new_attachment_id=new_attachment_id, task_ref=task_ref)

    def unshelve_instance(self, ctxt, instance):
        self._cast('unshelve_instance', ctxt, instance=instance)


class FakeConductorRPC(FakeComputeRPC):
    """The conductors at the other end of ``ConductorAPI``, for the casts
    the settling re-drives (recorded in ``casts``, as they arrive)."""

    def attach_volume(self, ctxt, instance, volume_id, device, tag,
                      delete_on_termination, multiattach, bdm=None,
                      do_cast=False):
        self._cast('attach_volume', ctxt, instance=instance,
                   volume_id=volume_id, device=device, tag=tag,
                   delete_on_termination=delete_on_termination,
                   multiattach=multiattach, bdm=bdm)


def set_rows(model, where, **values):
    """Write ``values`` into the rows of ``model`` matching ``where``: the
    state another process, or the passing of time, leaves (a heartbeat
    long ago, a task that stopped moving)."""
    @db_api.context_manager.writer
    def update(context):
        context.session.execute(sa.update(model).where(where).values(
            **values))
    update(nl_context.get_admin_context())


def ago(seconds):
    """Naive UTC ``seconds`` ago, as the database stores times."""
    return utils.utcnow() - datetime.timedelta(seconds=seconds)


class TestCase(base.TestCase):
    """A configuration, a fresh database, a member's request context
    (``ctxt``), block storage (``volumes``), the compute hosts
    (``compute``) and the notifier (``notifier``)."""

    CONDUCTOR = 'conductor1'

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(database.Database(self.conf))
        objects.register_all()
        self.conf.set_override('host', self.CONDUCTOR)
        self.ctxt = nl_context.RequestContext('demo', 'demo',
                                              roles=['member'])
        self.volumes = fakes.FakeVolumeClient()
        self.compute = FakeComputeRPC()
        self.notifier = mock.create_autospec(notifications.Notifier,
                                             instance=True)

    # -- rows ------------------------------------------------------------
    def create_instance(self, **values):
        return rows.create_instance(self.ctxt, **values)

    def start_action(self, instance, action):
        """The instance action the API records for the request."""
        return instance_action.InstanceAction.action_start(
            self.ctxt, instance.uuid, action)

    def register_service(self, host, binary=service_obj.COMPUTE_BINARY,
                         seen_ago=None):
        """A service row with a heartbeat now, or ``seen_ago`` seconds ago
        (longer than ``service_down_time``: a service that is down)."""
        service = service_obj.Service.register(
            nl_context.get_admin_context(), host, binary, binary)
        if seen_ago is not None:
            set_rows(models.Service, models.Service.id == service.id,
                     last_seen_up=ago(seen_ago))
        return service

    # -- reading back ----------------------------------------------------
    def reload(self, instance):
        return instance_obj.Instance.get_by_uuid(self.ctxt, instance.uuid,
                                                 read_deleted=True)

    def mapping(self, volume_id, instance):
        """The volume's mapping to the server, or None."""
        try:
            return bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
                self.ctxt, volume_id, instance.uuid)
        except exception.VolumeBDMNotFound:
            return None

    def mappings(self, instance):
        return bdm_obj.BlockDeviceMapping.get_all_by_instance(
            self.ctxt, instance.uuid)

    def events(self, instance, ctxt=None):
        """The events of the request's action: ``{name: [event, ...]}``."""
        ctxt = ctxt or self.ctxt
        action = instance_action.InstanceAction.get_by_request_id(
            ctxt, instance.uuid, ctxt.request_id)
        found = {}
        for event in action.events:
            found.setdefault(event.event, []).append(event)
        return found

    def actions(self, instance):
        return instance_action.InstanceAction.get_all_by_instance(
            self.ctxt, instance.uuid)

    def fault(self, instance):
        """The server's newest fault, or None."""
        return instance_fault.InstanceFault.get_latest_for_instances(
            self.ctxt, [instance.uuid]).get(instance.uuid)
