"""The crash-point switch: off unless the environment arms a point, once
per mark file, and only for declared points (each declared point is hit
somewhere in nova_lite)."""

import os
import re
import signal
import subprocess
import sys
import tempfile

import fixtures
import testtools

from nova_lite import crashpoint

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# The child declares a point, hits it twice and prints after each hit.
_CHILD = """
import sys
from nova_lite import crashpoint
crashpoint.declare('test.point', 'test', 'a point for the unit test')
crashpoint.hit('test.point')
print('after first', flush=True)
crashpoint.hit('test.point')
print('after second', flush=True)
"""


class CrashPointTest(testtools.TestCase):
    def _run(self, **env):
        full = dict(os.environ)
        full.pop(crashpoint.CRASH_AT_ENV, None)
        full.pop(crashpoint.CRASH_MARK_ENV, None)
        full.update(env)
        return subprocess.run([sys.executable, '-c', _CHILD], cwd=ROOT,
                              env=full, capture_output=True, text=True,
                              timeout=60)

    def test_unarmed_point_does_nothing(self):
        proc = self._run()
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual('after first\nafter second\n', proc.stdout)

    def test_armed_point_kills_the_process(self):
        proc = self._run(NOVA_LITE_CRASH_AT='other.point, test.point')
        self.assertEqual(-signal.SIGKILL, proc.returncode)
        self.assertEqual('', proc.stdout)

    def test_mark_file_makes_the_crash_happen_once(self):
        mark = os.path.join(tempfile.mkdtemp(), 'crashed')
        self.addCleanup(lambda: os.path.exists(mark) and os.unlink(mark))
        first = self._run(NOVA_LITE_CRASH_AT='test.point',
                          NOVA_LITE_CRASH_MARK=mark)
        self.assertEqual(-signal.SIGKILL, first.returncode)
        with open(mark) as f:
            self.assertTrue(f.read().startswith('test.point '))
        second = self._run(NOVA_LITE_CRASH_AT='test.point',
                           NOVA_LITE_CRASH_MARK=mark)
        self.assertEqual(0, second.returncode, second.stderr)
        self.assertEqual('after first\nafter second\n', second.stdout)

    def test_undeclared_point_is_refused(self):
        self.assertRaises(ValueError, crashpoint.hit, 'no.such.point')

    def test_reload_reads_the_environment(self):
        self.useFixture(fixtures.EnvironmentVariable(
            crashpoint.CRASH_AT_ENV, 'a.b,c.d'))
        self.addCleanup(crashpoint.reload_from_environment)
        self.assertEqual({'a.b', 'c.d'}, crashpoint.reload_from_environment())

    def test_every_declared_point_is_hit_in_the_code(self):
        hits = set()
        pattern = re.compile(r"crashpoint\.hit\(\s*([A-Za-z_][A-Za-z0-9_.]*|"
                             r"'[^']+')")
        for top, _dirs, files in os.walk(os.path.join(ROOT, 'nova_lite')):
            for name in files:
                if name.endswith('.py'):
                    with open(os.path.join(top, name)) as f:
                        hits.update(pattern.findall(f.read()))
        # Points are hit by name or through a module constant holding it.
        declared_constants = set()
        with open(os.path.join(ROOT, 'nova_lite', 'crashpoint.py')) as f:
            declared_constants.update(re.findall(
                r"^([A-Z_][A-Z0-9_]*) = declare\(", f.read(), re.M))
        literal_hits = {h.strip("'") for h in hits if h.startswith("'")}
        constant_hits = {h.rsplit('.', 1)[-1] for h in hits
                         if not h.startswith("'")}
        for const in declared_constants:
            self.assertIn(const, constant_hits,
                          'crash point %s is declared but never hit' % const)
        for name in literal_hits:
            self.assertIn(name, crashpoint.POINTS)
