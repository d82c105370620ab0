"""block_device_mapping_v2 checks of server create."""

import testtools

from nova_lite.compute import block_device
from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import objects

VOL = '0ed8a4e0-5f0b-4f0c-a1c1-2a4a4e1b9c01'
VOL2 = '0ed8a4e0-5f0b-4f0c-a1c1-2a4a4e1b9c02'
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
SERVER = '7c1f2a9e-3b4d-4e5f-8a6b-9c0d1e2f3a4b'


class ParseTest(testtools.TestCase):
    def parse(self, items, image_ref=None):
        return block_device.parse_request(items, image_ref)

    def assertInvalid(self, exc_class, message, items, image_ref=None):
        exc = self.assertRaises(exc_class, self.parse, items, image_ref)
        self.assertIn(message, exc.format_message())
        self.assertEqual(400, exc.code)

    def test_boot_from_volume(self):
        [bdm] = self.parse([{'source_type': 'volume', 'uuid': VOL,
                             'destination_type': 'volume', 'boot_index': 0,
                             'delete_on_termination': 'true'}])
        self.assertEqual((VOL, 0, True), (bdm['volume_id'],
                                          bdm['boot_index'],
                                          bdm['delete_on_termination']))

    def test_uuid_rules(self):
        self.assertInvalid(exception.InvalidBDMFormat, 'Missing device UUID',
                           [{'source_type': 'volume', 'boot_index': 0}])
        self.assertInvalid(exception.InvalidBDMFormat, 'Invalid device UUID',
                           [{'source_type': 'blank', 'uuid': VOL}])

    def test_image_to_local_needs_image_ref_and_boot_index_0(self):
        self.assertInvalid(exception.InvalidBDMFormat,
                           'Mapping image to local is not supported',
                           [{'source_type': 'image', 'uuid': IMAGE,
                             'destination_type': 'local', 'boot_index': 1}],
                           image_ref=IMAGE)

    def test_boot_sequence(self):
        self.assertInvalid(exception.InvalidBDMBootSequence,
                           'Boot sequence',
                           [{'source_type': 'volume', 'uuid': VOL,
                             'boot_index': 1}])
        # No image and no bootable mapping.
        self.assertInvalid(exception.InvalidBDMBootSequence,
                           'Boot sequence',
                           [{'source_type': 'volume', 'uuid': VOL}])
        # Negative boot index means "not bootable".
        [bdm] = self.parse([{'source_type': 'volume', 'uuid': VOL,
                             'boot_index': -1}], image_ref=IMAGE)
        self.assertIsNone(bdm['boot_index'])

    def test_unsupported_sources(self):
        self.assertInvalid(exception.InvalidBDMFormat, 'not blank to volume',
                           [{'source_type': 'blank', 'volume_size': 1,
                             'destination_type': 'volume'}],
                           image_ref=IMAGE)

    def test_volume_type_rules(self):
        self.assertInvalid(exception.InvalidBDMFormat, 'volume_type',
                           [{'source_type': 'volume', 'uuid': VOL,
                             'boot_index': 0, 'volume_type': 'x'}])

    def test_build_mappings_names(self):
        objects.register_all()
        ctxt = nl_context.get_admin_context()
        parsed = self.parse([
            {'source_type': 'volume', 'uuid': VOL},
            {'source_type': 'volume', 'uuid': VOL2,
             'device_name': '/dev/vdb'}], image_ref=IMAGE)
        bdms = block_device.build_mappings(ctxt, 'i', parsed, IMAGE)
        names = {(b.source_type, b.volume_id): b.device_name for b in bdms}
        self.assertEqual({('image', None): '/dev/vda',
                          ('volume', VOL2): '/dev/vdb',
                          ('volume', VOL): '/dev/vdc'}, names)


class AttachModeTest(testtools.TestCase):
    """attach_mode in block_device_mapping_v2 (2.105; the schema refuses
    it below and refuses values other than ro/rw)."""

    def parse(self, items, image_ref=None):
        return block_device.parse_request(items, image_ref)

    def test_volume_mappings_default_to_rw(self):
        [bdm] = self.parse([{'source_type': 'volume', 'uuid': VOL,
                             'destination_type': 'volume',
                             'boot_index': 0}])
        self.assertEqual('rw', bdm['attach_mode'])
        # destination_type defaults to volume for a volume source.
        [bdm] = self.parse([{'source_type': 'volume', 'uuid': VOL,
                             'boot_index': 0}])
        self.assertEqual('rw', bdm['attach_mode'])

    def test_volume_mappings_keep_the_mode_asked(self):
        parsed = self.parse([
            {'source_type': 'volume', 'uuid': VOL, 'boot_index': 0,
             'attach_mode': 'ro'},
            {'source_type': 'volume', 'uuid': VOL2, 'attach_mode': 'rw'}])
        self.assertEqual(['ro', 'rw'], [p['attach_mode'] for p in parsed])
        self.assertEqual({'ro', 'rw'}, block_device.attach_modes(parsed))

    def test_local_destination_refuses_attach_mode(self):
        for item in [
                # The image root disk.
                {'source_type': 'image', 'uuid': IMAGE, 'boot_index': 0,
                 'destination_type': 'local', 'attach_mode': 'rw'},
                # destination_type defaults to local for an image.
                {'source_type': 'image', 'uuid': IMAGE, 'boot_index': 0,
                 'attach_mode': 'ro'},
                {'source_type': 'blank', 'destination_type': 'local',
                 'attach_mode': 'ro'},
                {'source_type': 'volume', 'uuid': VOL,
                 'destination_type': 'local', 'attach_mode': 'ro'}]:
            exc = self.assertRaises(exception.InvalidBDMFormat, self.parse,
                                    [item], IMAGE)
            self.assertEqual(400, exc.code)
            self.assertIn('attach_mode is only supported with '
                          'destination_type=volume', exc.format_message())

    def test_image_root_has_no_mode(self):
        [root] = self.parse([{'source_type': 'image', 'uuid': IMAGE,
                              'boot_index': 0,
                              'destination_type': 'local'}], IMAGE)
        self.assertIsNone(root['attach_mode'])
        self.assertEqual(set(), block_device.attach_modes([root]))

    def test_build_mappings_carry_the_mode(self):
        objects.register_all()
        ctxt = nl_context.get_admin_context()
        parsed = self.parse([
            {'source_type': 'volume', 'uuid': VOL, 'attach_mode': 'ro'},
            {'source_type': 'volume', 'uuid': VOL2}], image_ref=IMAGE)
        bdms = block_device.build_mappings(ctxt, SERVER, parsed, IMAGE)
        modes = {(b.source_type, b.volume_id): (b.attach_mode,
                                                b.effective_attach_mode)
                 for b in bdms}
        self.assertEqual({('image', None): (None, None),
                          ('volume', VOL): ('ro', 'ro'),
                          ('volume', VOL2): ('rw', 'rw')}, modes)
