"""Faults on the real data path, judged by the guest, the domain XML and
tgtd (``faults.FaultsDeployment``: ``iscsi`` volumes, the compute
services reaching libvirtd through a forwarder of the test's):

* the compute service SIGKILLed at each crash point of the attach and of
  the detach (``nova_lite.crashpoint``), then started again: the domain
  (live and defined), the server's volume attachments (the API's view of
  its mappings), the block-storage attachment and tgtd's export agree, as
  ``test_crash_recovery.CASES`` says the point settles: attached (and the
  guest reads the volume's bytes) or detached (and the guest has no such
  disk, no target exports the volume);
* libvirtd out of reach (the forwarder stopped, its connections cut):
  an attach fails, rolled back everywhere, its action event saying why;
  with libvirtd back, the attach works and the guest reads the bytes; a
  detach without libvirtd fails the same way, the volume still attached
  everywhere;
* tgtd stopped (the private one): the same, and after tgtd started
  again (with no targets) the attach works; tgtd killed under an
  attached volume and started again: block storage's export check in
  the volume service (``ensure_exports``) exports the volume again and the
  guest reads and writes it;
* a guest that ignores the unplug: the detach fails after
  ``[libvirt] device_detach_attempts``, the volume stays attached
  everywhere (the guest reads it), the action event says why; once the
  guest was power-cycled (a new guest that honours unplugs) a detach
  takes the disk away.
"""

import os
import tempfile
import time

from testtools import content

from nova_lite import crashpoint
from nova_lite.volume_service.drivers import iscsi
from tests.guest import agent
from tests.integration.realdata import base
from tests.integration.realdata import faults
from tests.integration import test_crash_recovery as crash

ASYNC = '2.101'         # attach answers 202; the work is cast


class TestFaults(base.RealDataTestCase):
    # Settling every second in the conductor and the compute services;
    # block storage's (in the volume service: its settling, and the iscsi
    # backends' export check) with the defaults. A guest that ignores an
    # unplug is given up on after 3 requests 5 s apart.
    DETACH_ATTEMPTS = 3
    EXTRA_CONF = {'libvirt': {'device_detach_attempts': DETACH_ATTEMPTS,
                              'device_detach_timeout': 5}}
    SERVICE_RECOVERY = {'settle_interval': 1}

    @classmethod
    def make_deployment(cls):
        return faults.FaultsDeployment(
            cls.BACKEND, extra_conf=cls.EXTRA_CONF,
            service_recovery=cls.SERVICE_RECOVERY)

    def setUp(self):
        super().setUp()
        self.async_api = self.api.as_(compute_version=ASYNC)
        proxy = self.deployment.libvirtd_proxy
        if not proxy.running:
            # A failed test left it stopped.
            proxy.start()
        if not self.deployment.private_tgtd.running():
            self.deployment.private_tgtd.start()

    def private_volume(self):
        """A volume of the backend on the private tgtd."""
        resp = self.admin_api.post('/v3/demo/types', body={'volume_type': {
            'name': 'private-tgtd-%s' % self.getUniqueString(),
            'extra_specs': {
                'volume_backend_name': faults.PRIVATE_BACKEND}}})
        self.assertEqual(200, resp.status, resp)
        type_id = resp.body['volume_type']['id']
        self.addCleanup(self.admin_api.delete, '/v3/demo/types/%s' % type_id)
        volume_id = self.create_volume(volume_type=type_id)
        self.assertEqual(faults.PRIVATE_BACKEND, self.show_volume(volume_id)[
            'os-vol-host-attr:host'].split('#')[-1])
        return volume_id

    # -- what each part says ---------------------------------------------
    def exports(self, volume_id):
        """``{iqn: its ACL}`` of the targets (on both tgtds) exporting
        the volume to a host (a volume's ready target, whose ACL admits
        no one, exports it to none)."""
        result = {}
        for tgtd in (self.deployment.tgtd, self.deployment.private_tgtd):
            if not tgtd.running():
                continue
            for iqn, target in tgtd.targets().items():
                if iqn.endswith('volume-%s' % volume_id) and target.acl:
                    result[iqn] = list(target.acl)
        return result

    def block_storage_attachments(self, volume_id):
        resp = self.admin_api.as_(volume_version='3.27').get(
            '/v3/demo/attachments/detail?all_tenants=1&volume_id=%s' %
            volume_id)
        self.assertEqual(200, resp.status, resp)
        return resp.body['attachments']

    def failed_event(self, server_id, action):
        """Wait until the latest ``action`` has an ``Error`` event (all
        its events finished); return that event."""
        def failed():
            events = self.events(server_id, action)
            if not events or any(e['finish_time'] is None for e in events):
                return None
            return next((e for e in events if e['result'] == 'Error'),
                        None)
        return self.wait_for(failed, message=lambda: 'no failed %s event: %s'
                             % (action, self.events(server_id, action)))

    def assert_attached(self, server_id, volume_id, data):
        """Attached everywhere, and the guest reads ``data`` at 0."""
        [bdm] = [a for a in self.list_attachments(server_id)
                 if a['volumeId'] == volume_id]
        dev = bdm['device'].rsplit('/', 1)[-1]
        self.assertEqual(volume_id, self.domain_disks(server_id).get(dev))
        self.assertEqual(volume_id, self.domain_disks(
            server_id, inactive=True).get(dev))
        volume = self.show_volume(volume_id)
        self.assertEqual('in-use', volume['status'])
        self.assertEqual([server_id],
                         [a['server_id'] for a in volume['attachments']])
        [attachment] = self.block_storage_attachments(volume_id)
        self.assertEqual((server_id, 'attached'),
                         (attachment['instance'], attachment['status']))
        # Cinder's record: the connection's data, flat.
        iqn = attachment['connection_info']['target_iqn']
        exports = self.exports(volume_id)
        self.assertEqual([iqn], list(exports), exports)
        # To the host's initiator alone.
        [initiator] = exports[iqn]
        self.assertTrue(iscsi.is_initiator_name(initiator), exports)
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(data, guest.read(volume_id, 0, len(data)))

    def assert_detached(self, server_id, volume_id):
        """Detached everywhere: the guest has no such disk."""
        self.assertNotIn(volume_id, [a['volumeId'] for a in
                                     self.list_attachments(server_id)])
        self.assertNotIn(volume_id, self.domain_disks(server_id).values())
        self.assertNotIn(volume_id, self.domain_disks(
            server_id, inactive=True).values())
        volume = self.show_volume(volume_id)
        self.assertEqual(('available', []),
                         (volume['status'], volume['attachments']))
        self.assertEqual([], self.block_storage_attachments(volume_id))
        self.assertEqual({}, self.exports(volume_id))
        self.assertFalse(self.guest(server_id).has_disk(volume_id))

    def attach(self, server_id, volume_id, data):
        """Attach (it works); the guest reads ``data``."""
        resp = self.attach_volume(server_id, volume_id, api=self.async_api)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assert_attached(server_id, volume_id, data)

    def detach(self, server_id, volume_id):
        resp = self.detach_volume(server_id, volume_id, api=self.async_api)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_volume_status(volume_id, 'available')
        self.guest(server_id).wait_for_no_disk(volume_id)
        self.assert_detached(server_id, volume_id)

    def server_with_volume(self, data, volume_id=None):
        """An active server whose guest answers, and a volume holding
        ``data`` at 0."""
        server_id = self.create_server()
        host = self.wait_for_server_status(server_id, 'ACTIVE')[
            'OS-EXT-SRV-ATTR:host']
        volume_id = volume_id or self.create_volume()
        self.host_write(volume_id, 0, data)
        self.guest(server_id)
        return server_id, host, volume_id

    # -- the compute service killed mid-attach and mid-detach -----------------
    def _crash(self, server_id, volume_id, host, point, request):
        """Restart the compute service of ``host`` with ``point`` armed,
        send ``request`` (202), wait for the SIGKILL, start the service
        again, and wait until the point's operation settled as ``CASES``
        says (the volume ``in-use`` or ``available``, the action's events
        finished, an ``Error`` one saying why when rolled back). Returns
        whether it ended attached."""
        outcome, workflow = crash.CASES[point]
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.deployment.restart_armed(host, point, mark)
        self.addCleanup(self.deployment.restart_disarmed, host)

        def accepted():
            # On a loaded machine the restarted host's first heartbeats
            # can come late: a detach then answers 409 "Service is
            # unavailable" (changing nothing) until the host is up again.
            resp = request()
            if resp.status == 409 and 'unavailable' in resp.text:
                return None
            return resp
        resp = self.wait_for(accepted, timeout=crash.SETTLE_TIMEOUT)
        self.assertEqual(202, resp.status, resp)
        self.deployment.wait_crashed(host, mark)
        self.deployment.restart_disarmed(host)
        attached = (outcome == crash.FINISHED) == (workflow == 'attach')
        action = '%s_volume' % workflow
        status = 'in-use' if attached else 'available'

        def settled():
            if self.show_volume(volume_id)['status'] != status:
                return False
            events = self.events(server_id, action)
            return events and all(e['finish_time'] for e in events)
        self.wait_for(settled, timeout=crash.SETTLE_TIMEOUT,
                      message=lambda: '%s: not %s within %ss: %s' % (
                          point, status, crash.SETTLE_TIMEOUT,
                          self.show_volume(volume_id)))
        if outcome == crash.ROLLED_BACK:
            event = self.failed_event(server_id, action)
            self.assertIn('stopped', event['details'])
        return attached

    def _crash_attach_then_detach(self, attach_point, detach_point):
        data = b'crash-%s' % attach_point[-10:].encode()
        server_id, host, volume_id = self.server_with_volume(data)

        def attach():
            return self.attach_volume(server_id, volume_id,
                                      api=self.async_api)

        def detach():
            return self.detach_volume(server_id, volume_id,
                                      api=self.async_api)

        if self._crash(server_id, volume_id, host, attach_point, attach):
            self.assert_attached(server_id, volume_id, data)
        else:
            self.assert_detached(server_id, volume_id)
            self.attach(server_id, volume_id, data)

        if self._crash(server_id, volume_id, host, detach_point, detach):
            self.assert_attached(server_id, volume_id, data)
            self.detach(server_id, volume_id)
        else:
            self.guest(server_id).wait_for_no_disk(volume_id)
            self.assert_detached(server_id, volume_id)
        # Used again.
        self.attach(server_id, volume_id, data)

    def test_compute_killed_after_take(self):
        self._crash_attach_then_detach(crashpoint.COMPUTE_ATTACH_AFTER_TAKE,
                                       crashpoint.COMPUTE_DETACH_AFTER_TAKE)

    def test_compute_killed_after_connect_and_guest_detach(self):
        self._crash_attach_then_detach(
            crashpoint.COMPUTE_ATTACH_AFTER_CONNECT,
            crashpoint.COMPUTE_DETACH_AFTER_GUEST_DETACH)

    def test_compute_killed_after_guest_attach_and_step_aside(self):
        self._crash_attach_then_detach(
            crashpoint.COMPUTE_ATTACH_AFTER_GUEST_ATTACH,
            crashpoint.COMPUTE_DETACH_AFTER_STEP_ASIDE)

    # -- libvirtd and tgtd out of reach -----------------------------------
    def _failed_attach(self, server_id, volume_id):
        """An attach that fails: rolled back everywhere; its failed
        event."""
        resp = self.attach_volume(server_id, volume_id, api=self.async_api)
        self.assertEqual(202, resp.status, resp)
        event = self.failed_event(server_id, 'attach_volume')
        self.wait_for_attachment(server_id, volume_id, present=False)
        self.wait_for_volume_status(volume_id, 'available')
        self.assert_detached(server_id, volume_id)
        return event

    def test_libvirtd_stopped(self):
        data = b'after-libvirtd!!'
        server_id, _host, volume_id = self.server_with_volume(data)
        proxy = self.deployment.libvirtd_proxy
        proxy.stop()
        self.addCleanup(lambda: proxy.running or proxy.start())
        event = self._failed_attach(server_id, volume_id)
        self.assertIn('Connection to the hypervisor is broken',
                      event['details'])
        # The guest ran on (QEMU does not need libvirtd).
        self.assertTrue(self.guest(server_id).ping())

        proxy.start()
        self.attach(server_id, volume_id, data)

        # A detach without libvirtd fails too, and the volume stays
        # attached everywhere.
        proxy.stop()
        resp = self.detach_volume(server_id, volume_id, api=self.async_api)
        self.assertEqual(202, resp.status, resp)
        event = self.failed_event(server_id, 'detach_volume')
        self.assertIn('Connection to the hypervisor is broken',
                      event['details'])
        self.wait_for_volume_status(volume_id, 'in-use')
        self.assert_attached(server_id, volume_id, data)

        proxy.start()
        self.detach(server_id, volume_id)

    def test_tgtd_stopped(self):
        data = b'after-tgtd-back!'
        server_id, _host, volume_id = self.server_with_volume(
            data, self.private_volume())
        tgtd = self.deployment.private_tgtd
        tgtd.stop()
        event = self._failed_attach(server_id, volume_id)
        self.assertIn('tgtadm', event['details'])

        tgtd.start()
        self.attach(server_id, volume_id, data)
        self.detach(server_id, volume_id)

    def test_tgtd_killed_under_an_attached_volume(self):
        # tgtd dies (SIGKILL) under a guest reading a volume and starts
        # again with no targets: block storage's export check (in the
        # volume service, every export_check_interval, the default 2 s; the
        # settling's default 20 s plays no part) sees the sentinel gone
        # and exports the volume again; QEMU logs in again and the guest
        # reads on. A new attach meanwhile fails cleanly. The time from
        # tgtd back to the guest reading again is the test's detail
        # ``recovery``.
        data = b'exported-again!!'
        server_id, _host, volume_id = self.server_with_volume(
            data, self.private_volume())
        self.attach(server_id, volume_id, data)
        other = self.private_volume()
        tgtd = self.deployment.private_tgtd
        tgtd.kill()
        event = self._failed_attach(server_id, other)
        self.assertIn('tgtadm', event['details'])

        tgtd.start()
        back = time.monotonic()
        guest = self.guest(server_id)

        def reads():
            try:
                return guest.read(volume_id, 0, len(data)) == data
            except agent.GuestError:
                return False
        self.wait_for(reads, message='the guest does not read again')
        recovery = time.monotonic() - back
        self.addDetail('recovery', content.text_content(
            'tgtd back to the guest reading again: %.1f s' % recovery))
        self.assertTrue(any(self.exports(volume_id).values()))
        self.assert_attached(server_id, volume_id, data)
        self.guest(server_id).write(volume_id, 4096, b'written-after!!!')
        self.assertEqual(b'written-after!!!',
                         self.host_read(volume_id, 4096, 16))
        self.attach(server_id, other, b'\0' * 16)
        self.detach(server_id, other)
        self.detach(server_id, volume_id)

    # -- a guest that ignores the unplug ----------------------------------
    def test_guest_ignores_unplug(self):
        data = b'held-by-guest!!!'
        server_id, _host, volume_id = self.server_with_volume(data)
        self.attach(server_id, volume_id, data)
        guest = self.guest(server_id)
        guest.ignore_unplug()

        resp = self.detach_volume(server_id, volume_id, api=self.async_api)
        self.assertEqual(202, resp.status, resp)
        event = self.failed_event(server_id, 'detach_volume')
        self.assertIn('did not release it after %d requests' %
                      self.DETACH_ATTEMPTS, event['details'])
        self.wait_for_volume_status(volume_id, 'in-use')
        # The running guest keeps the disk; the definition lost it first
        # (Nova's order).
        [bdm] = [a for a in self.list_attachments(server_id)
                 if a['volumeId'] == volume_id]
        dev = bdm['device'].rsplit('/', 1)[-1]
        self.assertEqual(volume_id, self.domain_disks(server_id).get(dev))
        self.assertIsNone(self.domain_disks(server_id, inactive=True).get(dev))
        self.assertEqual(data, guest.read(volume_id, 0, len(data)))
        guest.write(volume_id, 4096, b'still-writable!!')
        self.assertEqual(b'still-writable!!',
                         self.host_read(volume_id, 4096, 16))

        # A new guest (power cycled: the start gives the definition the
        # volume the database has attached, as Nova's hard reboot) has the
        # disk and honours unplug requests: the detach asked again takes
        # the disk away.
        self.server_action(server_id, {'os-stop': None})
        self.wait_for_server_status(server_id, 'SHUTOFF')
        self.server_action(server_id, {'os-start': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        guest = self.guest(server_id, reconnect=True)
        guest.wait_for_disk(volume_id, timeout=base.BOOT_TIMEOUT)
        self.assert_attached(server_id, volume_id, data)
        self.detach(server_id, volume_id)
        self.assertRaises(agent.GuestError, guest.read, volume_id, 0, 16)
