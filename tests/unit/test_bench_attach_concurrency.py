"""tools/bench/attach_concurrency.py: its arguments, the split of servers
over hosts, the comparison with one attach at a time and the row it
reports (no deployment)."""

import argparse
import importlib.util
import os
import sys

import testtools

_DIR = os.path.join(os.path.dirname(__file__), '..', '..', 'tools', 'bench')
sys.path.insert(0, os.path.abspath(_DIR))
_spec = importlib.util.spec_from_file_location(
    'nova_lite_bench_attach_concurrency',
    os.path.join(_DIR, 'attach_concurrency.py'))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _round(completed, wall, post, to_in_use, to_guest=(), errors=None):
    return {'completed': completed, 'wall_s': wall, 'post': list(post),
            'to_in_use': list(to_in_use), 'to_guest': list(to_guest),
            'errors': errors or {}}


class ArgumentsTest(testtools.TestCase):

    def test_counts_sorted_without_repeats(self):
        self.assertEqual([1, 5, 10], bench.parse_counts('10, 1,5,5'))

    def test_counts_refuse_zero_and_words(self):
        self.assertRaises(argparse.ArgumentTypeError, bench.parse_counts,
                          '0,5')
        self.assertRaises(argparse.ArgumentTypeError, bench.parse_counts,
                          'ten')

    def test_versions_from_2_100(self):
        self.assertEqual(['2.101', '2.100'],
                         bench.parse_versions('2.101,2.100,2.101'))
        self.assertRaises(argparse.ArgumentTypeError, bench.parse_versions,
                          '2.99')

    def test_expected_status_by_microversion(self):
        self.assertEqual(200, bench.expected_status('2.100'))
        self.assertEqual(202, bench.expected_status('2.101'))
        self.assertEqual(202, bench.expected_status('2.105'))

    def test_real_path_defaults_and_guest_limit(self):
        args = bench.parse_args(['--path', 'real'])
        self.assertEqual([1, 4, 8], args.ks)
        self.assertEqual(12, bench.guests_needed(args.ks))
        self.assertRaises(SystemExit, bench.parse_args,
                          ['--path', 'real', '--k', '1,50'])

    def test_fake_path_defaults(self):
        args = bench.parse_args([])
        self.assertEqual([1, 10, 50], args.ks)
        self.assertEqual(10, args.per_server)
        self.assertEqual(['2.101'], args.versions)


class FiguresTest(testtools.TestCase):

    def test_split_hosts_even_first_host_more(self):
        self.assertEqual({'a': 3, 'b': 2}, bench.split_hosts(5, ['a', 'b']))
        self.assertEqual({'a': 1, 'b': 0}, bench.split_hosts(1, ['a', 'b']))

    def test_vs_serial(self):
        # Ten attaches in the time of one: side by side.
        self.assertEqual(0.1, bench.vs_serial(10, 0.5, 0.5))
        # Ten in ten times one: one after the other.
        self.assertEqual(1.0, bench.vs_serial(10, 5.0, 0.5))
        self.assertIsNone(bench.vs_serial(10, 5.0, None))
        self.assertIsNone(bench.vs_serial(10, None, 0.5))

    def test_summarize_pools_rounds_and_sums_errors(self):
        rounds = [_round(2, 1.0, [0.01, 0.02], [0.5, 1.0],
                         errors={'409': 1}),
                  _round(3, 2.0, [0.03, 0.04, 0.05], [0.6, 1.2, 2.0],
                         errors={'409': 1, 'not done by the round '
                                 'timeout': 1})]
        row = bench.summarize('one-host', '2.101', 3, 1, rounds, 0.5)
        self.assertEqual(6, row['attaches'])
        self.assertEqual(5, row['completed'])
        # Five completed in 1.0 + 2.0 seconds of bursts.
        self.assertEqual(1.667, row['attaches_per_second'])
        self.assertEqual(1.0, row['wall_s'])
        self.assertEqual(1.5, row['k_times_single_s'])
        self.assertEqual(0.667, row['vs_serial'])
        self.assertEqual(5, row['to_in_use_ms']['n'])
        self.assertEqual(1000.0, row['to_in_use_ms']['p50'])
        self.assertEqual(2000.0, row['to_in_use_ms']['p99'])
        self.assertEqual(5, row['post_ms']['n'])
        self.assertEqual({'409': 2, 'not done by the round timeout': 1},
                         row['errors'])
        self.assertNotIn('to_guest_ms', row)

    def test_summarize_reports_the_guest_when_watched(self):
        row = bench.summarize('one-server', '2.101', 1, 1,
                              [_round(1, 0.3, [0.01], [0.4], [0.3])], None)
        self.assertEqual(300.0, row['to_guest_ms']['p50'])
        self.assertIsNone(row['vs_serial'])

    def test_summarize_without_completions(self):
        row = bench.summarize('two-hosts', '2.100', 2, 2,
                              [_round(0, None, [0.1, 0.1], [])], 0.5)
        self.assertIsNone(row['attaches_per_second'])
        self.assertIsNone(row['wall_s'])
        self.assertIsNone(row['vs_serial'])
        self.assertIsNone(row['to_in_use_ms']['p50'])

    def test_table_has_a_line_per_row(self):
        rows = [bench.summarize('one-host', '2.101', 1, 1,
                                [_round(1, 0.5, [0.01], [0.5])], 0.5),
                bench.summarize('one-server', '2.101', 3, 1,
                                [_round(3, 1.5, [0.01] * 3,
                                        [0.5, 1.0, 1.5])], 0.5)]
        text = bench.table(rows, real=False)
        lines = text.splitlines()
        self.assertEqual(5, len(lines))
        self.assertIn('one-server', lines[4])
        self.assertIn('3/3', lines[4])
        self.assertIn('1.00', lines[4])
