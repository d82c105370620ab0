"""A server's instance name (``[DEFAULT] instance_name_template``, Nova's
``Instance.name``)."""

import testtools

from nova_lite.compute import names
from tests.unit.compute import fakes


class InstanceNameTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.instance = fakes.FakeInstance(id=26)

    def test_templates(self):
        uuid = self.instance.uuid
        for template, expected in (
                ('instance-%08x', 'instance-0000001a'),
                ('vm-%d', 'vm-26'),
                ('instance-%(uuid)s', 'instance-%s' % uuid),
                ('%(host)s-%(name)s', 'compute1-server'),
                # Neither: the uuid form.
                ('instance-%(nothing)s', 'instance-%s' % uuid),
                ('instance-%q', 'instance-%s' % uuid)):
            self.assertEqual(expected, names.instance_name(template,
                                                           self.instance),
                             template)

    def test_without_a_row_id(self):
        instance = fakes.FakeInstance()
        self.assertEqual('instance-%s' % instance.uuid,
                         names.instance_name('instance-%08x', instance))
        self.assertEqual('x-%s' % instance.uuid,
                         names.instance_name('x-%(uuid)s', instance))
