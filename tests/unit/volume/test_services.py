"""The block-storage services derived from conductors and backends
(nova_lite.volume.services): names, Cinder's host filter, status and
which backends take no new volume. No database."""

import datetime

from oslo_utils import fixture as utils_fixture
import testtools

from nova_lite import objects
from nova_lite.volume import services

NOW = datetime.datetime(2026, 11, 21, 20, 36, 50)


def conductor(host, seconds_ago=0):
    return objects.Service(
        host=host, binary='nova-lite-conductor', forced_down=False,
        last_seen_up=NOW - datetime.timedelta(seconds=seconds_ago),
        updated_at=None, created_at=None)


class DeriveTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.useFixture(utils_fixture.TimeFixture(NOW))

    def test_names_per_conductor_and_backend(self):
        result = services.derive(
            [conductor('ctl1'), conductor('ctl2')], ['fast', 'slow'], {},
            down_time=60)
        self.assertEqual(
            [('cinder-scheduler', 'ctl1', None),
             ('cinder-volume', 'ctl1@fast', 'fast'),
             ('cinder-volume', 'ctl1@slow', 'slow'),
             ('cinder-scheduler', 'ctl2', None),
             ('cinder-volume', 'ctl2@fast', 'fast'),
             ('cinder-volume', 'ctl2@slow', 'slow')],
            [(s.binary, s.host, s.backend) for s in result])
        self.assertEqual({(False, None, True, 'nova', NOW)},
                         {(s.disabled, s.disabled_reason, s.up, s.zone,
                           s.updated_at.replace(tzinfo=None))
                          for s in result})

    def test_state_is_the_conductors_heartbeat(self):
        result = services.derive(
            [conductor('ctl1', seconds_ago=61), conductor('ctl2', 59)],
            ['file'], {}, down_time=60)
        self.assertEqual(
            {'ctl1': False, 'ctl1@file': False, 'ctl2': True,
             'ctl2@file': True},
            {s.host: s.up for s in result})

    def test_recorded_status(self):
        result = services.derive(
            [conductor('ctl1')], ['file'],
            {('ctl1@file', 'cinder-volume'): (True, 'maintenance'),
             # a status of a backend no longer enabled is not shown
             ('ctl1@old', 'cinder-volume'): (True, None)},
            down_time=60)
        self.assertEqual(
            [('ctl1', False, None), ('ctl1@file', True, 'maintenance')],
            [(s.host, s.disabled, s.disabled_reason) for s in result])

    def test_backend_host_is_one_service_for_all_conductors(self):
        # backend_host (Cinder's active-active name): one cinder-volume
        # service per backend, named as its volumes' host, up while any
        # conductor is.
        result = services.derive(
            [conductor('ctl1', seconds_ago=61), conductor('ctl2', 59)],
            ['fast', 'slow'], {('bs@slow', 'cinder-volume'): (True, 'r')},
            down_time=60, shared_hosts={'slow': 'bs'})
        self.assertEqual(
            [('cinder-scheduler', 'ctl1', False),
             ('cinder-volume', 'ctl1@fast', False),
             ('cinder-scheduler', 'ctl2', True),
             ('cinder-volume', 'ctl2@fast', True),
             ('cinder-volume', 'bs@slow', True)],
            [(s.binary, s.host, s.up) for s in result])
        self.assertEqual((True, 'r'), (result[-1].disabled,
                                       result[-1].disabled_reason))

    def test_no_conductor_no_service(self):
        self.assertEqual([], services.derive([], ['file'], {}, 60))


class HostMatchTest(testtools.TestCase):

    def test_cinder_host_filter(self):
        cases = [
            ('ctl1', 'ctl1', True),
            ('ctl1@file', 'ctl1', True),
            ('ctl1@file#pool', 'ctl1', True),
            ('ctl1@file#pool', 'ctl1@file', True),
            ('ctl1@file', 'ctl1@file', True),
            ('ctl1@file', 'ctl1@fil', False),
            ('ctl10@file', 'ctl1', False),
            ('ctl1', 'ctl1@file', False),
            ('ctl1@other', 'ctl1@file', False),
            ('ctl1@file', 'file', False),
        ]
        for service_host, wanted, expected in cases:
            self.assertEqual(
                expected, services.host_matches(service_host, wanted),
                '%s ~ %s' % (service_host, wanted))


class DisabledBackendsTest(testtools.TestCase):

    def _svc(self, host, backend, disabled, binary='cinder-volume'):
        return services.VolumeService(binary, host, backend, 'nova',
                                      disabled, None, True, NOW)

    def test_all_services_of_a_backend_disabled(self):
        self.assertEqual({'slow'}, services.disabled_backends([
            self._svc('ctl1@fast', 'fast', True),
            self._svc('ctl2@fast', 'fast', False),
            self._svc('ctl1@slow', 'slow', True),
            self._svc('ctl2@slow', 'slow', True),
            # a disabled scheduler changes nothing
            self._svc('ctl1', None, True, binary='cinder-scheduler'),
        ]))

    def test_none_disabled(self):
        self.assertEqual(set(), services.disabled_backends(
            [self._svc('ctl1@file', 'file', False)]))
