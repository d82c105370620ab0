"""The whole system with ``compute_driver = libvirt``, libvirtd played by
``tests.fixtures.fakelibvirt``: what the API's requests do to the domains,
and what a guest that never releases a disk does to a detach (the volume
stays attached, the server gets a fault, nothing lies). The guest's own
view is the real-data tier's (``tests/integration/test_libvirt_guest``)."""

import os

from nova_lite import context as nl_context
from nova_lite import objects
from nova_lite.virt.libvirt import config as vconfig
from tests.fixtures import fakelibvirt
from tests.fixtures import system
from tests.functional.compute import base


class LibvirtDriverTest(base.TestCase):
    def setUp(self):
        self.libvirt = self.useFixture(fakelibvirt.LibvirtFixture())
        self.CONF = {'compute_driver': 'libvirt',
                     'libvirt.kernel_path': os.devnull,
                     'libvirt.virt_type': 'qemu',
                     'libvirt.device_detach_attempts': 2,
                     'libvirt.device_detach_timeout': 1,
                     'shutdown_timeout': 0}
        super().setUp()
        self.server_id = self.create_server()

    def domain(self):
        return self.libvirt.libvirtd.domains[self.server_id]

    def disks(self, inactive=False):
        flags = fakelibvirt.VIR_DOMAIN_XML_INACTIVE if inactive else 0
        return {dev: disk['serial'] for dev, disk in vconfig.disks(
            vconfig.parse(self.domain().XMLDesc(flags))).items()}

    def test_server_lifecycle_drives_its_domain(self):
        self.assertTrue(self.domain().isActive())
        resp = self.api.post('/v2.1/servers/%s/action' % self.server_id,
                             body={'os-stop': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(self.server_id, 'SHUTOFF')
        self.assertFalse(self.domain().isActive())
        resp = self.api.post('/v2.1/servers/%s/action' % self.server_id,
                             body={'os-start': None})
        self.assertEqual(202, resp.status, resp.text)
        self.wait_for_server_status(self.server_id, 'ACTIVE')
        self.assertTrue(self.domain().isActive())
        self.assertEqual(204, self.api.delete(
            '/v2.1/servers/%s' % self.server_id).status)
        self.wait_for_server_gone(self.server_id)
        self.assertNotIn(self.server_id, self.libvirt.libvirtd.domains)

    def test_attach_and_detach_reach_the_domain(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        device = self.attachments(self.server_id)[0]['device']
        dev = device.rsplit('/', 1)[-1]
        self.assertEqual({dev: volume_id}, self.disks())
        self.assertEqual({dev: volume_id}, self.disks(inactive=True))
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual({}, self.disks())
        self.assertEqual({}, self.disks(inactive=True))

    def test_guest_that_never_releases_the_disk(self):
        volume_id = self.create_volume()
        self.attach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.domain().unplug = 'ignore'
        self.detach(self.server_id, volume_id)

        def failed():
            faults = objects.InstanceFault.get_latest_for_instances(
                nl_context.get_admin_context(), [self.server_id])
            return faults.get(self.server_id)
        system.wait_for(failed, timeout=30,
                        message='no fault for the failed detach')
        fault = failed()
        self.assertIn('did not release it after 2 requests', fault.message)
        # The volume is attached to the server, the mapping is there, the
        # running guest still has the disk; the definition lost it first
        # (Nova's order: a guest that lets go late keeps it gone).
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual([volume_id], [a['volumeId'] for a in
                                       self.attachments(self.server_id)])
        self.assertEqual([volume_id], list(self.disks().values()))
        self.assertEqual({}, self.disks(inactive=True))
        # Power cycled, the guest starts with the volume the database has
        # attached (the start gives the definition its disk back, as
        # Nova's hard reboot), and lets go of it when asked.
        for action, status in (('os-stop', 'SHUTOFF'), ('os-start',
                                                        'ACTIVE')):
            resp = self.api.post('/v2.1/servers/%s/action' % self.server_id,
                                 body={action: None})
            self.assertEqual(202, resp.status, resp.text)
            self.wait_for_server_status(self.server_id, status)
        self.assertEqual([volume_id], list(self.disks().values()))
        self.assertEqual([volume_id],
                         list(self.disks(inactive=True).values()))
        self.domain().unplug = 'release'
        self.detach(self.server_id, volume_id)
        self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual({}, self.disks())
