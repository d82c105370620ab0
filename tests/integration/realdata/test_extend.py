"""An attached volume extended through the block-storage API (3.42), as a
user does, judged by the guest: block storage grows it, tells the compute
side (``volume-extended``), the server's host resizes the guest's disk
(libvirt's ``blockResize``) and the guest sees the new size (its agent
reports each disk's size); its bytes are still there. Also Cinder's own
call, ``POST /os-server-external-events`` as the service, which changes
nothing the guest sees when the size did not change.

``rbd``: QEMU's librbd client; ``iscsi``: QEMU's iSCSI initiator, its LUN
added again by tgtd with the new size; ``file``: the file the domain
opens. One guest per test.
"""

from oslo_utils import units

from tests.guest import agent
from tests.integration.realdata import base
from tests.integration.realdata import test_data_path as data_path

HOST_BYTES = data_path.HOST_BYTES


class TestExtendAttached(data_path.DataPathTestCase):

    def extend(self, volume_id, new_size):
        resp = self.api.as_(volume_version='3.42').post(
            '/v3/demo/volumes/%s/action' % volume_id,
            body={'os-extend': {'new_size': new_size}})
        self.assertEqual(202, resp.status, resp)

    def guest_size(self, guest, volume_id):
        return guest.disks()[agent.guest_serial(volume_id)]['size']

    def assert_guest_sees(self, server_id, volume_id, size_gb):
        guest = self.guest(server_id)
        guest.wait_for(
            lambda g: self.guest_size(g, volume_id) == size_gb * units.Gi,
            timeout=60, what='disk %s of %sG in the guest' % (volume_id,
                                                              size_gb))

    def extend_attached(self, server_id, backend):
        volume_id = self.create_volume(size=1, backend=backend)
        self.host_write(volume_id, 0, HOST_BYTES)
        self.attach(server_id, volume_id)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(units.Gi, self.guest_size(guest, volume_id))
        self.extend(volume_id, 2)
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual(2, volume['size'])
        self.assert_guest_sees(server_id, volume_id, 2)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        return volume_id

    def test_rbd_volume_the_guest_sees_the_new_size(self):
        self.require_rbd()
        server_id = self.active_server()
        volume_id = self.extend_attached(server_id, base.RBD)
        # Cinder's call as the service, sent again: accepted, and the
        # disk keeps its size.
        resp = self.api.as_(token='service:demo',
                            compute_version='2.51').post(
            '/v2.1/os-server-external-events', body={'events': [{
                'name': 'volume-extended', 'server_uuid': server_id,
                'tag': volume_id}]})
        self.assertEqual(200, resp.status, resp)
        self.assertEqual(200, resp.body['events'][0]['code'])
        self.assert_guest_sees(server_id, volume_id, 2)

    def test_iscsi_and_file_volumes_the_guest_sees_the_new_sizes(self):
        server_id = self.active_server()
        for backend in (base.ISCSI, base.FILE):
            self.extend_attached(server_id, backend)
