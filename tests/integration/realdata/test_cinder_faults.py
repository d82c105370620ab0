"""Faults beside a real Cinder, judged by Cinder's API (the volume's
status, its attachments), by nova_lite's (the server's volume
attachments, the attach's instance action events) and by the guest.

The deployment is ``test_cinder.CinderDeployment`` (upstream Cinder 29 on
the machine's one-node Ceph, behind Keystone; ``[volume] client =
cinder``); the faults are done to Cinder's processes
(``tests.fixtures.cinder``):

* cinder-volume frozen (``SIGSTOP``) before an attach, the attach
  started (the compute host's ``attachment_update`` waits on Cinder's
  RPC to cinder-volume: the call is in flight), then cinder-volume
  SIGKILLed:

  - started again at once: the request waited in cinder-volume's queue
    (Cinder's RPC call is acknowledged only once taken, and a frozen
    process takes nothing), the restarted service answers it and the
    attach finishes: attached in both, the guest reads the bytes;
  - left dead past Cinder's ``rpc_response_timeout`` (60 s): Cinder
    answers the update with an error, the host rolls the attach back
    (Cinder's attachment was still ``reserved``: its delete needs no
    cinder-volume), the action's event is ``Error`` saying Cinder failed
    the update, nothing is left ``reserved`` or ``attaching`` in either;
    once cinder-volume is back the same volume attaches and the guest
    reads it;
  - ``attachment_complete`` is Cinder's API alone (no cinder-volume):
    with cinder-volume dead, completing works, which the attach of a
    shelved-offloaded server (reserve and complete, no connection)
    shows;

* cinder-api down (its uWSGI stopped): an attach and a detach asked
  meanwhile are refused at once (503, the block-storage API cannot be
  reached), nothing changes in either; once it is back a new attach
  works and the guest reads the bytes;
* cinder-api stopped while the host's ``attachment_update`` waits in it
  (cinder-volume frozen): the update fails (Cinder cannot be reached),
  and so does the roll back's delete of Cinder's attachment; the host
  keeps its mapping at ``connecting`` and its settling of stalled work
  deletes the attachment once Cinder is back (cinder-volume, thawed,
  has answered the update it had queued meanwhile: the attachment was
  ``attaching``), then the mapping; the same volume then attaches.

* a Ceph OSD stopped (``TestCinderCephOutage``: a Ceph of the
  deployment's own): an attach asked meanwhile is connected by Cinder
  (its RBD ``initialize_connection`` asks only the monitor: the
  attachment ``attaching``), and the host's open of the image waits for
  the OSD; once the OSD is back the attach finishes, the guest reads and
  writes the volume, and the detach leaves nothing behind.

Each class's tests share one deployment (and one Cinder) per test
process: ``tools/dev.py`` runs the classes of the test_cinder* modules in
one worker (its ``GROUP_REGEX``).
"""

import signal

from tests.integration.realdata import test_cinder

HOST_BYTES = test_cinder.HOST_BYTES
ASYNC = '2.101'
# Cinder's own rpc_response_timeout (its default, 60 s), then the host's
# roll back: the deadline of an attach whose update Cinder fails.
CINDER_RPC_TIMEOUT = 60
ROLL_BACK_TIMEOUT = CINDER_RPC_TIMEOUT + 120
VOLUME = 'cinder-volume'
API = 'cinder-api'


class TestCinderFaults(test_cinder.CinderTestCase):

    def setUp(self):
        super().setUp()
        self.async_api = self.api.as_(compute_version=ASYNC)
        # A test that failed half-way left a process stopped or frozen.
        for name in (API, VOLUME):
            proc = self.cinder.processes[name]
            if not proc.running:
                self.cinder.restart(name)
            else:
                self.cinder.signal(name, signal.SIGCONT)

    # -- nova_lite's side ---------------------------------------------------
    def wait_for_event(self, server_id, action, event):
        """Wait until the latest ``action`` has ``event`` (started)."""
        return self.wait_for(
            lambda: next((e for e in self.events(server_id, action)
                          if e['event'] == event), None),
            message=lambda: 'no %s event of %s: %s' % (
                event, action, self.events(server_id, action)))

    def finished_events(self, server_id, action, timeout):
        """The events of the latest ``action`` once all finished."""
        def finished():
            events = self.events(server_id, action)
            if events and all(e['finish_time'] for e in events):
                return events
            return None
        return self.wait_for(finished, timeout=timeout,
                             message=lambda: 'unfinished %s: %s' % (
                                 action, self.events(server_id, action)))

    def mapped_volumes(self, server_id):
        return [a['volumeId'] for a in self.list_attachments(server_id)]

    def assert_attached_everywhere(self, server_id, volume_id):
        """Cinder: in-use, one attachment, ``attached``, the server's;
        nova_lite: the server maps it; the guest reads the bytes."""
        volume = self.wait_for_volume_status(volume_id, 'in-use')
        self.assertEqual([server_id], [a['server_id']
                                       for a in volume['attachments']])
        self.assertEqual([('attached', server_id)], [
            (a['status'], a['instance'])
            for a in self.cinder_attachments(volume_id)])
        self.assertIn(volume_id, self.mapped_volumes(server_id))
        guest = self.guest(server_id)
        guest.wait_for_disk(volume_id)
        self.assertEqual(HOST_BYTES, guest.read(volume_id, 0, 16))
        self.assert_cinders_disk(server_id, volume_id)
        return guest

    def assert_not_attached(self, server_id, volume_id):
        """Cinder: available, no attachment (none ``reserved`` or
        ``attaching``); nova_lite: no mapping; the domain: no disk."""
        volume = self.wait_for_volume_status(volume_id, 'available')
        self.assertEqual([], volume['attachments'])
        self.assertEqual([], self.cinder_attachments(volume_id))
        self.assertNotIn(volume_id, self.mapped_volumes(server_id))
        self.assertNotIn(volume_id, self.domain_disks(server_id).values())

    # -- cinder-volume --------------------------------------------------------
    def freeze_volume_service_during_the_update(self, server_id, volume_id):
        """cinder-volume frozen, an attach at 2.101 started: returns once
        the compute host's part of it began (its ``attachment_update``
        waits on cinder-volume); Cinder's attachment is ``reserved``."""
        self.cinder.signal(VOLUME, signal.SIGSTOP)
        resp = self.attach_volume(server_id, volume_id, api=self.async_api)
        self.assertEqual(202, resp.status, resp)
        self.wait_for_event(server_id, 'attach_volume',
                            'compute_attach_volume')
        self.assertEqual(['reserved'], [
            a['status'] for a in self.cinder_attachments(volume_id)])
        self.assertEqual('reserved', self.show_volume(volume_id)['status'])

    def test_volume_service_killed_in_the_update_and_back_finishes(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        self.freeze_volume_service_during_the_update(server_id, volume_id)

        self.cinder.stop([VOLUME], signal.SIGKILL)
        self.cinder.restart(VOLUME)
        # The update waited in cinder-volume's queue: the restarted
        # service answers it, and the attach finishes.
        self.wait_for_attached(server_id, volume_id)
        self.assert_attached_everywhere(server_id, volume_id)
        self.assertEqual({('conductor_attach_volume', 'Success'),
                          ('compute_attach_volume', 'Success')}, {
            (e['event'], e['result']) for e in self.finished_events(
                server_id, 'attach_volume', ROLL_BACK_TIMEOUT)})
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id)

    def test_volume_service_dead_past_the_update_rolls_back(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        self.freeze_volume_service_during_the_update(server_id, volume_id)
        self.cinder.stop([VOLUME], signal.SIGKILL)

        # Cinder fails the update once its RPC call times out; the host
        # rolls the attach back, and says why.
        events = {e['event']: e for e in self.finished_events(
            server_id, 'attach_volume', ROLL_BACK_TIMEOUT)}
        failed = events['compute_attach_volume']
        self.assertEqual('Error', failed['result'], events)
        self.assertIn('attachment_update', failed['details'] or '')
        self.assert_not_attached(server_id, volume_id)

        # Back: the same volume attaches, the guest reads the bytes.
        self.cinder.restart(VOLUME)
        self.attach(server_id, volume_id)
        self.assert_attached_everywhere(server_id, volume_id)
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id)

    def test_complete_needs_no_volume_service(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        self.server_action(server_id, {'shelve': None})
        self.wait_for_server_status(server_id, 'SHELVED_OFFLOADED')

        # A shelved-offloaded server's attach: Cinder's attachment made
        # and completed, no connection: cinder-volume is not asked.
        self.cinder.stop([VOLUME], signal.SIGKILL)
        self.attach(server_id, volume_id,
                    api=self.api.as_(compute_version='2.20'))
        self.assertEqual([('attached', server_id)], [
            (a['status'], a['instance'])
            for a in self.cinder_attachments(volume_id)])
        self.assertEqual('in-use', self.show_volume(volume_id)['status'])

        # The unshelve connects it (cinder-volume's initialize_connection).
        self.cinder.restart(VOLUME)
        self.server_action(server_id, {'unshelve': None})
        self.wait_for_server_status(server_id, 'ACTIVE')
        self.guest(server_id, reconnect=True)
        self.assert_attached_everywhere(server_id, volume_id)

    # -- cinder-api -----------------------------------------------------------
    def test_api_stopped_in_the_update_is_settled_once_back(self):
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)
        self.freeze_volume_service_during_the_update(server_id, volume_id)

        # cinder-api stops under the host's update (the request cut), so
        # the host's roll back cannot delete Cinder's attachment either:
        # the host keeps its mapping for its settling.
        self.cinder.stop([API])
        self.addCleanup(self.cinder.restart, API)
        events = {e['event']: e for e in self.finished_events(
            server_id, 'attach_volume', ROLL_BACK_TIMEOUT)}
        failed = events['compute_attach_volume']
        self.assertEqual('Error', failed['result'], events)
        self.assertIn('attachment_update of attachment', failed['details'])

        # Back (and cinder-volume answering the update it had queued):
        # the host's settling deletes Cinder's attachment and the mapping.
        self.cinder.restart(API)
        self.cinder.signal(VOLUME, signal.SIGCONT)

        def settled():
            volume = self.show_volume(volume_id)
            return (volume['status'] == 'available' and
                    not self.cinder_attachments(volume_id) and
                    volume_id not in self.mapped_volumes(server_id))
        self.wait_for(settled, timeout=ROLL_BACK_TIMEOUT,
                      message=lambda: 'not settled: %s %s' % (
                          self.show_volume(volume_id),
                          self.cinder_attachments(volume_id)))
        self.assert_not_attached(server_id, volume_id)

        self.attach(server_id, volume_id)
        self.assert_attached_everywhere(server_id, volume_id)
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id)

    def test_api_down_refuses_attach_and_detach_then_attach_works(self):
        server_id = self.active_server()
        attached = self.create_volume()
        self.host_write(attached, 0, HOST_BYTES)
        self.attach(server_id, attached)
        self.assert_attached_everywhere(server_id, attached)
        spare = self.create_volume()
        self.host_write(spare, 0, HOST_BYTES)

        self.cinder.stop([API])
        self.addCleanup(self.cinder.restart, API)
        for resp in (
                self.attach_volume(server_id, spare, api=self.async_api),
                self.detach_volume(server_id, attached,
                                   api=self.async_api)):
            self.assertEqual(503, resp.status, resp)
            self.assertIn('block-storage API cannot be reached', resp.text)
        self.assertEqual([attached], self.mapped_volumes(server_id))
        guest = self.guest(server_id)
        self.assertEqual(HOST_BYTES, guest.read(attached, 0, 16))

        # Back: nothing changed in Cinder; a new attach works.
        self.cinder.restart(API)
        self.assert_attached_everywhere(server_id, attached)
        self.assert_not_attached(server_id, spare)
        self.attach(server_id, spare)
        self.assert_attached_everywhere(server_id, spare)
        for volume_id in (attached, spare):
            self.detach_from(server_id, volume_id)
            self.assert_detached_everywhere(server_id, volume_id)


class TestCinderCephOutage(test_cinder.CinderTestCase):
    """Cinder's RBD backend on a Ceph of the deployment's own, whose OSD
    stops: Cinder's ``initialize_connection`` needs only the monitor, the
    guest's I/O needs the OSD."""

    @classmethod
    def make_deployment(cls):
        return test_cinder.CinderDeployment(
            cls.BACKEND, extra_conf=cls.EXTRA_CONF, private_ceph=True)

    def test_osd_stopped_the_attach_waits_for_it_and_finishes(self):
        ceph = self.deployment.ceph
        server_id = self.active_server()
        volume_id = self.create_volume()
        self.host_write(volume_id, 0, HOST_BYTES)

        ceph.stop_osd()
        self.addCleanup(ceph.start_osd)
        resp = self.attach_volume(server_id, volume_id,
                                  api=self.api.as_(compute_version=ASYNC))
        self.assertEqual(202, resp.status, resp)
        # Cinder connects it without the OSD (its attachment has the
        # connection: ``attaching``; the volume is ``reserved`` or, once
        # Cinder's volume service recorded the connection, ``attaching``,
        # and never ``in-use`` before the complete); the host's open of
        # the image waits for the OSD.
        self.wait_for(lambda: [a['status'] for a in self.cinder_attachments(
            volume_id)] == ['attaching'], timeout=ROLL_BACK_TIMEOUT,
            message=lambda: 'attachments: %s' % self.cinder_attachments(
                volume_id))
        self.assertIn(self.show_volume(volume_id)['status'],
                      ('reserved', 'attaching'))

        # Back: the attach finishes, the guest reads and writes the volume.
        ceph.start_osd()
        self.wait_for(lambda: self.show_volume(volume_id)['status'] ==
                      'in-use', timeout=ROLL_BACK_TIMEOUT,
                      message=lambda: 'volume %s: %s' % (
                          volume_id, self.show_volume(volume_id)))
        self.assertEqual([('attached', server_id)], [
            (a['status'], a['instance'])
            for a in self.cinder_attachments(volume_id)])
        guest = self.assert_guest_reads_and_writes(server_id, volume_id)
        self.assert_cinders_disk(server_id, volume_id)
        self.detach_from(server_id, volume_id)
        self.assert_detached_everywhere(server_id, volume_id, guest)
