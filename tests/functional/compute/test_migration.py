"""Volume migration between backends (Cinder's generic migration) and the
compute swap it drives, the only swap nova_lite carries out (Nova 32+,
bug 2112187).

Two ``file`` backends, ``file`` and ``file2``. The guest is the judge: the
bytes a server's guest wrote before the migration are what it (or another
server's guest) reads after it.
"""

import datetime
import types

from nova_lite import context
from nova_lite.db import models
from nova_lite import objects
from nova_lite import utils
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import migration as migration_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume_service import drivers
from nova_lite.volume_service import periodic as volume_periodic
from tests.fixtures import system
from tests.functional.compute import base
from tests.functional.compute import test_volume_attachments as tva

DATA = b'written before the migration'
OFFSET = 512 * 1024


class MigrationTestCase(base.TestCase):
    CONF = {'volume.enabled_backends': ['file', 'file2'],
            'file2.volume_driver': 'file',
            'recovery.stalled_after': 60}

    def setUp(self):
        super().setUp()
        self.server_id = self.create_server()

    def volume_action(self, volume_id, body, api=None, expect=202):
        resp = self.volume_api(api or self.admin_api).post(
            '/v3/volumes/%s/action' % volume_id, body=body)
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def migrate(self, volume_id, host='file2', api=None, expect=202):
        return self.volume_action(volume_id, {'os-migrate_volume': {
            'host': host}}, api=api, expect=expect)

    def wait_migrated(self, volume_id, status='success'):
        return system.wait_for(
            lambda: (lambda v: v if v['migration_status'] == status
                     else None)(self.show_volume(volume_id)),
            message='volume %s never migrated (%s)' % (
                volume_id, self.show_volume(volume_id)['migration_status']))

    def attached(self, server_id=None):
        volume_id = self.create_volume()
        self.attach(server_id or self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        return volume_id

    def guest_io(self, server_id=None, host='compute1'):
        return (self.compute_manager(host).driver,
                types.SimpleNamespace(uuid=server_id or self.server_id))

    def write(self, server_id=None, device='/dev/vdb', data=DATA):
        driver, instance = self.guest_io(server_id)
        driver.write_device(instance, device, data, offset=OFFSET)

    def read(self, server_id=None, device='/dev/vdb'):
        driver, instance = self.guest_io(server_id)
        return driver.read_device(instance, device, len(DATA),
                                  offset=OFFSET)

    def backend(self, volume_id):
        return self.show_volume(volume_id)['os-vol-host-attr:host'].split(
            '#')[-1]

    def all_volumes(self):
        return self.volume_api(self.admin_api).get(
            '/v3/volumes?all_tenants=1').body['volumes']

    def mapping(self, volume_id, server_id=None):
        return objects.BlockDeviceMapping.get_by_volume_and_instance(
            context.get_admin_context(), volume_id,
            server_id or self.server_id)


class AvailableVolumeTest(MigrationTestCase):

    def test_data_moves_and_the_id_stays(self):
        volume_id = self.attached()
        self.write()
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        before = self.show_volume(volume_id)
        self.assertEqual('file', self.backend(volume_id))
        self.migrate(volume_id)
        volume = self.show_volume(volume_id)
        self.assertEqual(('success', 'available', 'file2'),
                         (volume['migration_status'], volume['status'],
                          self.backend(volume_id)))
        for key in ('id', 'size', 'name', 'user_id', 'volume_type'):
            self.assertEqual(before[key], volume[key], key)
        # The storage is the temporary volume's, which is gone.
        self.assertIsNotNone(volume['os-vol-mig-status-attr:name_id'])
        self.assertNotEqual(volume_id,
                            volume['os-vol-mig-status-attr:name_id'])
        self.assertEqual([volume_id],
                         [v['id'] for v in self.all_volumes()])
        # The guest reads what it wrote.
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(DATA, self.read())
        # And back.
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.migrate(volume_id, host='compute1@file#file')
        self.assertEqual('file', self.backend(volume_id))
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(DATA, self.read())

    def test_refusals(self):
        volume_id = self.create_volume()
        resp = self.migrate(volume_id, host='file', expect=400)
        self.assertIn('destination host/cluster must be different',
                      resp.text)
        resp = self.migrate(volume_id, host='elsewhere', expect=400)
        self.assertIn("No available service named 'elsewhere'", resp.text)
        self.migrate(volume_id, api=self.api, expect=403)
        # A second migration while one is in progress.
        tva.set_rows(models.Volume, models.Volume.id == volume_id,
                     migration_status='migrating')
        self.migrate(volume_id, expect=400)
        resp = self.volume_action(volume_id, {'os-extend': {'new_size': 2}},
                                  api=self.api, expect=400)
        # Nothing attaches or deletes a migrating volume.
        resp = self.attach(self.server_id, volume_id, expect=400)
        self.assertIn('is migrating', resp.text)
        self.assertEqual(400, self.volume_api().delete(
            '/v3/volumes/%s' % volume_id).status)
        self.assertEqual('available', self.show_volume(volume_id)['status'])

    def test_multiattached_volume_is_not_migrated(self):
        volume_id = self.create_volume(multiattach=True)
        other = self.create_server(name='other')
        api = self.api.as_(compute_version='2.60')
        for server_id in (self.server_id, other):
            self.attach(server_id, volume_id, api=api)
            system.wait_for(lambda: len(self.show_volume(volume_id)[
                'attachments']) == (2 if server_id == other else 1))
        resp = self.migrate(volume_id, expect=400)
        self.assertIn('attached more than once', resp.text)
        self.assertIsNone(self.show_volume(volume_id)['migration_status'])


class AttachedVolumeTest(MigrationTestCase):

    def test_active_server(self):
        volume_id = self.attached()
        self.write()
        old = self.mapping(volume_id)
        self.migrate(volume_id)
        self.wait_migrated(volume_id)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual('file2', self.backend(volume_id))
        # The server keeps the volume (same id, same device), with a new
        # attachment; the guest reads what it wrote.
        [item] = self.attachments(self.server_id,
                                  api=self.api.as_(compute_version='2.89'))
        self.assertEqual((volume_id, '/dev/vdb'),
                         (item['volumeId'], item['device']))
        self.assertNotEqual(old.attachment_id, item['attachment_id'])
        self.assertEqual([item['attachment_id']],
                         [a['attachment_id'] for a in volume['attachments']])
        self.assertEqual(DATA, self.read())
        # The host ends its swap task once block storage has completed
        # the migration (the volume is in-use again a moment before).
        bdm = system.wait_for(lambda: next(
            (b for b in [self.mapping(volume_id)] if b.task is None), None))
        self.assertEqual(volume_id, bdm.get_connection_info()['serial'])
        guest = self.compute_manager().driver.guests[self.server_id]
        self.assertEqual({'/dev/vdb': volume_id},
                         self.compute_manager().driver.volume_devices(
                             types.SimpleNamespace(uuid=self.server_id)))
        self.assertEqual(bdm.get_connection_info(),
                         guest.devices['/dev/vdb']['connection_info'])
        self.assertEqual([volume_id],
                         [v['id'] for v in self.all_volumes()])
        # The guest writes on the new storage; detach and attach again.
        self.write(data=b'after')
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(b'after', self.read()[:5])

    def test_the_attach_mode_stays(self):
        volume_id = self.create_volume()
        api = self.api.as_(compute_version='2.105')
        self.attach(self.server_id, volume_id, api=api, expect=202,
                    attach_mode='ro')
        self.wait_for_volume_status(volume_id, 'in-use')
        self.migrate(volume_id)
        self.wait_migrated(volume_id)
        [item] = self.attachments(self.server_id, api=api)
        self.assertEqual(('ro', '/dev/vdb'),
                         (item['attach_mode'], item['device']))
        attachment = self.volume_api(self.admin_api).get(
            '/v3/attachments/%s' % item['attachment_id']).body['attachment']
        self.assertEqual('ro', attachment['attach_mode'])
        device = self.compute_manager().driver.guests[
            self.server_id].devices['/dev/vdb']
        self.assertEqual('ro', device['mode'])
        # On the new storage.
        name_id = self.show_volume(volume_id)[
            'os-vol-mig-status-attr:name_id']
        self.assertTrue(device['connection_info']['path'].endswith(
            'volume-%s' % name_id))

    def test_shelved_offloaded_server(self):
        volume_id = self.attached()
        self.write()
        self.api.post('/v2.1/servers/%s/action' % self.server_id,
                      body={'shelve': None})
        self.wait_for_server_status(self.server_id, 'SHELVED_OFFLOADED')
        self.migrate(volume_id)
        volume = self.show_volume(volume_id)
        self.assertEqual(('success', 'in-use', 'file2'),
                         (volume['migration_status'], volume['status'],
                          self.backend(volume_id)))
        bdm = self.mapping(volume_id)
        self.assertEqual((None, '/dev/vdb'), (bdm.task, bdm.device_name))
        self.assertEqual([bdm.attachment_id],
                         [a['attachment_id'] for a in volume['attachments']])
        self.api.post('/v2.1/servers/%s/action' % self.server_id,
                      body={'unshelve': None})
        self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertEqual(DATA, self.read())

    def test_swap_fails_migration_rolls_back(self):
        volume_id = self.attached()
        # The compute host is down: the swap is refused (409).
        self.update_compute_services(forced_down=True)
        resp = self.migrate(volume_id, expect=409)
        self.assertIn('compute1', resp.text)
        self.update_compute_services(forced_down=False)
        volume = self.show_volume(volume_id)
        self.assertEqual(('error', 'in-use', 'file'),
                         (volume['migration_status'], volume['status'],
                          self.backend(volume_id)))
        self.assertEqual([volume_id], [v['id'] for v in self.all_volumes()])
        # Usable, and migratable again.
        self.write()
        self.migrate(volume_id)
        self.wait_migrated(volume_id)
        self.assertEqual(DATA, self.read())


class RetypeTest(MigrationTestCase):

    def setUp(self):
        super().setUp()
        admin = self.volume_api(self.admin_api)
        for name, backend in (('gold', 'file'), ('silver', 'file2')):
            resp = admin.post('/v3/types', body={'volume_type': {
                'name': name,
                'extra_specs': {'volume_backend_name': backend}}})
            self.assertEqual(200, resp.status, resp.text)

    def retype(self, volume_id, policy=None, expect=202):
        body = {'new_type': 'silver'}
        if policy:
            body['migration_policy'] = policy
        return self.volume_action(volume_id, {'os-retype': body},
                                  api=self.api, expect=expect)

    def test_on_demand_migrates(self):
        volume_id = self.create_volume(volume_type='gold')
        for policy in (None, 'never'):
            resp = self.retype(volume_id, policy, expect=400)
            self.assertIn('migration_policy on-demand', resp.text)
        self.retype(volume_id, 'on-demand')
        volume = self.show_volume(volume_id)
        self.assertEqual(('silver', 'file2', 'success', 'available'),
                         (volume['volume_type'], self.backend(volume_id),
                          volume['migration_status'], volume['status']))
        # The type's quota counts it; no temporary volume left.
        usage = self.volume_api(self.admin_api).get(
            '/v3/os-quota-sets/demo?usage=True').body['quota_set']
        self.assertEqual((0, 1, 1), (usage['volumes_gold']['in_use'],
                                     usage['volumes_silver']['in_use'],
                                     usage['volumes']['in_use']))

    def test_in_use_volume(self):
        volume_id = self.create_volume(volume_type='gold')
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.write()
        self.retype(volume_id, 'on-demand')
        self.wait_migrated(volume_id)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(('silver', 'file2'),
                         (volume['volume_type'], self.backend(volume_id)))
        self.assertEqual(DATA, self.read())


class SwapIsTheMigrationsTest(MigrationTestCase):
    """``PUT os-volume_attachments/{old}`` with another volume: 409 unless
    it is block storage's, for its migration (Nova 32+, bug 2112187)."""

    def put(self, old, new, api, expect):
        resp = api.as_(compute_version='2.84').put(
            '/v2.1/servers/%s/os-volume_attachments/%s' % (self.server_id,
                                                           old),
            body={'volumeAttachment': {'volumeId': new}})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def test_not_migrating_is_409(self):
        old = self.attached()
        new = self.create_volume()
        service = self.api.as_(token='service:demo')
        for api in (self.admin_api, service):
            resp = self.put(old, new, api, 409)
            self.assertEqual(
                'volume %s is not migrating; this API should only be called '
                'by Cinder' % old, resp.body['conflictingRequest']['message'])
        # Users are refused by the policy first.
        self.put(old, new, self.api, 403)
        self.assertEqual(('in-use', 'available'),
                         (self.show_volume(old)['status'],
                          self.show_volume(new)['status']))
        self.assertEqual([old], [a['volumeId'] for a in
                                 self.attachments(self.server_id)])

    def test_migrating_but_not_its_target_is_409(self):
        old = self.attached()
        new = self.create_volume()
        tva.set_rows(models.Volume, models.Volume.id == old,
                     migration_status='migrating')
        resp = self.put(old, new, self.admin_api, 409)
        self.assertIn('only its migration swaps it', resp.text)
        # A service user of the project sees no migration status (an
        # administrator's attribute): Nova's answer, as from Cinder.
        resp = self.put(old, new, self.api.as_(token='service:demo'), 409)
        self.assertIn('is not migrating', resp.text)
        # An administrator is not the service, even with the target.
        tva.set_rows(models.Volume, models.Volume.id == new,
                     migration_status='target:%s' % old)
        resp = self.put(old, new, self.admin_api, 409)
        self.assertIn('only its migration swaps it', resp.text)
        self.assertEqual([old], [a['volumeId'] for a in
                                 self.attachments(self.server_id)])
        self.assertEqual('available', self.show_volume(new)['status'])


class SettlingTest(MigrationTestCase):
    """Block storage's settling of a migration whose process died
    (``volume/migration.py``): the states a dead process leaves, settled
    by block storage's own settling (``volume_service.periodic``)."""

    def settle(self):
        return volume_periodic.settle(context.get_admin_context(), self.conf)

    def long_ago(self):
        return utils.utcnow() - datetime.timedelta(
            seconds=self.conf.recovery.stalled_after + 60)

    def left_at(self, volume_id, status, target_status='available'):
        """The volume as a process that died leaves it: ``status``, a
        temporary volume on file2 (``target_status``), not moved for
        long."""
        ctxt = context.get_admin_context()
        source = volume_db.volume_get(ctxt, volume_id)
        migration_db.migration_start(ctxt, volume_id, 'file2')
        target = migration_db.target_create(
            ctxt, source, 'file2', source.volume_type_id, False)
        if target_status == 'available':
            updates = drivers.get_driver(self.conf, 'file2').create_volume(
                backend_conf.volume_dict(target))
            volume_db.volume_move(ctxt, target.id, 'create_done',
                                  values=updates)
        tva.set_rows(models.Volume, models.Volume.id == volume_id,
                     migration_status=status, updated_at=self.long_ago())
        return target.id

    def test_starting_is_rolled_back(self):
        volume_id = self.create_volume()
        target = self.left_at(volume_id, 'starting', target_status='creating')
        self.settle()
        self.assertEqual('error',
                         self.show_volume(volume_id)['migration_status'])
        self.assertEqual(404, self.volume_api(self.admin_api).get(
            '/v3/volumes/%s' % target).status)
        self.migrate(volume_id)

    def test_migrating_without_swap_is_rolled_back(self):
        volume_id = self.create_volume()
        target = self.left_at(volume_id, 'migrating')
        self.settle()
        self.assertEqual(('error', 'file'), (
            self.show_volume(volume_id)['migration_status'],
            self.backend(volume_id)))
        self.assertEqual([volume_id], [v['id'] for v in self.all_volumes()])
        self.assertEqual(404, self.volume_api(self.admin_api).get(
            '/v3/volumes/%s' % target).status)

    def test_completing_is_finished(self):
        volume_id = self.create_volume()
        self.left_at(volume_id, 'completing')
        self.settle()
        self.assertEqual(('success', 'file2'), (
            self.show_volume(volume_id)['migration_status'],
            self.backend(volume_id)))
        self.assertEqual([volume_id], [v['id'] for v in self.all_volumes()])

    def test_fresh_migration_is_left_alone(self):
        volume_id = self.create_volume()
        target = self.left_at(volume_id, 'migrating')
        # The temporary volume is listed, using no quota.
        shown = self.volume_api(self.admin_api).as_(
            volume_version='3.65').get('/v3/volumes/%s' % target).body[
                'volume']
        self.assertEqual(('target:%s' % volume_id, False),
                         (shown['migration_status'], shown['consumes_quota']))
        tva.set_rows(models.Volume, models.Volume.id == volume_id,
                     updated_at=utils.utcnow())
        self.settle()
        self.assertEqual('migrating',
                         self.show_volume(volume_id)['migration_status'])
        self.assertEqual(2, len(self.all_volumes()))
        # Settled once stalled.
        tva.set_rows(models.Volume, models.Volume.id == volume_id,
                     updated_at=self.long_ago())
        self.settle()
        self.assertEqual('error',
                         self.show_volume(volume_id)['migration_status'])
