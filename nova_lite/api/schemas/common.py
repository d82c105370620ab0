"""Schema fragments shared by the resources' schema modules."""

import copy

UUID = {'type': 'string', 'format': 'uuid'}
NULLABLE_STRING = {'type': ['string', 'null']}
DATETIME = {'type': 'string'}
NULLABLE_DATETIME = {'type': ['string', 'null']}

# Query strings are validated as a dict of lists (a parameter may repeat).
# An integer parameter has at most 18 ASCII digits: below 2**63, so that
# every database takes it as an offset and int() never sees a digit string
# thousands long (``\d`` would also match other scripts' digits).
NON_NEGATIVE_INT_PARAM = {
    'type': 'array',
    'items': {'type': 'string', 'pattern': r'^[0-9]{1,18}$'},
}
STRING_PARAM = {'type': 'array', 'items': {'type': 'string'}}


def query(properties, strict=True):
    """A query-string schema over the given parameters."""
    return {
        'type': 'object',
        'properties': properties,
        'additionalProperties': not strict,
    }


def extend(schema, path, **properties):
    """A deep copy of ``schema`` with ``properties`` added at ``path``
    (a list of keys down ``properties``), the way versioned schemas grow
    one change at a time."""
    new = copy.deepcopy(schema)
    node = new
    for key in path:
        node = node['properties'][key]
    node['properties'].update(copy.deepcopy(properties))
    return new


def require(schema, path, *names):
    new = copy.deepcopy(schema)
    node = new
    for key in path:
        node = node['properties'][key]
    node['required'] = sorted(set(node.get('required', [])) | set(names))
    return new


def remove(schema, path, *names):
    new = copy.deepcopy(schema)
    node = new
    for key in path:
        node = node['properties'][key]
    for name in names:
        node['properties'].pop(name, None)
    node['required'] = [r for r in node.get('required', [])
                        if r not in names]
    return new
