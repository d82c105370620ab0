"""The shipped production samples: the uWSGI ini keeps the settings the
deployment depends on, and every option the example nova-lite.conf sets
or suggests exists.

tests/integration runs the uWSGI ini for real; this tier only guards what
an edit could silently break.
"""

import configparser
import os
import re

from keystoneauth1 import loading as ks_loading
from keystonemiddleware import auth_token
from oslo_config import cfg
from oslo_policy import opts as policy_opts

from nova_lite.conf import opts as nl_opts
from nova_lite.wsgi import embedded_server
from tests import base

ETC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'etc', 'nova-lite')

# "# name = value" in a sample: an option suggested, commented out.
_COMMENTED_OPTION = re.compile(r'^# ?([a-z_]+) = \S')


class UWSGIIniTest(base.TestCase):
    def setUp(self):
        super().setUp()
        parser = configparser.ConfigParser(interpolation=None, strict=True)
        parser.optionxform = str
        with open(os.path.join(ETC, 'nova-lite-api-uwsgi.ini')) as f:
            parser.read_file(f)
        self.ini = parser['uwsgi']

    def test_application_and_config(self):
        self.assertEqual('nova_lite.wsgi.api:application',
                         self.ini['module'])
        self.assertEqual('OS_NOVA_LITE_CONFIG_FILE=/etc/nova-lite/'
                         'nova-lite.conf', self.ini['env'])
        self.assertEqual('true', self.ini['need-app'])

    def test_workers_load_the_app_after_fork(self):
        # oslo.messaging transports and DB pools must not cross a fork.
        self.assertEqual('true', self.ini['master'])
        self.assertEqual('true', self.ini['lazy-apps'])
        self.assertEqual('true', self.ini['enable-threads'])

    def test_stop_and_reload(self):
        self.assertEqual('true', self.ini['die-on-term'])
        self.assertEqual('unix_signal:15 gracefully_kill_them_all',
                         self.ini['hook-master-start'])
        self.assertIn('touch-chain-reload', self.ini)
        # Keep-alive clients would reuse connections uWSGI closed.
        self.assertEqual('Connection: close', self.ini['add-header'])

    def test_requests_are_bounded_above_the_bounded_waits(self):
        # harakiri cuts a request, and its worker: it must stay above the
        # longest wait for a silent peer (an RPC call without heartbeat)
        # plus a busy multiattach volume's, with the defaults.
        harakiri = int(self.ini['harakiri'])
        self.assertGreater(harakiri, self.conf.rpc_response_timeout +
                           self.conf.compute.multiattach_reserve_timeout)
        self.assertLess(harakiri, self.conf.long_rpc_timeout)

    def test_header_buffer_is_the_embedded_servers_limit(self):
        # uWSGI drops a request whose line and headers pass buffer-size;
        # the embedded server answers 431 at the same size.
        self.assertEqual(embedded_server.MAX_REQUEST_HEADER_SIZE,
                         int(self.ini['buffer-size']))


class ProductionConfExampleTest(base.TestCase):
    def _all_options(self):
        """{group: option names} nova_lite, oslo.log, keystonemiddleware
        (with the password plugin) and oslo.policy register."""
        known = {'DEFAULT': set(self.conf.keys())}
        for group in self.conf.keys():
            if isinstance(self.conf[group], cfg.ConfigOpts.GroupAttr):
                known[group] = set(self.conf[group].keys())
        # Backend groups ([file], [fake]) are registered when a backend is
        # first used; the generator's list has them.
        extra = nl_opts.list_opts() + auth_token.list_opts() + \
            policy_opts.list_opts() + [
            ('keystone_authtoken',
             ks_loading.get_auth_plugin_conf_options('password') +
             ks_loading.get_auth_common_conf_options())]
        for group, options in extra:
            known.setdefault(getattr(group, 'name', group), set()).update(
                o.dest for o in options)
        return known

    def test_every_option_exists(self):
        known = self._all_options()
        section = None
        seen = 0
        with open(os.path.join(
                ETC, 'nova-lite.conf.production-example')) as f:
            for number, line in enumerate(f, 1):
                line = line.rstrip('\n')
                if line.startswith('['):
                    section = line.strip('[]')
                    self.assertIn(section, known, 'line %d' % number)
                    continue
                match = _COMMENTED_OPTION.match(line)
                name = match.group(1) if match else (
                    line.split('=')[0].strip()
                    if line and line[0].isalpha() else None)
                if name is None:
                    continue
                seen += 1
                self.assertIn(name, known[section],
                              'line %d: [%s] %s is not an option' % (
                                  number, section, name))
        self.assertGreater(seen, 20)
