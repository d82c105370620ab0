"""The one place where exceptions become HTTP responses.

Domain exceptions (``nova_lite.exception``) carry their status code; WebOb
HTTP exceptions keep theirs; anything else is a logged 500 whose body names
only the exception class, never a traceback. The body has the shape Nova and
Cinder clients parse: ``{"badRequest": {"code": 400, "message": "..."}}``;
a 409 of nova_lite's also says which conflict it is, ``"error_code":
"compute.server_locked"`` (``exception.CONFLICT_CODES``), as placement tags
its 409s.
"""

import kombu.exceptions
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_serialization import jsonutils
import webob.exc

from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite.i18n import _

LOG = logging.getLogger(__name__)

FAULT_NAMES = {
    400: 'badRequest',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'itemNotFound',
    405: 'badMethod',
    409: 'conflictingRequest',
    412: 'preconditionFailed',
    413: 'overLimit',
    415: 'badMediaType',
    429: 'overLimit',
    501: 'notImplemented',
    503: 'serviceUnavailable',
}
DEFAULT_FAULT_NAME = 'computeFault'

UNEXPECTED_MESSAGE = _(
    'Unexpected API Error. Please report this to your cloud operator with '
    'the request id and the nova_lite API log.\n%s')

DATABASE_UNAVAILABLE = _(
    'The service cannot reach its database; try again later.')
BROKER_UNAVAILABLE = _(
    'The service cannot reach its message broker; try again later.')
SERVICE_TIMEOUT = _(
    'A service did not answer in time. What the request started may still '
    'complete or be undone: look at the resource before trying again.')
# Seconds a client should wait before trying again after a 503 for an
# unreachable database or broker (the Retry-After header).
RETRY_AFTER = 5
# A send that the broker did not take: unreachable after
# [DEFAULT] rpc_send_retries (oslo.messaging raises kombu's own error when
# it could not even open a connection), or no queue would take it.
_BROKER_ERRORS = (messaging.MessageDeliveryFailure,
                  messaging.MessageUndeliverable,
                  kombu.exceptions.OperationalError)

_DEFAULT_MESSAGES = {
    404: _('The resource could not be found.'),
    405: _('The method is not allowed for this resource.'),
}


def fault_response(code, message, headers=None, error_code=None):
    """A response with Nova's fault body for ``code``; a 409's kind in
    ``error_code`` (``exception.CONFLICT_CODES``)."""
    name = FAULT_NAMES.get(code, DEFAULT_FAULT_NAME)
    body = {name: {'code': code, 'message': message}}
    if error_code:
        body[name]['error_code'] = error_code
    resp = webob.Response(status=code, content_type='application/json',
                          charset='UTF-8')
    resp.body = jsonutils.dump_as_bytes(body)
    for key, value in (headers or {}).items():
        resp.headers[key] = value
    if code == 401:
        resp.headers.setdefault('WWW-Authenticate', 'Keystone uri="local"')
    return resp


def exception_to_response(exc):
    """Map any exception to its fault response (the mapping table)."""
    if isinstance(exc, exception.NovaLiteException):
        code = exc.code
        if code >= 500:
            LOG.error('%s: %s', exc.__class__.__name__, exc)
        return fault_response(code, exc.format_message(),
                              getattr(exc, 'headers', None), exc.error_code)
    if isinstance(exc, webob.exc.HTTPException):
        code = exc.code
        message = (exc.explanation if exc.detail is None else exc.detail)
        if not message or message == webob.exc.status_map[code].explanation:
            message = _DEFAULT_MESSAGES.get(code, message or exc.title)
        headers = {}
        if code == 405 and 'Allow' in exc.headers:
            headers['Allow'] = exc.headers['Allow']
        return fault_response(code, message, headers)
    if db_api.is_unavailable(exc):
        # Unreachable, silent past [database] read_timeout, or a lock not
        # granted in time: the request may be tried again.
        LOG.error('The database is unavailable: %s', exc)
        return fault_response(503, DATABASE_UNAVAILABLE,
                              {'Retry-After': str(RETRY_AFTER)})
    if isinstance(exc, _BROKER_ERRORS):
        # A volume attach, detach or swap undid what it wrote before
        # sending (compute.server_volumes).
        LOG.error('The message broker did not take a message: %s',
                  getattr(exc, 'exception', None) or exc)
        return fault_response(503, BROKER_UNAVAILABLE,
                              {'Retry-After': str(RETRY_AFTER)})
    if isinstance(exc, messaging.MessagingTimeout):
        # An RPC call got no answer and no call-monitor heartbeat for
        # [DEFAULT] rpc_response_timeout (a silent conductor): no
        # Retry-After, the work may be in flight (compute.server_volumes).
        LOG.error('An RPC call was not answered: %s', exc)
        return fault_response(503, SERVICE_TIMEOUT)
    LOG.exception('Unexpected exception in API method')
    return fault_response(
        500, UNEXPECTED_MESSAGE % str(type(exc)))


class FaultWrapper(object):
    """Last-chance middleware: nothing leaves the API as a traceback.

    A plain WSGI middleware (the layers of ``nova_lite.api`` pass the
    environ on instead of wrapping each response in a new one). The
    applications below it answer in full when they return (a list body),
    so an exception comes before any response has started; should one
    come after, it is raised to the server, which answers 500."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        started = []

        def _start_response(status, headers, exc_info=None):
            started.append(status)
            return start_response(status, headers, exc_info)
        try:
            return self.application(environ, _start_response)
        except Exception as exc:
            if started:
                raise
            return exception_to_response(exc)(environ, start_response)
