"""Connection credentials at rest: encrypted in every row that holds them.

A ``connection_info`` may carry the credentials of a connection
(``SECRET_KEYS``: the iSCSI target's CHAP secrets, the cephx keyring of an
``rbd`` connection). The rows that keep one (a volume attachment's
``connection_info``, a block device mapping's ``connection_info`` and its
``task_data``, which holds the connection of an operation in flight, and the
``provider_auth`` of volumes made before credentials were per connection)
store each such value as a Fernet token (``fernet:<token>``) made with the
first key of ``[database] secret_keys``; the rest of the row stays readable
JSON. Every reader gets the plain value back: the columns are
``SecretJSON``/``SecretString`` (SQLAlchemy ``TypeDecorator``), so ORM
queries, Core statements and ``conditional_update`` all encrypt on write and
decrypt on read, and no code above the data-access layer sees a token.

Why encrypted rows rather than no secret in any row but the volume's (as
Cinder does): the credentials are a host connection's (the ``iscsi``
backend makes one CHAP account per host), not the volume's, and the compute
host needs them again without block storage (a reboot, a recovery after a
crash rebuild the guest's disk from the mapping, as Nova does), so the
mapping and an operation's task data must keep them.

``configure(conf)`` (run by ``db_api.configure``) reads the keys; every
process that reads or writes these rows needs the same list. With no key,
the values are written as they are (and a warning is logged once): the
embedded, unconfigured deployment keeps working; its backends (``file``,
``fake``) make no credentials. Rows written in plain text (before a key was
set, or before the upgrade) are read as they are and encrypted by the next
write; the ``3f5c8a1d6e20`` migration encrypts those of an upgrade. Keys
rotate: put the new key first, keep the old ones after it until every row
was rewritten (``cryptography``'s ``MultiFernet``).
"""

import threading

from cryptography import fernet
from oslo_log import log as logging
from oslo_serialization import jsonutils
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from nova_lite import exception

LOG = logging.getLogger(__name__)

#: The credentials a ``connection_info`` may carry: the iSCSI target's
#: CHAP secrets, the cephx keyring of an ``rbd`` connection.
SECRET_KEYS = ('auth_password', 'discovery_auth_password', 'keyring')

#: What marks an encrypted value in a row.
PREFIX = 'fernet:'

_LOCK = threading.Lock()
_STATE = {'cipher': None, 'warned': False}


def configure(conf):
    """Take the keys of ``conf.database.secret_keys`` (none: values are
    stored as they are). Raises ``InvalidConfiguration`` for a key that is
    not a Fernet key."""
    keys = list(conf.database.secret_keys or [])
    with _LOCK:
        _STATE['cipher'] = _cipher(keys) if keys else None


def _cipher(keys):
    try:
        return fernet.MultiFernet([fernet.Fernet(key.encode('ascii'))
                                   for key in keys])
    except (ValueError, UnicodeEncodeError):
        raise exception.InvalidConfiguration(
            reason='[database] secret_keys: each key must be a Fernet key '
                   '(32 url-safe base64-encoded bytes)')


def generate_key():
    """A new key for ``[database] secret_keys``."""
    return fernet.Fernet.generate_key().decode('ascii')


def _encrypt(value):
    cipher = _STATE['cipher']
    if value.startswith(PREFIX):
        return value
    if cipher is None:
        if not _STATE['warned']:
            _STATE['warned'] = True
            LOG.warning('[database] secret_keys is not set: connection '
                        'credentials are stored in plain text in the '
                        'database.')
        return value
    return PREFIX + cipher.encrypt(value.encode('utf-8')).decode('ascii')


def _decrypt(value):
    if not value.startswith(PREFIX):
        return value
    cipher = _STATE['cipher']
    try:
        if cipher is None:
            raise fernet.InvalidToken()
        return cipher.decrypt(value[len(PREFIX):].encode('ascii')).decode(
            'utf-8')
    except fernet.InvalidToken:
        raise exception.InvalidConfiguration(
            reason='a connection credential in the database was encrypted '
                   'with a key that is not in [database] secret_keys')


def _walk(value, secret):
    """``value`` (decoded JSON) with ``secret`` applied to the string value
    of every ``SECRET_KEYS`` key, at any depth."""
    if isinstance(value, dict):
        return {k: (secret(v) if k in SECRET_KEYS and isinstance(v, str)
                    else _walk(v, secret))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(item, secret) for item in value]
    return value


def _has_secret_key(text):
    return any('"%s"' % key in text for key in SECRET_KEYS)


def encrypt_json(text):
    """JSON ``text`` with its credentials encrypted (as stored)."""
    if text is None or not _has_secret_key(text):
        return text
    return jsonutils.dumps(_walk(jsonutils.loads(text), _encrypt))


def decrypt_json(text):
    """Stored JSON ``text`` with its credentials in plain text."""
    if text is None or PREFIX not in text:
        return text
    return jsonutils.dumps(_walk(jsonutils.loads(text), _decrypt))


def encrypt_text(text):
    """``text`` encrypted as a whole (as stored)."""
    return None if text is None else _encrypt(text)


def decrypt_text(text):
    """Stored ``text`` in plain text."""
    return None if text is None else _decrypt(text)


class SecretJSON(sa.types.TypeDecorator):
    """A JSON text column whose credentials (``SECRET_KEYS``) are stored
    encrypted. TEXT; MEDIUMTEXT on MySQL/MariaDB when ``medium``."""

    impl = sa.Text
    cache_ok = True

    def __init__(self, medium=False):
        super().__init__()
        self.medium = medium
        if medium:
            self.impl = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql',
                                               'mariadb')

    def process_bind_param(self, value, dialect):
        return encrypt_json(value)

    def process_result_value(self, value, dialect):
        return decrypt_json(value)


class SecretString(sa.types.TypeDecorator):
    """A text column (at most 255 characters stored) kept encrypted as a
    whole: Cinder's ``provider_auth``."""

    impl = sa.String(255)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        return encrypt_text(value)

    def process_result_value(self, value, dialect):
        return decrypt_text(value)
