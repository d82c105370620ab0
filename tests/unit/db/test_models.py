"""The models as declared: two table groups, explicit names, types per
backend. (Models against migrations on real databases:
tests/functional/db/test_migrations.py.)"""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateTable
import testtools

from nova_lite.db import models

METADATA = models.BASE.metadata
# PostgreSQL truncates identifiers longer than this (MySQL allows 64).
MAX_NAME = 63


def _named_things():
    for table in METADATA.tables.values():
        for constraint in table.constraints:
            yield table, constraint
        for index in table.indexes:
            yield table, index


class TestTableGroups(testtools.TestCase):

    def test_groups_cover_all_tables_once(self):
        self.assertEqual(set(), models.COMPUTE_TABLES & models.VOLUME_TABLES)
        self.assertEqual(set(METADATA.tables),
                         models.COMPUTE_TABLES | models.VOLUME_TABLES)

    def test_no_foreign_key_between_groups(self):
        for table in METADATA.tables.values():
            group = (models.COMPUTE_TABLES
                     if table.name in models.COMPUTE_TABLES
                     else models.VOLUME_TABLES)
            for fk in table.foreign_keys:
                self.assertIn(fk.column.table.name, group,
                              '%s -> %s' % (table.name, fk.target_fullname))


class TestNames(testtools.TestCase):

    def test_every_constraint_and_index_is_named(self):
        for table, item in _named_things():
            self.assertIsNotNone(item.name, '%s: %r' % (table.name, item))

    def test_names_unique_and_short(self):
        # PostgreSQL keeps index and constraint names in one namespace.
        seen = {}
        for table, item in _named_things():
            name = str(item.name)
            self.assertLessEqual(len(name), MAX_NAME, name)
            self.assertNotIn(name, seen, table.name)
            seen[name] = table.name

    def test_naming_convention(self):
        bdm = METADATA.tables['block_device_mappings']
        uniques = {c.name for c in bdm.constraints
                   if isinstance(c, sa.UniqueConstraint)}
        self.assertEqual({
            'uniq_block_device_mappings0uuid',
            'uniq_block_device_mappings0instance_uuid0volume_id',
            'uniq_block_device_mappings0instance_uuid0device_name',
        }, uniques)
        self.assertEqual(
            {'fk_block_device_mappings_instance_uuid_instances'},
            {c.name for c in bdm.foreign_key_constraints})
        self.assertEqual(
            {'ix_block_device_mappings_instance_uuid',
             'ix_block_device_mappings_volume_id',
             'ix_block_device_mappings_task'},
            {i.name for i in bdm.indexes})


class TestColumns(testtools.TestCase):

    def _ddl(self, table, dialect):
        return str(CreateTable(METADATA.tables[table]).compile(
            dialect=dialect))

    def test_mysql_types(self):
        ddl = self._ddl('volume_attachment', mysql.dialect())
        self.assertIn('connection_info MEDIUMTEXT', ddl)
        self.assertIn('attach_time DATETIME(6)', ddl)
        self.assertIn('ENGINE=InnoDB', ddl)
        self.assertIn('connection_info MEDIUMTEXT',
                      self._ddl('block_device_mappings', mysql.dialect()))
        ddl = self._ddl('volume_metadata', mysql.dialect())
        self.assertIn('`key` VARCHAR(255) COLLATE utf8mb4_bin', ddl)
        self.assertIn('value VARCHAR(255) COLLATE utf8mb4_bin', ddl)

    def test_other_backends_types(self):
        for dialect in (sqlite.dialect(), postgresql.dialect()):
            ddl = self._ddl('volume_attachment', dialect)
            self.assertIn('connection_info TEXT', ddl)
            self.assertNotIn('MEDIUMTEXT', ddl)
            self.assertNotIn('COLLATE', self._ddl('volume_metadata',
                                                  dialect))

    def test_lengths_and_nullability(self):
        bdm = METADATA.tables['block_device_mappings'].c
        self.assertEqual(2, bdm.attach_mode.type.length)
        self.assertTrue(bdm.attach_mode.nullable)
        self.assertEqual(36, bdm.attachment_id.type.length)
        self.assertFalse(bdm.source_type.nullable)
        attachment = METADATA.tables['volume_attachment'].c
        self.assertEqual(36, attachment.attach_mode.type.length)
        self.assertEqual(255, METADATA.tables['instances'].c.host.type.length)

    def test_python_defaults(self):
        volume = METADATA.tables['volumes'].c
        for column, value in ((volume.multiattach, False),
                              (volume.deleted, False),
                              (METADATA.tables['volume_types'].c.is_public,
                               True),
                              (METADATA.tables['services'].c.version, 0)):
            self.assertEqual(value, column.default.arg, str(column))

    def test_every_table_has_timestamps(self):
        for table in METADATA.tables.values():
            self.assertIn('created_at', table.c, table.name)
            self.assertIn('updated_at', table.c, table.name)
