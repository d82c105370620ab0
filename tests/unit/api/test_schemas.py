"""Walk the route tables: every route declares complete, gap-free schemas.

For each (path, method) and for every microversion its handler serves:
a response schema for some success status; a request-body schema for POST
and PUT; a query schema for GET. Bands of one kind may not overlap. Every
schema is a valid JSON schema whose objects forbid extra keys.
"""

import jsonschema
import testtools

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api import routes
from nova_lite.api import validation


def _handlers(table):
    for path, methods in table.items():
        for method, handler in methods.items():
            if isinstance(handler, router.Action):
                for name, fn in handler.actions.items():
                    yield '%s#%s' % (path, name), method, fn
            else:
                yield path, method, handler


def _walk_objects(schema):
    if isinstance(schema, dict):
        if schema.get('type') == 'object' or 'properties' in schema:
            yield schema
        for value in schema.values():
            yield from _walk_objects(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _walk_objects(item)


class RouteSchemaTest(testtools.TestCase):
    TABLES = [(routes.COMPUTE_ROUTES, mv.COMPUTE),
              (routes.VOLUME_ROUTES, mv.VOLUME)]

    def _check(self, where, bands, versions, kind, need):
        covered = {}
        for v in versions:
            hits = [b for b in bands if b.covers(v)]
            if need and not hits:
                self.fail('%s: no %s schema at %s' % (where, kind, v))
            if kind != 'response' and len(hits) > 1:
                self.fail('%s: overlapping %s schemas at %s' % (
                    where, kind, v))
            covered[v] = hits
        return covered

    def test_every_route_has_schemas(self):
        checked = 0
        for table, service in self.TABLES:
            for path, method, handler in _handlers(table):
                spec = validation.spec_of(handler)
                versions = [v for v in service.versions
                            if spec.available(v)]
                where = '%s %s (%s)' % (method, path, handler.__name__)
                self.assertTrue(versions, '%s serves no version' % where)
                self._check(where, spec.response_bands, versions,
                            'response', need=True)
                for status in {b.status for b in spec.response_bands}:
                    self._check(where, [b for b in spec.response_bands
                                        if b.status == status],
                                versions, 'response %s' % status,
                                need=False)
                if method in ('POST', 'PUT'):
                    self._check(where, spec.request_bands, versions,
                                'request', need=True)
                if method == 'GET':
                    self._check(where, spec.query_bands, versions,
                                'query', need=True)
                checked += 1
        self.assertGreater(checked, 0)

    def test_schemas_are_valid_and_closed(self):
        for table, _service in self.TABLES:
            for path, method, handler in _handlers(table):
                spec = validation.spec_of(handler)
                for band in (spec.request_bands + spec.response_bands):
                    if band.schema is None:
                        continue
                    jsonschema.Draft202012Validator.check_schema(band.schema)
                    for obj in _walk_objects(band.schema):
                        if 'properties' in obj and isinstance(
                                obj['properties'], dict):
                            self.assertIn(
                                'additionalProperties', obj,
                                '%s %s: an object schema must say whether '
                                'extra keys are allowed' % (method, path))
                            self.assertNotIn(
                                'type', obj['properties'],
                                '%s %s: "type" inside properties (the '
                                'cinder mistake)' % (method, path))
