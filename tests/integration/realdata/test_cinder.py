"""nova_lite beside upstream Cinder 29, judged by the guests.

``CinderDeployment`` is the real-data production layout (uWSGI API,
conductor, two libvirt compute hosts, RabbitMQ, MariaDB) behind a real
Keystone (``tests.fixtures.keystone``), with ``[volume] client = cinder``
reaching a real Cinder (``tests.fixtures.cinder``: cinder-api under
uWSGI, cinder-scheduler, cinder-volume with the RBD driver on the
machine's one-node Ceph) through the Keystone catalog, with the user's
token and nova_lite's service token. nova_lite's own ``/v3`` is not in
the catalog. Cinder's ``[nova]`` points at nova_lite's ``/v2.1`` through
the catalog. What the compute hosts' operator does beside a Cinder on
Ceph is done once: the libvirt ``ceph`` secret Cinder's
``rbd_secret_uuid`` names, holding the key of Cinder's cephx user.

Volumes are made, looked at and deleted in Cinder's API; servers and
attachments go through nova_lite's compute API; the guest reads the bytes
written into the volume's RBD image (``rbd_write``), and what it writes is
read back from the image (``rbd_read``).

Paths: 2.101 (asynchronous) and 2.100 (synchronous) attach and detach,
2.105 ``attach_mode: ro`` (Cinder 3.54's ``mode``), a multiattach volume
shared by guests on the two hosts, and by the two servers of a
multi-create on one host (one detached, the other keeps the host's
connection), a server deleted with its volume attached, the member's own
delete of the server's attachment refused by Cinder (its OSSA-2023-003
check asks nova_lite) while nova_lite's detach as the service is
accepted, a shelved-offloaded server keeping its volume and gaining
one, both connected by the unshelve; and Cinder's calls into nova_lite:
a volume extended in Cinder while attached (Cinder's volume service sends
``volume-extended``, its host resizes the guest's disk, the guest sees the
size), and a volume Cinder migrates to its other backend (a second Ceph
pool) while attached (Cinder asks nova_lite to swap it, the host copies
it under the running guest, which goes on reading and writing, and ends
on the new pool's image). Every test skips, saying why,
without Cinder's virtualenv, Ceph or libvirt; with ``CI=true`` they must
run. The tests share one deployment (and one Cinder) per test process:
``tools/dev.py`` runs them in one worker.
"""

import base64

from oslo_utils import units

from tests.fixtures import cinder as cinder_fixture
from tests.fixtures import keystone
from tests.guest import agent
from tests.guest import fixture as guest_fixture
from tests.integration import deployment as deploy
from tests.integration.realdata import base
from tests.integration.realdata import test_data_path as data_path

HOST_BYTES = data_path.HOST_BYTES
GUEST_BYTES = data_path.GUEST_BYTES
GUEST_OFFSET = data_path.GUEST_OFFSET
dev = data_path.dev

TYPE = 'ceph'
MULTIATTACH_TYPE = 'ceph-multiattach'
# No volume_backend_name: Cinder's scheduler lets a volume of this type
# migrate to either backend (it filters the destination by the type).
MIGRATABLE_TYPE = 'ceph-any'
EVENTS = '2.84'   # instance action events with their details
# Deadlines (polled): the guest sees the new size; Cinder's migration of
# a 1 GiB volume (the new volume made, nova_lite's swap, the completion).
EXTEND_TIMEOUT = 120
MIGRATION_TIMEOUT = 300
# The guest's writes while the migration runs: 16 bytes each, 4 KiB
# apart, from 2 MiB on.
DURING_OFFSET = 2 * units.Mi
DURING_WRITES = 256


class CinderDeployment(base.RealDataDeployment):
    """The real-data deployment behind Keystone, its compute side on a
    real Cinder (``cinder``: the ``tests.fixtures.cinder.Cinder``)."""

    def __init__(self, backend, **kwargs):
        kwargs.setdefault('keystone', keystone.KeystoneServer(
            deploy.executable('uwsgi'), nova_lite_block_storage=False))
        super().__init__(backend, **kwargs)

    def _make_volume_types(self):
        # Called once nova_lite runs and is in the catalog: Cinder on the
        # same Ceph, a vhost of its own, then what the operator adds.
        if self.ceph is None:
            cinder_fixture.unavailable(self.no_ceph)
        rabbit = self.useFixture(deploy.RabbitVhost())
        cinder = cinder_fixture.Cinder(
            self.keystone, self.ceph, rabbit.transport_url, self.uwsgi)
        cinder.check_available()
        self.cinder = self.useFixture(cinder)
        self._define_ceph_secret()
        api = self.cinder_admin()
        for name, specs in (
                (TYPE, {'volume_backend_name': cinder_fixture.BACKEND}),
                (MULTIATTACH_TYPE, {
                    'volume_backend_name': cinder_fixture.BACKEND,
                    'multiattach': '<is> True'}),
                (MIGRATABLE_TYPE, {})):
            resp = api.post('/types', body={'volume_type': {
                'name': name, 'extra_specs': specs}})
            if resp.status != 200:
                raise AssertionError('volume type %s: %r' % (name, resp))
        return {(base.RBD, False): TYPE, (base.RBD, True): MULTIATTACH_TYPE}

    def _define_ceph_secret(self):
        """``virsh secret-define`` and ``secret-set-value`` of the secret
        Cinder's connection_info names (the compute hosts share this
        machine's libvirtd)."""
        import libvirt
        conn = libvirt.open(guest_fixture.uri())
        self.addCleanup(conn.close)
        secret = conn.secretDefineXML(self.cinder.libvirt_secret_xml())
        self.addCleanup(secret.undefine)
        secret.setValue(base64.b64decode(self.cinder.rbd_key))

    def cinder_admin(self, version='3.0'):
        """Cinder's API as the cloud's admin (paths below
        ``/v3/<admin project>``)."""
        return deploy.HTTPClient(
            self.cinder.volume_url(self.keystone.projects['admin'].id),
            token=self.keystone.token(), volume_version=version)

    def _read_logs(self):
        texts = super()._read_logs()
        cinder = getattr(self, 'cinder', None)
        if cinder is not None and hasattr(cinder, 'path'):
            texts['cinder.log'] = cinder.log_text()
        return texts


class CinderTestCase(data_path.DataPathTestCase):
    """The helpers of the real-Cinder tests (Cinder's side, the
    hypervisor's view) on a ``CinderDeployment``."""

    @classmethod
    def make_deployment(cls):
        return CinderDeployment(cls.BACKEND, extra_conf=cls.EXTRA_CONF)

    def setUp(self):
        super().setUp()
        self.ks = self.deployment.keystone
        self.cinder = self.deployment.cinder
        self.project_id = self.ks.projects['demo'].id
        url = self.deployment.base_url
        token = self.ks.token('demo', keystone.USER_PASSWORD, 'demo')
        self.api = deploy.HTTPClient(url, token=token)
        self.admin_api = deploy.HTTPClient(url, token=self.ks.token())
        self.volumes = deploy.HTTPClient(
            self.cinder.volume_url(self.project_id), token=token,
            volume_version='3.0')
        self.cinder_admin = self.deployment.cinder_admin('3.44')

    # -- Cinder's side ----------------------------------------------------
    def create_volume(self, size=1, multiattach=False, **fields):
        """A volume of the ``ceph`` type (multiattach or not) unless
        ``volume_type`` says otherwise, made in Cinder as the demo member;
        waits until ``available``."""
        volume = {'size': size, 'name': 'cinder-%s' % self.getUniqueString(),
                  'volume_type': (MULTIATTACH_TYPE if multiattach
                                  else TYPE)}
        volume.update(fields)
        resp = self.volumes.post('/volumes', body={'volume': volume})
        self.assertEqual(202, resp.status, resp)
        volume_id = resp.body['volume']['id']
        self.addCleanup(self._delete_volume, volume_id, None)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertIn(self.image(volume_id),
                      self.cinder.images(self.volume_pool(volume_id)))
        return volume_id

    def _delete_volume(self, volume_id, project_id):
        path = '/volumes/%s' % volume_id
        resp = self.cinder_admin.get(path)
        if resp.status == 404:
            return
        for attachment in resp.body['volume']['attachments']:
            self.assertEqual(202, self.detach_volume(
                attachment['server_id'], volume_id,
                api=self.admin_api.as_(compute_version='2.20')).status)
        if resp.body['volume']['attachments']:
            self.wait_for_volume_status(volume_id, 'available')
        resp = self.cinder_admin.delete(path)
        self.assertIn(resp.status, (202, 404), resp)
        self.wait_for(lambda: self.cinder_admin.get(path).status == 404)

    def show_volume(self, volume_id, project_id=None):
        """Cinder's admin view of the volume."""
        resp = self.cinder_admin.get('/volumes/%s' % volume_id)
        self.assertEqual(200, resp.status, resp)
        return resp.body['volume']

    def cinder_attachments(self, volume_id):
        """Cinder's attachments of the volume (3.44, as the admin)."""
        resp = self.cinder_admin.get(
            '/attachments/detail?all_tenants=1&volume_id=%s' % volume_id)
        self.assertEqual(200, resp.status, resp)
        return resp.body['attachments']

    def volume_pool(self, volume_id):
        """The Ceph pool of the volume's backend (Cinder's host)."""
        return self.cinder.pools[self.volume_backend(volume_id)]

    def host_write(self, volume_id, offset, data):
        self.cinder.rbd_write(self.volume_pool(volume_id),
                              self.image(volume_id), offset, data)

    def host_read(self, volume_id, offset, length):
        return self.cinder.rbd_read(self.volume_pool(volume_id),
                                    self.image(volume_id), offset, length)

    def watchers(self, volume_id):
        return self.cinder.watchers(self.volume_pool(volume_id),
                                    self.image(volume_id))

    def assert_detached_everywhere(self, server_id, volume_id, guest=None):
        """Cinder has the volume ``available`` with no attachment left,
        the domain no disk of it, no client holds the image open."""
        volume = self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([], volume['attachments'])
        self.assertEqual([], self.cinder_attachments(volume_id))
        if guest is not None:
            guest.wait_for_no_disk(volume_id)
        self.assertNotIn(volume_id, self.domain_disks(server_id).values())
        self.wait_for(lambda: not self.watchers(volume_id),
                      message='volume %s still open' % volume_id)

    # -- the hypervisor's view --------------------------------------------
    def rbd_disk(self, server_id, volume_id):
        """``(pool/image, cephx user, secret uuid)`` of the guest's disk
        of the volume (the domain's live XML); fails unless librbd's."""
        from nova_lite.virt.libvirt import config as vconfig
        root = vconfig.parse(self._domain(server_id).XMLDesc(0))
        for disk in vconfig.disks(root).values():
            if disk['serial'] != volume_id:
                continue
            element = disk['element']
            source = element.find('source')
            self.assertEqual('network', element.get('type'))
            self.assertEqual('rbd', source.get('protocol'))
            auth = source.find('auth')
            if auth is None:
                auth = element.find('auth')
            secret = auth.find('secret')
            return (source.get('name'), auth.get('username'),
                    secret.get('uuid'))
        raise AssertionError('server %s has no disk of volume %s' % (
            server_id, volume_id))

    def assert_cinders_disk(self, server_id, volume_id):
        """The guest's disk is Cinder's image, opened as Cinder's cephx
        user with the secret Cinder named."""
        self.assertEqual(('%s/%s' % (self.volume_pool(volume_id),
                                     self.image(volume_id)),
                          self.cinder.rbd_user, self.cinder.rbd_secret_uuid),
                         self.rbd_disk(server_id, volume_id))

    def assert_guest_reads_and_writes(self, server_id, volume_id):
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        guest.write(volume_id, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(GUEST_BYTES,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        return guest


class TestRealCinder(CinderTestCase):

    # -- the paths ----------------------------------------------------------
    def test_attach_async_then_sync_the_guest_reads_cinders_image(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)

        # 2.101: 202 at once; Cinder's attachment is attached when the
        # host plugged the disk.
        api = self.api.as_(compute_version='2.101')
        resp = self.attach_volume(server_id, volume_id, api=api)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_attached(server_id, volume_id)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual([server_id], [a['server_id']
                                       for a in volume['attachments']])
        [attachment] = self.cinder_attachments(volume_id)
        self.assertEqual(('attached', server_id, 'rw'), (
            attachment['status'], attachment['instance'],
            attachment['attach_mode']))
        guest = self.assert_guest_reads_and_writes(server_id, volume_id)
        self.assert_cinders_disk(server_id, volume_id)
        self.detach_from(server_id, volume_id, api)
        self.assert_detached_everywhere(server_id, volume_id, guest)

        # 2.100: answered once the host plugged the disk; the first
        # guest's write is still in the image.
        device = self.attach(server_id, volume_id,
                             api=self.api.as_(compute_version='2.100'))
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual({dev(device): volume_id},
                         self.domain_disks(server_id))
        guest.wait_for_disk(volume_id)
        self.assertEqual(GUEST_BYTES, guest.read(volume_id, GUEST_OFFSET, 16))
        guest.write(volume_id, 2 * GUEST_OFFSET, b'sync-attached!!!')
        self.assertEqual(b'sync-attached!!!',
                         self.host_read(volume_id, 2 * GUEST_OFFSET, 16))
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id, guest)

    def test_read_only_attachment_is_cinders_ro_mode(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        api = self.api.as_(compute_version='2.105')
        resp = self.attach_volume(server_id, volume_id, api=api,
                                  attach_mode='ro')
        self.assertEqual(202, resp.status, resp)
        self.wait_for_attached(server_id, volume_id)
        [attachment] = self.cinder_attachments(volume_id)
        self.assertEqual('ro', attachment['attach_mode'])

        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertTrue(guest.disks()[agent.guest_serial(volume_id)]['ro'])
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.assertRaises(agent.GuestError, guest.write, volume_id,
                          GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(b'\0' * 16,
                         self.host_read(volume_id, GUEST_OFFSET, 16))
        self.detach_from(server_id, volume_id, api)
        self.assert_detached_everywhere(server_id, volume_id, guest)

    def test_multiattach_guests_on_two_hosts_share_cinders_image(self):
        servers = self.create_server_on_each_host()
        first, second = (servers[h] for h in self.deployment.compute_hosts)
        shared = self.create_volume(multiattach=True)
        self.assertTrue(self.show_volume(shared)['multiattach'])
        self.host_write(shared, 0, HOST_BYTES)
        api = self.api.as_(compute_version='2.60')
        guests = {}
        for server_id in (first, second):
            self.attach(server_id, shared, api=api)
            guests[server_id] = self.guest(server_id)
            guests[server_id].wait_for_disk(shared)
            self.assertEqual(HOST_BYTES, guests[server_id].read(shared, 0,
                                                                16))
            self.assert_cinders_disk(server_id, shared)
        self.assertEqual({first, second}, {
            a['server_id'] for a in self.show_volume(shared)['attachments']})
        guests[first].write(shared, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(GUEST_BYTES,
                         guests[second].read(shared, GUEST_OFFSET, 16))
        guests[second].write(shared, 2 * GUEST_OFFSET, b'second-host-wr!!')
        self.assertEqual(b'second-host-wr!!',
                         guests[first].read(shared, 2 * GUEST_OFFSET, 16))

        # One host lets go: the other keeps reading and writing.
        self.detach_from(first, shared, api)
        guests[first].wait_for_no_disk(shared)
        self.assertEqual('in-use', self.show_volume(shared)['status'])
        guests[second].write(shared, 3 * GUEST_OFFSET, b'still-connected!')
        self.assertEqual(b'still-connected!',
                         self.host_read(shared, 3 * GUEST_OFFSET, 16))
        self.detach_from(second, shared, api)
        self.assert_detached_everywhere(second, shared, guests[second])

    def test_multi_create_shares_a_multiattach_volume_on_one_host(self):
        here, there = self.deployment.compute_hosts
        shared = self.create_volume(multiattach=True)
        self.host_write(shared, 0, HOST_BYTES)
        # A multi-create at 2.105 onto one host (the other takes no new
        # server): both servers boot with the volume.
        self.set_compute_status(there, 'disabled')
        first, second = self.create_servers(
            2, networks='none', block_device_mapping_v2=[{
                'source_type': 'volume', 'destination_type': 'volume',
                'uuid': shared, 'attach_mode': 'rw'}])
        guests = {}
        for server_id in (first, second):
            self.wait_for_server_status(server_id, 'ACTIVE', host=here)
            guests[server_id] = guest = self.guest(server_id)
            guest.wait_for_disk(shared)
            self.assertEqual(HOST_BYTES, guest.read(shared, 0, 16))
            self.assert_cinders_disk(server_id, shared)
        self.assertEqual({('attached', first), ('attached', second)}, {
            (a['status'], a['instance'])
            for a in self.cinder_attachments(shared)})
        guests[first].write(shared, GUEST_OFFSET, GUEST_BYTES)
        self.assertEqual(GUEST_BYTES,
                         guests[second].read(shared, GUEST_OFFSET, 16))

        # Cinder does not say which attachments share the host's
        # connection (no 3.72): the host counts the volume's attachments
        # on it, and keeps the connection the other guest uses.
        self.detach_from(first, shared)
        guests[first].wait_for_no_disk(shared)
        guests[second].write(shared, 2 * GUEST_OFFSET, b'second-guest-wr!')
        self.assertEqual(b'second-guest-wr!',
                         self.host_read(shared, 2 * GUEST_OFFSET, 16))
        self.assertEqual(GUEST_BYTES,
                         guests[second].read(shared, GUEST_OFFSET, 16))
        self.detach_from(second, shared)
        self.assert_detached_everywhere(second, shared, guests[second])

    def test_server_delete_gives_cinder_its_volume_back(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        self.attach(server_id, volume_id)
        self.assert_guest_reads_and_writes(server_id, volume_id)

        resp = self.api.delete('/v2.1/servers/%s' % server_id)
        self.assertEqual(204, resp.status, resp)
        self.wait_for(lambda: self.admin_api.get(
            '/v2.1/servers/%s' % server_id).status == 404)
        volume = self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([], volume['attachments'])
        self.assertEqual([], self.cinder_attachments(volume_id))
        self.wait_for(lambda: not self.watchers(volume_id),
                      message='the image is still open')
        # The guest's write outlives the server.
        self.assertEqual(GUEST_BYTES,
                         self.host_read(volume_id, GUEST_OFFSET, 16))

    def test_users_delete_of_the_servers_attachment_is_refused(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        self.attach(server_id, volume_id)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        [attachment] = self.cinder_attachments(volume_id)

        # The member, straight to Cinder: Cinder asks nova_lite (2.89)
        # whether the server still uses that attachment, and refuses.
        resp = self.volumes.as_(volume_version='3.44').delete(
            '/attachments/%s' % attachment['id'])
        self.assertEqual(409, resp.status, resp)
        self.assertIn('using the Compute API', resp.text)
        self.assertEqual([attachment['id']], [
            a['id'] for a in self.cinder_attachments(volume_id)])
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))

        # nova_lite's detach deletes it as the service: accepted.
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id, guest)

    def test_shelved_offloaded_server_keeps_and_gains_volumes(self):
        server_id = self.active_server()
        kept = self.create_volume()
        self.host_write(kept, 0, HOST_BYTES)
        self.attach(server_id, kept)
        self.assert_guest_reads_and_writes(server_id, kept)

        self.server_action(server_id, {'shelve': None})
        self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')
        # No host holds the image open; Cinder still has the volume the
        # server's.
        self.wait_for(lambda: not self.deployment.ceph.watchers(
            self.image(kept)), message='the image is still open')
        self.assertEqual([server_id], [
            a['instance'] for a in self.cinder_attachments(kept)])
        self.assertNotEqual('available', self.show_volume(kept)['status'])

        # Attached while offloaded (2.20): as Nova, an attachment without
        # a connector, completed (Cinder: attached, the volume in-use), that
        # no host has open; the unshelve connects it.
        gained = self.create_volume()
        self.host_write(gained, 0, b'attached-shelved')
        self.attach(server_id, gained,
                    api=self.api.as_(compute_version='2.20'))
        self.assertEqual([('attached', server_id)], [
            (a['status'], a['instance'])
            for a in self.cinder_attachments(gained)])
        self.assertEqual('in-use', self.show_volume(gained)['status'])
        self.assertEqual([], self.deployment.ceph.watchers(
            self.image(gained)))

        self.server_action(server_id, {'unshelve': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        guest = self.guest(server_id, reconnect=True)
        for volume_id, offset, data in (
                (kept, GUEST_OFFSET, GUEST_BYTES),
                (gained, 0, b'attached-shelved')):
            guest.wait_for_disk(volume_id)
            self.assertEqual(data, guest.read(volume_id, offset, 16))
            self.assert_cinders_disk(server_id, volume_id)
            self.wait_for_volume_status(volume_id, 'in-use')
            self.assertEqual([('attached', server_id)], [
                (a['status'], a['instance'])
                for a in self.cinder_attachments(volume_id)])

    # -- Cinder's calls into nova_lite ----------------------------------------
    def guest_size(self, guest, volume_id):
        return guest.disks()[agent.guest_serial(volume_id)]['size']

    def finished_events(self, server_id, action):
        """The events of the server's latest ``action`` once all of them
        finished (polled)."""
        api = self.admin_api.as_(compute_version=EVENTS)

        def finished():
            actions = api.get('/v2.1/servers/%s/os-instance-actions' %
                              server_id).body['instanceActions']
            latest = [a for a in actions if a['action'] == action]
            if not latest:
                return None
            events = api.get('/v2.1/servers/%s/os-instance-actions/%s' % (
                server_id, latest[0]['request_id'])).body[
                    'instanceAction']['events']
            if events and all(e['finish_time'] for e in events):
                return events
            return None
        return self.wait_for(finished, message='no finished %s action of '
                             '%s' % (action, server_id))

    def test_extended_in_cinder_while_attached_the_guest_sees_the_size(self):
        server_id = self.active_server()
        volume_id = self.create_volume(size=1)
        self.host_write(volume_id, 0, HOST_BYTES)
        self.attach(server_id, volume_id)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(units.Gi, self.guest_size(guest, volume_id))

        # The member extends it in Cinder (3.42: attached). Cinder's
        # volume service grows the image, then tells nova_lite as its
        # [nova] user with its service token (POST
        # /os-server-external-events at 2.51, ``volume-extended``); the
        # server's host resizes the guest's disk.
        resp = self.volumes.as_(volume_version='3.42').post(
            '/volumes/%s/action' % volume_id,
            body={'os-extend': {'new_size': 2}})
        self.assertEqual(202, resp.status, resp)
        guest.wait_for(
            lambda g: self.guest_size(g, volume_id) == 2 * units.Gi,
            timeout=EXTEND_TIMEOUT,
            what='disk %s of 2 GiB in the guest' % volume_id)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(2, volume['size'])
        [step] = self.finished_events(server_id, 'extend_volume')
        self.assertEqual(('compute_extend_volume', 'Success'),
                         (step['event'], step['result']))

        # Its bytes are intact, and the guest writes past the old end.
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        guest.write(volume_id, units.Gi + GUEST_OFFSET, b'past-the-old-end')
        self.assertEqual(b'past-the-old-end', self.host_read(
            volume_id, units.Gi + GUEST_OFFSET, 16))
        self.assert_cinders_disk(server_id, volume_id)
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id, guest)

    def test_migrated_by_cinder_under_the_running_guest(self):
        server_id = self.active_server()
        # Of a type either backend takes: the migration goes to the other.
        volume_id = self.create_volume(volume_type=MIGRATABLE_TYPE)
        source = self.volume_backend(volume_id)
        [target] = set(self.cinder.pools) - {source}
        old_image = self.image(volume_id)
        self.host_write(volume_id, 0, HOST_BYTES)
        device = self.attach(server_id, volume_id)
        guest = self.assert_guest_reads_and_writes(server_id, volume_id)
        [before] = self.cinder_attachments(volume_id)

        # The admin migrates it in Cinder. Cinder makes the volume on the
        # target and asks nova_lite, as the service, to swap the attached
        # volume for it (PUT /servers/{id}/os-volume_attachments/{id} at
        # 2.1); the host copies it under the guest (libvirt's block copy)
        # and completes the migration in Cinder.
        resp = self.deployment.cinder_admin().post(
            '/volumes/%s/action' % volume_id,
            body={'os-migrate_volume': {
                'host': self.cinder.backend_host(target)}})
        self.assertEqual(202, resp.status, resp)

        # Meanwhile the guest goes on writing and reading its disk.
        written = {}

        def migrated():
            if len(written) < DURING_WRITES:
                offset = DURING_OFFSET + len(written) * GUEST_OFFSET
                data = b'during-%08d!' % len(written)
                guest.write(volume_id, offset, data)
                self.assertEqual(data, guest.read(volume_id, offset, 16))
                written[offset] = data
            volume = self.show_volume(volume_id)
            if volume['migration_status'] == 'error':
                raise AssertionError('Cinder\'s migration failed: %s\n%s' % (
                    volume, self.cinder.log_text()))
            return volume['migration_status'] == 'success'
        self.wait_for(migrated, timeout=MIGRATION_TIMEOUT,
                      message=lambda: 'volume %s not migrated to %s: %s' % (
                          volume_id, target, self.show_volume(volume_id)))
        self.assertTrue(written)
        # nova_lite's side is over once the host's step finished (Cinder's
        # success comes just before the host ends its task).
        [step] = self.finished_events(server_id, 'swap_volume')
        self.assertEqual(('compute_swap_volume', 'Success'),
                         (step['event'], step['result']))

        # Cinder: in-use on the target backend, the volume's storage the
        # new volume's image (its name_id), one attachment: the one
        # nova_lite made for the new volume, which the server names.
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(('success', self.cinder.backend_host(target)), (
            volume['migration_status'], volume['os-vol-host-attr:host']))
        new_image = self.image(volume_id)
        self.assertNotEqual(old_image, new_image)
        [after] = self.cinder_attachments(volume_id)
        self.assertNotEqual(before['id'], after['id'])
        self.assertEqual(('attached', server_id), (after['status'],
                                                   after['instance']))
        resp = self.api.as_(compute_version='2.89').get(
            '/v2.1/servers/%s/os-volume_attachments/%s' % (server_id,
                                                           volume_id))
        self.assertEqual(200, resp.status, resp)
        self.assertEqual(after['id'],
                         resp.body['volumeAttachment']['attachment_id'])

        # The guest's disk (same device, same serial) is the target
        # pool's image, opened as Cinder's user; the image holds every
        # byte written before and during the migration.
        self.assertEqual({dev(device): volume_id},
                         self.domain_disks(server_id))
        self.assertEqual({dev(device): volume_id},
                         self.domain_disks(server_id, inactive=True))
        self.assertEqual(('%s/%s' % (self.cinder.pools[target], new_image),
                          self.cinder.rbd_user, self.cinder.rbd_secret_uuid),
                         self.rbd_disk(server_id, volume_id))
        pool = self.cinder.pools[target]
        self.assertEqual(HOST_BYTES,
                         self.cinder.rbd_read(pool, new_image, 0, 16))
        self.assertEqual(GUEST_BYTES, self.cinder.rbd_read(
            pool, new_image, GUEST_OFFSET, 16))
        span = self.cinder.rbd_read(pool, new_image, DURING_OFFSET,
                                    DURING_WRITES * GUEST_OFFSET)
        self.assertEqual(written, {
            offset: span[offset - DURING_OFFSET:offset - DURING_OFFSET + 16]
            for offset in written})
        guest.write(volume_id, 2 * GUEST_OFFSET, b'after-migration!')
        self.assertEqual(b'after-migration!', self.cinder.rbd_read(
            pool, new_image, 2 * GUEST_OFFSET, 16))
        # Cinder deletes the source's image with the temporary volume.
        self.wait_for(lambda: old_image not in self.cinder.images(
            self.cinder.pools[source]), message='image %s was not deleted'
            % old_image)

        # The member's detach works on the migrated volume.
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id, guest)
