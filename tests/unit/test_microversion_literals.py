"""Microversion numbers are written in two modules of ``nova_lite/`` only.

``nova_lite/api/microversion.py`` names every microversion of the two
sub-APIs; ``nova_lite/api_version.py`` holds the ones block storage reads
too (block storage may not import the API package). Everywhere else a
version is one of their constants, and the last version of a band is
``microversion.before(FEATURE)``.

Every module is parsed (``ast``); a module fails when it writes a
microversion as a value:

* in the API package (``nova_lite.api``) and in block storage
  (``nova_lite.volume``): any string literal that is a version
  (``'2.70'``, ``'3.0'``);
* anywhere: a version string or integer pair given to ``APIVersion``,
  ``APIVersion.parse``, ``matches`` or ``before``.

Prose may name versions (docstrings, comments: they are not values), and
RPC and object versions (``'1.3'`` in ``compute/rpcapi.py``, and in the
volume service's ``volume/rpcapi.py``) are not microversions.
"""

import ast
import re

import testtools

from tests import source


# Where the numbers are written.
HOMES = {'nova_lite.api.microversion', 'nova_lite.api_version'}
# Where any version-looking string literal is a microversion.
MICROVERSION_PACKAGES = ('nova_lite.api', 'nova_lite.volume')
# What takes a microversion, wherever it is called.
VERSION_TAKERS = {'APIVersion', 'matches', 'before'}

_VERSION = re.compile(r'^[0-9]+\.[0-9]+$')


def _is_version(node):
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and _VERSION.match(node.value) is not None)


def _is_int(node):
    return isinstance(node, ast.Constant) and type(node.value) is int


def _name(func):
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _takes_a_version(call):
    name = _name(call.func)
    if name == 'parse':
        return _name(getattr(call.func, 'value', None)) == 'APIVersion'
    return name in VERSION_TAKERS


def _in_package(module, packages):
    return any(module == p or module.startswith(p + '.') for p in packages)


def check_source(source, module):
    """The microversions ``source`` (the text of ``module``) writes, as
    ``(line, what)``."""
    if module in HOMES:
        return []
    tree = ast.parse(source)
    found = set()
    # An RPC API (``volume/rpcapi.py``) writes RPC versions.
    if _in_package(module, MICROVERSION_PACKAGES) and \
            not module.endswith('.rpcapi'):
        for node in ast.walk(tree):
            if _is_version(node):
                found.add((node.lineno, repr(node.value)))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _takes_a_version(node)):
            continue
        args = list(node.args) + [k.value for k in node.keywords]
        what = '%s(...)' % _name(node.func)
        if any(_is_version(a) for a in args):
            found.add((node.lineno, what))
        elif (_name(node.func) == 'APIVersion' and len(args) == 2 and
              all(_is_int(a) for a in args)):
            found.add((node.lineno, what))
    return sorted(found)


class MicroversionLiteralTest(testtools.TestCase):

    def test_microversions_are_written_in_their_homes_only(self):
        problems = []
        checked = set()
        for path, module in source.modules():
            checked.add(module)
            with open(path) as f:
                for line, what in check_source(f.read(), module):
                    problems.append('%s:%d: %s' % (module, line, what))
        self.assertEqual([], problems)
        self.assertTrue(HOMES <= checked)
        self.assertIn('nova_lite.api.handlers.volume_attachments', checked)
        self.assertIn('nova_lite.volume.views', checked)

    def test_the_check_finds_each_kind(self):
        source = '\n'.join([
            "@validation.response(200, schema.X, '2.1', '2.69')",
            "def handler(req):",
            "    return mv.want(req).matches('2.60')",
            "BANDS = [('3.0', mv.before(mv.GROUP_VOLUME))]",
            "CLIENT = api_version.APIVersion(3, 48)",
            "LAST = mv.before('2.70')",
        ])
        self.assertEqual([
            (1, "'2.1'"), (1, "'2.69'"),
            (3, "'2.60'"), (3, 'matches(...)'),
            (4, "'3.0'"),
            (5, 'APIVersion(...)'),
            (6, "'2.70'"), (6, 'before(...)'),
        ], check_source(source, 'nova_lite.api.handlers.x'))
        # Outside the API and block storage: what takes a version.
        self.assertEqual([
            (3, 'matches(...)'), (5, 'APIVersion(...)'),
            (6, 'before(...)'),
        ], check_source(source, 'nova_lite.compute.api'))
        self.assertEqual(
            [(1, 'parse(...)')],
            check_source("v = APIVersion.parse('3.44')", 'nova_lite.cmd.x'))

    def test_the_check_leaves_other_numbers_alone(self):
        anywhere = [
            '"""From 2.101 the attach is cast (3.44: os-complete)."""',
            "# a comment: 2.70",
            "LINK = 'v2.1'",
            "RELEASE = '2.1.0'",
            "PAUSE = 0.5",
            "text = '%d.%d' % version",
            "mv.before(mv.ATTACH_MODE)",
            "version.matches(mv.MULTIATTACH)",
            "APIVersion(major, minor)",
        ]
        rpc = [
            "RPC_API_VERSION = '1.3'",
            "self._prepare(host, '1.1').cast(ctxt, 'attach')",
        ]
        self.assertEqual([], check_source('\n'.join(anywhere + rpc),
                                          'nova_lite.compute.rpcapi'))
        self.assertEqual([], check_source('\n'.join(anywhere),
                                          'nova_lite.api.handlers.x'))

    def test_the_homes_may_write_them(self):
        source = "ATTACH_MODE = '2.105'\nCLIENT = APIVersion.parse('3.48')"
        for module in HOMES:
            self.assertEqual([], check_source(source, module))
        self.assertEqual([(1, "'2.105'"), (2, "'3.48'"), (2, 'parse(...)')],
                         check_source(source, 'nova_lite.api.x'))
