"""Object versions are pinned by fingerprint: changing an object's fields
or remotable methods changes its hash, and this test fails until the
object's VERSION is bumped and the new hash recorded here (old peers may
still send the old version during a rolling upgrade)."""

from oslo_versionedobjects import fixture
import testtools

from nova_lite import objects
from nova_lite.objects import base

EXPECTED = {
    'BlockDeviceMapping': '1.2-77f1143e2fa2d15f728a400d286fcd6c',
    'Instance': '1.3-984ea28d3fb9887caab3f6813c8bba41',
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

    def test_older_peers_get_no_access_ips_or_hostname(self):
        objects.register_all()
        server = objects.Instance(
            uuid='1e7d6d6f-3c44-4f5b-b7f1-5d1f8e0b0001',
            access_ip_v4='10.0.0.1', hostname='web',
            task_owner='nova-lite-api:a')
        data = 'nova_lite_object.data'
        at_1_1 = server.obj_to_primitive(target_version='1.1')[data]
        self.assertNotIn('access_ip_v4', at_1_1)
        self.assertNotIn('hostname', at_1_1)
        self.assertEqual('nova-lite-api:a', at_1_1['task_owner'])
        self.assertEqual('10.0.0.1', server.obj_to_primitive()[data][
            'access_ip_v4'])

    def test_older_peers_get_no_description_or_metadata(self):
        objects.register_all()
        server = objects.Instance(
            uuid='1e7d6d6f-3c44-4f5b-b7f1-5d1f8e0b0002', hostname='web',
            display_description='d', server_metadata={'k': 'v'})
        data = 'nova_lite_object.data'
        at_1_2 = server.obj_to_primitive(target_version='1.2')[data]
        self.assertNotIn('display_description', at_1_2)
        self.assertNotIn('server_metadata', at_1_2)
        self.assertEqual('web', at_1_2['hostname'])
        self.assertEqual({'k': 'v'}, server.obj_to_primitive()[data][
            'server_metadata'])

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
