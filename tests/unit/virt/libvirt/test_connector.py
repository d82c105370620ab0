import os
from unittest import mock

import fixtures

from nova_lite.virt.libvirt import connector
from tests import base


class ConnectorPropertiesTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.initiator = os.path.join(self.dir, 'initiatorname.iscsi')
        self._write('iqn.1993-08.org.debian:01:aaaa')
        self.reads = []
        self.args = ['192.0.2.1', False, False, 'compute1']
        self.props = connector.ConnectorProperties(
            self._read, lambda: self.args,
            paths=(self.initiator, os.path.join(self.dir, 'hostnqn')))

    def _write(self, name, mtime=None):
        with open(self.initiator, 'w') as f:
            f.write('InitiatorName=%s\n' % name)
        if mtime is not None:
            os.utime(self.initiator, ns=(mtime, mtime))

    def _read(self, my_ip, multipath, enforce_multipath, host):
        self.reads.append((my_ip, multipath, enforce_multipath, host))
        with open(self.initiator) as f:
            initiator = f.read().strip().split('=', 1)[1]
        return {'ip': my_ip, 'host': host, 'initiator': initiator,
                'multipath': multipath, 'nested': {'a': 1}}

    def test_first_call_reads(self):
        props = self.props.get()
        self.assertEqual('iqn.1993-08.org.debian:01:aaaa',
                         props['initiator'])
        self.assertEqual([('192.0.2.1', False, False, 'compute1')],
                         self.reads)

    def test_unchanged_host_is_answered_from_memory(self):
        self.props.get()
        for _ in range(5):
            self.props.get()
        self.assertEqual(1, len(self.reads))
        self.assertEqual(1, self.props.reads)

    def test_callers_get_copies(self):
        props = self.props.get()
        props['initiator'] = 'x'
        props['nested']['a'] = 2
        again = self.props.get()
        self.assertEqual('iqn.1993-08.org.debian:01:aaaa',
                         again['initiator'])
        self.assertEqual({'a': 1}, again['nested'])

    def test_new_initiator_name_is_read(self):
        self.props.get()
        self._write('iqn.1993-08.org.debian:01:bbbb', mtime=10 ** 9)
        self.assertEqual('iqn.1993-08.org.debian:01:bbbb',
                         self.props.get()['initiator'])
        self.assertEqual(2, len(self.reads))

    def test_a_file_that_appears_is_read(self):
        self.props.get()
        with open(os.path.join(self.dir, 'hostnqn'), 'w') as f:
            f.write('nqn.2014-08.org.nvmexpress:uuid:1\n')
        self.props.get()
        self.assertEqual(2, len(self.reads))

    def test_changed_arguments_are_read(self):
        self.props.get()
        self.args = ['192.0.2.1', False, False, 'compute2']
        self.assertEqual('compute2', self.props.get()['host'])
        self.assertEqual(2, len(self.reads))

    def test_renamed_machine_is_read(self):
        self.props.get()
        with mock.patch('socket.gethostname', return_value='renamed'):
            self.props.get()
        self.assertEqual(2, len(self.reads))
