"""The embedded server's descriptor budget: the open-files limit is raised
to fit ``[wsgi] connection_limit`` when it may be, and the connection limit
lowered when it may not (the process boundary, ``resource``, is mocked)."""

import resource
from unittest import mock

from nova_lite.wsgi import embedded_server
from tests import base

RESERVED = embedded_server.RESERVED_FDS


class FitDescriptorLimitTest(base.TestCase):
    def fit(self, limit, soft, hard, refuse=False):
        setrlimit = mock.Mock(side_effect=ValueError('no') if refuse
                              else None)
        with mock.patch.object(resource, 'getrlimit',
                               return_value=(soft, hard)), \
                mock.patch.object(resource, 'setrlimit', setrlimit):
            return embedded_server.fit_descriptor_limit(limit), setrlimit

    def test_enough_descriptors_changes_nothing(self):
        fitted, setrlimit = self.fit(1000, 20000, 20000)
        self.assertEqual(1000, fitted)
        setrlimit.assert_not_called()

    def test_soft_limit_raised_to_fit(self):
        # A desktop's usual 1024 soft limit under a higher hard one.
        fitted, setrlimit = self.fit(1000, 1024, 524288)
        self.assertEqual(1000, fitted)
        setrlimit.assert_called_once_with(
            resource.RLIMIT_NOFILE, (1000 + RESERVED, 524288))

    def test_soft_limit_raised_to_the_hard_limit_then_connections_fit(self):
        fitted, setrlimit = self.fit(1000, 256, 512)
        setrlimit.assert_called_once_with(resource.RLIMIT_NOFILE,
                                          (512, 512))
        self.assertEqual(512 - RESERVED, fitted)

    def test_refused_raise_lowers_the_connection_limit(self):
        fitted, _setrlimit = self.fit(1000, 256, resource.RLIM_INFINITY,
                                      refuse=True)
        self.assertEqual(256 - RESERVED, fitted)

    def test_unlimited(self):
        fitted, setrlimit = self.fit(1000, resource.RLIM_INFINITY,
                                     resource.RLIM_INFINITY)
        self.assertEqual(1000, fitted)
        setrlimit.assert_not_called()
