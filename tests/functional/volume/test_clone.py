"""A volume created from another volume (``source_volid``) through /v3, on
the ``file`` backend (its data copied) and on ``fake`` (no data); the
Cinder rules of the source's status, the size and the type; the source's
delete while a clone is creating, and the settling of a clone whose
process died. The ``rbd`` backend's clones are in ``test_rbd_backend``,
``iscsi``'s in ``test_iscsi``."""

import datetime

from oslo_utils import uuidutils

from nova_lite import context
from nova_lite.db import models
from nova_lite import utils
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume_service import drivers
from nova_lite.volume_service import periodic as volume_periodic
from tests.fixtures import tgt
from tests.functional.compute import test_volume_attachments as compute_base
from tests.functional.volume import base
from tests.functional.volume import test_iscsi

GiB = 1024 ** 3
DATA = b'the source volume'
OFFSET = 3 * 1024 * 1024 + 5


def write(conf, volume_id, data=DATA, offset=OFFSET):
    """Write ``data`` into the volume's storage, as a host would."""
    row = volume_db.volume_get(context.get_admin_context(), volume_id)
    driver = drivers.get_driver(conf, row.host)
    with driver.open_volume(backend_conf.volume_dict(row), 'w') as f:
        f.seek(offset)
        f.write(data)


def read(conf, volume_id, length=len(DATA), offset=OFFSET):
    row = volume_db.volume_get(context.get_admin_context(), volume_id)
    driver = drivers.get_driver(conf, row.host)
    with driver.open_volume(backend_conf.volume_dict(row), 'r') as f:
        f.seek(offset)
        return f.read(length)


class CloneTestCase(base.VolumeTestCase):

    def clone(self, source_id, expect=202, api=None, **fields):
        return self.create_volume(api=api, expect=expect,
                                  source_volid=source_id, **fields)

    def action(self, volume_id, body, api=None, expect=202):
        resp = (api or self.admin).post(
            '/v3/volumes/%s/action' % volume_id, body=body)
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def fault(self, resp):
        return list(resp.body.values())[0]['message']


class FileCloneTest(CloneTestCase):

    def test_clone_holds_the_source_data(self):
        source = self.create_volume(size=2)
        write(self.conf, source['id'])
        body = {'volume': {'source_volid': source['id'], 'name': 'copy'}}
        resp = self.vol.post('/v3/volumes', body=body)
        self.assertEqual(202, resp.status, resp.text)
        clone = resp.body['volume']
        # No size: the source's.
        self.assertEqual((2, 'available', source['id']),
                         (clone['size'], clone['status'],
                          clone['source_volid']))
        self.assertEqual(source['volume_type'], clone['volume_type'])
        self.assertEqual(DATA, read(self.conf, clone['id']))
        shown = self.show_volume(clone['id'])
        self.assertEqual(source['id'], shown['source_volid'])
        self.assertIsNone(self.show_volume(source['id'])['source_volid'])
        listed = self.vol.get('/v3/volumes/detail').body['volumes']
        self.assertEqual({clone['id']: source['id'],
                          source['id']: None},
                         {v['id']: v['source_volid'] for v in listed})
        # The two are independent.
        write(self.conf, clone['id'], b'the clone volume')
        self.assertEqual(DATA, read(self.conf, source['id']))
        self.assertEqual(b'the clone volumee', read(self.conf, clone['id']))
        # And the source can go, then the clone.
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % source['id']).status)
        self.assertEqual(b'the clone volume', read(self.conf, clone['id'],
                                                   16))
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % clone['id']).status)

    def test_larger_clone_and_bootable_flag(self):
        source = self.create_volume()
        self.action(source['id'], {'os-set_bootable': {'bootable': True}},
                    api=self.vol, expect=200)
        write(self.conf, source['id'], b'end', GiB - 3)
        clone = self.clone(source['id'], size=3)
        self.assertEqual((3, 'true'), (clone['size'], clone['bootable']))
        row = volume_db.volume_get(context.get_admin_context(), clone['id'])
        self.assertEqual(3, drivers.get_driver(
            self.conf, row.host).volume_size(backend_conf.volume_dict(row)))
        self.assertEqual(b'end\0\0', read(self.conf, clone['id'], 5,
                                          GiB - 3))

    def test_clone_of_an_in_use_volume(self):
        source = self.create_volume()
        write(self.conf, source['id'])
        self.action(source['id'], {'os-attach': {
            'instance_uuid': uuidutils.generate_uuid(),
            'mountpoint': '/dev/vdb'}}, api=self.vol)
        self.assertEqual('in-use', self.status(source['id']))
        clone = self.clone(source['id'])
        self.assertEqual('available', clone['status'])
        self.assertEqual(DATA, read(self.conf, clone['id']))
        self.assertEqual('in-use', self.status(source['id']))

    def test_bad_requests_change_nothing(self):
        source = self.create_volume(size=2)
        other = self.api.as_(token='other:other',
                             volume_version=base.LATEST)
        for source_id, fields, status, says in (
                ('not-a-uuid', {}, 400, "is not a 'uuid'"),
                (uuidutils.generate_uuid(), {}, 404, 'could not be found'),
                (source['id'], {'size': 1}, 400,
                 'cannot be smaller than original volume size'),
                (source['id'], {'size': 0}, 400, None)):
            resp = self.clone(source_id, expect=status, **fields)
            if says:
                self.assertIn(says, self.fault(resp))
        # Another project's volume is not found.
        resp = self.clone(source['id'], expect=404, api=other,
                          size=2)
        self.assertIn('could not be found', self.fault(resp))
        # A source that is not available or in-use (Cinder's statuses).
        self.action(source['id'], {'os-reset_status': {'status': 'error'}})
        resp = self.clone(source['id'], expect=400)
        self.assertIn("Originating source volume status must be one of "
                      "'available, in-use' values", self.fault(resp))
        self.assertEqual([source['id']], [
            v['id'] for v in self.vol.get('/v3/volumes').body['volumes']])

    def test_type_the_source_backend_cannot_host(self):
        self.create_type('elsewhere', extra_specs={
            'volume_backend_name': 'nowhere'})
        self.create_type('here', extra_specs={'volume_backend_name': 'file'})
        source = self.create_volume()
        resp = self.clone(source['id'], expect=400,
                          volume_type='elsewhere')
        self.assertIn('Invalid volume_type provided: elsewhere (requested '
                      'type is not compatible', self.fault(resp))
        clone = self.clone(source['id'], volume_type='here')
        self.assertEqual(('here', 'available'),
                         (clone['volume_type'], clone['status']))

    def test_failed_copy_leaves_an_error_clone_to_delete(self):
        source = self.create_volume()
        row = volume_db.volume_get(context.get_admin_context(),
                                   source['id'])
        drivers.get_driver(self.conf, 'file').delete_volume(
            backend_conf.volume_dict(row))
        clone = self.clone(source['id'])
        self.assertEqual('error', clone['status'])
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % clone['id']).status)
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % source['id']).status)


class CloneSettlingTest(CloneTestCase):
    """A clone whose process died: ``creating``; the source's delete waits
    for it; block storage's settling makes it ``error`` once stalled."""

    def left_creating(self, clone_id, updated_at):
        compute_base.set_rows(models.Volume, models.Volume.id == clone_id,
                              status='creating', updated_at=updated_at)

    def settle(self):
        return volume_periodic.settle(context.get_admin_context(),
                                      self.conf)

    def test_source_kept_until_the_stalled_clone_is_settled(self):
        source = self.create_volume()
        clone = self.clone(source['id'])
        self.left_creating(clone['id'], utils.utcnow())
        resp = self.vol.delete('/v3/volumes/%s' % source['id'])
        self.assertEqual(400, resp.status, resp.text)
        self.assertEqual('available', self.status(source['id']))
        # Fresh: left alone.
        self.settle()
        self.assertEqual('creating', self.status(clone['id']))
        self.left_creating(clone['id'], utils.utcnow() - datetime.timedelta(
            seconds=self.conf.recovery.stalled_after + 60))
        settled = self.settle()
        self.assertIn(({'volume': clone['id'], 'operation': 'create'},
                       'error'), settled)
        self.assertEqual('error', self.status(clone['id']))
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % source['id']).status)
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % clone['id']).status)

    def test_a_create_never_moved_is_settled_by_its_age(self):
        volume = self.create_volume()
        compute_base.set_rows(
            models.Volume, models.Volume.id == volume['id'],
            status='creating', updated_at=None,
            created_at=utils.utcnow() - datetime.timedelta(
                seconds=self.conf.recovery.stalled_after + 60))
        self.settle()
        self.assertEqual('error', self.status(volume['id']))


class FakeCloneTest(CloneTestCase):
    CONF = {'volume.enabled_backends': ['fake']}

    def test_clone_on_a_backend_without_data(self):
        source = self.create_volume(size=2)
        clone = self.clone(source['id'], size=4)
        self.assertEqual(('available', 4, source['id']),
                         (clone['status'], clone['size'],
                          clone['source_volid']))
        row = volume_db.volume_get(context.get_admin_context(), clone['id'])
        self.assertEqual('fake://fake/%s' % clone['id'],
                         row.provider_location)


class ISCSICloneTest(test_iscsi.ISCSITestCase):
    """``iscsi`` (on the node's tgtd; skips without it): the clone is a
    file of its own, exported on its own target."""

    def test_initiator_reads_the_clone(self):
        source = self.create_volume()
        self.write(source['id'], DATA, OFFSET)
        clone = self.create_volume(source_volid=source['id'])
        self.assertEqual(('available', source['id']),
                         (clone['status'], clone['source_volid']))
        attachment = self.attach(clone['id'])
        info = attachment['connection_info']
        self.assertEqual(self.tgtd.prefix + 'volume-' + clone['id'],
                         info['target_iqn'])
        self.assertEqual(DATA, tgt.qemu_read(info, test_iscsi.I1, OFFSET,
                                             len(DATA)))
        resp = self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual(200, resp.status, resp.text)
        for each in (source, clone):
            self.assertEqual(202, self.vol.delete(
                '/v3/volumes/%s' % each['id']).status)
