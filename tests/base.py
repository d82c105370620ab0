"""Base test case classes."""

import fixtures
import testtools

from tests.fixtures import conf as conf_fixture


class TestCase(testtools.TestCase):
    """Unit test base: a private ConfigOpts, no database, no network."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.NestedTempfile())
        self.conf = self.useFixture(conf_fixture.ConfFixture()).conf
