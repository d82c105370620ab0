"""The settling's rules that need no database: a service refuses to start
when ``[recovery] stalled_after`` is not well above the waits nothing
keeps alive, and the in-hand set of a process."""

from nova_lite.compute import manager as compute_manager
from nova_lite.conductor import manager as conductor_manager
from nova_lite import exception
from nova_lite import tasks
from tests import base


class StalledAfterTest(base.TestCase):
    def test_defaults_and_the_integration_timers_pass(self):
        tasks.check_stalled_after(self.conf)
        self.conf.set_override('service_down_time', 4)
        self.conf.set_override('stalled_after', 5, group='recovery')
        tasks.check_stalled_after(self.conf)

    def test_below_the_liveness_rule_is_refused_saying_by_how_much(self):
        self.conf.set_override('service_down_time', 90)
        self.conf.set_override('stalled_after', 60, group='recovery')
        exc = self.assertRaises(exception.InvalidConfiguration,
                                tasks.check_stalled_after, self.conf)
        message = exc.format_message()
        self.assertIn('[recovery] stalled_after (60s) must be at least '
                      '[DEFAULT] service_down_time (90s), that is 90s: '
                      'raise it by 30s', message)
        self.assertIn('is taken from its owner', message)

    def test_a_rest_block_storage_timeout_counts_twice(self):
        self.conf.set_override('client', 'cinder', group='volume')
        self.conf.set_override('timeout', 45, group='cinder')
        exc = self.assertRaises(exception.InvalidConfiguration,
                                tasks.check_stalled_after, self.conf)
        self.assertIn('must be at least 2 times [cinder] timeout (45s), '
                      'that is 90s: raise it by 30s', exc.format_message())
        self.conf.set_override('stalled_after', 90, group='recovery')
        tasks.check_stalled_after(self.conf)

    def test_the_long_waits_are_kept_alive_not_counted(self):
        # The reservation call (long_rpc_timeout) and a busy multiattach
        # volume touch the task instead: they do not bound stalled_after.
        self.conf.set_override('long_rpc_timeout', 1800)
        self.conf.set_override('multiattach_reserve_timeout', 600,
                               group='compute')
        tasks.check_stalled_after(self.conf)
        self.assertEqual(15.0, tasks.keep_alive_interval(self.conf))


class InHandTest(base.TestCase):
    def test_holding(self):
        in_hand = tasks.InHand()
        with in_hand.holding(('a', 'detach')) as mine:
            self.assertTrue(mine)
            with in_hand.holding(('a', 'detach')) as again:
                self.assertFalse(again)
            with in_hand.holding('b') as other:
                self.assertTrue(other)
                self.assertEqual({'a', 'b'}, in_hand.uuids())
            self.assertEqual({'a'}, in_hand.uuids())
        self.assertEqual(set(), in_hand.uuids())


class RefusesToStartTest(base.TestCase):
    def test_conductor_and_compute(self):
        self.conf.set_override('stalled_after', 30, group='recovery')
        for manager in (conductor_manager.ConductorManager(self.conf, 'c1'),
                        compute_manager.ComputeManager(self.conf, 'h1')):
            # Before anything else (no database is needed to refuse).
            exc = self.assertRaises(exception.InvalidConfiguration,
                                    manager.init_host, None)
            self.assertIn('raise it by 30s', exc.format_message())
