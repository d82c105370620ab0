"""The VolumeClient's volume dict, from a block-storage volume view (what
both clients read, in-process or over REST)."""

import testtools

from nova_lite.volume_client import base


class ClientVolumeTest(testtools.TestCase):

    def test_fields_of_the_rest_view(self):
        view = {
            'id': 'v1', 'status': 'in-use', 'size': 2, 'name': 'data',
            'description': 'logs', 'created_at': '2026-11-21T20:36:50.000000',
            'snapshot_id': None, 'metadata': {'Type': 'work'},
            'bootable': 'true', 'multiattach': True,
            'availability_zone': 'nova', 'volume_type': 'gold',
            'encrypted': False, 'migration_status': None,
            'attachments': [{'id': 'v1', 'attachment_id': 'a1',
                             'volume_id': 'v1', 'server_id': 's1',
                             'host_name': None, 'device': '/dev/vdb',
                             'attached_at': '2026-11-21T20:36:51.000000'}]}
        expected = {
            'id': 'v1', 'status': 'in-use', 'attach_status': 'attached',
            'size': 2, 'name': 'data', 'description': 'logs',
            'created_at': '2026-11-21T20:36:50.000000', 'snapshot_id': None,
            'metadata': {'Type': 'work'}, 'multiattach': True,
            'bootable': True, 'availability_zone': 'nova',
            'migration_status': None, 'volume_type': 'gold',
            'encrypted': False,
            'attachments': [{'attachment_id': 'a1', 'server_id': 's1',
                             'host_name': None, 'device': '/dev/vdb',
                             'attached_at': '2026-11-21T20:36:51.000000'}]}
        self.assertEqual(expected, base.client_volume(view))

    def test_a_sparse_view(self):
        # What an older or other block storage may leave out.
        volume = base.client_volume({'id': 'v1', 'status': 'available',
                                     'size': 1, 'metadata': None})
        self.assertEqual(
            (None, None, None, None, {}, 'detached', [], False),
            (volume['name'], volume['description'], volume['created_at'],
             volume['snapshot_id'], volume['metadata'],
             volume['attach_status'], volume['attachments'],
             volume['bootable']))
