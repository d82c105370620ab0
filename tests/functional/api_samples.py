"""Shared machinery of the api-ref sample tests.

The sample tests drive the API and compare each request and response body,
scrubbed of what changes from run to run (ids, times, URLs, paths), with the
JSON file under ``api-ref/source/samples/`` that the api-ref includes, so
the docs cannot drift from the code. Run them with
``NOVA_LITE_WRITE_SAMPLES=1`` to (re)write the files instead.
"""

import os
import re
import uuid

from oslo_serialization import jsonutils

SAMPLES = os.path.join(os.path.dirname(__file__), '..', '..',
                       'api-ref', 'source', 'samples')
WRITE = os.environ.get('NOVA_LITE_WRITE_SAMPLES') == '1'

_UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                   r'[0-9a-f]{12}')
_TIME = re.compile(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}')
SAMPLE_TIME = '2026-11-21T20:36:50.000000'
SAMPLE_BASE_URL = 'http://127.0.0.1:8774'
_NAMESPACE = uuid.UUID('6ba7b811-9dad-11d1-80b4-00c04fd430c8')


class Scrubber(object):
    """Turns a body into stable sample text.

    ``texts``: (literal, replacement) pairs applied first (URLs, paths);
    the ids of a run are replaced, in order of appearance, by
    ``fixed_uuids`` or else by stable uuid5 values; times by a fixed time;
    ``patterns``: (regex, replacement) pairs applied last.
    """

    def __init__(self, base_url, texts=(), patterns=(), fixed_uuids=None):
        self.uuids = {}
        self.texts = [(base_url, SAMPLE_BASE_URL)] + list(texts)
        self.patterns = list(patterns)
        self.fixed_uuids = fixed_uuids

    def prepare(self, data):
        """Hook for values no pattern can find (e.g. a password)."""
        return data

    def _stable_uuid(self, match):
        value = match.group(0)
        if value not in self.uuids:
            n = len(self.uuids)
            self.uuids[value] = (
                self.fixed_uuids[n] if self.fixed_uuids else
                str(uuid.uuid5(_NAMESPACE, 'nova-lite-sample-%d' % n)))
        return self.uuids[value]

    def __call__(self, data):
        text = jsonutils.dumps(self.prepare(data), sort_keys=True, indent=4)
        for literal, replacement in self.texts:
            text = text.replace(literal, replacement)
        text = _UUID.sub(self._stable_uuid, text)
        text = _TIME.sub(SAMPLE_TIME, text)
        for pattern, replacement in self.patterns:
            text = pattern.sub(replacement, text)
        return text + '\n'


class SampleAssertions(object):
    """Mixin for a TestCase that sets ``self.scrub`` to a Scrubber."""

    def _sample(self, folder, name, data):
        text = self.scrub(data)
        path = os.path.join(SAMPLES, folder, name)
        if WRITE:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(text)
            return
        with open(path) as f:
            self.assertEqual(f.read(), text,
                             '%s changed: run this test with '
                             'NOVA_LITE_WRITE_SAMPLES=1' % path)
