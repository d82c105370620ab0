"""A handler's contract, declared with decorators and enforced by the router.

Every route has, for each microversion band it serves:

* ``@request_body(SCHEMA, mv.COMPUTE_MIN, mv.before(mv.VOLUME_ATTACH_TAG))``
  for POST/PUT bodies,
* ``@query(SCHEMA, mv.COMPUTE_MIN)`` for the query string of GETs
  (validated as a dict of lists, as Nova does),
* ``@response(200, SCHEMA, mv.ATTACHMENT_ID_VIEW,
  mv.before(mv.ASYNC_VOLUME_ATTACH))`` for each success status; a ``None``
  schema means the response has no body.

A band is its first and last version (no last: open-ended), written with
the string constants of ``nova_lite.api.microversion`` (``mv``): the first
is a feature's constant, the last ``mv.before(NEXT_FEATURE)``.
``@versions(mv.NEW_ATTACH)`` limits where the route exists at all (404
outside, as Nova and Cinder do). The decorators only record;
``nova_lite.api.router`` validates, and ``tests/unit/api/test_schemas.py``
walks the route table to prove every route declares complete, gap-free
bands.
"""

import functools

import jsonschema
from jsonschema import Draft202012Validator
from jsonschema import FormatChecker
from oslo_serialization import jsonutils
from oslo_utils import uuidutils

from nova_lite.api import microversion
from nova_lite import exception
from nova_lite.i18n import _

_FORMAT_CHECKER = FormatChecker()


@_FORMAT_CHECKER.checks('uuid')
def _is_uuid(instance):
    # oslo's check, as Nova uses: dashes optional, any case.
    if not isinstance(instance, str):
        return True
    return uuidutils.is_uuid_like(instance)


class Band(object):
    def __init__(self, schema, min_version, max_version, status=None):
        self.schema = schema
        self.min = microversion.APIVersion.parse(min_version)
        self.max = (microversion.APIVersion.parse(max_version)
                    if max_version else None)
        self.status = status
        self.validator = (Draft202012Validator(
            schema, format_checker=_FORMAT_CHECKER)
            if schema is not None else None)

    def covers(self, version):
        return version.matches(self.min, self.max)

    @functools.cached_property
    def accepts_empty(self):
        """Whether ``{}`` (a request without a query string) is valid:
        worked out once."""
        return self.validator.is_valid({})


class HandlerSpec(object):
    def __init__(self):
        self.min_version = None
        self.max_version = None
        self.request_bands = []
        self.query_bands = []
        self.response_bands = []

    def available(self, version):
        if self.min_version is None:
            return True
        return version.matches(self.min_version, self.max_version)

    @staticmethod
    def _pick(bands, version):
        for band in bands:
            if band.covers(version):
                return band
        return None

    def request_band(self, version):
        return self._pick(self.request_bands, version)

    def query_band(self, version):
        return self._pick(self.query_bands, version)

    def response_band(self, status, version):
        return self._pick(
            [b for b in self.response_bands if b.status == status], version)


def spec_of(handler):
    spec = getattr(handler, '_nova_lite_spec', None)
    if spec is None:
        spec = HandlerSpec()
        handler._nova_lite_spec = spec
    return spec


def versions(min_version, max_version=None):
    def decorator(fn):
        spec = spec_of(fn)
        spec.min_version = microversion.APIVersion.parse(min_version)
        spec.max_version = (microversion.APIVersion.parse(max_version)
                            if max_version else None)
        return fn
    return decorator


def request_body(schema, min_version, max_version=None):
    def decorator(fn):
        spec_of(fn).request_bands.append(
            Band(schema, min_version, max_version))
        return fn
    return decorator


def query(schema, min_version, max_version=None):
    def decorator(fn):
        spec_of(fn).query_bands.append(Band(schema, min_version, max_version))
        return fn
    return decorator


def response(status, schema, min_version, max_version=None):
    def decorator(fn):
        spec_of(fn).response_bands.append(
            Band(schema, min_version, max_version, status=status))
        return fn
    return decorator


def _error_message(error):
    """A client-facing message for a jsonschema error, Nova style."""
    path = '/'.join(str(p) for p in error.path)
    if error.validator == 'additionalProperties':
        return _('Additional properties are not allowed (%s)') % (
            error.message.split('(', 1)[-1].rstrip(')')
            if '(' in error.message else error.message)
    if error.validator == 'required':
        return error.message
    if path:
        return _("Invalid input for field/attribute %(path)s. Value: "
                 "%(value)s. %(message)s") % {
                     'path': path,
                     'value': jsonutils.dumps(error.instance)[:200],
                     'message': error.message}
    return error.message


def validate(band, data):
    """Validate ``data``; 400 with a useful message when it does not fit."""
    errors = sorted(band.validator.iter_errors(data),
                    key=lambda e: (len(list(e.path)), e.message))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        raise exception.ValidationError(message=_error_message(best))


def _check_strings(value):
    """400 for a string no database can store: a lone surrogate
    (``"\\ud800"``) is valid JSON but not valid Unicode text. The walk is
    iterative: a body's depth is the client's choice."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            try:
                item.encode('utf-8')
            except UnicodeEncodeError:
                raise exception.InvalidInput(reason=_(
                    'Malformed request body: a string is not valid '
                    'Unicode text (a lone surrogate).'))


def extract_json(body):
    try:
        data = jsonutils.loads(body)
    except ValueError:
        raise exception.InvalidInput(
            reason=_('Malformed request body: it is not JSON.'))
    except RecursionError:
        raise exception.InvalidInput(
            reason=_('Malformed request body: it is nested too deeply.'))
    _check_strings(data)
    return data
