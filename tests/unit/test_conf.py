"""The configuration options other tools and docs rely on."""

from nova_lite.conf import opts
from tests import base


class ConfTest(base.TestCase):
    def test_product_option_names_and_defaults(self):
        conf = self.conf
        self.assertEqual('127.0.0.1', conf.wsgi.bind_host)
        self.assertEqual(8774, conf.wsgi.bind_port)
        self.assertIn(conf.api.auth_strategy, ('noauth2', 'keystone'))
        for name in ('state_path', 'host', 'transport_url'):
            self.assertIn(name, conf)
        self.assertIn('connection', conf.database)

    def test_defaults_without_overrides(self):
        self.conf.clear_override('state_path')
        self.conf.clear_override('transport_url')
        self.assertEqual('./state', self.conf.state_path)
        self.assertEqual('inproc://', self.conf.transport_url)
        self.assertEqual('sqlite:///./state/nova_lite.sqlite',
                         self.conf.database.connection)
        self.assertEqual('noauth2', self.conf.api.auth_strategy)

    def test_every_option_has_operator_help(self):
        for group, options in opts.list_opts():
            for opt in options:
                self.assertTrue(
                    opt.help and len(opt.help.strip()) > 15,
                    '%s.%s needs help text' % (group, opt.name))
