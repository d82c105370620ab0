"""The fuzz tier: hostile requests on every route, no 5xx, no broken state.

For every route x method x microversion band of both route tables, bodies
and query strings are generated from the band's own JSON schema
(hypothesis-jsonschema) and then, often, mutated: a leaf replaced by a
deep nesting, an integer thousands of digits long, a lone surrogate, a
list or object where a string goes, a string of thousands of characters;
a required key dropped; a body that is not JSON. Path parameters are real
ids, unknown ids or junk (``%FF``, very long, odd Unicode); microversion
headers are valid, out of range or junk; identity headers are forged.

Every response must be below 500 and, when 4xx, in the API's fault format
(``{"<name>": {"code": <status>, "message": "..."}}``). After each run the
state must be sound: no server or mapping task left running, every
volume's status agrees with its attachments, every mapping's attachment
exists, no available volume is exported to a host by its backend
(``tests/fuzz/invariants.py``).

Bounded for CI: ``NOVA_LITE_FUZZ_EXAMPLES`` requests per test (default
2000, five tests: about a minute); runs are derandomized (the same
requests every time) unless ``NOVA_LITE_FUZZ_SEED`` picks another
sequence. ``NOVA_LITE_FUZZ_LOG=<file>`` writes every request and its
status.
"""

import os

import hypothesis
from hypothesis import strategies as st
import hypothesis_jsonschema
from oslo_serialization import jsonutils
from oslo_utils import uuidutils
import webob

from nova_lite.api import microversion
from nova_lite.api import router as nl_router
from nova_lite.api import routes
from nova_lite.api import validation
from tests.functional.compute import base
from tests.fuzz import invariants

EXAMPLES = int(os.environ.get('NOVA_LITE_FUZZ_EXAMPLES', '2000'))
SEED = os.environ.get('NOVA_LITE_FUZZ_SEED')


def _settings():
    kwargs = dict(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(hypothesis.HealthCheck),
                  phases=[hypothesis.Phase.generate])
    if SEED is None:
        kwargs['derandomize'] = True
    return hypothesis.settings(**kwargs)


# os-reset_status is the administrator's override: it writes whatever
# status it is told, so the invariants after a run cannot hold with it.
UNCHECKED_ACTIONS = {'os-reset_status'}


def _operations(table, prefix):
    """``(prefix + path, method, handler)`` of a route table, action
    handlers one by one (their body names the action)."""
    ops = []
    for path, methods in table.items():
        for method, handler in methods.items():
            if isinstance(handler, nl_router.Action):
                for name, action in sorted(handler.actions.items()):
                    if name not in UNCHECKED_ACTIONS:
                        ops.append((prefix + path, method, action, name))
            else:
                ops.append((prefix + path, method, handler, None))
    return ops


COMPUTE_OPS = _operations(routes.COMPUTE_ROUTES, '/v2.1')
VOLUME_OPS = _operations(routes.VOLUME_ROUTES, '/v3')


def _names(schema, found):
    """Every property name a schema declares, at any depth."""
    if isinstance(schema, dict):
        found.update(schema.get('properties', {}))
        for value in schema.values():
            _names(value, found)
    elif isinstance(schema, list):
        for value in schema:
            _names(value, found)
    return found


# Field names any request schema knows: a mutation adds one, with a
# hostile value, where a schema leaves an object open.
VOCABULARY = sorted(_names(
    [band.schema for _p, _m, handler, _a in COMPUTE_OPS + VOLUME_OPS
     for band in validation.spec_of(handler).request_bands], set()))
# Names that reach a database column or a file name: drawn more often.
COMMON_NAMES = ['host', 'name', 'mode', 'status', 'device', 'tag',
                'description', 'mountpoint']

_SCHEMA_STRATEGIES = {}


def _from_schema(schema):
    key = id(schema)
    if key not in _SCHEMA_STRATEGIES:
        try:
            strategy = hypothesis_jsonschema.from_schema(schema)
        except Exception:           # a schema feature it cannot generate
            strategy = st.none()
        _SCHEMA_STRATEGIES[key] = strategy
    return _SCHEMA_STRATEGIES[key]


class Raw(object):
    """JSON text put into a body as is (what json.dumps cannot write: an
    integer of thousands of digits, nesting deeper than its recursion)."""

    def __init__(self, text):
        self.text = text


def _dump(body):
    """The JSON bytes of ``body``, ``Raw`` leaves written as they are."""
    raws = []

    def swap(value):
        if isinstance(value, Raw):
            raws.append(value.text)
            return '\x00raw%d\x00' % (len(raws) - 1)
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value
    text = jsonutils.dumps(swap(body))
    for index, raw in enumerate(raws):
        text = text.replace('"\\u0000raw%d\\u0000"' % index, raw)
    return text.encode('utf-8', 'surrogatepass')


# Leaves a mutation puts in a body (``rnd.choice``: hypothesis draws from
# the ends of a list far more often than from its middle; a Random it
# seeds draws uniformly).
HOSTILE_LEAVES = [
    '\ud800', Raw('9' * 4400), Raw('[' * 3000 + ']' * 3000), 2 ** 63,
    -2 ** 63 - 1, 'x' * 70000, [[[[[[[[[[[]]]]]]]]]]],
    {'a': {'b': {'c': None}}}, 1.5e308, True, None, ['x'], {'k': 'v'}, 7,
    '', -1, 0, 'null', '\u00e9\u4e2d', '\x00', ' ',
]
JUNK_PATH = ['%FF', '%FF%FE', '%00', '..', '%2e%2e', 'a' * 5000,
             '\u00e9\u4e2d', '-1', '0', '9' * 4400, 'null', '{}', ' ',
             '%ud800', 'x;y', '%20']
JUNK_VERSIONS = ['latest', '2.999', '3.999', '1.0', '2.1.1', 'x', '9' * 4400,
                 '', '2.', '.1']
JUNK_QUERIES = ['name=%ff', 'limit=' + '9' * 4400, 'offset=-1',
                'limit=99999999999999999999', 'marker=%FF', 'sort=a:b:c',
                'all_tenants=%00', '&&&=', 'offset=9223372036854775808',
                'usage=%FF', 'tenant_id=%00']
JUNK_BODIES = [b'{', b'\xff\xfe', b'[' * 5000, b'', b'{"a": NaN}',
               b'{"a": 1, "a": 2}']
FORGED_HEADERS = [{'X-Service-Roles': 'service'}, {'X-Roles': 'admin'},
                  {'X-Service-Token': 'service:service'},
                  {'Content-Type': 'text/plain'}]


def _mutate(rnd, body):
    """A hostile variant of a valid ``body``."""
    kind = rnd.choice(['leaf', 'add', 'confuse', 'drop', 'deep',
                       'wrong_root', 'same'])
    if kind == 'same':
        return body
    if kind == 'deep':
        depth = rnd.randint(500, 3000)
        return {'x': Raw('[' * depth + '1' + ']' * depth)}
    if kind == 'wrong_root':
        return rnd.choice([[], 'x', 7, None, [body]])
    # Walk down to a random container and change one of its items.
    node = body
    path = []
    while isinstance(node, (dict, list)) and node:
        keys = list(node) if isinstance(node, dict) else list(
            range(len(node)))
        key = rnd.choice(keys)
        path.append((node, key))
        if not isinstance(node[key], (dict, list)) or not node[key] or \
                rnd.random() < 0.3:
            break
        node = node[key]
    if not path:
        return rnd.choice(HOSTILE_LEAVES)
    parent, key = path[-1]
    target = parent[key] if isinstance(parent[key], dict) else parent
    if kind == 'add' and isinstance(target, dict):
        names = COMMON_NAMES if rnd.random() < 0.6 else VOCABULARY
        target[rnd.choice(names)] = rnd.choice(HOSTILE_LEAVES)
        return body
    if kind == 'confuse' and isinstance(target, dict):
        # Every name that usually holds a string, as a list or an object
        # (where a schema leaves an object open, nothing else refuses it).
        for name in COMMON_NAMES:
            target[name] = rnd.choice([['x'], {'k': 'v'}, [], {}])
        return body
    if kind == 'drop' and isinstance(parent, dict):
        del parent[key]
    else:
        parent[key] = rnd.choice(HOSTILE_LEAVES)
    return body


def _band_version(rnd, band, versions):
    """A microversion inside ``band`` (or junk, sometimes)."""
    if rnd.random() < 0.1:
        return rnd.choice(JUNK_VERSIONS)
    inside = [v for v in versions.versions
              if band is None or band.covers(v)]
    return '%d.%d' % rnd.choice(inside or versions.versions)


class _Fuzz(base.TestCase):
    COMPUTE_HOSTS = ['compute1']
    CONF = {'quota.instances': 25, 'quota.volumes': 30,
            'api.response_validation': 'ignore'}

    def setUp(self):
        super().setUp()
        self.sent = 0
        self.server_id = self.create_server()
        self.volume_id = self.create_volume()
        self.spare_volume_id = self.create_volume()
        resp = self.volume_api().post('/v3/attachments', body={
            'attachment': {'volume_uuid': self.create_volume(),
                           'instance_uuid': self.server_id}})
        self.assertEqual(200, resp.status, resp.text)
        self.attachment_id = resp.body['attachment']['id']

    # -- one request --------------------------------------------------------
    def _param(self, rnd, name):
        real = {'server_id': self.server_id, 'volume_id': self.volume_id,
                'attachment_id': self.attachment_id, 'flavor_id': '1',
                'tenant_id': 'demo', 'target_project_id': 'demo',
                'class_name': 'default', 'type_id': 'default',
                'hostname': 'file', 'key': 'multiattach',
                'request_id': 'req-0', 'host_name': 'compute1@file'}.get(
                    name, 'x')
        roll = rnd.random()
        if roll < 0.75:
            return real
        if roll < 0.85:
            return str(uuidutils.generate_uuid())
        return rnd.choice(JUNK_PATH)

    def _tidy(self, rnd, value):
        """``value`` with its UUIDs often replaced by ids that exist (a
        request that names nothing real stops at its first lookup) and
        without lone surrogates (generated strings have many, and the
        API refuses them first: the mutations put them back, rarely)."""
        if isinstance(value, dict):
            return {self._tidy(rnd, k): self._tidy(rnd, v)
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self._tidy(rnd, v) for v in value]
        if isinstance(value, str):
            value = ''.join(c for c in value
                            if not '\ud800' <= c <= '\udfff')
            if uuidutils.is_uuid_like(value) and rnd.random() < 0.6:
                return rnd.choice([self.server_id, self.volume_id,
                                   self.attachment_id, self.spare_volume_id])
        return value

    def _request(self, data, ops, versions, header):
        # Seeded by hypothesis (so a run replays) but uniform: its own
        # draws lean to small values, which would make "rare" choices
        # common.
        rnd = data.draw(st.randoms(use_true_random=True))
        path, method, handler, action = rnd.choice(ops)
        spec = validation.spec_of(handler)
        for name in [p[1:-1] for p in path.split('/') if
                     p.startswith('{')]:
            path = path.replace('{%s}' % name, self._param(rnd, name), 1)
        if path.startswith('/v3') and rnd.random() < 0.5:
            path = path.replace('/v3', '/v3/demo', 1)
        bands = spec.request_bands or spec.query_bands
        band = rnd.choice(bands) if bands else None
        version = _band_version(rnd, band, versions)
        headers = {'X-Auth-Token': rnd.choice(
            ['demo:demo', 'demo:demo', 'admin:admin', 'other:other']),
            'OpenStack-API-Version': '%s %s' % (header, version)}
        if rnd.random() < 0.1:
            headers.update(rnd.choice(FORGED_HEADERS))
        query = ''
        if method == 'GET' and spec.query_bands:
            qband = rnd.choice(spec.query_bands)
            params = data.draw(_from_schema(qband.schema))
            if isinstance(params, dict):
                pairs = [(k, v) for k, values in params.items()
                         for v in (values if isinstance(values, list)
                                   else [values])]
                query = '&'.join('%s=%s' % (k, v) for k, v in pairs
                                 if isinstance(v, str))
            if rnd.random() < 0.25:
                query = rnd.choice(JUNK_QUERIES)
        body = None
        if method in ('POST', 'PUT'):
            body = {}
            if spec.request_bands:
                rband = band if band in spec.request_bands else \
                    spec.request_bands[0]
                body = self._tidy(rnd, data.draw(_from_schema(rband.schema)))
                if rnd.random() < 0.6:
                    body = _mutate(rnd, body)
        raw = None
        if body is not None:
            raw = rnd.choice(JUNK_BODIES) if rnd.random() < 0.05 else \
                _dump(body)
        return self._send(method, path, query, headers, raw)

    def _send(self, method, path, query, headers, raw):
        req = webob.Request.blank('/')
        req.method = method
        req.environ['PATH_INFO'] = path.encode('utf-8', 'surrogatepass') \
            .decode('latin-1')
        req.environ['QUERY_STRING'] = query.encode(
            'utf-8', 'surrogatepass').decode('latin-1')
        for key, value in headers.items():
            req.headers[key] = value.encode('utf-8').decode('latin-1')
        if raw is not None:
            req.body = raw
            req.headers.setdefault('Content-Type', 'application/json')
        resp = req.get_response(self.sys.app)
        self.sent += 1
        if os.environ.get('NOVA_LITE_FUZZ_LOG'):
            with open(os.environ['NOVA_LITE_FUZZ_LOG'], 'a') as log:
                log.write('%s %s %s %s %r\n' % (
                    resp.status_int, method, path[:120],
                    headers.get('OpenStack-API-Version', '')[:30],
                    (raw or b'')[:300]))
        return method, path, query, resp

    def _check(self, sent):
        method, path, query, resp = sent
        where = '%s %s?%s -> %s %s' % (method, path[:200], query[:200],
                                       resp.status, resp.body[:300])
        self.assertLess(resp.status_int, 500, where)
        if resp.status_int >= 400:
            fault = jsonutils.loads(resp.body)
            self.assertIsInstance(fault, dict, where)
            self.assertEqual(1, len(fault), where)
            (detail,) = fault.values()
            self.assertEqual(resp.status_int, detail['code'], where)
            self.assertIsInstance(detail['message'], str, where)

    def _run(self, ops, versions, header):
        @_settings()
        @hypothesis.given(st.data())
        def one(data):
            self._check(self._request(data, ops, versions, header))
        if SEED is not None:
            one = hypothesis.seed(int(SEED))(one)
        one()
        print("fuzz requests sent: %d" % self.sent)
        self.assertGreaterEqual(self.sent, min(EXAMPLES, 1))
        invariants.assert_settled(self)


def _split(ops, parts, index):
    return [op for i, op in enumerate(ops) if i % parts == index]


class ComputeFuzzTest(_Fuzz):
    def test_compute_routes_first_half(self):
        self._run(_split(COMPUTE_OPS, 2, 0), microversion.COMPUTE, 'compute')

    def test_compute_routes_second_half(self):
        self._run(_split(COMPUTE_OPS, 2, 1), microversion.COMPUTE, 'compute')


class VolumeFuzzTest(_Fuzz):
    def test_volume_routes_first_third(self):
        self._run(_split(VOLUME_OPS, 3, 0), microversion.VOLUME, 'volume')

    def test_volume_routes_second_third(self):
        self._run(_split(VOLUME_OPS, 3, 1), microversion.VOLUME, 'volume')

    def test_volume_routes_last_third(self):
        self._run(_split(VOLUME_OPS, 3, 2), microversion.VOLUME, 'volume')
