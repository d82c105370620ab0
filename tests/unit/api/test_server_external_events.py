"""os-server-external-events: the schemas of each microversion band, the
view, the policy default and the compute RPC method."""

from unittest import mock

import jsonschema
from oslo_utils import uuidutils

from nova_lite.api.handlers import server_external_events as handler
from nova_lite.api.schemas import server_external_events as schema
from nova_lite.api import validation
from nova_lite.compute import rpcapi as compute_rpcapi
from nova_lite import context
from nova_lite import exception
from nova_lite import policy
from nova_lite.policies import server_external_events as policies
from tests import base
from tests.unit.compute import fakes

UUID = uuidutils.generate_uuid()
NETWORK = ['network-changed', 'network-vif-plugged',
           'network-vif-unplugged', 'network-vif-deleted']


def _names(body_schema):
    return body_schema['properties']['events']['items']['properties'][
        'name']['enum']


class SchemaTest(base.TestCase):
    def test_each_band_adds_nova_s_name(self):
        self.assertEqual(NETWORK, _names(schema.CREATE))
        self.assertEqual(NETWORK + ['volume-extended'],
                         _names(schema.CREATE_V251))
        self.assertEqual(
            NETWORK + ['volume-extended', 'power-update',
                       'accelerator-request-bound', 'volume-reimaged'],
            _names(schema.CREATE_V293))
        for request, response in (
                (schema.CREATE, schema.CREATE_RESPONSE),
                (schema.CREATE_V251, schema.CREATE_RESPONSE_V251),
                (schema.CREATE_V276, schema.CREATE_RESPONSE_V276),
                (schema.CREATE_V282, schema.CREATE_RESPONSE_V282),
                (schema.CREATE_V293, schema.CREATE_RESPONSE_V293)):
            self.assertEqual(_names(request), _names(response))
        # The earlier bands are not changed by the later ones.
        self.assertEqual(NETWORK, _names(schema.CREATE_RESPONSE))

    def validate(self, body_schema, body):
        validation.validate(validation.Band(body_schema, '2.1', None), body)

    def test_request(self):
        event = {'name': 'volume-extended', 'server_uuid': UUID,
                 'tag': 'v', 'status': 'in-progress'}
        self.validate(schema.CREATE_V251, {'events': [event]})
        for body in ({'events': [event]},
                     {'events': [dict(event, name='network-changed',
                                      tag='x' * 256)]},
                     {'events': [dict(event, name='network-changed',
                                      server_uuid='x')]},
                     {'events': []}, {}):
            self.assertRaises(exception.ValidationError, self.validate,
                              schema.CREATE, body)

    def test_response_tag_optional_code_required(self):
        event = {'name': 'volume-reimaged', 'server_uuid': UUID,
                 'status': 'failed', 'code': 422}
        jsonschema.validate({'events': [event]}, schema.CREATE_RESPONSE_V293)
        for bad in (dict(event, code=500), {
                k: v for k, v in event.items() if k != 'code'}):
            self.assertRaises(jsonschema.ValidationError, jsonschema.validate,
                              {'events': [bad]},
                              schema.CREATE_RESPONSE_V293)


class ViewTest(base.TestCase):
    def test_tag_only_when_given(self):
        event = {'name': 'volume-extended', 'server_uuid': UUID,
                 'status': 'completed', 'tag': 'vol'}
        self.assertEqual(dict(event, code=200),
                         handler._serialize(200, event))
        del event['tag']
        self.assertEqual(dict(event, code=400),
                         handler._serialize(400, dict(event, tag=None)))


class PolicyTest(base.TestCase):
    def setUp(self):
        super().setUp()
        self.enforcer = policy.init(self.conf)
        self.addCleanup(policy.reset)

    def ctx(self, roles):
        ctxt = context.RequestContext(user_id='u', project_id='p',
                                      roles=roles)
        ctxt.enforcer = self.enforcer
        return ctxt

    def test_service_or_admin(self):
        self.assertTrue(self.ctx(['service']).can(policies.CREATE, {}))
        self.assertTrue(self.ctx(['admin']).can(policies.CREATE, {}))
        self.assertRaises(exception.PolicyNotAuthorized,
                          self.ctx(['member', 'reader']).can,
                          policies.CREATE, {})


class RPCTest(base.TestCase):
    def test_cast_to_the_host_at_1_5(self):
        api = compute_rpcapi.ComputeAPI(self.conf)
        instance = fakes.FakeInstance(host='h1')
        events = [{'name': 'volume-extended', 'server_uuid': instance.uuid,
                   'tag': 'v', 'status': 'completed'}]
        self.assertTrue(api.can_send_external_events())
        with mock.patch.object(api.client, 'prepare') as prepare, \
                mock.patch.object(api.client, 'can_send_version',
                                  return_value=True):
            api.external_instance_event('ctxt', [instance], events, 'h2')
        prepare.assert_called_once_with(server='h2', version='1.5')
        prepare.return_value.cast.assert_called_once_with(
            'ctxt', 'external_instance_event', instances=[instance],
            events=events)

    def test_hosts_capped_below_1_5(self):
        self.conf.set_override('compute', '1.4', group='upgrade_levels')
        api = compute_rpcapi.ComputeAPI(self.conf)
        self.assertFalse(api.can_send_external_events())
        self.assertRaises(exception.ServiceTooOld,
                          api.external_instance_event, 'ctxt', [], [], 'h1')
