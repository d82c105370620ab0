"""The pure parts of /v2.1/os-volumes: Nova's view of a VolumeClient
volume, Nova's paging and the create size, and that the view fits the
response schema the router enforces."""

from oslo_utils import uuidutils
import testtools

from nova_lite.api.handlers import os_volumes
from nova_lite.api.schemas import os_volumes as schema
from nova_lite.api import validation
from nova_lite import exception

VOLUME_ID = uuidutils.generate_uuid()
SERVER_1 = uuidutils.generate_uuid()
SERVER_2 = uuidutils.generate_uuid()


def client_volume(**fields):
    """A VolumeClient ``get`` dict (nova_lite.volume_client)."""
    volume = {
        'id': VOLUME_ID, 'status': 'available', 'attach_status': 'detached',
        'size': 1, 'name': 'vol', 'description': 'a volume',
        'created_at': '2026-11-21T20:36:50.000000', 'snapshot_id': None,
        'metadata': {}, 'multiattach': False, 'bootable': False,
        'availability_zone': 'nova', 'migration_status': None,
        'volume_type': None, 'encrypted': False, 'attachments': []}
    volume.update(fields)
    return volume


def attachment(server_id, device):
    return {'attachment_id': uuidutils.generate_uuid(),
            'server_id': server_id, 'host_name': None, 'device': device,
            'attached_at': '2026-11-21T20:36:51.000000'}


class VolumeViewTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.band = validation.Band(schema.SHOW_RESPONSE, '2.1', None)

    def view(self, volume):
        view = os_volumes.volume_view(volume)
        validation.validate(self.band, {'volume': view})
        return view

    def test_unattached_volume(self):
        self.assertEqual({
            'id': VOLUME_ID, 'status': 'available', 'size': 1,
            'availabilityZone': 'nova',
            'createdAt': '2026-11-21T20:36:50.000000',
            'displayName': 'vol', 'displayDescription': 'a volume',
            'volumeType': None, 'snapshotId': None, 'metadata': {},
            'attachments': [{}]}, self.view(client_volume()))

    def test_nulls_and_type_and_metadata(self):
        metadata = {'Type': 'work'}
        view = self.view(client_volume(
            name=None, description=None, volume_type='gold',
            metadata=metadata, availability_zone=None))
        self.assertEqual((None, None, 'gold', {'Type': 'work'}, None),
                         (view['displayName'], view['displayDescription'],
                          view['volumeType'], view['metadata'],
                          view['availabilityZone']))
        view['metadata']['other'] = 'x'
        self.assertEqual({'Type': 'work'}, metadata)

    def test_attached_volume(self):
        view = self.view(client_volume(
            status='in-use', attach_status='attached',
            attachments=[attachment(SERVER_1, '/dev/vdb')]))
        self.assertEqual([{'id': VOLUME_ID, 'volumeId': VOLUME_ID,
                           'serverId': SERVER_1, 'device': '/dev/vdb'}],
                         view['attachments'])

    def test_attachment_without_device(self):
        view = self.view(client_volume(
            status='in-use', attachments=[attachment(SERVER_1, None)]))
        self.assertEqual([{'id': VOLUME_ID, 'volumeId': VOLUME_ID,
                           'serverId': SERVER_1}], view['attachments'])

    def test_multiattach_shows_the_first_attachment(self):
        view = self.view(client_volume(
            status='in-use', multiattach=True,
            attachments=[attachment(SERVER_2, '/dev/vdc'),
                         attachment(SERVER_1, '/dev/vdb')]))
        self.assertEqual([{'id': VOLUME_ID, 'volumeId': VOLUME_ID,
                           'serverId': SERVER_2, 'device': '/dev/vdc'}],
                         view['attachments'])

    def test_schema_refuses_what_nova_never_sends(self):
        for attachments in ([], [{}, {}], [{'id': VOLUME_ID}],
                            [{}, {'id': VOLUME_ID, 'volumeId': VOLUME_ID,
                                  'serverId': SERVER_1}]):
            view = os_volumes.volume_view(client_volume())
            view['attachments'] = attachments
            self.assertRaises(exception.ValidationError, validation.validate,
                              self.band, {'volume': view})


class PagingAndSizeTest(testtools.TestCase):

    def test_page(self):
        self.assertEqual((1000, 0), os_volumes.page(1000))
        self.assertEqual((1000, 0), os_volumes.page(1000, limit=0))
        self.assertEqual((5, 3), os_volumes.page(1000, limit=5, offset=3))
        self.assertEqual((10, 0), os_volumes.page(10, limit=11))
        self.assertEqual((10, 20), os_volumes.page(10, offset=20))

    def test_size(self):
        self.assertEqual(3, os_volumes.size_param(3))
        self.assertEqual(3, os_volumes.size_param('3'))
        self.assertEqual(3, os_volumes.size_param('003'))
        self.assertEqual(schema.MAX_SIZE,
                         os_volumes.size_param(str(schema.MAX_SIZE)))
        for bad in ('0', 0, '00', str(schema.MAX_SIZE + 1),
                    '9' * 18):
            exc = self.assertRaises(exception.InvalidInput,
                                    os_volumes.size_param, bad)
            self.assertEqual(400, exc.code)

    def test_create_schema(self):
        band = validation.Band(schema.CREATE, '2.1', None)
        for volume in ({'size': 1}, {'size': '10'}, {'size': '0'},
                       {'size': 1, 'display_name': 'n',
                        'display_description': 'd', 'volume_type': 't',
                        'metadata': {'Type': 'work'},
                        'availability_zone': 'nova',
                        'snapshot_id': 'any text'}):
            validation.validate(band, {'volume': volume})
        for volume in ({}, {'size': 0}, {'size': '#$%'}, {'size': ''},
                       {'size': '1' * 19}, {'size': None},
                       {'size': schema.MAX_SIZE + 1},
                       {'size': 1, 'imageRef': 'x'},
                       {'size': 1, 'metadata': {'k': {'nested': 1}}},
                       {'size': 1, 'display_name': None}):
            self.assertRaises(exception.ValidationError, validation.validate,
                              band, {'volume': volume})
