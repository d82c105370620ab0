"""Functional test base: the whole system in-process."""

import testtools

from tests.fixtures import system


class TestCase(testtools.TestCase):
    COMPUTE_HOSTS = None
    CONF = {}

    def setUp(self):
        super().setUp()
        self.sys = self.useFixture(system.System(
            compute_hosts=self.COMPUTE_HOSTS, **self.CONF))
        self.conf = self.sys.conf
        self.api = self.sys.api
        self.admin_api = self.sys.admin_api
