"""The schemas of volume metadata: Cinder's limits on keys and values,
in the metadata routes' bodies and in volume create and update."""

import jsonschema
import testtools

from nova_lite.api.schemas import volume_metadata as schema
from nova_lite.api.schemas import volumes as volume_schema


def _valid(schema_, body):
    return jsonschema.Draft202012Validator(schema_).is_valid(body)


class SchemaTest(testtools.TestCase):
    GOOD_KEYS = ('a', 'Type', 'with space', 'a-b_c:d.e/f', 'k' * 255)
    BAD_KEYS = ('', 'k' * 256, 'a\n', 'é', 'a=b', 'a?', 'a\tb')

    def test_keys(self):
        for key in self.GOOD_KEYS:
            self.assertTrue(_valid(schema.SET, {'metadata': {key: 'v'}}),
                            key)
        for key in self.BAD_KEYS:
            self.assertFalse(_valid(schema.SET, {'metadata': {key: 'v'}}),
                             repr(key))

    def test_values(self):
        for value in ('', 'v' * 255, '<value&special_chars>', 'é'):
            self.assertTrue(_valid(schema.SET, {'metadata': {'k': value}}))
        for value in ('v' * 256, 1, None, True, ['v'], {'v': 'v'}):
            self.assertFalse(_valid(schema.SET,
                                    {'metadata': {'k': value}}), value)

    def test_bodies(self):
        self.assertTrue(_valid(schema.SET, {'metadata': {}}))
        for body in ({}, {'metadata': None}, {'metadata': []},
                     {'metadata': {}, 'meta': {}}, {'meta': {'k': 'v'}}):
            self.assertFalse(_valid(schema.SET, body), body)

    def test_one_item(self):
        self.assertTrue(_valid(schema.SET_ITEM, {'meta': {'k': 'v'}}))
        for body in ({'meta': {}}, {'meta': {'a': 'v', 'b': 'v'}},
                     {'metadata': {'k': 'v'}}, {'meta': {'k': 1}}):
            self.assertFalse(_valid(schema.SET_ITEM, body), body)

    def test_volume_create_and_update(self):
        create = volume_schema.CREATE_V353
        self.assertTrue(_valid(create, {'volume': {'size': 1,
                                                   'metadata': None}}))
        self.assertTrue(_valid(create, {'volume': {
            'size': 1, 'metadata': {'k': 'v'}}}))
        self.assertFalse(_valid(create, {'volume': {
            'size': 1, 'metadata': {'k\n': 'v'}}}))
        # Cinder's update schema: metadata is an object (no null).
        self.assertTrue(_valid(volume_schema.UPDATE,
                               {'volume': {'metadata': {}}}))
        self.assertFalse(_valid(volume_schema.UPDATE,
                                {'volume': {'metadata': None}}))
