"""Volume actions on the whole system: os-extend (and the settling of an
extend a dead process left behind) and the administrator's
os-force_delete."""

import datetime
import os

from nova_lite.api import app as api_app
from nova_lite import context
from nova_lite.db import models
from nova_lite import utils
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import file as file_driver
from nova_lite.volume_service import periodic as volume_periodic
from nova_lite.volume_service import service as volume_service
from tests.fixtures import system
from tests.functional.compute import test_volume_attachments as compute_base
from tests.functional.volume import base

GiB = file_driver.GiB


class VolumeActionsTestCase(base.VolumeTestCase):

    def action(self, volume_id, body, api=None, expect=202):
        resp = (api or self.vol).post('/v3/volumes/%s/action' % volume_id,
                                      body=body)
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def extend(self, volume_id, new_size, api=None, expect=202):
        return self.action(volume_id, {'os-extend': {'new_size': new_size}},
                           api=api, expect=expect)

    def file_size(self, volume_id):
        volume = self.show_volume(volume_id, api=self.admin)
        path = os.path.join(self.conf.state_path, 'volumes',
                            'volume-%s' % volume['id'])
        return os.stat(path).st_size

    def settle(self):
        """Block storage's settling (``volume_service.periodic``), run now."""
        return volume_periodic.settle(context.get_admin_context(), self.conf)

    def long_ago(self):
        return utils.utcnow() - datetime.timedelta(
            seconds=self.conf.recovery.stalled_after + 60)

    def left_extending(self, volume_id, size, grown, updated_at=None):
        """The volume as a process dying in the backend call leaves it:
        ``extending`` with the new ``size``; the backend ``grown`` to it
        or not."""
        if grown:
            volume = self.show_volume(volume_id, api=self.admin)
            driver = drivers.get_driver(self.conf, 'file')
            driver.extend_volume({'id': volume_id, 'size': volume['size'],
                                  'provider_location': None}, size)
        compute_base.set_rows(
            models.Volume, models.Volume.id == volume_id,
            status='extending', size=size,
            updated_at=updated_at or self.long_ago())

    def set_quota(self, **values):
        resp = self.admin.put('/v3/os-quota-sets/demo',
                              body={'quota_set': values})
        self.assertEqual(200, resp.status, resp.text)


class ExtendTest(VolumeActionsTestCase):

    def test_extend_grows_the_volume_and_its_file(self):
        volume = self.create_volume()
        self.extend(volume['id'], 3)
        shown = self.show_volume(volume['id'])
        self.assertEqual(('available', 3), (shown['status'], shown['size']))
        self.assertEqual(3 * GiB, self.file_size(volume['id']))
        # Digits in a string, as Cinder's schema allows.
        self.extend(volume['id'], '4')
        self.assertEqual(4, self.show_volume(volume['id'])['size'])
        summary = self.vol.get('/v3/volumes/summary').body['volume-summary']
        self.assertEqual((1, 4), (summary['total_count'],
                                  summary['total_size']))

    def test_new_size_must_be_larger(self):
        volume = self.create_volume(size=2)
        for size in (2, 1):
            resp = self.extend(volume['id'], size, expect=400)
            self.assertEqual(
                'Invalid input received: New size for extend must be '
                'greater than current size. (current: 2, extended: %d).' %
                size, resp.body['badRequest']['message'])
        for size in (0, -1, 'big', 1.5, None, '2.0'):
            self.extend(volume['id'], size, expect=400)
        self.action(volume['id'], {'os-extend': {}}, expect=400)
        self.action(volume['id'], {'os-extend': {'new_size': 3, 'x': 1}},
                    expect=400)
        shown = self.show_volume(volume['id'])
        self.assertEqual(('available', 2), (shown['status'], shown['size']))

    def test_in_use_volumes_from_3_42(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        # In-use: Cinder's answer below 3.42.
        before = self.vol.as_(volume_version='3.41')
        resp = self.extend(volume['id'], 2, api=before, expect=400)
        self.assertIn("status must be 'available'",
                      resp.body['badRequest']['message'])
        self.assertIn('currently in-use', resp.body['badRequest']['message'])
        old = self.vol.as_(volume_version='3.0')
        self.extend(volume['id'], 2, api=old, expect=400)
        shown = self.show_volume(volume['id'])
        self.assertEqual(('in-use', 1), (shown['status'], shown['size']))
        # From 3.42 it grows and stays in-use (the compute side is told:
        # tests/functional/compute/test_external_events.py).
        self.extend(volume['id'], 2)
        shown = self.show_volume(volume['id'])
        self.assertEqual(('in-use', 2), (shown['status'], shown['size']))
        self.assertEqual('attached', self.vol.get(
            '/v3/attachments/%s' % attachment['id']).body['attachment'][
                'status'])

    def test_unknown_volume_and_other_project(self):
        self.extend('6edbc2f4-1507-44f8-ac0d-eed1d2608d38', 2, expect=404)
        theirs = self.create_volume(api=self.vol.as_(token='other:other'))
        self.extend(theirs['id'], 2, expect=404)
        # An administrator may extend any project's volume.
        self.extend(theirs['id'], 2, api=self.admin)
        self.assertEqual(2, self.show_volume(theirs['id'],
                                             api=self.admin)['size'])

    def test_gigabytes_quota_is_413(self):
        volume = self.create_volume()
        self.set_quota(gigabytes=1)
        resp = self.extend(volume['id'], 2, expect=413)
        self.assertIn('gigabytes', resp.body['overLimit']['message'])
        shown = self.show_volume(volume['id'])
        self.assertEqual(('available', 1), (shown['status'], shown['size']))
        self.set_quota(gigabytes=3)
        self.extend(volume['id'], 3)
        # The increase counts, not the new size twice.
        self.extend(volume['id'], 4, expect=413)
        self.assertEqual(3, self.show_volume(volume['id'])['size'])

    def test_per_type_and_per_volume_limits(self):
        self.create_type('gold')
        volume = self.create_volume(volume_type='gold')
        self.set_quota(gigabytes_gold=2)
        self.extend(volume['id'], 2)
        resp = self.extend(volume['id'], 3, expect=413)
        self.assertIn('gigabytes_gold', resp.text)
        self.set_quota(gigabytes_gold=-1, per_volume_gigabytes=5)
        resp = self.extend(volume['id'], 6, expect=400)
        self.assertIn('larger than maximum allowed limit 5G', resp.text)
        self.extend(volume['id'], 5)
        self.assertEqual(5, self.show_volume(volume['id'])['size'])


class ExtendOnFakeBackendTest(VolumeActionsTestCase):
    CONF = {'volume.enabled_backends': ['fake']}

    def test_backend_failure_leaves_error_extending(self):
        volume = self.create_volume(size=2)
        drivers.register_backend_opts(self.conf)
        self.conf.set_override('fail_extend', True, group='fake')
        self.extend(volume['id'], 5)
        shown = self.show_volume(volume['id'])
        self.assertEqual(('error_extending', 2),
                         (shown['status'], shown['size']))
        # Not extendable again, but deletable, as in Cinder.
        self.extend(volume['id'], 6, expect=400)
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % volume['id']).status)

    def test_extend_on_the_fake_backend(self):
        volume = self.create_volume(size=2)
        self.extend(volume['id'], 5)
        self.assertEqual(5, self.show_volume(volume['id'])['size'])
        driver = drivers.get_driver(self.conf, 'fake')
        self.assertEqual(5, driver.volume_size({'id': volume['id']}))


class ExtendSettlingTest(VolumeActionsTestCase):
    """An extend whose process died between its moves (the rows as the
    death leaves them) is settled by block storage's settling."""

    def test_grown_extend_is_finished(self):
        volume = self.create_volume()
        self.left_extending(volume['id'], 4, grown=True)
        settled = self.settle()
        self.assertIn(({'volume': volume['id'], 'operation': 'extend'},
                       'available'), settled)
        shown = self.show_volume(volume['id'])
        self.assertEqual(('available', 4), (shown['status'], shown['size']))
        # Usable again.
        self.extend(volume['id'], 5)
        self.assertEqual(5 * GiB, self.file_size(volume['id']))

    def test_extend_the_backend_did_not_do_goes_back(self):
        volume = self.create_volume(size=2)
        self.left_extending(volume['id'], 4, grown=False)
        self.settle()
        shown = self.show_volume(volume['id'])
        self.assertEqual(('available', 2), (shown['status'], shown['size']))
        self.extend(volume['id'], 4)
        self.assertEqual(4, self.show_volume(volume['id'])['size'])

    def test_backend_that_cannot_tell_is_error_extending(self):
        volume = self.create_volume()
        path = os.path.join(self.conf.state_path, 'volumes',
                            'volume-%s' % volume['id'])
        self.left_extending(volume['id'], 3, grown=False)
        os.unlink(path)
        self.settle()
        shown = self.show_volume(volume['id'])
        self.assertEqual(('error_extending', 3),
                         (shown['status'], shown['size']))
        # The administrator's way out: delete it (or reset its status).
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % volume['id']).status)

    def test_fresh_extend_is_left_alone(self):
        volume = self.create_volume()
        self.left_extending(volume['id'], 3, grown=False,
                            updated_at=utils.utcnow().replace(
                                tzinfo=None))
        self.settle()
        shown = self.show_volume(volume['id'])
        self.assertEqual(('extending', 3), (shown['status'], shown['size']))
        # Not extendable while extending.
        self.extend(volume['id'], 4, expect=400)


class SelfSettlingTest(VolumeActionsTestCase):
    """Block storage settles itself, in the volume services (their
    periodic every ``settle_interval`` seconds,
    ``volume_service.periodic``): the embedded system's and one of its
    own; neither the API processes nor the conductor's periodic touch
    block storage."""
    CONF = {'recovery.settle_interval': 1}

    def conductor_settles(self):
        """The conductor's periodic task, run now: what it settled."""
        for svc in self.sys.system.services:
            if svc.binary == 'nova-lite-conductor':
                return svc.manager.periodic_tasks(
                    context.get_admin_context())
        raise AssertionError('no conductor')

    def wait_for_settled(self, volume_id, status='available'):
        system.wait_for(lambda: self.status(volume_id) == status,
                        timeout=30, interval=0.1,
                        message='volume %s not %s' % (volume_id, status))

    def test_embedded_system_settles_a_stalled_extend(self):
        self.assertTrue(self.sys.system.settling.running)
        volume = self.create_volume(size=2)
        self.left_extending(volume['id'], 4, grown=False)
        self.assertNotIn(volume['id'], [dict(item).get('volume') for item, _o
                                        in self.conductor_settles()])
        self.wait_for_settled(volume['id'])
        self.assertEqual(2, self.show_volume(volume['id'])['size'])

    def test_a_volume_service_of_its_own_settles_a_stalled_extend(self):
        # The embedded volume service's settling stopped: a second volume
        # service enabling the same backends (sharing their queues) settles
        # it; an API process of its own runs no settling.
        self.sys.system.settling.stop()
        self.sys.system.settling.wait()
        self.assertFalse(self.sys.system.settling.running)
        api_app.init_application(conf=self.conf, clock_tick=True)
        self.addCleanup(api_app.stop_periodics)
        other = volume_service.create(self.conf, host='storage2')
        other.start()
        self.addCleanup(other.wait)
        self.addCleanup(other.stop)
        self.assertTrue(other.settling.running)
        volume = self.create_volume(size=2)
        self.left_extending(volume['id'], 4, grown=True)
        self.wait_for_settled(volume['id'])
        self.assertEqual(4, self.show_volume(volume['id'])['size'])


class NoSelfSettlingTest(VolumeActionsTestCase):
    """``settle_interval`` 0: no periodic settles block storage, and the
    conductor's settling leaves a stalled extend alone."""
    CONF = {'recovery.settle_interval': 0}

    def test_conductor_leaves_a_stalled_extend_alone(self):
        self.assertFalse(self.sys.system.settling.running)
        volume = self.create_volume(size=2)
        self.left_extending(volume['id'], 4, grown=False)
        self.assertEqual([], SelfSettlingTest.conductor_settles(self))
        self.assertEqual('extending', self.status(volume['id']))
        # Block storage's settling, run once (what ``nova-lite-manage
        # volume_attachment reconcile`` runs), settles it.
        self.assertEqual(
            [({'volume': volume['id'], 'operation': 'extend'}, 'available')],
            self.settle())


class ForceDeleteTest(VolumeActionsTestCase):

    def force_delete(self, volume_id, api=None, expect=202):
        return self.action(volume_id, {'os-force_delete': {}},
                           api=api or self.admin, expect=expect)

    def reset(self, volume_id, **values):
        self.action(volume_id, {'os-reset_status': values}, api=self.admin)

    def assertGone(self, volume_id):
        self.assertEqual(404, self.admin.get(
            '/v3/volumes/%s' % volume_id).status)

    def test_any_status(self):
        # tempest's test_volume_force_delete_when_volume_is_*: creating,
        # attaching, error, maintenance; and the statuses a plain delete
        # refuses or a crash leaves.
        for status in ('creating', 'attaching', 'error', 'maintenance',
                       'extending', 'deleting', 'error_deleting',
                       'available'):
            volume = self.create_volume()
            path = os.path.join(self.conf.state_path, 'volumes',
                                'volume-%s' % volume['id'])
            self.reset(volume['id'], status=status)
            self.assertEqual(status, self.status(volume['id']))
            self.force_delete(volume['id'])
            self.assertGone(volume['id'])
            self.assertFalse(os.path.exists(path), status)
        self.assertEqual([], self.admin.get(
            '/v3/volumes?all_tenants=1').body['volumes'])

    def test_attached_volume_is_400(self):
        volume = self.create_volume()
        attachment = self.reserve(volume['id'])
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        resp = self.force_delete(volume['id'], expect=400)
        self.assertIn('must not be migrating, attached',
                      resp.body['badRequest']['message'])
        # Whatever its status says.
        self.reset(volume['id'], status='error')
        self.force_delete(volume['id'], expect=400)
        shown = self.show_volume(volume['id'], api=self.admin)
        self.assertEqual(('error', 1), (shown['status'],
                                        len(shown['attachments'])))

    def test_migrating_volume_is_400(self):
        volume = self.create_volume()
        self.reset(volume['id'], migration_status='migrating')
        self.force_delete(volume['id'], expect=400)
        self.assertEqual('available', self.status(volume['id']))

    def test_unfinished_attachments_go_with_the_volume(self):
        reserved_volume = self.create_volume()
        reserved = self.reserve(reserved_volume['id'])
        self.assertEqual('reserved', self.status(reserved_volume['id']))
        volume = self.create_volume()
        connected = self.reserve(volume['id'])
        self.connect(connected['id'], host='compute1')
        driver = drivers.get_driver(self.conf, 'file')
        as_driver_sees = {'id': volume['id'], 'provider_location': None}
        self.assertEqual(['compute1'],
                         list(driver.connections(as_driver_sees)))
        self.assertEqual('attaching', self.status(volume['id']))
        for gone in (reserved_volume, volume):
            self.force_delete(gone['id'])
            self.assertGone(gone['id'])
        for attachment in (reserved, connected):
            self.assertEqual(404, self.vol.get(
                '/v3/attachments/%s' % attachment['id']).status)
        self.assertEqual({}, driver.connections(as_driver_sees))

    def test_administrators_only(self):
        volume = self.create_volume()
        resp = self.force_delete(volume['id'], api=self.vol, expect=403)
        self.assertIn('force_delete', resp.text)
        self.assertEqual('available', self.status(volume['id']))
        self.force_delete('6edbc2f4-1507-44f8-ac0d-eed1d2608d38', expect=404)
        self.action(volume['id'], {'os-force_delete': {}, 'x': 1},
                    api=self.admin, expect=400)
        # Any value, as Cinder's schema.
        self.action(volume['id'], {'os-force_delete': None},
                    api=self.admin)
        self.assertGone(volume['id'])


class DeleteSettlingTest(VolumeActionsTestCase):
    """A delete (plain or forced) whose process died after the volume went
    ``deleting`` is finished by block storage's settling."""

    def test_stalled_delete_is_finished(self):
        volume = self.create_volume()
        path = os.path.join(self.conf.state_path, 'volumes',
                            'volume-%s' % volume['id'])
        compute_base.set_rows(
            models.Volume, models.Volume.id == volume['id'],
            status='deleting', updated_at=self.long_ago())
        settled = self.settle()
        self.assertIn(({'volume': volume['id'], 'operation': 'delete'},
                       'deleted'), settled)
        self.assertEqual(404, self.admin.get(
            '/v3/volumes/%s' % volume['id']).status)
        self.assertFalse(os.path.exists(path))

    def test_fresh_delete_is_left_alone(self):
        volume = self.create_volume()
        compute_base.set_rows(
            models.Volume, models.Volume.id == volume['id'],
            status='deleting',
            updated_at=utils.utcnow())
        self.settle()
        self.assertEqual('deleting', self.status(volume['id']))
