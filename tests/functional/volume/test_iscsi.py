"""The whole system with the ``iscsi`` backend on the node's tgtd: /v3
volumes and attachments, /v2.1 server attachments (the fake virt driver's
connector), and block storage's settling of a restarted tgtd. A real
initiator (QEMU's libiscsi, ``qemu-io``) reads through the
``connection_info`` the API returned.

Skips without tgtd/tgtadm or qemu-io (``tests/fixtures/tgt.py``), unless
``NOVA_LITE_REQUIRE_TGT=1``.
"""

import argparse
import contextlib
import datetime
import io
import os
import time
from unittest import mock

from oslo_utils import uuidutils

from nova_lite.cmd import volume as volume_cmd
from nova_lite import context
from nova_lite import utils
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import attachments as attachment_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume_service import drivers
from nova_lite.volume_service.drivers import iscsi
from nova_lite.volume_service import periodic as volume_periodic
from nova_lite.volume_service import settling
from tests.fixtures import system
from tests.fixtures import tgt
from tests.functional.compute import test_volume_attachments
from tests.functional.volume import base
from tests.functional.volume import test_attachments

DATA = b'read through /v3'
I1 = 'iqn.2024-01.org.nova-lite.test:compute1'
I2 = 'iqn.2024-01.org.nova-lite.test:compute2'
SERVICE_TOKEN = 'service:service'
CONNECTION_INFO_KEYS = {
    'driver_volume_type', 'target_discovered', 'target_portal',
    'target_iqn', 'target_lun', 'volume_id', 'auth_method',
    'auth_username', 'auth_password', 'access_mode', 'encrypted',
    'attachment_id'}


class ISCSIBackend(object):
    """Mixin: the one backend is ``iscsi`` on a tgtd of the test; its
    export check (``export_check_interval``) off unless
    ``EXPORT_CHECK_INTERVAL`` says (None: the default): the tests settle
    when they mean to."""
    PRIVATE_TGTD = False
    EXPORT_CHECK_INTERVAL = 0

    def setUp(self):
        # tgtd first: the system's block-storage settling (every
        # settle_interval once started) asks it.
        self.tgtd = self.useFixture(tgt.Tgtd(private=self.PRIVATE_TGTD))
        self.CONF = dict(self.CONF, **{'volume.enabled_backends': ['iscsi']},
                         **self.tgtd.conf_overrides('iscsi'))
        if self.EXPORT_CHECK_INTERVAL is not None:
            self.CONF['iscsi.export_check_interval'] = \
                self.EXPORT_CHECK_INTERVAL
        super().setUp()
        self.driver = drivers.get_driver(self.conf, 'iscsi')

    def exported_iqns(self):
        """The volume targets exported to a host (a volume's target is
        made at its create, exported to no one until a host connects)."""
        return sorted(iqn for iqn, target in self.tgtd.targets().items()
                      if 'volume-' in iqn and target.acl)


class ISCSITestCase(ISCSIBackend, base.VolumeTestCase):

    def row(self, volume_id):
        return volume_db.volume_get(context.get_admin_context(), volume_id)

    def write(self, volume_id, data=DATA, offset=0):
        with open(self.row(volume_id).provider_location, 'r+b') as f:
            f.seek(offset)
            f.write(data)

    def attach(self, volume_id, initiator=I1, host='compute1', expect=200,
               **fields):
        body = {'volume_uuid': volume_id,
                'instance_uuid': fields.pop('instance_uuid', None) or
                uuidutils.generate_uuid(),
                'connector': dict({'host': host, 'initiator': initiator},
                                  **fields.pop('connector', {}))}
        body.update(fields)
        # As the compute service connects it: the user's request with the
        # service's token (noauth2's form), which is shown the
        # credentials.
        resp = self.vol.as_(volume_version='3.54').post(
            '/v3/attachments', body={'attachment': body},
            headers={'X-Service-Token': SERVICE_TOKEN})
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body['attachment'] if expect == 200 else resp


class VolumeLifecycleTest(ISCSITestCase):

    def test_create_attach_read_detach_delete(self):
        volume = self.create_volume()
        self.assertEqual('available', self.status(volume['id']))
        row = self.row(volume['id'])
        # The credentials are each host connection's, not the volume's.
        self.assertIsNone(row.provider_auth)
        # Its target is made with it, exported to no host.
        self.assertEqual([], self.tgtd.targets()[
            self.tgtd.prefix + 'volume-' + volume['id']].acl)
        self.assertEqual('iSCSI', self.admin.get(
            '/v3/capabilities/iscsi').body['storage_protocol'])
        self.write(volume['id'])

        attachment = self.attach(volume['id'])
        info = attachment['connection_info']
        self.assertEqual(CONNECTION_INFO_KEYS, set(info))
        user, secret = info['auth_username'], info['auth_password']
        # Never shown with the volume.
        for api in (self.vol, self.admin):
            shown = api.get('/v3/volumes/%s' % volume['id'])
            self.assertNotIn(secret, shown.text)
        # The project's members are never shown the CHAP secret; an
        # administrator is.
        for path in ('/v3/attachments/%s' % attachment['id'],
                     '/v3/attachments/detail'):
            self.assertNotIn(secret, self.vol.get(path).text)
            self.assertIn(secret, self.admin.get(path + (
                '?all_tenants=1' if 'detail' in path else '')).text)

        self.assertEqual({
            'driver_volume_type': 'iscsi',
            'target_discovered': False,
            'target_portal': self.tgtd.portal,
            'target_iqn': self.tgtd.prefix + 'volume-' + volume['id'],
            'target_lun': 1,
            'volume_id': volume['id'],
            'auth_method': 'CHAP',
            'auth_username': user,
            'auth_password': secret,
            'access_mode': 'rw',
            'encrypted': False,
            'attachment_id': attachment['id'],
        }, info)
        # The initiator reads through what the API returned.
        self.assertEqual(DATA, tgt.qemu_read(info, I1, 0, len(DATA)))
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, info, I2, 0,
                          len(DATA))
        self.complete(attachment['id'])
        self.assertEqual('in-use', self.status(volume['id']))
        self.assertEqual(['compute1'],
                         list(self.driver.connections(self.row(
                             volume['id'])._asdict())))

        resp = self.vol.delete('/v3/attachments/%s' % attachment['id'])
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual({}, self.driver.connections(
            self.row(volume['id'])._asdict()))
        self.assertEqual([], self.exported_iqns())
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, info, I1, 0,
                          len(DATA))

        path = row.provider_location
        self.assertEqual(202, self.vol.delete(
            '/v3/volumes/%s' % volume['id']).status)
        self.assertEqual(404, self.vol.get(
            '/v3/volumes/%s' % volume['id']).status)
        self.assertRaises(FileNotFoundError, open, path)
        self.assertNotIn(info['target_iqn'], self.tgtd.targets())

    def test_a_member_connecting_is_not_shown_the_secret(self):
        volume = self.create_volume()
        own = self.vol.post('/v3/attachments', body={'attachment': {
            'volume_uuid': volume['id'], 'instance_uuid':
            uuidutils.generate_uuid()}})
        self.assertEqual(200, own.status, own.text)
        path = '/v3/attachments/%s' % own.body['attachment']['id']
        updated = self.vol.put(path, body={'attachment': {'connector': {
            'host': 'compute2', 'initiator': I2}}})
        self.assertEqual(200, updated.status, updated.text)
        self.assertEqual(CONNECTION_INFO_KEYS - {'auth_password'},
                         set(updated.body['attachment']['connection_info']))
        # What the attachment holds is the service's and the admins'.
        secret = self.admin.get(path).body['attachment'][
            'connection_info']['auth_password']
        vol = self.row(volume['id'])._asdict()
        self.assertEqual(secret, self.driver._account(
            vol, self.driver._records(vol)['compute2'])[1])
        self.assertNotIn(secret, updated.text)
        self.assertEqual(200, self.vol.delete(path).status)

    def test_multiattach_read_only_and_read_write(self):
        self.create_type('ma', extra_specs={'multiattach': '<is> True'})
        volume = self.create_volume(volume_type='ma')
        self.write(volume['id'])
        ro = self.attach(volume['id'], mode='ro')
        self.complete(ro['id'])
        self.assertEqual('ro', ro['connection_info']['access_mode'])
        result = tgt.qemu_io(ro['connection_info'], ['write -P 1 0 512'], I1,
                             read_only=False)
        self.assertIn('write protected', result.stderr)
        rw = self.attach(volume['id'], initiator=I2, host='compute2',
                         mode='rw')
        self.assertEqual('rw', rw['connection_info']['access_mode'])
        result = tgt.qemu_io(rw['connection_info'], ['write -P 0x61 0 16'],
                             I2, read_only=False)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(b'a' * 16, tgt.qemu_read(ro['connection_info'], I1,
                                                  0, 16))
        self.assertEqual(['compute1', 'compute2'], sorted(
            self.driver.connections(self.row(volume['id'])._asdict())))
        self.vol.delete('/v3/attachments/%s' % rw['id'])
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read,
                          rw['connection_info'], I2, 0, 16)
        self.vol.delete('/v3/attachments/%s' % ro['id'])
        self.assertEqual({}, self.driver.connections(
            self.row(volume['id'])._asdict()))

    def test_extend_then_attach(self):
        volume = self.create_volume()
        resp = self.vol.post('/v3/volumes/%s/action' % volume['id'],
                             body={'os-extend': {'new_size': 2}})
        self.assertEqual(202, resp.status, resp.text)
        self.assertEqual(2, self.show_volume(volume['id'])['size'])
        info = self.attach(volume['id'])['connection_info']
        result = tgt.qemu_io(info, ['length'], I1)
        self.assertEqual('2 GiB', result.stdout.strip(), result.stderr)

    def test_a_connector_without_initiator_is_refused(self):
        volume = self.create_volume()
        resp = self.vol.as_(volume_version='3.54').post(
            '/v3/attachments', body={'attachment': {
                'volume_uuid': volume['id'],
                'instance_uuid': '9f0c5d8e-2c3b-4f4a-8a0e-000000000001',
                'connector': {'host': 'compute1'}}})
        self.assertEqual(500, resp.status, resp.text)
        self.assertIn('initiator name', resp.text)
        # Nothing reserved, nothing exported.
        self.assertEqual('available', self.status(volume['id']))
        self.assertEqual([], self.exported_iqns())


class RestartedTgtdTest(ISCSITestCase):
    """A private tgtd killed under an attached volume: block storage's
    settling exports it again."""
    PRIVATE_TGTD = True

    def settle(self):
        return volume_periodic.settle(context.get_admin_context(), self.conf)

    def test_settling_exports_again(self):
        volume = self.create_volume()
        self.write(volume['id'])
        attachment = self.attach(volume['id'])
        self.complete(attachment['id'])
        detached = self.attach(self.create_volume()['id'], initiator=I2,
                               host='compute2')
        self.vol.delete('/v3/attachments/%s' % detached['id'])
        info = attachment['connection_info']

        self.tgtd.kill()
        self.tgtd.start()
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, info, I1, 0,
                          len(DATA))
        settled = self.settle()
        self.assertIn(({'volume': volume['id'], 'operation': 'export'},
                       'exported'),
                      [(dict(item), outcome) for item, outcome in settled])
        self.assertEqual(DATA, tgt.qemu_read(info, I1, 0, len(DATA)))
        # The detached volume stays unexported.
        self.assertEqual(1, len(self.exported_iqns()))
        # Once is enough: the next run finds tgtd as it left it.
        self.assertEqual([], volume_periodic.local_settling(
            self.conf).ensure_exports(
                context.get_admin_context(), utils.utcnow().replace(
                    tzinfo=None) - datetime.timedelta(seconds=60)))
        # Stalled work settled as usual besides.
        self.assertEqual([], volume_periodic.local_settling(
            self.conf).settle_stalled(
            context.get_admin_context(),
            utils.utcnow() -
            datetime.timedelta(hours=1)))

    def test_settling_never_exports_again_a_host_being_detached(self):
        # The export pass reads the connected attachments, then takes each
        # volume's lock to bind their hosts. A detach that begins and
        # disconnects the host in between (its attachment row not yet
        # deleted) must not find the host bound again behind it.
        volume = self.create_volume()
        self.write(volume['id'])
        attachment = self.attach(volume['id'])
        self.complete(attachment['id'])
        info = attachment['connection_info']
        ctxt = context.get_admin_context()
        self.tgtd.kill()
        self.tgtd.start()
        read = settling.connected_reader(ctxt, 'iscsi')

        def connected(volume_id=None, detaching=True):
            result = read(volume_id, detaching)
            if volume_id is None:
                # The detach, in ``volume/api.py``'s order: marked under
                # the volume row's lock, then the backend's disconnect.
                [connector] = result[volume['id']][1]
                self.assertEqual([], attachment_db.attachment_begin_detach(
                    ctxt, attachment['id'], volume['id'], 'compute1'))
                self.driver.terminate_connection(
                    result[volume['id']][0], connector)
            return result
        self.assertEqual([], self.driver.ensure_exports(connected))
        self.assertEqual([], self.exported_iqns())
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, info, I1, 0,
                          len(DATA))
        # A detach that failed is undone: the next export pass (tgtd lost
        # its targets again) exports the host again, with an account of
        # a new connection: the ended one's never logs in again.
        attachment_db.attachment_abort_detach(ctxt, attachment['id'])
        self.tgtd.kill()
        self.tgtd.start()
        self.assertEqual(
            [(volume['id'], 'exported')],
            volume_periodic.local_settling(self.conf).ensure_exports(ctxt))
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, info, I1, 0,
                          len(DATA))
        # The host connects again (its attachment updated with its
        # connector): it reads.
        again = self.vol.as_(volume_version='3.54').put(
            '/v3/attachments/%s' % attachment['id'],
            body={'attachment': {'connector': {'host': 'compute1',
                                               'initiator': I1}}},
            headers={'X-Service-Token': SERVICE_TOKEN})
        self.assertEqual(200, again.status, again.text)
        self.assertEqual(DATA, tgt.qemu_read(
            again.body['attachment']['connection_info'], I1, 0, len(DATA)))


class DeadProcessLeftoverTest(ISCSITestCase):
    """A process that died between the backend's connect and the
    database's record of it left the volume exported to that host: block
    storage's settling unexports it once stalled."""

    def settle(self):
        return RestartedTgtdTest.settle(self)

    def test_leftover_export_is_settled(self):
        volume = self.create_volume()
        self.write(volume['id'])

        class Died(BaseException):
            """The process died here: no handler runs."""
        with mock.patch.object(attachment_db, 'attachment_connect',
                               side_effect=Died()):
            self.assertRaises(Died, self.attach, volume['id'])
        vol = self.row(volume['id'])._asdict()
        self.assertEqual(['compute1'], list(self.driver.connections(vol)))
        data = self.driver._connection_info(vol, 'rw', self.driver._account(
            vol, self.driver._records(vol)['compute1']))['data']
        self.assertEqual(DATA, tgt.qemu_read(data, I1, 0, len(DATA)))

        # Not stalled yet: a connection may be under way.
        settled = self.settle()
        self.assertNotIn('export', [dict(i).get('operation')
                                    for i, _o in settled])
        self.assertEqual(['compute1'], list(self.driver.connections(vol)))
        # An hour later.
        where = self.driver._records_dir(vol)
        for name in os.listdir(where):
            past = time.time() - 3600
            os.utime(os.path.join(where, name), (past, past))
        settled = self.settle()
        self.assertIn(({'volume': volume['id'], 'operation': 'export'},
                       'unexported'),
                      [(dict(item), outcome) for item, outcome in settled])
        self.assertEqual({}, self.driver.connections(vol))
        self.assertRaises(tgt.LoginRefused, tgt.qemu_read, data, I1, 0,
                          len(DATA))


class ExportCheckTest(ISCSITestCase):
    """A private tgtd killed under an attached volume, with the default
    timers: the export check exports it again, no settling asked."""
    PRIVATE_TGTD = True
    EXPORT_CHECK_INTERVAL = None

    def test_a_restarted_tgtd_gets_its_exports_back(self):
        self.assertEqual(20, self.conf.recovery.settle_interval)
        self.assertEqual(2, self.conf.iscsi.export_check_interval)
        volume = self.create_volume()
        self.write(volume['id'])
        attachment = self.attach(volume['id'])
        self.complete(attachment['id'])
        info = attachment['connection_info']
        self.tgtd.kill()
        self.tgtd.start()

        def reads():
            try:
                return tgt.qemu_read(info, I1, 0, len(DATA)) == DATA
            except tgt.LoginRefused:
                return False
        system.wait_for(reads, timeout=15, interval=0.2)
        self.assertEqual([I1], self.tgtd.targets()[info['target_iqn']].acl)


class SharedTgtdTest(ISCSITestCase):
    """Another iscsi backend of this deployment on the same tgtd, under
    the same target prefix, and a retired backend's sentinel."""

    def backend(self, name):
        """Backend ``name`` on this tgtd, beside this system's."""
        return tgt.backend_driver(self, self.tgtd, name,
                                  self.conf.state_path)

    def test_another_backends_sweep_leaves_the_volume(self):
        volume = self.create_volume()
        self.write(volume['id'])
        attachment = self.attach(volume['id'])
        self.complete(attachment['id'])
        info = attachment['connection_info']
        other = self.backend('iscsi2')
        ctxt = context.get_admin_context()
        # An hour past stalled_after: the database says the target is
        # not iscsi2's.
        stalled = utils.utcnow().replace(tzinfo=None) + datetime.timedelta(
            hours=1)
        for _run in range(2):
            self.assertEqual([], other.ensure_exports(
                settling.connected_reader(ctxt, 'iscsi2'), stalled,
                owned=settling.owned_reader(ctxt, 'iscsi2')))
        self.assertEqual(DATA, tgt.qemu_read(info, I1, 0, len(DATA)))
        self.assertEqual({volume['id']}, volume_db.storage_on_backend(
            ctxt, 'iscsi', [volume['id'], 'not-a-volume']))
        self.assertEqual(set(), volume_db.storage_on_backend(
            ctxt, 'iscsi2', [volume['id']]))

    def run_command(self, **command):
        out = io.StringIO()
        self.conf.command = argparse.Namespace(**command)
        try:
            with contextlib.redirect_stdout(out):
                code = volume_cmd._forget_backend(self.conf)
        finally:
            del self.conf.command
        return code, out.getvalue()

    def test_forget_a_retired_backend(self):
        code, out = self.run_command(backend='iscsi')
        self.assertEqual(3, code, out)
        self.assertIn('is enabled', out)
        # A backend once enabled, its group still in the configuration.
        self.conf.register_opts(backend_conf.COMMON_OPTS, group='retired')
        self.conf.register_opts(iscsi.OPTS, group='retired')
        for key, value in self.tgtd.conf_overrides('retired').items():
            group, option = key.split('.')
            self.conf.set_override(option, value, group=group)
        sentinel = iscsi.ISCSIDriver(self.conf, 'retired')._sentinel()
        iscsi.ISCSIDriver(self.conf, 'retired').ensure_exports(
            lambda **_: {})
        self.assertIn(sentinel, self.tgtd.targets())
        code, out = self.run_command(backend='retired')
        self.assertEqual(0, code, out)
        self.assertIn('Removed the sentinel target %s' % sentinel, out)
        self.assertNotIn(sentinel, self.tgtd.targets())
        code, out = self.run_command(backend='retired')
        self.assertEqual(0, code, out)
        self.assertIn('no sentinel target', out)


# -- existing block-storage tests, on the iscsi backend -------------------

class SharedConnectionsTest(ISCSIBackend,
                            test_attachments.SharedConnectionsTest):
    """Two attachments on one host share its export."""


TVA = test_volume_attachments


class ServerAttachmentsTest(ISCSIBackend, TVA.AttachmentTestCase):
    """Server attachments through /v2.1 (the fake virt driver's
    connector names the host's initiator): the compute API's tests that
    connect and disconnect, each ending with the volume exported to no
    host."""

    _compute_host_down = TVA.DetachGuardsTest._compute_host_down

    def exported(self):
        return {iqn: target.acl for iqn, target in self.tgtd.targets().items()
                if 'volume-' in iqn and target.acl}

    def run_and_check(self, test):
        test(self)
        self.assertEqual({}, self.exported())

    def test_attach_exports_to_the_hosts_initiator(self):
        volume_id = self.create_volume(multiattach=True)
        api = self.at('2.60')
        self.attach(self.server_id, volume_id, api=api)
        self.wait_for_volume_status(volume_id, 'in-use')
        other = self.create_server(name='other')
        self.attach(other, volume_id, api=api)
        system.wait_for(lambda: len(self.show_volume(volume_id)[
            'attachments']) == 2)
        # Two servers of one host: one initiator, one export.
        self.assertEqual({self.tgtd.prefix + 'volume-' + volume_id: [
            'iqn.2010-10.org.openstack:compute1']}, self.exported())
        self.detach(other, volume_id)
        system.wait_for(lambda: len(self.show_volume(volume_id)[
            'attachments']) == 1)
        self.assertEqual(1, len(self.exported()))
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual({}, self.exported())

    def test_attach_detach_round_trip(self):
        self.run_and_check(TVA.AttachGuardsTest.test_attach_detach_round_trip)

    def test_multiattach(self):
        self.run_and_check(TVA.AttachGuardsTest.test_multiattach)

    def test_server_delete_detaches(self):
        self.run_and_check(TVA.DetachGuardsTest.test_server_delete_detaches)

    def test_compute_host_forced_down_detaches_locally(self):
        self.run_and_check(TVA.DetachGuardsTest.
                           test_compute_host_forced_down_detaches_locally)

    def test_boot_from_volume_and_delete_on_termination(self):
        guards = TVA.DetachGuardsTest
        self.run_and_check(
            guards.test_boot_from_volume_and_delete_on_termination)
