"""The committed sample config and policy files are in step with the code.

Regenerate with ``tox -e genconfig`` / ``tox -e genpolicy``. Only nova_lite's
own options and rules are checked, so a new release of a library that adds
options of its own does not break the tests.
"""

import os
import re

import testtools

from nova_lite.conf import opts
from nova_lite import policies

ETC = os.path.join(os.path.dirname(__file__), '..', '..', 'etc',
                   'nova-lite')


def _sections(path):
    sections, current = {}, None
    with open(path) as f:
        for line in f:
            header = re.match(r'^\[(.+)\]$', line.strip())
            if header:
                current = sections.setdefault(header.group(1), set())
                continue
            option = re.match(r'^#?([a-z_0-9]+) = ', line)
            if option and current is not None:
                current.add(option.group(1))
    return sections


class SamplesTest(testtools.TestCase):
    def test_config_sample_has_every_option(self):
        sections = _sections(os.path.join(ETC, 'nova-lite.conf.sample'))
        for group, options in opts.list_opts():
            name = getattr(group, 'name', group) or 'DEFAULT'
            for opt in options:
                self.assertIn(
                    opt.dest, sections.get(name, set()),
                    '[%s] %s is missing from nova-lite.conf.sample: run '
                    'tox -e genconfig' % (name, opt.dest))

    def test_policy_sample_has_every_rule(self):
        with open(os.path.join(ETC, 'policy.yaml.sample')) as f:
            text = f.read()
        for rule in policies.list_rules():
            self.assertIn('"%s":' % rule.name, text,
                          '%s is missing from policy.yaml.sample: run tox '
                          '-e genpolicy' % rule.name)
