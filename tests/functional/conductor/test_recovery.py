"""Which stalled or orphaned attaches a conductor settles
(``conductor.recovery.settle``), on a real database: its own at start or
once stalled, a down or stalled conductor's, a stalled API process's,
never a compute host's. What is settled is rolled back: the attachment
deleted, the mapping gone, the event's error and a fault recorded."""

from nova_lite.compute import tasks
from nova_lite.conductor import recovery
from nova_lite.db import models
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from nova_lite.volume import client as block_storage
from tests.functional.conductor import base

ME = 'nova-lite-conductor:c1'
STALLED_AFTER = 60


class SettleTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.conf.set_override('stalled_after', STALLED_AFTER,
                               group='recovery')
        # c1 is this conductor; c2 is down, c3 up.
        self.register_service('c1', binary=service_obj.CONDUCTOR_BINARY)
        self.register_service('c2', binary=service_obj.CONDUCTOR_BINARY,
                              seen_ago=3600)
        self.register_service('c3', binary=service_obj.CONDUCTOR_BINARY)
        self.register_service('h1', seen_ago=3600)

    def attach_in_flight(self, owner, seconds_ago, step=tasks.RESERVED):
        """A server with an attach that ``owner`` holds at ``step`` (from
        ``reserved`` on, with its attachment in block storage), whose last
        move was ``seconds_ago``."""
        instance = self.create_instance()
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

    def settle(self, at_start=False):
        self.notifier.reset_mock()
        settled = recovery.settle(self.ctxt, self.conf, self.volumes,
                                  self.notifier, 'c1', at_start=at_start)
        # Each attach rolled back is notified as an attach error.
        calls = self.notifier.notify_volume.call_args_list
        self.assertEqual(
            sorted(bdm.volume_id for bdm, _outcome in settled),
            sorted(c.args[4] for c in calls
                   if c.args[2:4] == ('volume_attach', 'error')))
        return sorted((bdm.volume_id, outcome) for bdm, outcome in settled)

    def assert_rolled_back(self, instance, volume_id):
        self.assertIsNone(self.mapping(volume_id, instance))
        self.assertEqual([], self.volumes.live_attachments(volume_id))
        self.assertEqual('available',
                         self.volumes.volumes[volume_id]['status'])
        [event] = self.events(instance)[recovery.ATTACH_EVENT]
        self.assertEqual(instance_action.RESULT_ERROR, event.result)
        fault = self.fault(instance)
        self.assertEqual(event.details, fault.message)

    def assert_left_alone(self, instance, volume_id, owner):
        bdm = self.mapping(volume_id, instance)
        self.assertEqual((tasks.ATTACHING, owner),
                         (bdm.task, bdm.task_owner))
        live = self.volumes.live_attachments(volume_id)
        self.assertEqual([bdm.get_task_data().get('attachment_id')],
                         [a['id'] for a in live] or [None])
        self.assertNotIn(recovery.ATTACH_EVENT, self.events(instance))
        self.assertIsNone(self.fault(instance))

    def test_own_work_at_start_or_when_stalled(self):
        fresh = self.attach_in_flight(ME, 1)
        stalled = self.attach_in_flight(ME, STALLED_AFTER + 30)
        self.assertEqual([(stalled[1], recovery.ROLLED_BACK)],
                         self.settle())
        self.assert_rolled_back(*stalled)
        self.assert_left_alone(*fresh, owner=ME)
        # At start, whatever it owned is rolled back, fresh or not.
        self.assertEqual([(fresh[1], recovery.ROLLED_BACK)],
                         self.settle(at_start=True))
        self.assert_rolled_back(*fresh)

    def test_another_conductors_work_when_down_or_stalled(self):
        down = self.attach_in_flight('nova-lite-conductor:c2', 1)
        up = self.attach_in_flight('nova-lite-conductor:c3', 1)
        up_stalled = self.attach_in_flight('nova-lite-conductor:c3',
                                           STALLED_AFTER + 30)
        self.assertEqual(sorted([(down[1], recovery.ROLLED_BACK),
                                 (up_stalled[1], recovery.ROLLED_BACK)]),
                         self.settle())
        self.assert_rolled_back(*down)
        self.assert_rolled_back(*up_stalled)
        self.assert_left_alone(*up, owner='nova-lite-conductor:c3')

    def test_an_api_process_work_when_stalled(self):
        fresh = self.attach_in_flight('nova-lite-api:a1',
                                      STALLED_AFTER - 30, tasks.ACCEPTED)
        stalled = self.attach_in_flight('nova-lite-api:a1',
                                        STALLED_AFTER + 30, tasks.ACCEPTED)
        self.assertEqual([(stalled[1], recovery.ROLLED_BACK)],
                         self.settle())
        self.assert_rolled_back(*stalled)
        self.assert_left_alone(*fresh, owner='nova-lite-api:a1')

    def test_never_a_compute_hosts_work(self):
        # Its host is down and the work long stalled: still the host's
        # to settle (only it knows whether the guest has the disk).
        owned = self.attach_in_flight('nova-lite-compute:h1', 600,
                                      tasks.CAST)
        self.assertEqual([], self.settle(at_start=True))
        self.assert_left_alone(*owned, owner='nova-lite-compute:h1')
