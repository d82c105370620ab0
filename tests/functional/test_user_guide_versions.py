"""The user guide's pages against what the code serves and allows.

* getting-started.rst's ``openstack versions show`` table is what the
  command prints, run as the guide runs it, and names the code's newest
  microversions (``COMPUTE_MAX``, ``VOLUME_MAX``);
* the volumes the guide's command-line pages create fit in the default
  quota with room for the openstacksdk scripts, and its clean-up deletes
  every one of them.
"""

import os
import re
import shlex

from nova_lite.api import microversion
from tests.functional import base
from tests.functional import test_client_binaries

USER_GUIDE = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                          'source', 'user')
# The command-line pages, in the guide's order (index.rst).
CLI_PAGES = ('getting-started', 'servers', 'attachments',
             'multiattach-read-only', 'shelved')
# The most volumes an openstacksdk script (examples/) holds at once.
SDK_VOLUMES = 3
GUIDE_URL = 'http://127.0.0.1:8774'


def console_blocks(page):
    """Each console block of ``page``: [(command, [output line, ...])]."""
    with open(os.path.join(USER_GUIDE, page + '.rst')) as f:
        text = f.read()
    blocks = []
    for block in re.findall(r'\.\. code-block:: console\n\n((?:   .*\n|\n)+)',
                            text):
        entries = []
        for line in block.splitlines():
            if line.startswith('   $ '):
                entries.append((line[5:], []))
            elif line.strip() and entries:
                entries[-1][1].append(line[3:])
        blocks.append(entries)
    return blocks


def commands(pages):
    return [command for page in pages for block in console_blocks(page)
            for command, _ in block]


def table_rows(lines):
    """The rows of a cliff table: [[cell, ...]], the header first."""
    return [[cell.strip() for cell in line.strip().strip('|').split('|')]
            for line in lines if line.strip().startswith('|')]


def _positional(argv, options_with_values):
    """The first positional argument of ``argv``."""
    args = iter(argv)
    for arg in args:
        if arg in options_with_values:
            next(args)
        elif not arg.startswith('-'):
            return arg
    return None


class VersionsTableTest(test_client_binaries.ClientBinariesTestCase):
    def guide_table(self):
        for block in console_blocks('getting-started'):
            for command, output in block:
                if command == 'openstack versions show':
                    return table_rows(output)
        self.fail('getting-started.rst runs no "openstack versions show"')

    def test_table_is_what_the_command_prints(self):
        printed = self.openstack('versions', 'show')
        self.assertEqual(
            [[cell.replace(GUIDE_URL, self.base_url) for cell in row]
             for row in self.guide_table()],
            table_rows(printed.splitlines()))

    def test_table_names_the_newest_microversions(self):
        header, *rows = self.guide_table()
        ranges = {row[header.index('Service Type')]: (
            row[header.index('Min Microversion')],
            row[header.index('Max Microversion')]) for row in rows}
        self.assertEqual(
            (microversion.COMPUTE_MIN, microversion.COMPUTE_MAX),
            ranges['compute'])
        self.assertEqual(
            (microversion.VOLUME_MIN, microversion.VOLUME_MAX),
            ranges['block-storage'])


class QuotaFitTest(base.TestCase):
    def test_guide_volumes_fit_and_are_cleaned_up(self):
        created, deleted = [], []
        for command in commands(CLI_PAGES):
            argv = shlex.split(command)
            if argv[:3] == ['openstack', 'volume', 'create']:
                created.append(_positional(
                    argv[3:], {'--size', '--type', '-c', '-f'}))
            elif argv[:3] == ['openstack', 'volume', 'delete']:
                deleted.extend(argv[3:])
        self.assertEqual(sorted(created), sorted(deleted))
        self.assertLessEqual(len(created) + SDK_VOLUMES,
                             self.conf.quota.volumes - 2)
