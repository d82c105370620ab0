"""tests/fixtures/cinder.py without Cinder: a skip saying what is missing,
or a failure where the real-Cinder tests are mandatory (CI)."""

import configparser
import types
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

    def test_a_parent_fixture_sees_the_skip(self):
        # Used by another fixture: the reason, not the fixtures library's
        # failure to read the details of a fixture never set up.
        self.useFixture(fixtures.EnvironmentVariable(cinder.REQUIRE_ENV))
        child = self.fixture

        class Parent(fixtures.Fixture):
            def _setUp(self):
                child.check_available()
                self.useFixture(child)

        error = self.assertRaises(unittest.SkipTest,
                                  self.fixture.check_available)
        self.assertIn('python3 tools/dev.py test integration', str(error))
        error = self.assertRaises(fixtures.MultipleExceptions,
                                  Parent().setUp)
        # What failed the parent's set-up: the skip, first.
        self.assertIs(unittest.SkipTest, error.args[0][0])

    def test_fails_when_required(self):
        self.useFixture(fixtures.EnvironmentVariable(cinder.REQUIRE_ENV,
                                                     '1'))
        error = self.assertRaises(required.Unavailable, self.fixture.setUp)
        self.assertIn('NOVA_LITE_REQUIRE_CINDER=1', str(error))


class CinderConfTest(testtools.TestCase):
    """The configuration the fixture writes: two RBD backends, each on its
    own pool and named after itself (the scheduler's pool names)."""

    def test_two_rbd_backends_on_two_pools(self):
        fixture = cinder.Cinder(
            keystone=types.SimpleNamespace(url='http://keystone'),
            ceph=None, transport_url='rabbit://cinder', uwsgi='/bin/true')
        fixture.path = self.useFixture(fixtures.TempDir()).path
        fixture.connection_url = 'mysql+pymysql://cinder'
        fixture.host = 'cinder-abc'
        fixture.pool = 'volumes'
        fixture.pools = {cinder.BACKEND: 'volumes',
                         cinder.BACKEND2: cinder.POOL2}
        fixture.ceph_conf = '/ceph.conf'
        fixture.rbd_user = 'cinder-abc'
        fixture.rbd_secret_uuid = 'secret-uuid'
        conf = configparser.ConfigParser(interpolation=None)
        conf.read(fixture._write_conf())

        self.assertEqual('ceph,ceph2', conf['DEFAULT']['enabled_backends'])
        self.assertEqual(
            {'ceph': ('ceph', 'volumes'), 'ceph2': ('ceph2', cinder.POOL2)},
            {b: (conf[b]['volume_backend_name'], conf[b]['rbd_pool'])
             for b in ('ceph', 'ceph2')})
        for backend in ('ceph', 'ceph2'):
            self.assertEqual(('cinder-abc', 'secret-uuid'), (
                conf[backend]['rbd_user'], conf[backend]['rbd_secret_uuid']))
        self.assertEqual('cinder-abc@ceph2#ceph2',
                         fixture.backend_host(cinder.BACKEND2))
