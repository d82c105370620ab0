"""tests/fixtures/cinder.py without Cinder: a skip saying what is missing,
or a failure where the real-Cinder tests are mandatory (CI)."""

import unittest

import fixtures
import testtools

from tests.fixtures import cinder
from tests.fixtures import required


class MissingCinderTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        empty = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.MonkeyPatch(
            'tests.fixtures.cinder.VENV', empty))
        self.fixture = cinder.Cinder(keystone=None, ceph=None,
                                     transport_url=None, uwsgi='/bin/true')

    def test_skips_saying_how_to_build_the_venv(self):
        self.useFixture(fixtures.EnvironmentVariable(cinder.REQUIRE_ENV))
        error = self.assertRaises(unittest.SkipTest, self.fixture.setUp)
        self.assertIn('python3 tools/dev.py test integration', str(error))

    def test_fails_when_required(self):
        self.useFixture(fixtures.EnvironmentVariable(cinder.REQUIRE_ENV,
                                                     '1'))
        error = self.assertRaises(required.Unavailable, self.fixture.setUp)
        self.assertIn('NOVA_LITE_REQUIRE_CINDER=1', str(error))
