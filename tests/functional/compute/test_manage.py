"""``nova-lite-manage volume_attachment release`` and ``reconcile`` on the
whole system in-process: the one command that frees any volume of its
server, and the settling report."""

import argparse
import contextlib
import io

from nova_lite.cmd import volume_attachment
from nova_lite.db import models
from tests.functional.compute import test_fencing

ASYNC = test_fencing.ASYNC


class ManageTest(test_fencing.FencingTestCase):
    def run_command(self, func, **command):
        """Run the command's function with the system's configuration and
        ``command`` as what ``nova-lite-manage`` parses into
        ``conf.command``; returns (exit code, standard output)."""
        out = io.StringIO()
        self.conf.command = argparse.Namespace(**command)
        try:
            with contextlib.redirect_stdout(out):
                code = func(self.conf)
        finally:
            del self.conf.command
        return code, out.getvalue()

    def release(self, volume_id, server_id=None, force_down=False):
        return self.run_command(volume_attachment._release,
                                instance_uuid=server_id or self.server_id,
                                volume_id=volume_id, force_down=force_down)

    def test_release_through_an_up_host(self):
        volume_id = self.attached_volume()
        code, out = self.release(volume_id)
        self.assertEqual(2, code, out)
        self.assertIn('asked to detach', out)
        self.wait_for_volume_status(volume_id, 'available')

    def test_release_of_an_attach_in_flight_on_a_host_gone_for_good(self):
        # The host dies with an attach in flight (its reservation never
        # answers): refused while the host is only down, then one command
        # with --force-down frees the volume.
        volume_id = self.create_volume()
        other = self.create_server(name='other')
        with self.reservations_held() as waiting:
            self.attach(self.server_id, volume_id, api=self.at(ASYNC),
                        expect=202)
            self.wait_for(lambda: waiting)
            self.silence()
            code, out = self.release(volume_id)
            self.assertEqual(3, code, out)
            self.assertIn('down but not forced down', out)
            self.assertIn('--force-down', out)
            code, out = self.release(volume_id, force_down=True)
        self.assertEqual(0, code, out)
        self.assertIn('Host compute1 forced down', out)
        self.assertIn('attaching of volume %s' % volume_id, out)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual(404, self.show(volume_id).status)
        self.assertTrue(self.service_view()['forced_down'])
        # Attachable elsewhere once a host answers.
        self.force_down(False)
        self.answer()
        self.attach(other, volume_id, api=self.at(ASYNC), expect=202)
        self.wait_for_volume_status(volume_id, 'in-use')

    def test_release_with_force_down_fences_a_host_that_reads_up(self):
        # The administrator vouches that the host is stopped for good
        # before it reads down: the flag is obeyed, not the heartbeat.
        volume_id = self.attached_volume()
        guest = self.manager.driver.guests[self.server_id]
        self.patchers, self.mocks = [], {}
        self.addCleanup(self.answer)
        self._patch(self.manager, 'periodic_tasks')
        self.assertEqual('up', self.service_view()['state'])
        code, out = self.release(volume_id, force_down=True)
        self.assertEqual(0, code, out)
        self.assertIn('Host compute1 forced down', out)
        self.assertIn('detached from server %s without its host' %
                      self.server_id, out)
        self.assertTrue(self.service_view()['forced_down'])
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        # The host still has the disk: it stays fenced until it removed
        # it.
        self.assertIn('/dev/vdb', guest.devices)
        resp = self.admin.put('/v2.1/os-services/%s' % self.service_view()[
            'id'], body={'forced_down': False})
        self.assertEqual(409, resp.status, resp.text)
        self.answer()
        self.manager.periodic_tasks(test_fencing.nl_context
                                    .get_admin_context())
        self.assertNotIn('/dev/vdb', guest.devices)
        self.force_down(False)

    def test_release_of_an_attached_volume_of_a_fenced_host(self):
        volume_id = self.attached_volume()
        self.silence()
        self.force_down()
        code, out = self.release(volume_id)
        self.assertEqual(0, code, out)
        self.assertIn('detached from server %s without its host' %
                      self.server_id, out)
        self.assertEqual('available', self.show_volume(volume_id)['status'])
        self.assertEqual([], self.attachments(self.server_id))

    def wait_for(self, predicate):
        return test_fencing.system.wait_for(predicate)

    def test_reconcile_names_what_it_settled(self):
        # An attach an API process accepted and whose message was lost,
        # stalled: re-driven; the report names the operation (it said
        # "None" once the task was cleared).
        volume_id = self.create_volume()
        api = test_fencing.compute_api.get_api(self.conf)
        with test_fencing.mock.patch.object(api.conductor_rpcapi.client,
                                            'prepare'):
            self.attach(self.server_id, volume_id, api=self.at(ASYNC),
                        expect=202)
        test_fencing.base.set_rows(
            models.BlockDeviceMapping,
            models.BlockDeviceMapping.volume_id == volume_id,
            task_updated_at=test_fencing.datetime.datetime(2026, 1, 1))
        code, out = self.run_command(volume_attachment._reconcile,
                                     json=False)
        self.assertEqual(0, code, out)
        self.assertIn('settled: attaching of server %s: re-driven (volume '
                      '%s)' % (self.server_id, volume_id), out)
        self.assertNotIn('None', out)
        self.wait_for_volume_status(volume_id, 'in-use')
