"""nova_lite's own source, for the tests that read it (lint-like checks)."""

import os

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), 'nova_lite')


def modules():
    """``(path, dotted module name)`` of every module of nova_lite."""
    for folder, _dirs, files in os.walk(ROOT):
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(ROOT))
                module = rel[:-3].replace(os.sep, '.')
                if module.endswith('.__init__'):
                    module = module[:-len('.__init__')]
                yield path, module
