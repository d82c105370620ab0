"""A volume's user metadata: the rules that need no database.

Cinder's behaviour, which ``nova_lite.volume.api`` and
``nova_lite.volume.db.volumes`` apply: a volume's metadata is a flat
object of string keys (1 to 255 characters) and string values (at most
255 characters), validated by the API's schemas. A POST of metadata
sets the keys given and keeps the others; a PUT of the whole metadata (or
of a volume's ``metadata``) replaces it, removing the keys not given; a
PUT of one key sets that key. Changes are refused while the volume is in
a status of ``status.METADATA_FROZEN``.

From 3.15 (Cinder's ``ETAGS``), ``GET .../metadata`` carries an ``Etag``
of the metadata, and the PUTs honour ``If-Match``: 412 when the metadata
changed since that ETag was read. The check is made under the volume's
row lock, in the transaction of the change, so it is a compare-and-swap.
"""

import ast
import collections
import hashlib

from oslo_serialization import jsonutils

# Longest ``metadata`` list filter read; a filter names keys and values of
# at most 255 characters, and literal_eval's work grows with its input.
MAX_FILTER_LENGTH = 65535

Plan = collections.namedtuple('Plan', ['removed', 'added', 'changed',
                                       'result'])
Plan.__doc__ = """What a metadata change does: ``removed``, the keys to
delete (sorted); ``added`` and ``changed``, ``{key: value}`` of the new keys
and of the keys whose value changes; ``result``, the metadata after (by
key)."""


def by_key(metadata):
    """``metadata`` as a dict ordered by key (the order answers use)."""
    return dict(sorted(metadata.items()))


def plan(current, given, replace=False):
    """The change that sets ``given`` over ``current`` (both ``{key:
    value}``); with ``replace``, the keys of ``current`` not in ``given``
    are removed (Cinder's ``delete=True``). Keys are compared exactly:
    ``Type`` and ``type`` are two keys."""
    removed = sorted(set(current) - set(given)) if replace else []
    added = {k: v for k, v in given.items() if k not in current}
    changed = {k: v for k, v in given.items()
               if k in current and current[k] != v}
    result = dict(given) if replace else {**current, **given}
    return Plan(removed, added, changed, by_key(result))


def etag(metadata):
    """The ETag of ``metadata``: the MD5 of its canonical JSON (an opaque
    token: clients only send it back), as Cinder's MD5 of its answer."""
    data = jsonutils.dump_as_bytes({'metadata': metadata}, sort_keys=True)
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def etag_matches(metadata, if_match):
    """Whether ``If-Match`` (None: not given, or ``*``; else the ETags it
    lists) allows a change of ``metadata``."""
    return if_match is None or etag(metadata) in if_match


def parse_filter(text):
    """The ``metadata`` filter of the volume lists as ``{key: value}``.

    Cinder reads the parameter with ``ast.literal_eval``, and its clients
    (tempest, python-cinderclient) send ``str()`` of a dict:
    ``{'Type': 'work'}``. JSON is read too. Raises ValueError unless it is
    an object of string keys and values."""
    if len(text) > MAX_FILTER_LENGTH:
        raise ValueError('the metadata filter is longer than %d characters'
                         % MAX_FILTER_LENGTH)
    try:
        value = jsonutils.loads(text)
    except (ValueError, RecursionError):
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError,
                RecursionError):
            raise ValueError('the metadata filter is neither JSON nor a '
                             'Python dict literal')
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str)
            for k, v in value.items()):
        raise ValueError('the metadata filter must be an object of string '
                         'keys and values')
    return value
