"""nova_lite uses other packages through their public APIs only.

Every module under ``nova_lite/`` is parsed (``ast``); a module fails the
test when it imports a private (``_``-prefixed) module or name of another
package, or reads a ``_``-prefixed attribute of a module or name it
imported from another package. Dunder names (``__version__``) are public.
Attributes of ``self``/``cls`` and of nova_lite's own objects are not
checked (an object may use what its own class inherits).

Outside what this test can see, ``nova_lite.conf.rpc`` reads two option
lists from oslo.messaging's private modules by name (the groups it reads
on every call but lists in no public function; see there).
"""

import ast

import testtools

from tests import source


# (module of nova_lite, what it may import) with the reason.
ALLOWED = {
    # oslo.messaging offers a driver its base classes only under
    # oslo_messaging._drivers; requirements.txt bounds the range the
    # in-process transport is tested on.
    ('nova_lite.transport.inproc', 'oslo_messaging._drivers'),
}


def _private(name):
    return any(part.startswith('_') and not (
        part.startswith('__') and part.endswith('__'))
        for part in name.split('.'))


def _ours(module):
    return module == 'nova_lite' or module.startswith('nova_lite.')


def check_source(source, module):
    """The violations of ``source`` (the text of ``module``) as
    ``(line, what)``."""
    tree = ast.parse(source)
    found = []
    foreign = set()         # local names bound to other packages' things

    def allowed(target):
        return any(module == m and (target == a or target.startswith(a + '.'))
                   for m, a in ALLOWED)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(alias.name):
                    continue
                if _private(alias.name) and not allowed(alias.name):
                    found.append((node.lineno, 'import %s' % alias.name))
                foreign.add((alias.asname or alias.name).split('.')[0])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level or _ours(base):
                continue
            for alias in node.names:
                target = '%s.%s' % (base, alias.name)
                if (_private(base) or _private(alias.name)) and \
                        not allowed(target) and not allowed(base):
                    found.append((node.lineno, 'from %s import %s' % (
                        base, alias.name)))
                foreign.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and
                isinstance(node.value, ast.Name) and
                node.value.id in foreign):
            found.append((node.lineno, '%s.%s' % (node.value.id, node.attr)))
    return sorted(found)


class PrivateImportTest(testtools.TestCase):

    def test_no_module_uses_another_packages_private_api(self):
        problems = []
        for path, module in source.modules():
            with open(path) as f:
                for line, what in check_source(f.read(), module):
                    problems.append('%s:%d: %s' % (module, line, what))
        self.assertEqual([], problems)

    def test_the_check_finds_each_kind(self):
        source = '\n'.join([
            'import oslo_policy._checks',
            'from oslo_policy import _checks',
            'from oslo_messaging._drivers import base',
            'from oslo_messaging import transport',
            'from oslo_versionedobjects import base as ovo_base',
            'transport._transport_opts',
            'ovo_base._private_thing',
            'import os',
            'os.__name__',
            'self._mine',
            'from nova_lite import _ours',
        ])
        found = [what for _line, what in check_source(source, 'nova_lite.x')]
        self.assertEqual(sorted([
            'import oslo_policy._checks',
            'from oslo_policy import _checks',
            'from oslo_messaging._drivers import base',
            'transport._transport_opts',
            'ovo_base._private_thing',
        ]), sorted(found))
        # The one allowed import, in the one module allowed it.
        self.assertEqual([], check_source(
            'from oslo_messaging._drivers import base',
            'nova_lite.transport.inproc'))
