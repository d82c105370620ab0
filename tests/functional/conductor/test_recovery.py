"""Which stalled or orphaned attaches a conductor settles
(``conductor.recovery.settle``), on a real database: its own at start or
once stalled and not in hand, a stalled or forced-down conductor's (never
one that is only silent), a stalled API process's (re-driven: the user was
told it was accepted), a compute host's only once it is forced down
(fenced), at once. What a conductor held is rolled back: the attachment
deleted, the mapping gone, the event's error and a fault recorded, naming
who stopped."""

from nova_lite.conductor import recovery
from nova_lite.db import models
from nova_lite import exception
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from nova_lite import tasks
from nova_lite import volume_client as block_storage
from tests.functional.conductor import base

ME = 'nova-lite-conductor:c1'
STALLED_AFTER = 60
FENCED_HOST = 'h2'


class SettleTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.conf.set_override('stalled_after', STALLED_AFTER,
                               group='recovery')
        # c1 is this conductor; c2 is down (silent), c3 up, c4 forced
        # down; h1 is a compute host that is down, h2 one forced down.
        self.register_service('c1', binary=service_obj.CONDUCTOR_BINARY)
        self.register_service('c2', binary=service_obj.CONDUCTOR_BINARY,
                              seen_ago=3600)
        self.register_service('c3', binary=service_obj.CONDUCTOR_BINARY)
        c4 = self.register_service('c4',
                                   binary=service_obj.CONDUCTOR_BINARY)
        c4.update_admin_state(forced_down=True)
        self.register_service('h1', seen_ago=3600)
        h2 = self.register_service(FENCED_HOST, seen_ago=3600)
        h2.update_admin_state(forced_down=True)
        self.conductors = base.FakeConductorRPC()

    def attach_in_flight(self, owner, seconds_ago, step=tasks.RESERVED,
                         host='h1'):
        """A server (on ``host``) with an attach that ``owner`` holds at
        ``step`` (from ``reserved`` on, with its attachment in block
        storage), whose last move was ``seconds_ago``."""
        instance = self.create_instance(host=host)
        self.start_action(instance, instance_action.ATTACH_VOLUME)
        volume_id = self.volumes.create_volume()
        data = tasks.task_data(self.ctxt)
        bdm = bdm_obj.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id)
        if step != tasks.ACCEPTED:
            attachment = self.volumes.attachment_create(
                block_storage.service_context(self.ctxt), volume_id,
                instance.uuid)
            data['attachment_id'] = attachment['id']
            if step == tasks.CAST:
                bdm.attachment_id = attachment['id']
        bdm.set_task(tasks.ATTACHING, owner, step, data)
        bdm.create()
        base.set_rows(models.BlockDeviceMapping,
                      models.BlockDeviceMapping.id == bdm.id,
                      task_updated_at=base.ago(seconds_ago))
        return instance, volume_id

    def settle(self, at_start=False, in_hand=()):
        self.notifier.reset_mock()
        settled = recovery.settle(self.ctxt, self.conf, self.volumes,
                                  self.notifier, 'c1', at_start=at_start,
                                  in_hand=in_hand, compute_api=self.compute,
                                  conductor_api=self.conductors)
        # Each attach rolled back is notified as an attach error.
        calls = self.notifier.notify_volume.call_args_list
        self.assertEqual(
            sorted(item.volume_id for item, outcome in settled
                   if item.task == tasks.ATTACHING and
                   outcome == tasks.ROLLED_BACK),
            sorted(c.args[4] for c in calls
                   if c.args[2:4] == ('volume_attach', 'error')))
        return sorted((item.volume_id, outcome) for item, outcome in settled)

    def assert_rolled_back(self, instance, volume_id, who=None):
        self.assertIsNone(self.mapping(volume_id, instance))
        self.assertEqual([], self.volumes.live_attachments(volume_id))
        self.assertEqual('available',
                         self.volumes.volumes[volume_id]['status'])
        [event] = self.events(instance)[tasks.CONDUCTOR_ATTACH_EVENT]
        self.assertEqual(instance_action.RESULT_ERROR, event.result)
        fault = self.fault(instance)
        self.assertEqual(event.details, fault.message)
        if who is not None:
            # The error names who really stopped.
            self.assertIn(who, event.details)

    def assert_left_alone(self, instance, volume_id, owner):
        bdm = self.mapping(volume_id, instance)
        self.assertEqual((tasks.ATTACHING, owner),
                         (bdm.task, bdm.task_owner))
        live = self.volumes.live_attachments(volume_id)
        self.assertEqual([bdm.get_task_data().get('attachment_id')],
                         [a['id'] for a in live] or [None])
        self.assertNotIn(tasks.CONDUCTOR_ATTACH_EVENT, self.events(instance))
        self.assertIsNone(self.fault(instance))

    def test_own_work_at_start_or_when_stalled(self):
        fresh = self.attach_in_flight(ME, 1)
        stalled = self.attach_in_flight(ME, STALLED_AFTER + 30)
        self.assertEqual([(stalled[1], tasks.ROLLED_BACK)],
                         self.settle())
        self.assert_rolled_back(*stalled, who='%s stopped moving it' % ME)
        self.assert_left_alone(*fresh, owner=ME)
        # At start, whatever it owned is rolled back, fresh or not.
        self.assertEqual([(fresh[1], tasks.ROLLED_BACK)],
                         self.settle(at_start=True))
        self.assert_rolled_back(*fresh, who='%s restarted' % ME)

    def test_own_work_in_hand_is_left_alone(self):
        # A thread of this conductor works on it (a long reservation):
        # stalled or not, the periodic settling does not take it.
        instance, volume_id = self.attach_in_flight(ME, STALLED_AFTER + 30)
        bdm = self.mapping(volume_id, instance)
        self.assertEqual([], self.settle(in_hand={bdm.uuid}))
        self.assert_left_alone(instance, volume_id, owner=ME)

    def test_another_conductors_work_when_stalled_or_forced_down(self):
        # c2 misses its heartbeats: silent, not dead; its fresh work is
        # its own. c4 is forced down: its work is settled at once.
        silent = self.attach_in_flight('nova-lite-conductor:c2', 1)
        fenced = self.attach_in_flight('nova-lite-conductor:c4', 1)
        up = self.attach_in_flight('nova-lite-conductor:c3', 1)
        up_stalled = self.attach_in_flight('nova-lite-conductor:c3',
                                           STALLED_AFTER + 30)
        self.assertEqual(sorted([(fenced[1], tasks.ROLLED_BACK),
                                 (up_stalled[1], tasks.ROLLED_BACK)]),
                         self.settle())
        self.assert_rolled_back(*fenced,
                                who='nova-lite-conductor:c4 was forced down')
        self.assert_rolled_back(*up_stalled)
        self.assert_left_alone(*silent, owner='nova-lite-conductor:c2')
        self.assert_left_alone(*up, owner='nova-lite-conductor:c3')

    def test_an_api_process_work_is_redriven_when_stalled(self):
        # Accepted (the user got 202), its message lost: cast to the
        # conductors again, not rolled back. The task stays the API's at
        # ``accepted`` for the re-driven message to take; its last move is
        # now (the claim), so it is not re-driven again at once.
        fresh = self.attach_in_flight('nova-lite-api:a1',
                                      STALLED_AFTER - 30, tasks.ACCEPTED)
        stalled = self.attach_in_flight('nova-lite-api:a1',
                                        STALLED_AFTER + 30, tasks.ACCEPTED)
        self.assertEqual([(stalled[1], tasks.REDRIVEN)], self.settle())
        [(method, cast)] = self.conductors.casts
        self.assertEqual(('attach_volume', stalled[1], stalled[0].uuid),
                         (method, cast['volume_id'], cast['instance'].uuid))
        self.assertEqual((tasks.ATTACHING, 'nova-lite-api:a1',
                          tasks.ACCEPTED),
                         (cast['bdm'].task, cast['bdm'].task_owner,
                          cast['bdm'].task_step))
        self.assert_left_alone(*stalled, owner='nova-lite-api:a1')
        self.assert_left_alone(*fresh, owner='nova-lite-api:a1')
        self.assertEqual([], self.settle())

    def test_never_a_silent_compute_hosts_work(self):
        # Its host is down and the work long stalled: still the host's
        # to settle (only it knows whether the guest has the disk).
        owned = self.attach_in_flight('nova-lite-compute:h1', 600,
                                      tasks.CAST)
        self.assertEqual([], self.settle(at_start=True))
        self.assert_left_alone(*owned, owner='nova-lite-compute:h1')

    def test_a_fenced_hosts_work_at_once(self):
        # Forced down: whoever holds the work, fresh or not, in hand or
        # not, it is settled now. Attaches are rolled back.
        host_owned = self.attach_in_flight(
            'nova-lite-compute:%s' % FENCED_HOST, 1, tasks.CAST,
            host=FENCED_HOST)
        in_reservation = self.attach_in_flight(ME, 1, host=FENCED_HOST)
        held = self.mapping(in_reservation[1], in_reservation[0])
        self.assertEqual(
            sorted([(host_owned[1], tasks.ROLLED_BACK),
                    (in_reservation[1], tasks.ROLLED_BACK)]),
            self.settle(in_hand={held.uuid}))
        self.assert_rolled_back(*host_owned, who='the compute host %s was '
                                'forced down' % FENCED_HOST)
        self.assert_rolled_back(*in_reservation)
        # The worker that held it can no longer write it: its generation
        # moved (here, the row is gone too).
        self.assertRaises(exception.TaskOwnerChanged, held.move_task,
                          tasks.CAST)

    def detach_in_flight(self, owner, step, seconds_ago=1, host=FENCED_HOST):
        instance = self.create_instance(host=host)
        self.start_action(instance, instance_action.DETACH_VOLUME)
        volume_id = self.volumes.create_volume()
        svc = block_storage.service_context(self.ctxt)
        attachment = self.volumes.attachment_create(svc, volume_id,
                                                    instance.uuid)
        self.volumes.attachment_complete(svc, attachment['id'])
        bdm = bdm_obj.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id, device_name='/dev/vdb')
        bdm.attachment_id = attachment['id']
        bdm.set_task(tasks.DETACHING, owner, step, tasks.task_data(self.ctxt))
        bdm.create()
        base.set_rows(models.BlockDeviceMapping,
                      models.BlockDeviceMapping.id == bdm.id,
                      task_updated_at=base.ago(seconds_ago))
        return instance, volume_id

    def test_a_fenced_hosts_detaches_are_finished_at_once(self):
        # The detach the host took, and the one still queued for it (the
        # API's, accepted): both finished without it.
        taken = self.detach_in_flight(
            'nova-lite-compute:%s' % FENCED_HOST, tasks.GUEST_DETACHING)
        queued = self.detach_in_flight('nova-lite-api:a1', tasks.ACCEPTED)
        self.assertEqual(sorted([(taken[1], tasks.FINISHED),
                                 (queued[1], tasks.FINISHED)]),
                         self.settle())
        for instance, volume_id in (taken, queued):
            self.assertIsNone(self.mapping(volume_id, instance))
            self.assertEqual([], self.volumes.live_attachments(volume_id))
            self.assertEqual([], [
                e for e in self.events(instance).get(
                    tasks.COMPUTE_DETACH_EVENT, [])
                if e.result != instance_action.RESULT_SUCCESS])
        self.assertEqual([], self.compute.casts)

    def test_a_silent_hosts_queued_detach_waits(self):
        # Accepted long ago, its host down: its message may still be
        # queued for the host; not re-driven (the host is not up), not
        # rolled back.
        instance, volume_id = self.detach_in_flight(
            'nova-lite-api:a1', tasks.ACCEPTED, seconds_ago=600, host='h1')
        self.assertEqual([], self.settle())
        bdm = self.mapping(volume_id, instance)
        self.assertEqual((tasks.DETACHING, tasks.ACCEPTED),
                         (bdm.task, bdm.task_step))
        self.assertEqual([], self.compute.casts)

    def test_a_stalled_detach_of_an_up_host_is_redriven(self):
        self.register_service('h3')
        instance, volume_id = self.detach_in_flight(
            'nova-lite-api:a1', tasks.ACCEPTED, seconds_ago=600, host='h3')
        bdm = self.mapping(volume_id, instance)
        self.assertEqual([(volume_id, tasks.REDRIVEN)], self.settle())
        [(method, cast)] = self.compute.casts
        self.assertEqual(('detach_volume', volume_id, bdm.task_ref()),
                         (method, cast['volume_id'], cast['task_ref']))
