"""volume_get and attachment_get return read-only records (Core rows), the
list functions ORM rows: both must give the views the same values."""

from oslo_utils import uuidutils
import testtools

from nova_lite.api import microversion as mv
from nova_lite import api_version
from nova_lite import context
from nova_lite.db import models
from nova_lite import exception
from nova_lite import policy
from nova_lite.volume import api as volume_api
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import views
from nova_lite import volume_client as block_storage
from nova_lite.volume_service import drivers
from tests.fixtures import conf as conf_fixture
from tests.fixtures import database as db_fixture
from tests.fixtures import volume_service as volume_service_fixture

VERSIONS = [mv.APIVersion(3, 0), api_version.CLIENT_VOLUME_VERSION,
            mv.APIVersion(3, 71)]


class RecordsTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
        self.useFixture(db_fixture.Database())
        policy.init(self.conf)
        self.addCleanup(policy.reset)
        self.conf.set_override('enabled_backends', ['fake'], group='volume')
        drivers.register_backend_opts(self.conf)
        self.useFixture(volume_service_fixture.VolumeService(self.conf))
        self.api = volume_api.API(self.conf)
        self.user = context.RequestContext('demo', 'demo',
                                           roles=['member', 'reader'])
        self.svc = block_storage.service_context(self.user)
        self.admin = context.get_admin_context()
        vtype = self.api.types.create(
            self.user.elevated(), 'ma',
            extra_specs={'multiattach': '<is> True'})
        self.volume = self.api.create(self.user, 1, volume_type=vtype.name,
                                      name='v1', metadata={'b': '2', 'a': '1',
                                                           'B': '3'})
        self.attachments = []
        for i in range(3):
            if i == 2:
                # A deleted attachment is in neither.
                gone = self.api.attachments.create(self.svc, self.volume.id,
                                                   'i')
                self.api.attachments.delete(self.svc, gone.id)
            att = self.api.attachments.create(
                self.svc, self.volume.id, uuidutils.generate_uuid(),
                connector={'host': 'h%d' % (i % 2), 'ip': '10.0.0.%d' % i,
                           'multipath': False, 'wwpns': ['a', str(i)]})
            if i < 2:
                self.api.attachments.complete(self.svc, att.id)
            self.attachments.append(att.id)

    def _orm_volume(self, volume_id):
        found = [v for v in volume_db.volume_get_all(self.admin,
                                                     with_metadata=True)
                 if v.id == volume_id]
        self.assertEqual(1, len(found))
        return found[0]

    def test_volume_record_matches_the_orm_row(self):
        record = volume_db.volume_get(self.admin, self.volume.id,
                                      with_metadata=True)
        orm_row = self._orm_volume(self.volume.id)
        for column in models.Volume.__table__.c:
            self.assertEqual(getattr(orm_row, column.name),
                             getattr(record, column.name), column.name)
        self.assertEqual(('ma', orm_row.volume_type.id),
                         (record.volume_type.name, record.volume_type.id))
        self.assertEqual(sorted(self.attachments),
                         [a.id for a in record.attachments])
        expected = {'B': '3', 'a': '1', 'b': '2'}
        self.assertEqual(expected, views.volume_metadata(record))
        self.assertEqual(expected, views.volume_metadata(orm_row))
        self.assertEqual(list(expected), list(views.volume_metadata(record)))
        for mine, theirs in zip(record.attachments, orm_row.attachments):
            for column in models.VolumeAttachment.__table__.c:
                self.assertEqual(getattr(theirs, column.name),
                                 getattr(mine, column.name), column.name)
        for ctxt in (self.admin, self.user, self.svc):
            for version in VERSIONS:
                self.assertEqual(
                    views.volume_detail(ctxt, orm_row, version, 'http://x',
                                        conf=self.conf),
                    views.volume_detail(ctxt, record, version, 'http://x',
                                        conf=self.conf))

    def test_volume_of_the_default_type_without_attachments(self):
        volume = self.api.create(self.user, 1)
        record = volume_db.volume_get(self.admin, volume.id, 'demo',
                                      with_metadata=True)
        self.assertEqual('__DEFAULT__', record.volume_type.name)
        self.assertEqual([], record.attachments)
        self.assertEqual((), record.volume_metadata)
        self.assertEqual(
            views.volume_detail(self.user, self._orm_volume(volume.id),
                                VERSIONS[-1], conf=self.conf),
            views.volume_detail(self.user, record, VERSIONS[-1],
                                conf=self.conf))

    def test_attachment_record_matches_the_orm_row(self):
        orm_rows = {a.id: a
                    for a in attachment_db.attachment_get_all(self.admin)}
        for attachment_id in self.attachments:
            record = attachment_db.attachment_get(self.admin, attachment_id,
                                                  'demo')
            orm_row = orm_rows[attachment_id]
            for column in models.VolumeAttachment.__table__.c:
                self.assertEqual(getattr(orm_row, column.name),
                                 getattr(record, column.name), column.name)
            for column in models.Volume.__table__.c:
                self.assertEqual(getattr(orm_row.volume, column.name),
                                 getattr(record.volume, column.name),
                                 column.name)
            self.assertEqual(attachment_db.connector_of(orm_row),
                             attachment_db.connector_of(record))
            self.assertEqual(views.attachment_detail(orm_row),
                             views.attachment_detail(record))

    def test_metadata_read_only_when_asked(self):
        # The attach path reads volumes without their metadata (one
        # statement); their views then show none.
        record = volume_db.volume_get(self.admin, self.volume.id)
        self.assertIsNone(record.volume_metadata)
        self.assertEqual({}, views.volume_detail(
            self.admin, record, VERSIONS[-1], conf=self.conf)['metadata'])

    def test_other_project_is_not_found(self):
        self.assertRaises(exception.VolumeNotFound, volume_db.volume_get,
                          self.admin, self.volume.id, 'other')
        self.assertRaises(exception.VolumeAttachmentNotFound,
                          attachment_db.attachment_get, self.admin,
                          self.attachments[0], 'other')
        self.assertRaises(exception.VolumeNotFound, volume_db.volume_get,
                          self.admin, uuidutils.generate_uuid())

    def test_records_are_read_only(self):
        record = volume_db.volume_get(self.admin, self.volume.id)
        self.assertRaises(AttributeError, setattr, record, 'status', 'x')
        attachment = attachment_db.attachment_get(self.admin,
                                                  self.attachments[0])
        self.assertRaises(AttributeError, setattr, attachment,
                          'attach_status', 'x')

    def test_connection_users_with_and_without_exclude(self):
        first, _second, third = self.attachments
        # h0: the first (attached) and the third (attaching, never
        # completed: still a live, connected attachment).
        self.assertEqual(sorted([first, third]),
                         attachment_db.connection_users(
                             self.admin, self.volume.id, 'h0'))
        self.assertEqual([third], attachment_db.connection_users(
            self.admin, self.volume.id, 'h0', exclude_id=first))
        self.assertEqual([], attachment_db.connection_users(
            self.admin, self.volume.id, None))
