"""Query-string validation in ``router.call_handler``: a request without a
query string is checked against the schema's verdict on ``{}``, worked out
once per schema; a query string is validated as it comes."""

from unittest import mock

import testtools
import webob

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api import validation
from nova_lite import exception

OPTIONAL = {'type': 'object', 'properties': {'limit': {
    'type': 'array', 'items': {'type': 'string', 'pattern': '^[0-9]+$'}}},
    'additionalProperties': False}
REQUIRED = dict(OPTIONAL, required=['limit'])


def _handler(schema):
    @validation.query(schema, '2.1')
    @validation.response(200, None, '2.1')
    def handler(req):
        return router.Reply(200, None, {})
    return handler


class QueryValidationTest(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.api = mock.Mock(spec=['check_response'])
        self.version = mv.APIVersion.parse('2.1')

    def _call(self, handler, query=''):
        req = webob.Request.blank('/x' + ('?' + query if query else ''))
        return router.call_handler(self.api, req, handler, self.version, {})

    def test_no_query_string_against_an_optional_schema(self):
        handler = _handler(OPTIONAL)
        band = validation.spec_of(handler).query_bands[0]
        self.assertEqual(200, self._call(handler).status_int)
        self.assertTrue(band.accepts_empty)
        # Worked out once: later requests do not run the validator.
        band.validator = mock.Mock()
        for _i in range(2):
            self.assertEqual(200, self._call(handler).status_int)
        self.assertEqual([], band.validator.mock_calls)

    def test_no_query_string_against_a_schema_that_needs_one(self):
        handler = _handler(REQUIRED)
        for _i in range(2):
            exc = self.assertRaises(exception.ValidationError, self._call,
                                    handler)
            self.assertIn("'limit' is a required property", str(exc))

    def test_a_query_string_is_validated(self):
        handler = _handler(OPTIONAL)
        self.assertEqual(200, self._call(handler, 'limit=5').status_int)
        self.assertRaises(exception.ValidationError, self._call, handler,
                          'limit=x')
        self.assertRaises(exception.ValidationError, self._call, handler,
                          'other=1')
