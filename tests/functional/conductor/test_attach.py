"""The conductor's attach workflow on a real database: it takes the API's
mapping over, has the host name the device, reserves the volume, hands the
mapping over to the host and casts; a shelved-offloaded server needs no
host; every failure leaves nothing reserved and no mapping, and is
recorded (the event's error, a fault, a notification)."""

import inspect
import time

import oslo_messaging as messaging
import sqlalchemy as sa

from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite.conductor import attach
from nova_lite.conductor import recovery
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_action
from nova_lite import states
from nova_lite import tasks
from tests.functional.conductor import base

API_OWNER = 'nova-lite-api:api1'
CONDUCTOR_OWNER = 'nova-lite-conductor:%s' % base.TestCase.CONDUCTOR
COMPUTE_OWNER = 'nova-lite-compute:compute1'


class FakeComputeRPCTest(base.TestCase):
    def test_fake_has_the_signatures_of_the_rpc_api(self):
        fake = base.FakeComputeRPC
        names = [n for n, _v in inspect.getmembers(fake, inspect.isfunction)
                 if not n.startswith('_')]
        self.assertIn('attach_volume', names)
        for name in names:
            self.assertEqual(
                inspect.signature(getattr(compute_rpcapi.ComputeAPI, name)),
                inspect.signature(getattr(fake, name)), name)


class _AttachTestCase(base.TestCase):
    """A server, and the attach workflow run on it (no tests here)."""

    def setUp(self):
        super().setUp()
        self.instance = self.create_instance()

    def api_bdm(self, volume_id, **kwargs):
        """What the API writes in one transaction: the mapping (no device
        name, no attachment, owned by the API) and the action."""
        bdm = bdm_obj.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, volume_id, **kwargs)
        bdm.set_task(tasks.ATTACHING, API_OWNER, tasks.ACCEPTED,
                     tasks.task_data(self.ctxt))
        with instance_action.transaction(self.ctxt):
            bdm.create()
            self.start_action(self.instance, instance_action.ATTACH_VOLUME)
        return bdm

    def run_attach(self, volume_id, bdm=None, **kwargs):
        if bdm is None:
            bdm = self.api_bdm(volume_id, tag=kwargs.pop('tag', None))
        self.bdm = bdm
        return attach.attach_volume(
            self.ctxt, self.compute, self.volumes, self.instance, volume_id,
            bdm=bdm, host=self.CONDUCTOR, notifier=self.notifier, **kwargs)

    def observe_mapping_and_event(self):
        """At each message to the host: the mapping and the conductor's
        event as the database has them."""
        def observe(method, ctxt, **kwargs):
            volume_id = kwargs.get('volume_id') or kwargs['bdm'].volume_id
            bdm = self.mapping(volume_id, self.instance)
            [event] = self.events(self.instance)[tasks.CONDUCTOR_ATTACH_EVENT]
            return bdm, event
        self.compute.observe = observe

    def attach_event(self):
        [event] = self.events(self.instance)[tasks.CONDUCTOR_ATTACH_EVENT]
        return event

    def assert_failure_recorded(self, exc_class, volume_id):
        event = self.attach_event()
        self.assertEqual((self.CONDUCTOR, instance_action.RESULT_ERROR),
                         (event.host, event.result))
        self.assertIsNotNone(event.finish_time)
        self.assertIn(exc_class.__name__, event.traceback)
        fault = self.fault(self.instance)
        self.assertIsNotNone(fault)
        self.assertEqual(event.details, fault.message)
        self.assertIn(exc_class.__name__, fault.details)
        self.notifier.notify_volume.assert_called_once()
        args, kwargs = self.notifier.notify_volume.call_args
        self.assertEqual(('volume_attach', 'error', volume_id), args[2:5])
        self.assertIsInstance(kwargs['exc'], exc_class)
        self.assertIsNone(self.mapping(volume_id, self.instance))


class AttachWorkflowTest(_AttachTestCase):
    def test_success(self):
        vol = self.volumes.create_volume()
        self.observe_mapping_and_event()
        device = self.run_attach(vol, device='/dev/vdc')
        self.assertEqual('/dev/vdc', device)
        self.assertEqual('reserved', self.volumes.volumes[vol]['status'])
        [attachment] = self.volumes.live_attachments(vol)
        # The API's mapping, and no other, got the device name and the
        # attachment and was handed over to the host.
        [bdm] = self.mappings(self.instance)
        self.assertEqual(
            (self.bdm.id, '/dev/vdc', attachment['id'], tasks.ATTACHING,
             tasks.CAST, COMPUTE_OWNER),
            (bdm.id, bdm.device_name, bdm.attachment_id, bdm.task,
             bdm.task_step, bdm.task_owner))
        self.assertEqual(self.bdm.id,
                         self.compute.reserve_calls[0]['bdm'].id)
        [(method, cast)] = self.compute.casts
        self.assertEqual('attach_volume', method)
        self.assertEqual((self.bdm.id, attachment['id'], self.instance.uuid),
                         (cast['bdm'].id, cast['bdm'].attachment_id,
                          cast['instance'].uuid))
        # The API recorded the action; the conductor only its event.
        self.assertEqual([instance_action.ATTACH_VOLUME],
                         [a.action for a in self.actions(self.instance)])
        self.assertEqual([tasks.CONDUCTOR_ATTACH_EVENT],
                         list(self.events(self.instance)))
        event = self.attach_event()
        self.assertEqual((self.CONDUCTOR, instance_action.RESULT_SUCCESS),
                         (event.host, event.result))
        self.assertIsNone(self.fault(self.instance))
        self.assertFalse(self.notifier.notify_volume.called)

    def test_event_finished_in_the_save_transaction_before_the_cast(self):
        # Every UPDATE and COMMIT on the database, and the cast, in the
        # order they happen (SQLAlchemy's engine events of the test
        # database: observed, nothing replaced).
        log = []
        engine = self.db.engine

        def on_execute(conn, cursor, statement, parameters, context,
                       executemany):
            words = statement.split()
            if words[0] == 'UPDATE':
                log.append(('UPDATE', words[1], tuple(parameters)))

        def on_commit(conn):
            log.append(('COMMIT',))
        sa.event.listen(engine, 'before_cursor_execute', on_execute)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        on_execute)
        sa.event.listen(engine, 'commit', on_commit)
        self.addCleanup(sa.event.remove, engine, 'commit', on_commit)

        def observe(method, ctxt, **kwargs):
            log.append(('CAST', method))
            if method != 'attach_volume':
                return None
            # What a host reading the database now sees.
            return (self.mapping(kwargs['bdm'].volume_id, self.instance),
                    self.attach_event())
        self.compute.observe = observe
        vol = self.volumes.create_volume()
        self.run_attach(vol)
        [attachment] = self.volumes.live_attachments(vol)

        # The steps, as the host saw them: when it was asked for a device
        # name the conductor had taken the attach over (see the next
        # test); at the cast the mapping had the attachment, in the task's
        # data (what a roll back deletes) and in its column, and was the
        # host's, and the event was over.
        [(first, _none), (second, (bdm, event))] = self.compute.observed
        self.assertEqual(['reserve_block_device_name', 'attach_volume'],
                         [first, second])
        self.assertEqual(
            (tasks.CAST, COMPUTE_OWNER, attachment['id'], attachment['id'],
             self.ctxt.request_id),
            (bdm.task_step, bdm.task_owner, bdm.attachment_id,
             bdm.get_task_data()['attachment_id'],
             bdm.get_task_data()['request_id']))
        self.assertEqual(instance_action.RESULT_SUCCESS, event.result)

        # The hand-over and the event's end: one transaction (no commit
        # between them), committed before the cast.
        def index(match):
            return [i for i, entry in enumerate(log) if match(entry)]
        [handover] = index(lambda e: e[:2] == ('UPDATE',
                                               'block_device_mappings') and
                           tasks.CAST in e[2])
        [finish] = index(lambda e: e[:2] == ('UPDATE',
                                             'instance_actions_events') and
                         instance_action.RESULT_SUCCESS in e[2])
        [cast] = index(lambda e: e == ('CAST', 'attach_volume'))
        commits = index(lambda e: e == ('COMMIT',))
        self.assertLess(handover, finish)
        self.assertEqual([], [c for c in commits if handover < c < finish])
        self.assertTrue([c for c in commits if finish < c < cast])

    def test_takes_the_attach_over_before_the_host_names_the_device(self):
        self.observe_mapping_and_event()
        vol = self.volumes.create_volume()
        self.run_attach(vol)
        (method, (bdm, event)), _cast = self.compute.observed
        self.assertEqual('reserve_block_device_name', method)
        self.assertEqual((tasks.RESERVING, CONDUCTOR_OWNER, None, None),
                         (bdm.task_step, bdm.task_owner, bdm.device_name,
                          bdm.attachment_id))
        # The event is open while the conductor works.
        self.assertIsNone(event.finish_time)

    def test_shelved_offloaded_needs_no_host(self):
        self.instance = self.create_instance(
            vm_state=states.SHELVED_OFFLOADED, host=None)
        vol = self.volumes.create_volume()
        seen = []
        complete = self.volumes.attachment_complete

        def attachment_complete(ctxt, attachment_id):
            # The attachment is recorded on the mapping before block
            # storage completes it.
            seen.append(self.mapping(vol, self.instance))
            return complete(ctxt, attachment_id)
        self.volumes.attachment_complete = attachment_complete
        self.assertIsNone(self.run_attach(vol))
        self.assertEqual([], self.compute.reserve_calls)
        self.assertEqual([], self.compute.casts)
        # Completed without a connector: in-use at once.
        self.assertEqual('in-use', self.volumes.volumes[vol]['status'])
        names = [c[0] for c in self.volumes.calls]
        self.assertEqual(['attachment_create', 'attachment_complete'], names)
        [attachment] = self.volumes.live_attachments(vol)
        [before] = seen
        self.assertEqual((tasks.RESERVED, CONDUCTOR_OWNER, attachment['id']),
                         (before.task_step, before.task_owner,
                          before.attachment_id))
        # The task is over; the device is named at unshelve.
        bdm = self.mapping(vol, self.instance)
        self.assertEqual((None, None, None, attachment['id']),
                         (bdm.device_name, bdm.task, bdm.task_owner,
                          bdm.attachment_id))
        self.assertEqual(instance_action.RESULT_SUCCESS,
                         self.attach_event().result)

    def test_older_api_without_mapping(self):
        vol = self.volumes.create_volume()
        device = attach.attach_volume(
            self.ctxt, self.compute, self.volumes, self.instance, vol,
            tag='t', host=self.CONDUCTOR, notifier=self.notifier)
        self.assertEqual('/dev/vdb', device)
        # The conductor created the mapping and recorded the action.
        [bdm] = self.mappings(self.instance)
        self.assertEqual(('t', '/dev/vdb', tasks.CAST, COMPUTE_OWNER),
                         (bdm.tag, bdm.device_name, bdm.task_step,
                          bdm.task_owner))
        self.assertEqual([instance_action.ATTACH_VOLUME],
                         [a.action for a in self.actions(self.instance)])
        self.assertEqual(instance_action.RESULT_SUCCESS,
                         self.attach_event().result)
        [(_method, cast)] = self.compute.casts
        self.assertEqual((bdm.id, 't'), (cast['bdm'].id, cast['bdm'].tag))

    def test_older_hosts_create_the_mapping(self):
        self.compute.new_hosts = False
        vol = self.volumes.create_volume()
        bdm = self.api_bdm(vol, tag='t', delete_on_termination=True)
        self.assertEqual('/dev/vdb', self.run_attach(vol, bdm=bdm))
        # The API's mapping gave way to the one the host created, which
        # carries the task from then on.
        [created] = self.mappings(self.instance)
        # (SQLite may give the new row the id the deleted one had.)
        self.assertNotEqual(bdm.uuid, created.uuid)
        self.assertEqual(
            ('t', True, '/dev/vdb', tasks.ATTACHING, tasks.CAST,
             COMPUTE_OWNER, self.volumes.live_attachments(vol)[0]['id']),
            (created.tag, created.delete_on_termination, created.device_name,
             created.task, created.task_step, created.task_owner,
             created.attachment_id))
        self.assertEqual(self.ctxt.request_id,
                         created.get_task_data()['request_id'])
        [call] = self.compute.reserve_calls
        self.assertIsNone(call['bdm'])
        self.assertEqual(('t', True), (call['tag'],
                                       call['delete_on_termination']))
        [(_method, cast)] = self.compute.casts
        self.assertEqual(created.uuid, cast['bdm'].uuid)

    def test_reserve_failure(self):
        vol = self.volumes.create_volume()
        self.compute.reserve_error = exception.TooManyDiskDevices(maximum=1)
        self.assertRaises(exception.TooManyDiskDevices, self.run_attach, vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertEqual([], self.volumes.live_attachments(vol))
        self.assert_failure_recorded(exception.TooManyDiskDevices, vol)
        self.assertEqual(exception.TooManyDiskDevices(
            maximum=1).format_message(), self.fault(self.instance).message)

    def test_volume_not_reservable_destroys_the_bdm(self):
        vol = self.volumes.create_volume(status='in-use')
        self.assertRaises(exception.InvalidVolume, self.run_attach, vol)
        self.assertEqual([], self.compute.casts)
        self.assertEqual([], self.mappings(self.instance))
        self.assert_failure_recorded(exception.InvalidVolume, vol)

    def test_cast_failure_deletes_the_attachment(self):
        self.observe_mapping_and_event()
        vol = self.volumes.create_volume()
        self.compute.cast_error = messaging.MessageDeliveryFailure('down')
        self.assertRaises(messaging.MessageDeliveryFailure, self.run_attach,
                          vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertEqual([], self.volumes.live_attachments(vol))
        self.assertEqual([], self.mappings(self.instance))
        # The attachment of a server is deleted as the service.
        [delete] = [c for c in self.volumes.calls
                    if c[0] == 'attachment_delete']
        self.assert_failure_recorded(messaging.MessageDeliveryFailure, vol)
        # The event had been finished before the cast; the failure
        # finished it again (the same event), as an error.
        _reserve, (method, (_bdm, at_cast)) = self.compute.observed
        self.assertEqual('attach_volume', method)
        self.assertEqual(instance_action.RESULT_SUCCESS, at_cast.result)
        event = self.attach_event()
        self.assertEqual((at_cast.id, instance_action.RESULT_ERROR,
                          'MessageDeliveryFailure'),
                         (event.id, event.result, event.details))

    def test_offloaded_completion_failure_deletes_the_attachment(self):
        self.instance = self.create_instance(
            vm_state=states.SHELVED_OFFLOADED, host=None)
        vol = self.volumes.create_volume()
        self.volumes.fail['attachment_complete'] = (
            exception.VolumeBackendAPIException(data='x'))
        self.assertRaises(exception.VolumeBackendAPIException,
                          self.run_attach, vol)
        self.assertEqual('available', self.volumes.volumes[vol]['status'])
        self.assertEqual([], self.volumes.live_attachments(vol))
        self.assertEqual([], self.mappings(self.instance))
        self.assert_failure_recorded(exception.VolumeBackendAPIException,
                                     vol)

    def test_timeout_removes_the_orphan_bdm(self):
        # A host older than RPC 1.2 creates its own mapping: it did, but
        # its answer never came back.
        self.compute.new_hosts = False
        vol = self.volumes.create_volume()
        self.compute.reply_error = messaging.MessagingTimeout('slow')
        self.assertRaises(exception.HostDidNotAnswer, self.run_attach, vol)
        [call] = self.compute.reserve_calls
        self.assertIsNone(call['bdm'])
        # Neither the API's mapping nor the one the host made is left.
        self.assertEqual([], self.mappings(self.instance))
        self.assertEqual([], self.volumes.live_attachments(vol))
        self.assert_failure_recorded(exception.HostDidNotAnswer, vol)

    def test_timeout_without_orphan(self):
        other = self.volumes.create_volume()
        kept = bdm_obj.BlockDeviceMapping.new_volume(
            self.ctxt, self.instance.uuid, other, device_name='/dev/vdc')
        kept.create()
        vol = self.volumes.create_volume()
        self.compute.reserve_error = messaging.MessagingTimeout('slow')
        # A host that did not answer is a 409 for the API, not a timeout
        # of the API's own call.
        self.assertRaises(exception.HostDidNotAnswer, self.run_attach, vol)
        # The API's mapping is removed, and only it.
        self.assertEqual([kept.id], [b.id for b in
                                     self.mappings(self.instance)])
        self.assert_failure_recorded(exception.HostDidNotAnswer, vol)


class SettleRaceTest(_AttachTestCase):
    """A settler and a live worker never both win (issue 27): the
    settling of the conductor's own stalled work, run while a worker of
    the same conductor still holds the attach (its reservation call to
    the host took longer than ``[recovery] stalled_after``), under the
    same owner name.

    Replayed with the project's objects on the database: while the host
    names the device, the periodic thread of the same conductor reads the
    attach (stalled) and takes it over; the worker then goes on, and the
    settler rolls back. Before the fencing token, the take-over rewrote
    the same owner, so the worker's next moves still matched: it handed
    the attach to the host and cast, and the settler's unconditional
    delete then removed the mapping the host was attaching."""

    def test_the_worker_stops_at_its_next_write(self):
        vol = self.volumes.create_volume()
        settler = {}

        def observe(method, ctxt, **kwargs):
            if method != 'reserve_block_device_name':
                return None
            # The periodic thread's read of the stalled mapping, and its
            # take-over under the conductor's own name.
            bdm = self.mapping(vol, self.instance)
            bdm.take_over_task(CONDUCTOR_OWNER)
            settler['bdm'] = bdm
            return None
        self.compute.observe = observe
        self.assertRaises(exception.TaskOwnerChanged, self.run_attach, vol)
        # The worker did not hand the attach to the host: no cast.
        self.assertEqual([], [m for m, _kw in self.compute.casts])
        # It deleted the attachment it made itself (the settler, which
        # read the mapping before it was made, could not know it), and
        # left the mapping, the event and the fault to the settler.
        self.assertEqual([], self.volumes.live_attachments(vol))
        self.assertIsNotNone(self.mapping(vol, self.instance))
        self.assertIsNone(self.fault(self.instance))
        self.assertFalse(self.notifier.notify_volume.called)
        # The settler's roll back wins: its delete holds the generation.
        self.assertTrue(settler['bdm'].destroy())
        self.assertIsNone(self.mapping(vol, self.instance))
        self.assertEqual('available', self.volumes.volumes[vol]['status'])

    def test_the_settler_loses_to_a_worker_that_moved(self):
        # The other order: the worker moves on first; the settler's
        # take-over (a compare-and-swap on the last move it read) fails,
        # and a delete by an object that read the task before is refused.
        vol = self.volumes.create_volume()
        self.run_attach(vol)
        stale = self.mapping(vol, self.instance)
        worker = self.mapping(vol, self.instance)
        worker.move_task(tasks.CONNECTING, owner=COMPUTE_OWNER)
        self.assertRaises(exception.TaskOwnerChanged, stale.take_over_task,
                          CONDUCTOR_OWNER)
        taker = self.mapping(vol, self.instance)
        taker.take_over_task(CONDUCTOR_OWNER)
        self.assertFalse(worker.destroy())
        self.assertRaises(exception.TaskOwnerChanged, worker.move_task,
                          tasks.CONNECTED)
        self.assertIsNotNone(self.mapping(vol, self.instance))


class KeepAliveTest(_AttachTestCase):
    def test_a_long_reservation_keeps_the_attach_alive(self):
        # The host takes longer than [recovery] stalled_after to name the
        # device (its instance lock is busy): the conductor touches the
        # task meanwhile, so another conductor's settling finds it moving
        # and leaves it alone; the attach then completes.
        self.conf.set_override('stalled_after', 4, group='recovery')
        vol = self.volumes.create_volume()
        seen = {}

        def observe(method, ctxt, **kwargs):
            if method != 'reserve_block_device_name':
                return None
            start = self.mapping(vol, self.instance).task_updated_at
            deadline = time.monotonic() + 30
            # Held until the task has been idle, but for the touches,
            # longer than stalled_after.
            while True:
                moved = self.mapping(vol, self.instance).task_updated_at
                if (moved - start).total_seconds() > 4.5:
                    break
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
            seen['settled'] = recovery.settle(
                self.ctxt, self.conf, self.volumes, self.notifier, 'c9')
            return None
        self.compute.observe = observe
        self.assertEqual('/dev/vdb', self.run_attach(vol, conf=self.conf))
        self.assertEqual([], seen['settled'])
        [(method, _cast)] = self.compute.casts
        self.assertEqual('attach_volume', method)
