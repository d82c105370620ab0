"""tools/dev.py: its reading of stestr's output (what a CI log shows),
the linking of Ceph's Python bindings into a venv and the side venvs."""

import contextlib
import importlib.util
import io
import os
import re
from unittest import mock

import fixtures
import testtools

_PATH = os.path.join(os.path.dirname(__file__), '..', '..', 'tools',
                     'dev.py')
_spec = importlib.util.spec_from_file_location('nova_lite_dev_tool', _PATH)
dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dev)

# What stestr 4 prints for a run with two failures (abridged).
STESTR_OUTPUT = """\
{0} tests.a.T.test_bad2 [0.000133s] ... FAILED

Captured traceback:
~~~~~~~~~~~~~~~~~~~
    Traceback (most recent call last):
    RuntimeError: boom

{0} tests.a.T.test_ok [0.000112s] ... ok
{1} tests.a.T.test_bad [0.000363s] ... FAILED

==============================
Failed 2 tests - output below:
==============================

tests.a.T.test_bad2
-------------------

Captured traceback:
~~~~~~~~~~~~~~~~~~~
    Traceback (most recent call last):
    RuntimeError: boom


tests.a.T.test_bad
------------------

Captured traceback:
~~~~~~~~~~~~~~~~~~~
    Traceback (most recent call last):
%s    AssertionError: 1 != 2



======
Totals
======
Ran: 3 tests in 0.0515 sec.
 - Passed: 1
 - Skipped: 0
 - Failed: 2
"""


class FailureSectionsTest(testtools.TestCase):

    def _lines(self, frames=0):
        text = STESTR_OUTPUT % ''.join(
            '      File "x.py", line %d, in f\n' % i for i in range(frames))
        return io.StringIO(text).readlines()

    def test_one_section_per_failed_test(self):
        sections = dev.failure_sections(self._lines())
        self.assertEqual(['tests.a.T.test_bad2', 'tests.a.T.test_bad'],
                         [name for name, _ in sections])
        self.assertIn('    RuntimeError: boom\n', sections[0][1])
        self.assertIn('    AssertionError: 1 != 2\n', sections[1][1])
        # The totals after the block are not part of the last section.
        self.assertNotIn('Totals\n', sections[1][1])

    def test_no_failures_no_sections(self):
        self.assertEqual([], dev.failure_sections(
            ['{0} tests.a.T.test_ok [0.1s] ... ok\n', ' - Passed: 1\n']))

    def test_printed_failures_are_cut_and_say_where_the_rest_is(self):
        out = io.StringIO()
        with mock.patch('sys.stdout', out):
            dev._print_failures(self._lines(frames=200), 'unit.log')
        printed = out.getvalue()
        self.assertIn('--- tests.a.T.test_bad2\n', printed)
        self.assertIn('RuntimeError: boom', printed)
        self.assertIn('more lines in unit.log', printed)
        self.assertLess(len(printed.splitlines()), 2 * dev.FAILURE_LINES)


class LinkCephBindingsTest(testtools.TestCase):
    """Debian's rados/rbd modules linked into a venv (a temp dir here)."""

    MODULES = ('rados.cpython-311-x86_64-linux-gnu.so',
               'rbd.cpython-311-x86_64-linux-gnu.so')

    def setUp(self):
        super().setUp()
        self.venv = self.useFixture(fixtures.TempDir()).path
        self.source = self.useFixture(fixtures.TempDir()).path
        self.site = os.path.join(self.venv, 'lib', 'python3.11',
                                 'site-packages')
        os.makedirs(self.site)
        self._venv_version('3.11.7')
        for name in self.MODULES + ('cephfs.cpython-311-x86_64-linux-gnu.so',
                                    'rados-2.0.0.egg-info'):
            with open(os.path.join(self.source, name), 'w') as f:
                f.write(name)

    def _venv_version(self, version):
        with open(os.path.join(self.venv, 'pyvenv.cfg'), 'w') as f:
            f.write('home = /usr/bin\ninclude-system-site-packages = '
                    'false\nversion = %s\n' % version)

    def _link(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            links = dev.link_ceph_bindings(self.venv, self.source)
        return links, out.getvalue()

    def test_links_the_two_modules(self):
        links, printed = self._link()
        self.assertEqual('', printed)
        self.assertEqual(sorted(os.path.join(self.site, m)
                                for m in self.MODULES), sorted(links))
        for module in self.MODULES:
            link = os.path.join(self.site, module)
            self.assertEqual(os.path.join(self.source, module),
                             os.readlink(link))
            with open(link) as f:
                self.assertEqual(module, f.read())
        # Just those two: not cephfs, not the egg-info.
        self.assertEqual(sorted(self.MODULES), sorted(os.listdir(self.site)))

    def test_idempotent(self):
        first, _ = self._link()
        inodes = [os.lstat(link).st_ino for link in first]
        second, printed = self._link()
        self.assertEqual('', printed)
        self.assertEqual(first, second)
        self.assertEqual(inodes, [os.lstat(link).st_ino for link in second])

    def test_stale_link_replaced(self):
        link = os.path.join(self.site, self.MODULES[0])
        os.symlink('/nonexistent/rados.so', link)
        self._link()
        self.assertEqual(os.path.join(self.source, self.MODULES[0]),
                         os.readlink(link))

    def test_other_python_version_says_so(self):
        self._venv_version('3.12.1')
        os.makedirs(os.path.join(self.venv, 'lib', 'python3.12',
                                 'site-packages'))
        links, printed = self._link()
        self.assertEqual([], links)
        self.assertEqual(1, len(printed.splitlines()))
        self.assertIn('3.12', printed)
        self.assertIn('rados.cpython-311-x86_64-linux-gnu.so', printed)
        for root, _dirs, files in os.walk(os.path.join(self.venv, 'lib')):
            self.assertEqual([], files)

    def test_missing_bindings_say_so(self):
        for module in self.MODULES:
            os.unlink(os.path.join(self.source, module))
        links, printed = self._link()
        self.assertEqual([], links)
        self.assertEqual(1, len(printed.splitlines()))
        self.assertIn('python3-rados', printed)
        self.assertEqual([], os.listdir(self.site))

    def test_only_one_of_the_two_links_nothing(self):
        os.unlink(os.path.join(self.source, self.MODULES[1]))
        links, printed = self._link()
        self.assertEqual([], links)
        self.assertEqual(1, len(printed.splitlines()))
        self.assertEqual([], os.listdir(self.site))


class SideVenvsTest(testtools.TestCase):
    """The side virtualenvs the integration tier needs."""

    def test_cinders_venv_gets_the_ceph_bindings_and_only_it(self):
        calls = []
        with mock.patch.object(dev, 'ensure_side_venv',
                               lambda spec: calls.append(('venv', spec))), \
                mock.patch.object(dev, 'link_ceph_bindings',
                                  lambda path: calls.append(('link', path))):
            dev.build_side_venvs([dev.KEYSTONE_VENV, dev.CINDER_VENV])
        self.assertEqual([
            ('venv', dev.KEYSTONE_VENV), ('venv', dev.CINDER_VENV),
            ('link', os.path.join(dev.ROOT, '.venv-cinder'))], calls)

    def test_cinder_is_pinned_by_its_constraints_file(self):
        directory, requirement, constraints = dev.CINDER_VENV
        with open(os.path.join(dev.ROOT, constraints)) as f:
            pins = [line.strip() for line in f
                    if line.strip() and not line.startswith('#')]
        self.assertIn('cinder==29.0.0', pins)
        for name in requirement.split():
            self.assertTrue(
                any(p.lower().startswith(name.split('==')[0].lower() + '==')
                    for p in pins), name)

    def test_real_cinder_tests_share_one_worker(self):
        group = re.compile(dev.GROUP_REGEX)
        ids = ['tests.integration.realdata.test_cinder.TestRealCinder.'
               'test_%s' % name for name in ('a', 'b')]
        self.assertEqual(1, len({group.match(i).group(0) for i in ids}))
        self.assertIsNone(group.match(
            'tests.integration.realdata.test_rbd.TestRbdDataPath.test_a'))


class PartitionTest(testtools.TestCase):
    """The integration tier's workers: each class whole, balanced by the
    recorded durations."""

    IDS = ['tests.integration.test_a.A.test_1',
           'tests.integration.test_a.A.test_2',
           'tests.integration.test_a.A.test_3',
           'tests.integration.test_b.B.test_1',
           'tests.integration.test_c.C.test_1',
           'tests.integration.test_c.C.test_2',
           'tests.integration.realdata.test_cinder.TestRealCinder.test_x',
           'tests.integration.test_keystone.KeystoneTest.test_y']

    def test_a_class_is_never_split(self):
        parts = dev.partition(self.IDS, {}, 2)
        self.assertEqual(sorted(self.IDS), sorted(sum(parts, [])))
        for part in parts:
            classes = {dev.test_group(t) for t in part}
            for other in parts:
                if other is not part:
                    self.assertEqual(set(), classes & {
                        dev.test_group(t) for t in other})

    def test_longest_first_onto_the_least_loaded(self):
        durations = {'tests.integration.test_a.A': 300.0,
                     'tests.integration.test_b.B': 200.0,
                     'tests.integration.test_c.C': 150.0}
        parts = dev.partition(self.IDS[:6], durations, 2)
        self.assertEqual(
            [{'tests.integration.test_a.A'},
             {'tests.integration.test_b.B', 'tests.integration.test_c.C'}],
            [{dev.test_group(t) for t in part} for part in parts])

    def test_an_unknown_class_counts_as_the_median(self):
        durations = {'tests.integration.test_a.A': 10.0,
                     'tests.integration.test_b.B': 500.0,
                     'tests.integration.test_c.C': 20.0}
        ids = self.IDS[:6] + ['tests.integration.test_d.D.test_1']
        parts = dev.partition(ids, durations, 2)
        # B alone (500) against A, C and D (10 + 20 + the median, 20).
        self.assertEqual(
            [{'tests.integration.test_b.B'},
             {'tests.integration.test_a.A', 'tests.integration.test_c.C',
              'tests.integration.test_d.D'}],
            [{dev.test_group(t) for t in part} for part in parts])

    def test_group_regex_groups_stay_whole(self):
        # Every class of the test_cinder* modules: one group.
        self.assertEqual('tests.integration.realdata.test_cinder',
                         dev.test_group(self.IDS[6]))
        self.assertEqual('tests.integration.realdata.test_cinder',
                         dev.test_group('tests.integration.realdata.'
                                        'test_cinder_faults.F.test_1'))
        self.assertEqual('tests.integration.test_a.A',
                         dev.test_group(self.IDS[0]))

    def test_one_worker_takes_everything(self):
        self.assertEqual([sorted(self.IDS)], [sorted(p) for p in dev.partition(
            sorted(self.IDS), {}, 1)])
