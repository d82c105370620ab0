"""Loading objects from database rows stores what the field setters
would; objects cross RPC (oslo.versionedobjects' own primitives) with
their values and changes."""

import datetime

from oslo_versionedobjects import exception as ovo_exc
import testtools

from nova_lite.db import models
from nova_lite import objects
from nova_lite.objects import base

UUIDS = ['1e7d6d6f-3c44-4f5b-b7f1-5d1f8e0b000%d' % i for i in range(4)]


def _row(**extra):
    values = dict(
        id=7, uuid=UUIDS[0], instance_uuid=UUIDS[1], source_type='volume',
        destination_type='volume', device_name='/dev/vdb', boot_index=None,
        delete_on_termination=True, volume_id=UUIDS[2],
        attachment_id=UUIDS[3], no_device=False, tag=None,
        connection_info='{"driver_volume_type": "file"}',
        created_at=datetime.datetime(2024, 5, 1, 12, 0, 0, 123456),
        updated_at=None)
    values.update(extra)
    return models.BlockDeviceMapping(**values)


def _through_setters(row):
    bdm = objects.BlockDeviceMapping()
    for name in bdm.fields:
        if hasattr(row, name):
            setattr(bdm, name, getattr(row, name))
    return bdm


def _assert_loaded_as(test, expected, loaded):
    """``loaded`` has the fields ``expected`` has, with equal values of the
    same types, no changes to save, and the context ``'ctxt'``."""
    for name in expected.fields:
        test.assertEqual(expected.obj_attr_is_set(name),
                         loaded.obj_attr_is_set(name), name)
        if expected.obj_attr_is_set(name):
            test.assertEqual(getattr(expected, name),
                             getattr(loaded, name), name)
            test.assertIs(type(getattr(expected, name)),
                          type(getattr(loaded, name)), name)
    test.assertEqual(set(), loaded.obj_what_changed())
    test.assertEqual('ctxt', loaded._context)


class FromDBObjectTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        objects.register_all()

    def _assert_same(self, row):
        loaded = objects.BlockDeviceMapping._from_db_object(
            'ctxt', None, row)
        expected = _through_setters(row)
        _assert_loaded_as(self, expected, loaded)
        return loaded

    def test_same_values_as_the_setters(self):
        loaded = self._assert_same(_row())
        # Datetimes still go through coercion: aware, in UTC.
        self.assertIsNotNone(loaded.created_at.tzinfo)
        self.assertIsNone(loaded.updated_at)

    def test_values_that_need_coercion_still_get_it(self):
        # An int where a string field is, a 0/1 where a boolean is: the
        # setter's coercion runs, as before.
        loaded = self._assert_same(_row(device_name=5, no_device=0,
                                        boot_index=True))
        self.assertEqual('5', loaded.device_name)
        self.assertIs(False, loaded.no_device)
        self.assertEqual(1, loaded.boot_index)

    def test_none_in_a_field_that_is_not_nullable(self):
        # The setter's rule applies: the field's default.
        loaded = self._assert_same(_row(no_device=None))
        self.assertIs(False, loaded.no_device)

    def test_read_only_field_keeps_its_check(self):
        bdm = objects.BlockDeviceMapping._from_db_object(None, None, _row())
        self.assertRaises(ovo_exc.ReadOnlyFieldError,
                          base.NovaLiteObject._from_db_fields,
                          bdm, _row(id=8), ['id'])
        base.NovaLiteObject._from_db_fields(bdm, _row(id=7), ['id'])
        self.assertEqual(7, bdm.id)

    def test_changes_are_tracked_until_reset(self):
        bdm = objects.BlockDeviceMapping()
        base.NovaLiteObject._from_db_fields(bdm, _row(), ['tag', 'uuid'])
        self.assertEqual({'tag', 'uuid'}, bdm.obj_what_changed())


class FromDBRowTest(testtools.TestCase):
    """_from_db_row (Core result rows, read by column name) stores what
    _from_db_object stores from the ORM row."""

    COLUMNS = tuple(models.BlockDeviceMapping.__table__.c.keys())

    def setUp(self):
        super().setUp()
        objects.register_all()

    def _assert_same(self, orm_row, columns=COLUMNS):
        mapping = {name: getattr(orm_row, name, 'not a field')
                   for name in columns}
        loaded = objects.BlockDeviceMapping._from_db_row(
            'ctxt', None, mapping)
        expected = objects.BlockDeviceMapping._from_db_object(
            'ctxt', None, orm_row)
        _assert_loaded_as(self, expected, loaded)
        return loaded

    def test_same_as_from_db_object(self):
        self._assert_same(_row())
        self._assert_same(_row(device_name=5, no_device=0, boot_index=True))
        self._assert_same(_row(no_device=None))

    def test_columns_in_another_order_and_not_fields(self):
        columns = ('extra',) + tuple(reversed(self.COLUMNS))
        loaded = self._assert_same(_row(), columns)
        self.assertEqual(UUIDS[2], loaded.volume_id)

    def test_read_only_field_keeps_its_check(self):
        bdm = objects.BlockDeviceMapping._from_db_object(None, None, _row())
        mapping = {name: getattr(_row(id=8), name) for name in self.COLUMNS}
        self.assertRaises(ovo_exc.ReadOnlyFieldError,
                          objects.BlockDeviceMapping._from_db_row,
                          None, bdm, mapping)


class PrimitiveTest(testtools.TestCase):
    """Objects go to and come from primitives (what RPC carries) with
    their values, types and changes."""

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.serializer = base.NovaLiteObjectSerializer()

    def _objects(self):
        when = datetime.datetime(2024, 5, 1, 12, 0, 0)
        bdm = objects.BlockDeviceMapping._from_db_object(None, None, _row())
        bdm.device_name = '/dev/vdc'      # one change to carry
        bdm.boot_index = None
        server = objects.Instance(
            uuid=UUIDS[1], display_name='s', project_id='p', user_id='u',
            host=None, vm_state='active', power_state=1, locked=False,
            launched_at=when, launch_index=0, flavor_id='1')
        event = objects.InstanceActionEvent(event='e', start_time=when,
                                            action_id=1)
        action = objects.InstanceAction(
            action='attach_volume', instance_uuid=UUIDS[1], request_id='r',
            start_time=when, events=[event])
        return [bdm, server, action]

    def test_round_trip(self):
        for obj in self._objects():
            primitive = self.serializer.serialize_entity('ctxt', obj)
            loaded = self.serializer.deserialize_entity('ctxt', primitive)
            self.assertEqual(obj.obj_what_changed(),
                             loaded.obj_what_changed())
            for name in obj.fields:
                self.assertEqual(obj.obj_attr_is_set(name),
                                 loaded.obj_attr_is_set(name), name)
                if not obj.obj_attr_is_set(name) or name == 'events':
                    continue
                sent = getattr(obj, name)
                if isinstance(sent, datetime.datetime):
                    # oslo.versionedobjects' primitive of a datetime has
                    # whole seconds.
                    sent = sent.replace(microsecond=0)
                self.assertEqual(sent, getattr(loaded, name), name)
            if isinstance(loaded, objects.InstanceAction):
                self.assertIsNotNone(loaded.start_time.tzinfo)
                self.assertEqual('e', loaded.events[0].event)
            if isinstance(loaded, objects.BlockDeviceMapping):
                self.assertEqual({'device_name', 'boot_index'},
                                 loaded.obj_what_changed())
                self.assertEqual(7, loaded.id)
                self.assertRaises(ovo_exc.ReadOnlyFieldError,
                                  setattr, loaded, 'id', 8)

    def test_older_versions_lose_the_fields_they_do_not_know(self):
        bdm = self._objects()[0]
        bdm.task = 'attaching'
        old = bdm.obj_to_primitive('1.0')
        data = old[base.NovaLiteObject._obj_primitive_key('data')]
        self.assertNotIn('task', data)
        self.assertIn('task', bdm.obj_to_primitive()[
            base.NovaLiteObject._obj_primitive_key('data')])
        self.assertRaises(ovo_exc.InvalidTargetVersion,
                          bdm.obj_to_primitive, '9.0')
