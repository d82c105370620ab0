"""Helpers of the block-storage functional tests."""

from oslo_utils import timeutils
from oslo_utils import uuidutils

from nova_lite import context
from nova_lite.db import api as db_api
from nova_lite.db import models
from tests.functional import base
from tests.fuzz import invariants

# nova_lite's newest (3.72: shared connections; Cinder's newest is 3.71).
LATEST = '3.72'


class VolumeTestCase(base.TestCase):
    """The whole system, plus shortcuts for /v3 calls."""

    def setUp(self):
        super().setUp()
        self.vol = self.api.as_(volume_version=LATEST)
        self.admin = self.admin_api.as_(volume_version=LATEST)
        # Whatever a test did, no available volume is left exported to a
        # host (the backend's own record, not the database's).
        self.addCleanup(self.assert_no_available_exports)

    def backend_hosts(self, volume_id):
        """The hosts the volume's backend holds connected to it."""
        return invariants.backend_hosts(self.conf, volume_id)

    def assert_no_available_exports(self):
        self.assertEqual([], invariants.available_exports(self.conf),
                         'backend connections of available volumes')

    def create_volume(self, api=None, expect=202, **fields):
        body = {'size': 1}
        body.update(fields)
        resp = (api or self.vol).post('/v3/volumes', body={'volume': body})
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body['volume'] if expect == 202 else resp

    def show_volume(self, volume_id, api=None):
        resp = (api or self.vol).get('/v3/volumes/%s' % volume_id)
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['volume']

    def create_type(self, name='lvm', extra_specs=None, **fields):
        body = dict(name=name, **fields)
        if extra_specs is not None:
            body['extra_specs'] = extra_specs
        resp = self.admin.post('/v3/types', body={'volume_type': body})
        self.assertEqual(200, resp.status, resp.text)
        return resp.body['volume_type']

    def reserve(self, volume_id, instance_uuid=None, api=None, expect=200,
                **fields):
        body = {'volume_uuid': volume_id,
                'instance_uuid': instance_uuid or uuidutils.generate_uuid()}
        body.update(fields)
        resp = (api or self.vol).post('/v3/attachments',
                                      body={'attachment': body})
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body['attachment'] if expect == 200 else resp

    def connect(self, attachment_id, host='compute1', api=None, expect=200,
                **connector):
        connector = dict({'host': host, 'initiator': 'iqn.test'},
                         **connector)
        resp = (api or self.vol).put(
            '/v3/attachments/%s' % attachment_id,
            body={'attachment': {'connector': connector}})
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body['attachment'] if expect == 200 else resp

    def complete(self, attachment_id, api=None, expect=204):
        resp = (api or self.vol).post(
            '/v3/attachments/%s/action' % attachment_id,
            body={'os-complete': None})
        self.assertEqual(expect, resp.status, resp.text)
        return resp

    def status(self, volume_id):
        return self.show_volume(volume_id, api=self.admin)['status']


def server_holding(attachment):
    """A server whose block device mapping holds ``attachment``."""
    @db_api.context_manager.writer
    def insert(ctxt):
        ctxt.session.add(models.Instance(
            uuid=attachment['instance'], display_name='s',
            project_id='demo', user_id='demo', flavor_id='1',
            vm_state='active', launched_at=timeutils.utcnow()))
        ctxt.session.add(models.BlockDeviceMapping(
            uuid=uuidutils.generate_uuid(),
            instance_uuid=attachment['instance'], source_type='volume',
            destination_type='volume', volume_id=attachment['volume_id'],
            attachment_id=attachment['id'], device_name='/dev/vdb'))
    insert(context.get_admin_context())
