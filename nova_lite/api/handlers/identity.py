"""``/identity``: Keystone's token API in front of noauth2.

The embedded default has no Keystone, and clients need one: openstacksdk,
python-openstackclient, cinderclient and novaclient take their endpoints
and the project from a token's service catalog, and several commands
(``openstack versions show``, ``quota show``, the ``cinder`` and ``nova``
CLIs) do nothing without it. With ``[api] auth_strategy = noauth2`` this
module serves the part of Keystone's v3 API those clients use, and nothing
else:

* ``GET /identity`` (Keystone's 300 version list) and ``GET /identity/v3``;
* ``POST /identity/v3/auth/tokens`` with the ``password`` method: the
  password is checked against ``$state_path/passwords.json`` (written by
  ``nova-lite-all`` with mode 0600, see ``ensure_passwords``); a user or
  a password it cannot check is 401, never accepted. The token issued
  (``X-Subject-Token``) is the noauth2 token ``user:project``, with the
  roles noauth2 gives it and a catalog of this very server;
* ``GET``/``HEAD /identity/v3/auth/tokens``: what noauth2 makes of the
  ``X-Subject-Token``, for its user, an admin or the ``service`` user.

The password gates the token API only: noauth2 itself accepts any
``user:project`` token, so whoever reaches the port can be anyone. That is
why the embedded default listens on 127.0.0.1; a deployment that needs
authentication runs Keystone (``auth_strategy = keystone``), and then
only the version documents are served here (everything else is 404).
``doc/source/contributor/identity.rst`` explains the choice.
"""

import datetime
import hmac
import json
import os
import secrets
import tempfile
import uuid

import jsonschema
from oslo_log import log as logging
from oslo_serialization import jsonutils
import webob
import webob.dec

from nova_lite.api import auth
from nova_lite.conf import base as conf_base

LOG = logging.getLogger(__name__)

IDENTITY_UPDATED = '2020-04-07T00:00:00Z'
IDENTITY_VERSION = 'v3.14'
PASSWORDS_FILE = 'passwords.json'
# The users nova-lite-all creates, each with a project of its name:
# ``admin`` (noauth2's administrator) and ``demo`` (a member).
USERS = ('admin', 'demo')
DOMAIN = {'id': 'default', 'name': 'Default'}
REGION = 'RegionOne'
# Keystone's default token lifetime. noauth2 tokens do not expire: this
# only tells clients when to authenticate again.
TOKEN_LIFETIME = datetime.timedelta(hours=1)
# (type, name, path below the base URL): the catalog, as devstack
# registers the services. Block storage is at /volume/v3, where its
# version list is Cinder's (/v3 on the same port has Nova's at /).
CATALOG = (
    ('compute', 'nova', '/v2.1'),
    ('block-storage', 'cinder', '/volume/v3/%(project_id)s'),
    ('volumev3', 'cinderv3', '/volume/v3/%(project_id)s'),
    ('identity', 'keystone', '/identity'),
)
INTERFACES = ('public', 'internal', 'admin')

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_DOMAIN_REF = {'type': 'object', 'properties': {'id': _NAME, 'name': _NAME},
               'minProperties': 1}
_AUTH_REQUEST = {
    'type': 'object',
    'required': ['auth'],
    'properties': {'auth': {
        'type': 'object',
        'required': ['identity'],
        'properties': {
            'identity': {
                'type': 'object',
                'required': ['methods'],
                'properties': {
                    'methods': {'type': 'array', 'items': {'type': 'string'},
                                'minItems': 1},
                    'password': {
                        'type': 'object',
                        'required': ['user'],
                        'properties': {'user': {
                            'type': 'object',
                            'required': ['password'],
                            'anyOf': [{'required': ['id']},
                                      {'required': ['name']}],
                            'properties': {
                                'id': _NAME, 'name': _NAME,
                                'domain': _DOMAIN_REF,
                                'password': {'type': 'string'}},
                        }},
                    },
                },
            },
            'scope': {'oneOf': [
                {'type': 'string', 'enum': ['unscoped']},
                {'type': 'object', 'maxProperties': 1, 'properties': {
                    'project': {
                        'type': 'object',
                        'anyOf': [{'required': ['id']},
                                  {'required': ['name']}],
                        'properties': {'id': _NAME, 'name': _NAME,
                                       'domain': _DOMAIN_REF}},
                    'domain': {'type': 'object'},
                    'system': {'type': 'object'},
                    'OS-TRUST:trust': {'type': 'object'},
                }},
            ]},
        },
    }},
}

_TITLES = {400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
           404: 'Not Found', 405: 'Method Not Allowed'}
UNAUTHORIZED = 'The request you have made requires authentication.'


# -- The passwords --------------------------------------------------------

def passwords_path(conf):
    return conf_base.state_path(conf, PASSWORDS_FILE)


def _read_passwords(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise ValueError('%s is not a JSON object' % path)
    return {k: v for k, v in data.items()
            if isinstance(v, str) and v and k in USERS}


def ensure_passwords(conf):
    """``{user: password}`` of ``USERS``: those in the passwords file, and
    new random ones for the users it lacks (the file is then replaced
    atomically, mode 0600). Passwords survive restarts."""
    path = passwords_path(conf)
    try:
        passwords = _read_passwords(path)
    except ValueError:
        LOG.warning('%s is not valid: new passwords are generated', path)
        passwords = {}
    if all(user in passwords for user in USERS):
        return passwords
    for user in USERS:
        passwords.setdefault(user, secrets.token_urlsafe(18))
    write_private(path, json.dumps(passwords, indent=2, sort_keys=True))
    return passwords


def write_private(path, text):
    """Replace ``path`` with ``text`` atomically, readable by its owner
    only (a crash leaves the old file or the new one, never a part)."""
    directory = os.path.dirname(path) or '.'
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.tmp-')  # mode 0600
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def check_password(conf, user, password):
    """Whether ``password`` is ``user``'s; False when it cannot be
    checked (no passwords file, an unknown user)."""
    try:
        stored = _read_passwords(passwords_path(conf)).get(user)
    except ValueError:
        return False
    return stored is not None and hmac.compare_digest(
        stored.encode('utf-8'), password.encode('utf-8'))


# -- Documents ------------------------------------------------------------

def base_url(req, conf):
    prefix = conf.api.compute_link_prefix
    return prefix.rstrip('/') if prefix else req.host_url


def version_entry(base):
    return {
        'id': IDENTITY_VERSION,
        'status': 'stable',
        'updated': IDENTITY_UPDATED,
        'links': [{'rel': 'self', 'href': base + '/identity/v3/'}],
        'media-types': [{
            'base': 'application/json',
            'type': 'application/vnd.openstack.identity-v3+json'}],
    }


def version_document(base):
    return {'version': version_entry(base)}


def _id(*names):
    return uuid.uuid5(uuid.NAMESPACE_URL, '/'.join(names)).hex


def catalog(base, project_id):
    """The service catalog of a token scoped to ``project_id``."""
    entries = []
    for kind, name, path in CATALOG:
        url = base + path % {'project_id': project_id}
        entries.append({
            'id': _id('service', kind), 'type': kind, 'name': name,
            'endpoints': [{
                'id': _id('endpoint', kind, interface),
                'interface': interface, 'region': REGION,
                'region_id': REGION, 'url': url,
            } for interface in INTERFACES],
        })
    return entries


def _timestamp(when):
    return when.strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def token_body(base, token, method, with_catalog=True):
    """Keystone's body of the project-scoped token ``token``, with what
    noauth2 makes of it."""
    user_id, project_id, roles = auth.noauth_identity(token)
    now = datetime.datetime.now(datetime.timezone.utc)
    body = {
        'methods': [method],
        'user': {'id': user_id, 'name': user_id, 'domain': DOMAIN,
                 'password_expires_at': None},
        'audit_ids': [secrets.token_urlsafe(16)],
        'issued_at': _timestamp(now),
        'expires_at': _timestamp(now + TOKEN_LIFETIME),
        'project': {'id': project_id, 'name': project_id,
                    'domain': DOMAIN},
        'is_domain': False,
        'roles': [{'id': _id('role', role), 'name': role}
                  for role in roles],
    }
    if with_catalog:
        body['catalog'] = catalog(base, project_id)
    return {'token': body}


# -- The WSGI application --------------------------------------------------

def _json(status, body, headers=None):
    resp = webob.Response(status=status, content_type='application/json',
                          charset='UTF-8')
    resp.body = jsonutils.dump_as_bytes(body)
    for key, value in (headers or {}).items():
        resp.headers[key] = value
    return resp


def _error(base, code, message):
    headers = {}
    if code == 401:
        headers['WWW-Authenticate'] = 'Keystone uri="%s/identity"' % base
    return _json(code, {'error': {'code': code, 'title': _TITLES[code],
                                  'message': message}}, headers)


def _in_default_domain(ref):
    domain = ref.get('domain')
    return domain is None or (domain.get('id', 'default') == 'default' and
                              domain.get('name', 'Default') == 'Default')


class _Refused(Exception):
    def __init__(self, code, message, user=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.user = user


def _authenticate(conf, body):
    """The noauth2 token a valid password request earns, or _Refused."""
    try:
        jsonschema.validate(body, _AUTH_REQUEST)
    except jsonschema.ValidationError as exc:
        raise _Refused(400, 'Invalid authentication request: %s' %
                       exc.message)
    identity = body['auth']['identity']
    if identity['methods'] != ['password'] or 'password' not in identity:
        raise _Refused(401, 'nova_lite authenticates the password method '
                       'only.')
    user = identity['password']['user']
    name = user.get('name') or user['id']
    if (user.get('id') not in (None, name) or
            not _in_default_domain(user) or
            not check_password(conf, name, user['password'])):
        raise _Refused(401, UNAUTHORIZED, name)
    scope = body['auth'].get('scope') or 'unscoped'
    # Each user has one project, of its name; noauth2 knows no domain,
    # system or trust scope.
    project = scope if scope == 'unscoped' else scope.get('project')
    if project is None:
        raise _Refused(401, 'nova_lite issues project-scoped tokens only.',
                       name)
    if project != 'unscoped' and (
            project.get('id', name) != name or
            project.get('name', name) != name or
            not _in_default_domain(project)):
        raise _Refused(401, 'The user %s has no role on that project; its '
                       'project is %s.' % (name, name), name)
    return '%s:%s' % (name, name)


def identity_app(conf):
    token_api = conf.api.auth_strategy == 'noauth2'

    @webob.dec.wsgify
    def app(req):
        base = base_url(req, conf)
        path = req.path_info.strip('/')
        if path == '':
            return _json(300, {'versions': {'values': [version_entry(base)]}})
        if path == 'v3':
            return _json(200, version_document(base))
        if path != 'v3/auth/tokens' or not token_api:
            return _error(base, 404, 'nova_lite has no identity service: '
                          'only identity version discovery and, with '
                          'noauth2, the token API are served here.')
        if req.method == 'POST':
            return _issue(req, base)
        if req.method in ('GET', 'HEAD'):
            return _validate(req, base)
        resp = _error(base, 405, 'The method is not allowed for this '
                      'resource.')
        resp.headers['Allow'] = 'GET, HEAD, POST'
        return resp

    def _issue(req, base):
        try:
            body = jsonutils.loads(req.body)
        except ValueError:
            return _error(base, 400, 'The request body is not JSON.')
        try:
            token = _authenticate(conf, body)
        except _Refused as exc:
            if exc.code == 401:
                LOG.info('Authentication of %s refused: %s', exc.user,
                         exc.message)
            return _error(base, exc.code, exc.message)
        return _json(201, token_body(base, token, 'password',
                                     'nocatalog' not in req.GET),
                     {'X-Subject-Token': token})

    def _validate(req, base):
        caller = req.headers.get('X-Auth-Token')
        subject = req.headers.get('X-Subject-Token')
        if not caller:
            return _error(base, 401, UNAUTHORIZED)
        if not subject:
            return _error(base, 400, 'X-Subject-Token is missing.')
        caller_user, _project, caller_roles = auth.noauth_identity(caller)
        subject_user = auth.noauth_identity(subject)[0]
        if caller_user != subject_user and not (
                {'admin', 'service'} & set(caller_roles)):
            return _error(base, 403, 'You are not authorized to validate '
                          'another user\'s token.')
        return _json(200, token_body(base, subject, 'token',
                                     'nocatalog' not in req.GET),
                     {'X-Subject-Token': subject})

    return app
