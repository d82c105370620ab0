"""The one exception-to-HTTP mapping."""

import kombu.exceptions
from oslo_db import exception as db_exc
import oslo_messaging as messaging
from oslo_serialization import jsonutils
import sqlalchemy as sa
import testtools
import webob.exc

from nova_lite.api import fault
from nova_lite import exception


class FaultTest(testtools.TestCase):
    def body(self, resp):
        return jsonutils.loads(resp.body)

    def test_domain_exceptions_carry_their_code(self):
        cases = [
            (exception.Invalid(reason='x'), 400, 'badRequest'),
            (exception.PolicyNotAuthorized(action='a'), 403, 'forbidden'),
            (exception.InstanceNotFound(instance_id='i'), 404,
             'itemNotFound'),
            (exception.InvalidGlobalAPIVersion(
                req_ver='2.999', min_ver='2.1', max_ver='2.100'), 406,
             'computeFault'),
            (exception.ServiceTooOld(reason='old'), 503,
             'serviceUnavailable'),
        ]
        for exc, code, name in cases:
            resp = fault.exception_to_response(exc)
            self.assertEqual(code, resp.status_int)
            self.assertEqual({name: {'code': code,
                                     'message': exc.format_message()}},
                             self.body(resp))

    def test_a_409_says_which_conflict(self):
        resp = fault.exception_to_response(
            exception.InstanceIsLocked(instance_uuid='i'))
        self.assertEqual(409, resp.status_int)
        self.assertEqual({'conflictingRequest': {
            'code': 409, 'message': 'Instance i is locked',
            'error_code': 'compute.server_locked'}}, self.body(resp))
        resp = fault.exception_to_response(exception.VolumeTaskInProgress(
            volume_id='v', instance_uuid='i', task='attaching'))
        self.assertEqual('compute.mapping_busy',
                         self.body(resp)['conflictingRequest']['error_code'])
        # Every 409 has a kind of its own, or the generic one.

        def subclasses(cls):
            for sub in cls.__subclasses__():
                yield sub
                yield from subclasses(sub)
        conflicts = list(subclasses(exception.Conflict))
        self.assertGreater(len(conflicts), 20)
        for cls in [exception.Conflict] + conflicts:
            self.assertIn(cls.error_code, exception.CONFLICT_CODES, cls)
        used = {cls.error_code for cls in conflicts}
        self.assertEqual(set(exception.CONFLICT_CODES) - {
            exception.CONFLICT}, used)

    def test_webob_404_and_405(self):
        resp = fault.exception_to_response(webob.exc.HTTPNotFound())
        self.assertEqual(404, resp.status_int)
        self.assertEqual('The resource could not be found.',
                         self.body(resp)['itemNotFound']['message'])
        resp = fault.exception_to_response(webob.exc.HTTPMethodNotAllowed(
            headers={'Allow': 'GET, POST'}))
        self.assertEqual(405, resp.status_int)
        self.assertEqual('GET, POST', resp.headers['Allow'])
        self.assertIn('badMethod', self.body(resp))

    def test_unexpected_error_is_500_without_traceback(self):
        try:
            raise AttributeError('secret internals')
        except AttributeError as exc:
            resp = fault.exception_to_response(exc)
        self.assertEqual(500, resp.status_int)
        message = self.body(resp)['computeFault']['message']
        self.assertIn("<class 'AttributeError'>", message)
        self.assertNotIn('secret internals', message)
        self.assertNotIn('Traceback', message)

    def test_401_has_www_authenticate(self):
        resp = fault.exception_to_response(exception.NotAuthenticated())
        self.assertEqual(401, resp.status_int)
        self.assertIn('WWW-Authenticate', resp.headers)

    def _assert_503(self, exc, message):
        resp = fault.exception_to_response(exc)
        self.assertEqual(503, resp.status_int)
        self.assertEqual(str(fault.RETRY_AFTER), resp.headers['Retry-After'])
        self.assertEqual({'serviceUnavailable': {'code': 503,
                                                 'message': message}},
                         self.body(resp))

    def test_database_unavailable_is_503_with_retry_after(self):
        for exc in (db_exc.DBConnectionError(Exception('refused')),
                    sa.exc.OperationalError(
                        'BEGIN IMMEDIATE', {},
                        Exception('database is locked'))):
            self._assert_503(exc, fault.DATABASE_UNAVAILABLE)

    def test_broker_unavailable_is_503_with_retry_after(self):
        for exc in (messaging.MessageDeliveryFailure('no broker'),
                    kombu.exceptions.OperationalError(
                        '[Errno 111] Connection refused'),
                    messaging.MessageUndeliverable(
                        Exception('NO_ROUTE'), 'nova_lite',
                        'compute.compute1', {})):
            self._assert_503(exc, fault.BROKER_UNAVAILABLE)

    def test_rpc_timeout_is_503_without_retry_after(self):
        # A call nobody answered (a silent conductor): the work may still
        # be in flight, so no Retry-After.
        resp = fault.exception_to_response(
            messaging.MessagingTimeout('no reply to attach_volume'))
        self.assertEqual(503, resp.status_int)
        self.assertNotIn('Retry-After', resp.headers)
        self.assertEqual({'serviceUnavailable': {
            'code': 503, 'message': fault.SERVICE_TIMEOUT}}, self.body(resp))

    def test_other_database_errors_stay_500(self):
        resp = fault.exception_to_response(sa.exc.OperationalError(
            'SELECT x', {}, Exception('no such column: x')))
        self.assertEqual(500, resp.status_int)
        self.assertNotIn('Retry-After', resp.headers)
