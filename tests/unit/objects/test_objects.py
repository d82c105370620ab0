"""Object versions are pinned by fingerprint: changing an object's fields
or remotable methods changes its hash, and this test fails until the
object's VERSION is bumped and the new hash recorded here (old peers may
still send the old version during a rolling upgrade)."""

from oslo_versionedobjects import fixture
import testtools

from nova_lite import objects
from nova_lite.objects import base

EXPECTED = {
    'BlockDeviceMapping': '1.1-223408e28717fe1d1723083605238235',
    'Instance': '1.1-0daefcfe538ff7cc252944a2e9ecfbaa',
    'InstanceAction': '1.0-580aab061ff20b6b191d83d924679baf',
    'InstanceActionEvent': '1.0-1d0e31618139423a6ff02065dd96be82',
    'InstanceFault': '1.0-13b0c8f62c6bd21f0604e9705d6162df',
    'Service': '1.0-9ae5db628a824ffbf1da4d12b3b01d4c',
}


class ObjectVersionTest(testtools.TestCase):
    def test_versions(self):
        objects.register_all()
        checker = fixture.ObjectVersionChecker(
            base.NovaLiteObjectRegistry.obj_classes())
        expected, actual = checker.test_hashes(EXPECTED)
        self.assertEqual(expected, actual,
                         'An object changed: bump its VERSION and record '
                         'the new fingerprint here.')

    def test_serialization_round_trip(self):
        objects.register_all()
        serializer = base.NovaLiteObjectSerializer()
        bdm = objects.BlockDeviceMapping.new_volume(
            None, '1e7d6d6f-3c44-4f5b-b7f1-5d1f8e0b0001',
            '1e7d6d6f-3c44-4f5b-b7f1-5d1f8e0b0002', device_name='/dev/vdb',
            tag='t', delete_on_termination=True)
        copy = serializer.deserialize_entity(
            None, serializer.serialize_entity(None, bdm))
        self.assertEqual(('/dev/vdb', 't', True),
                         (copy.device_name, copy.tag,
                          copy.delete_on_termination))

    def test_older_peers_get_no_task_fields(self):
        objects.register_all()
        bdm = objects.BlockDeviceMapping.new_volume(
            None, '1e7d6d6f-3c44-4f5b-b7f1-5d1f8e0b0001',
            '1e7d6d6f-3c44-4f5b-b7f1-5d1f8e0b0002')
        bdm.set_task('attaching', 'nova-lite-api:a', 'accepted')
        data = 'nova_lite_object.data'
        old = bdm.obj_to_primitive(target_version='1.0')[data]
        new = bdm.obj_to_primitive()[data]
        self.assertNotIn('task', old)
        self.assertNotIn('task_owner', old)
        self.assertEqual('nova-lite-api:a', new['task_owner'])
