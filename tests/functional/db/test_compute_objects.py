"""The compute objects on real databases: compare-and-swap state moves,
unique constraints turned into domain errors, actions and events. Run on
SQLite, and on MariaDB and PostgreSQL when their servers answer (see
``tests.fixtures.database.opportunistic_url``)."""

import concurrent.futures
import datetime
import threading
from unittest import mock

from oslo_utils import uuidutils
import testtools

from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite.db import migration
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import stale_disk
from nova_lite import states
from tests.fixtures import database as db_fixture
from tests.fixtures import rows


class _ObjectTests(object):
    def setUp(self):
        super().setUp()
        self._use_database()
        objects.register_all()
        self.ctxt = nl_context.RequestContext('demo', 'demo',
                                              roles=['member'])

    def _instance(self, **values):
        return rows.create_instance(self.ctxt, **values)

    def test_save_is_a_compare_and_swap(self):
        instance = self._instance()
        first = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        second = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        first.task_state = states.POWERING_OFF
        first.save(expected_task_state=[None])
        second.task_state = states.PAUSING
        exc = self.assertRaises(exception.UnexpectedTaskStateError,
                                second.save, expected_task_state=[None])
        self.assertIn('Actual: powering-off', exc.format_message())
        self.assertEqual(states.POWERING_OFF, objects.Instance.get_by_uuid(
            self.ctxt, instance.uuid).task_state)

    def test_expected_host_and_deleted_rows(self):
        instance = self._instance(host=None, task_state=states.SCHEDULING,
                                  vm_state=states.BUILDING)
        instance.host = 'compute2'
        instance.save(expected_task_state=[states.SCHEDULING],
                      expected_host=None)
        again = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        again.host = 'compute1'
        self.assertRaises(exception.UnexpectedTaskStateError, again.save,
                          expected_host=None)
        again.refresh()
        again.vm_state = states.DELETED
        again.save()
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.ctxt,
                          instance.uuid)
        self.assertEqual(states.DELETED, objects.Instance.get_by_uuid(
            self.ctxt, instance.uuid, read_deleted=True).vm_state)
        self.assertEqual([], instance_obj.get_all(self.ctxt, 'demo'))

    def test_listing_and_counting(self):
        a = self._instance(display_name='alpha')
        self._instance(display_name='beta', host='compute2',
                       vm_state=states.STOPPED)
        self.assertEqual([a.uuid], [i.uuid for i in instance_obj.get_all(
            self.ctxt, 'demo', name='^al')])
        self.assertEqual(['beta'], [i.display_name for i in
                                    instance_obj.get_all(
                                        self.ctxt, 'demo',
                                        status='SHUTOFF')])
        self.assertEqual({'compute1': 1, 'compute2': 1},
                         instance_obj.count_by_host(
                             self.ctxt, ['compute1', 'compute2']))

    def test_pages_by_keyset_with_a_regular_expression(self):
        made = [self._instance(display_name='srv-%d' % i) for i in range(5)]
        self._instance(display_name='other')
        newest_first = [i.uuid for i in reversed(made)]
        seen, marker = [], None
        while True:
            page = instance_obj.get_all(self.ctxt, 'demo', name='^srv-[0-9]$',
                                        limit=2, marker=marker)
            if not page:
                break
            seen.extend(i.uuid for i in page)
            marker = page[-1].uuid
        self.assertEqual(newest_first, seen)
        # Not valid as a regular expression: matched as plain text.
        self.assertEqual([], instance_obj.get_all(self.ctxt, 'demo',
                                                  name='srv-['))
        self.assertRaises(exception.MarkerNotFound, instance_obj.get_all,
                          self.ctxt, 'demo', marker=uuidutils.generate_uuid())

    def test_mappings_unique_per_volume_and_device(self):
        instance = self._instance()
        volume_id = uuidutils.generate_uuid()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id, device_name='/dev/vdb')
        bdm.create()
        same_device = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid(),
            device_name='/dev/vdb')
        self.assertRaises(exception.DevicePathInUse, same_device.create)
        same_volume = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id, device_name='/dev/vdc')
        exc = self.assertRaises(exception.InvalidVolume, same_volume.create)
        self.assertIn('already attached', exc.format_message())
        # Mappings without a device name never collide.
        for _ in range(2):
            objects.BlockDeviceMapping.new_volume(
                self.ctxt, instance.uuid, uuidutils.generate_uuid()).create()
        by_instance = objects.BlockDeviceMapping.get_all_by_instances(
            self.ctxt, [instance.uuid])
        self.assertEqual(3, len(by_instance[instance.uuid]))
        found = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, volume_id, instance.uuid)
        self.assertTrue(found.attach_pending)
        found.set_connection_info({'driver_volume_type': 'fake'})
        found.attachment_id = uuidutils.generate_uuid()
        found.save()
        # No longer pending: the compare-and-swap delete leaves it.
        self.assertFalse(found.attach_pending)
        self.assertFalse(found.destroy_if_pending())
        self.assertEqual({'driver_volume_type': 'fake'},
                         objects.BlockDeviceMapping.get_all_by_volume(
                             self.ctxt, volume_id)[0].get_connection_info())
        self.assertTrue(found.destroy())
        self.assertFalse(found.destroy())
        self.assertRaises(exception.VolumeBDMNotFound,
                          objects.BlockDeviceMapping
                          .get_by_volume_and_instance, self.ctxt, volume_id,
                          instance.uuid)

    def test_created_mapping_is_what_is_read_back(self):
        instance = self._instance()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid(),
            device_name='/dev/vdb', boot_index=1, tag='t')
        bdm.create()
        local = objects.BlockDeviceMapping(
            self.ctxt, instance_uuid=instance.uuid, source_type='image',
            destination_type='local', boot_index=0)
        local.create()
        for created in (bdm, local):
            self.assertEqual(set(), created.obj_what_changed())
            self.assertIs(self.ctxt, created._context)
            read, = [b for b in objects.BlockDeviceMapping
                     .get_all_by_instance(self.ctxt, instance.uuid)
                     if b.id == created.id]
            for name in created.fields:
                self.assertTrue(created.obj_attr_is_set(name), name)
                self.assertEqual(getattr(read, name),
                                 getattr(created, name), name)
                self.assertIs(type(getattr(read, name)),
                              type(getattr(created, name)), name)
        self.assertIsNone(local.volume_id)
        self.assertIs(False, local.delete_on_termination)
        self.assertIsNotNone(local.created_at)
        self.assertIsNone(local.updated_at)
        # No volume: the mappings without one.
        self.assertEqual([local.id], [
            b.id for b in objects.BlockDeviceMapping.get_all_by_volume(
                self.ctxt, None)])
        self.assertEqual(local.id, objects.BlockDeviceMapping
                         .get_by_volume_and_instance(
                             self.ctxt, None, instance.uuid).id)
        self.assertEqual([bdm.id, local.id], [
            b.id for b in objects.BlockDeviceMapping.get_all_by_instance(
                self.ctxt, instance.uuid)])
        # save() writes what changed and updated_at.
        bdm.device_name = '/dev/vdc'
        bdm.save()
        read = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, bdm.volume_id, instance.uuid)
        self.assertEqual('/dev/vdc', read.device_name)
        self.assertEqual(read.updated_at.replace(microsecond=0),
                         bdm.updated_at.replace(microsecond=0))

    def test_mapping_and_action_in_one_transaction(self):
        instance = self._instance()
        volume_id = uuidutils.generate_uuid()

        class Abort(Exception):
            pass
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id)
        try:
            with instance_action.transaction(self.ctxt):
                bdm.create()
                instance_action.InstanceAction.action_start(
                    self.ctxt, instance.uuid, 'attach_volume')
                # Read in the transaction: the new row.
                self.assertEqual(bdm.id, objects.BlockDeviceMapping
                                 .get_by_volume_and_instance(
                                     self.ctxt, volume_id,
                                     instance.uuid).id)
                raise Abort()
        except Abort:
            pass
        # Both rolled back.
        self.assertEqual([], objects.BlockDeviceMapping.get_all_by_volume(
            self.ctxt, volume_id))
        self.assertEqual([], instance_action.InstanceAction
                         .get_all_by_instance(self.ctxt, instance.uuid))
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id)
        with instance_action.transaction(self.ctxt):
            bdm.create()
            instance_action.InstanceAction.action_start(
                self.ctxt, instance.uuid, 'attach_volume')
        self.assertEqual([bdm.id], [
            b.id for b in objects.BlockDeviceMapping.get_all_by_volume(
                self.ctxt, volume_id)])
        # A lost race inside the transaction: the same error.
        again = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id)
        with testtools.ExpectedException(exception.InvalidVolume):
            with instance_action.transaction(self.ctxt):
                again.create()

    def test_services(self):
        ctxt = nl_context.get_admin_context()
        self.assertRaises(exception.ServiceNotFound,
                          objects.Service.get_by_host_and_binary, ctxt,
                          'h1', 'nova-lite-compute')
        first = objects.Service.register(ctxt, 'h1', 'nova-lite-compute',
                                         'compute')
        objects.Service.register(ctxt, 'c1', 'nova-lite-conductor',
                                 'conductor')
        second = objects.Service.register(ctxt, 'h1', 'nova-lite-compute',
                                          'compute')
        self.assertEqual(first.id, second.id)
        found = objects.Service.get_by_host_and_binary(
            ctxt, 'h1', 'nova-lite-compute')
        self.assertEqual(set(), found.obj_what_changed())
        for name in found.fields:
            self.assertEqual(getattr(second, name), getattr(found, name),
                             name)
        self.assertEqual([('h1', 'nova-lite-compute'),
                          ('c1', 'nova-lite-conductor')],
                         [(s.host, s.binary)
                          for s in objects.Service.list(ctxt)])
        self.assertEqual(['c1'], [s.host for s in objects.Service.list(
            ctxt, 'nova-lite-conductor')])

    def test_pending_mapping_cancelled_once(self):
        instance = self._instance()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid())
        bdm.create()
        self.assertTrue(bdm.destroy_if_pending())
        self.assertFalse(bdm.destroy_if_pending())
        # The workflow's next write finds it gone.
        bdm.attachment_id = uuidutils.generate_uuid()
        self.assertRaises(exception.VolumeBDMNotFound, bdm.save)

    def test_a_deleted_mappings_copy_never_touches_its_successor(self):
        # A workflow still holding a mapping that was deleted (released
        # by an operator) must not move, save or delete the next mapping
        # of the volume, even where the database gives it the same id
        # (SQLite reuses the id of a deleted last row).
        instance = self._instance()
        volume_id = uuidutils.generate_uuid()
        old = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id)
        old.create()
        old.start_task('attaching', 'nova-lite-api:a', step='accepted')
        stale = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, volume_id, instance.uuid)
        self.assertTrue(old.destroy())
        new = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, volume_id)
        new.create()
        new.start_task('attaching', 'nova-lite-api:a', step='accepted')
        new = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, volume_id, instance.uuid)
        # The stale copy, with the id the database handed out again (as
        # SQLite does; MariaDB and PostgreSQL do not).
        stale = objects.BlockDeviceMapping(self.ctxt, **dict(
            {name: getattr(stale, name) for name in stale.fields
             if stale.obj_attr_is_set(name)}, id=new.id))
        stale.obj_reset_changes()
        self.assertRaises(exception.TaskOwnerChanged, stale.move_task,
                          'reserving', owner='nova-lite-conductor:k')
        stale.device_name = '/dev/vdz'
        self.assertRaises(exception.VolumeBDMNotFound, stale.save)
        self.assertFalse(stale.destroy())
        self.assertFalse(stale.destroy_if_pending())
        read = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, volume_id, instance.uuid)
        self.assertEqual((new.uuid, 'accepted', new.device_name),
                         (read.uuid, read.task_step, read.device_name))

    def test_task_moves_are_compare_and_swap(self):
        instance = self._instance()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid())
        bdm.create()
        bdm.start_task('attaching', 'nova-lite-api:a', step='accepted')
        # A second operation on the same mapping is refused.
        other = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, bdm.volume_id, instance.uuid)
        self.assertRaises(exception.VolumeTaskInProgress, other.start_task,
                          'detaching', 'nova-lite-api:b', 'accepted')
        # A move its task's table does not list is refused, unwritten.
        self.assertRaises(ValueError, bdm.move_task, 'cast',
                          owner='nova-lite-compute:c1')
        # The owner hands it over with its step and data.
        bdm.move_task('reserving', owner='nova-lite-conductor:c1',
                      data={'attachment_id': 'x'})
        read = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, bdm.volume_id, instance.uuid)
        self.assertEqual(('attaching', 'nova-lite-conductor:c1', 'reserving',
                          {'attachment_id': 'x'}),
                         (read.task, read.task_owner, read.task_step,
                          read.get_task_data()))
        # The old owner's copy can no longer move it.
        self.assertRaises(exception.TaskOwnerChanged, other.move_task,
                          'reserving')
        # Two settlers read the stalled task; only one takes it over.
        first = objects.BlockDeviceMapping.get_with_tasks(
            self.ctxt, owners=['nova-lite-conductor:c1'])
        second = objects.BlockDeviceMapping.get_with_tasks(self.ctxt)
        self.assertEqual([bdm.id], [b.id for b in first])
        first[0].take_over_task('nova-lite-conductor:k1')
        self.assertRaises(exception.TaskOwnerChanged,
                          second[0].take_over_task, 'nova-lite-conductor:k2')
        self.assertEqual([], objects.BlockDeviceMapping.get_with_tasks(
            self.ctxt, owners=['nova-lite-conductor:c1']))
        # Only the current owner ends it.
        self.assertRaises(exception.TaskOwnerChanged, read.end_task)
        first[0].end_task()
        self.assertEqual([], objects.BlockDeviceMapping.get_with_tasks(
            self.ctxt))
        self.assertIsNone(
            objects.BlockDeviceMapping.get_by_volume_and_instance(
                self.ctxt, bdm.volume_id, instance.uuid).task)

    def test_the_generation_fences_a_worker_of_the_same_owner(self):
        # The fencing token: a take-over raises the generation even when
        # the owner name stays (a conductor settling its own stalled
        # task), and every move, end and delete compares it.
        instance = self._instance()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid())
        bdm.create()
        self.assertEqual(0, bdm.task_generation)
        bdm.start_task('attaching', 'nova-lite-conductor:k1',
                       step='reserving')
        self.assertEqual(1, bdm.task_generation)
        settler = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, bdm.volume_id, instance.uuid)
        settler.take_over_task('nova-lite-conductor:k1')
        self.assertEqual((2, 'nova-lite-conductor:k1'),
                         (settler.task_generation, settler.task_owner))
        self.assertRaises(exception.TaskOwnerChanged, bdm.move_task,
                          'reserved')
        self.assertRaises(exception.TaskOwnerChanged, bdm.touch_task)
        self.assertRaises(exception.TaskOwnerChanged, bdm.end_task)
        self.assertFalse(bdm.destroy())
        # What a message of the worker's carried no longer matches.
        self.assertFalse(settler.matches(bdm.task_ref()))
        self.assertTrue(settler.matches(settler.task_ref()))
        settler.touch_task()
        self.assertTrue(settler.destroy())

    def test_a_claim_touches_a_stalled_task_once(self):
        # A re-drive claims a stalled task with a compare-and-swap on its
        # last move: owner, step and generation stay.
        instance = self._instance()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid())
        bdm.set_task('attaching', 'nova-lite-api:a', 'accepted')
        bdm.create()
        first, second = [objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, bdm.volume_id, instance.uuid) for _ in range(2)]
        first.touch_task(expected_updated_at=first.task_updated_at)
        self.assertRaises(exception.TaskOwnerChanged, second.touch_task,
                          expected_updated_at=second.task_updated_at)
        read = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, bdm.volume_id, instance.uuid)
        self.assertEqual(bdm.task_ref(), read.task_ref())
        self.assertGreater(read.task_updated_at, bdm.task_updated_at)

    def test_a_new_task_after_one_ended_has_a_new_generation(self):
        # A message of a task that ended (rolled back) never matches the
        # next task of the mapping; an object read before the first task
        # starts the next one all the same.
        instance = self._instance()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid())
        bdm.create()
        stale = objects.BlockDeviceMapping.get_by_volume_and_instance(
            self.ctxt, bdm.volume_id, instance.uuid)
        bdm.start_task('detaching', 'nova-lite-api:a', step='accepted')
        ref = bdm.task_ref()
        bdm.end_task()
        stale.start_task('detaching', 'nova-lite-api:a', step='accepted')
        self.assertEqual(2, stale.task_generation)
        self.assertFalse(stale.matches(ref))

    def test_stalled_tasks_by_last_move(self):
        instance = self._instance()
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid())
        bdm.create()
        bdm.start_task('detaching', 'nova-lite-compute:c1', 'accepted')
        moved = bdm.task_updated_at
        self.assertEqual([], objects.BlockDeviceMapping.get_with_tasks(
            self.ctxt, updated_before=moved))
        later = moved + datetime.timedelta(seconds=1)
        self.assertEqual([bdm.id], [
            b.id for b in objects.BlockDeviceMapping.get_with_tasks(
                self.ctxt, updated_before=later)])

    def test_event_finished_early_in_a_shared_transaction(self):
        instance = self._instance()
        action_cls = instance_action.InstanceAction
        action_cls.action_start(self.ctxt, instance.uuid, 'attach_volume')
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid())
        bdm.create()

        def events():
            return [(e.event, e.result, e.details) for e in
                    action_cls.get_by_request_id(
                        self.ctxt, instance.uuid,
                        self.ctxt.request_id).events]

        attachment_id = uuidutils.generate_uuid()

        def step(name, inside=None, after=None):
            """Save the mapping and finish the event in one transaction;
            raise ``inside`` in it or call ``after`` once it committed."""
            try:
                with instance_action.EventReporter(
                        self.ctxt, name, 'h1', instance.uuid) as ev:
                    with instance_action.transaction(self.ctxt):
                        bdm.attachment_id = attachment_id
                        bdm.save()
                        ev.finish()
                        if inside is not None:
                            raise inside
                    if after is not None:
                        after()
            except exception.InvalidVolume:
                pass
            return objects.BlockDeviceMapping.get_by_volume_and_instance(
                self.ctxt, bdm.volume_id, instance.uuid).attachment_id

        # The mapping's write and the event's end commit together: a
        # failure in that transaction leaves neither written.
        self.assertIsNone(step('conductor_x', inside=exception.InvalidVolume(
            reason='abort')))
        self.assertEqual([('conductor_x', 'Error', 'Invalid volume: abort')],
                         events())

        # Finished early, then the block goes on and fails: Error.
        def cast_fails():
            self.assertEqual(('conductor_y', 'Success', None), events()[1])
            raise exception.InvalidVolume(reason='cast failed')
        self.assertEqual(attachment_id, step('conductor_y', after=cast_fails))
        self.assertEqual(('conductor_y', 'Error',
                          'Invalid volume: cast failed'), events()[1])

        # Finished early and the block ends well: one Success, unchanged.
        with instance_action.EventReporter(self.ctxt, 'conductor_z', 'h1',
                                           instance.uuid) as ev:
            ev.finish()
            finished = events()[2]
        self.assertEqual(('conductor_z', 'Success', None), finished)
        self.assertEqual(finished, events()[2])

    def test_actions_events_and_faults(self):
        instance = self._instance()
        action_cls = instance_action.InstanceAction
        action_cls.action_start(self.ctxt, instance.uuid, 'attach_volume')
        with instance_action.EventReporter(self.ctxt, 'compute_x', 'h1',
                                           instance.uuid):
            pass
        try:
            with instance_action.EventReporter(self.ctxt, 'compute_y', 'h1',
                                               instance.uuid):
                raise exception.InvalidVolume(reason='nope')
        except exception.InvalidVolume:
            pass
        action = action_cls.get_by_request_id(self.ctxt, instance.uuid,
                                              self.ctxt.request_id)
        self.assertEqual('Error', action.message)
        self.assertEqual([('compute_x', 'Success', None),
                          ('compute_y', 'Error', 'Invalid volume: nope')],
                         [(e.event, e.result, e.details)
                          for e in action.events])
        self.assertIn('Traceback', action.events[1].traceback)
        # A request without an action records nothing and raises nothing.
        other = nl_context.RequestContext('demo', 'demo')
        with instance_action.EventReporter(other, 'compute_z', 'h1',
                                           instance.uuid):
            pass
        self.assertFalse(instance_action.record_failure(
            other, instance.uuid, 'conductor_x', ValueError('x')))
        second = nl_context.RequestContext('demo', 'demo')
        action_cls.action_start(second, instance.uuid, 'detach_volume')
        listed = action_cls.get_all_by_instance(self.ctxt, instance.uuid)
        self.assertEqual(['detach_volume', 'attach_volume'],
                         [a.action for a in listed])
        page = action_cls.get_all_by_instance(
            self.ctxt, instance.uuid, limit=1, marker=second.request_id)
        self.assertEqual(['attach_volume'], [a.action for a in page])
        self.assertRaises(exception.MarkerNotFound,
                          action_cls.get_all_by_instance, self.ctxt,
                          instance.uuid, marker='req-nope')
        objects.InstanceFault.record(self.ctxt, instance.uuid,
                                     RuntimeError('secret'))
        objects.InstanceFault.record(self.ctxt, instance.uuid,
                                     exception.NoValidHost(reason='none'))
        fault = objects.InstanceFault.get_latest_for_instances(
            self.ctxt, [instance.uuid])[instance.uuid]
        self.assertEqual((409, 'No valid host was found. none'),
                         (fault.code, fault.message))

    # -- the one compare-and-swap and the one clock -----------------------
    def test_conditional_update_expectations(self):
        instance = self._instance(task_state=None, host='compute1')
        update = db_api.conditional_update
        model = instance_obj.Instance.model
        # Each shape of expected value, one that holds and one that does
        # not; a miss changes nothing.
        for expected, holds in (
                ({'task_state': None}, True),
                ({'task_state': 'x'}, False),
                ({'task_state': ['x', None]}, True),
                ({'task_state': ['x', 'y']}, False),
                ({'task_state': db_api.Not(None)}, False),
                ({'host': db_api.Not(None)}, True),
                ({'host': db_api.Not('compute1')}, False),
                ({'host': db_api.Not(['compute2', None])}, True),
                ({'host': db_api.Not(['compute1'])}, False),
                ({'host': []}, False)):
            name = 'n-%s-%s' % (sorted(expected), holds)
            self.assertEqual(holds, update(
                self.ctxt, model, {'display_name': name},
                dict(expected, uuid=instance.uuid)), expected)
            shown = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
            self.assertEqual(holds, shown.display_name == name, expected)

    def test_object_conditional_update_and_destroy(self):
        instance = self._instance()
        first = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        second = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        self.assertTrue(first.conditional_update(
            {'task_state': states.PAUSING}, {'task_state': None}))
        self.assertEqual(states.PAUSING, first.task_state)
        self.assertEqual(set(), first.obj_what_changed())
        self.assertFalse(second.conditional_update(
            {'task_state': states.POWERING_OFF}, {'task_state': None}))
        self.assertIsNone(second.task_state)  # not reflected: it lost
        self.assertEqual(states.PAUSING, objects.Instance.get_by_uuid(
            self.ctxt, instance.uuid).task_state)
        bdm = objects.BlockDeviceMapping.new_volume(
            self.ctxt, instance.uuid, uuidutils.generate_uuid(), '/dev/vdb')
        bdm.create()
        self.assertFalse(bdm.conditional_destroy({'attachment_id': 'x'}))
        self.assertTrue(bdm.conditional_destroy({'attachment_id': None}))
        self.assertFalse(bdm.conditional_destroy())
        self.assertEqual([], objects.BlockDeviceMapping.get_all_by_instance(
            self.ctxt, instance.uuid))

    def test_two_moves_within_one_second_are_told_apart(self):
        # A take-over compares the last move it read to the microsecond:
        # a move made after that read, even within the same second, makes
        # it lose (with whole seconds it would overwrite that move).
        frozen = datetime.datetime(2026, 11, 27, 1, 2, 3)
        instance = self._instance(task_state=states.DELETING,
                                  task_owner='nova-lite-api:a',
                                  task_updated_at=frozen)
        stale = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        fresh = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        later = frozen.replace(microsecond=900)
        with mock.patch('oslo_utils.timeutils.utcnow', return_value=later):
            fresh.take_over_task('nova-lite-conductor:b')
        self.assertEqual(later, objects.Instance.get_by_uuid(
            self.ctxt, instance.uuid).task_updated_at.replace(tzinfo=None))
        self.assertRaises(exception.InstanceTaskOwnerChanged,
                          stale.take_over_task, 'nova-lite-conductor:c')
        self.assertEqual('nova-lite-conductor:b', objects.Instance
                         .get_by_uuid(self.ctxt, instance.uuid).task_owner)

    def test_stale_disks_recorded_once_and_forgotten(self):
        server, volume = uuidutils.generate_uuid(), uuidutils.generate_uuid()
        for _ in range(2):      # recorded again: still one
            stale_disk.record(self.ctxt, 'compute1', server, '/dev/vdb',
                              volume)
        stale_disk.record(self.ctxt, 'compute2', server, '/dev/vdb', volume)
        [disk] = stale_disk.get_by_host(self.ctxt, 'compute1')
        self.assertEqual(('compute1', server, '/dev/vdb', volume),
                         (disk.host, disk.instance_uuid, disk.device_name,
                          disk.volume_id))
        stale_disk.forget(self.ctxt, [disk.id])
        stale_disk.forget(self.ctxt, [disk.id])     # gone already: fine
        self.assertEqual([], stale_disk.get_by_host(self.ctxt, 'compute1'))
        self.assertEqual(1, len(stale_disk.get_by_host(self.ctxt,
                                                       'compute2')))


class TestComputeObjectsSQLite(_ObjectTests, testtools.TestCase):
    def _use_database(self):
        self.useFixture(db_fixture.Database())


class _OpportunisticBackend(_ObjectTests):
    BACKEND = None

    def _use_database(self):
        url, drop = db_fixture.opportunistic_url(self.BACKEND)
        self.addCleanup(drop)
        manager = db_api.create_context_manager(url)
        self.addCleanup(manager.dispose_pool)
        migration._upgrade(manager.writer.get_engine())
        self.addCleanup(db_api.context_manager.patch_factory(manager))

    def test_services_record_steps_of_one_request_at_once(self):
        # The conductor finishing its event while the host starts its own
        # (and more): the action row serializes them, no deadlock.
        instance = self._instance()
        instance_action.InstanceAction.action_start(
            self.ctxt, instance.uuid, 'attach_volume')
        n = 12
        barrier = threading.Barrier(n)

        def step(index):
            barrier.wait(timeout=30)
            for _ in range(3):
                with instance_action.EventReporter(
                        self.ctxt, 'step_%d' % index, 'h1', instance.uuid):
                    pass
        with mock.patch.object(instance_action.LOG, 'exception') as logged:
            with concurrent.futures.ThreadPoolExecutor(n) as pool:
                list(pool.map(step, range(n)))
        self.assertEqual([], logged.call_args_list)
        action = instance_action.InstanceAction.get_by_request_id(
            self.ctxt, instance.uuid, self.ctxt.request_id)
        self.assertEqual(3 * n, len(action.events))
        self.assertEqual({'Success'}, {e.result for e in action.events})


class TestComputeObjectsMySQL(_OpportunisticBackend, testtools.TestCase):
    BACKEND = 'mysql'


class TestComputeObjectsPostgreSQL(_OpportunisticBackend,
                                   testtools.TestCase):
    BACKEND = 'postgresql'
