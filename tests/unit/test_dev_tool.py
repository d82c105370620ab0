"""tools/dev.py's reading of stestr's output: what a CI log shows."""

import importlib.util
import io
import os
from unittest import mock

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
