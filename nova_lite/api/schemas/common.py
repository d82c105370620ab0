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

# A host connector, as os-brick's ``get_connector_properties`` builds it and
# Nova adds ``mountpoint`` and ``mode`` to. The fields block storage reads
# have their types and os-brick's lengths (a host name is at most 255
# characters, an iSCSI or NVMe qualified name at most 223 bytes, a world
# wide name 16 hex digits). Transport-specific keys of other connectors
# pass on, as scalars or lists of short strings, to the backend driver.
_SHORT = {'type': ['string', 'null'], 'maxLength': 255}
_WWN = {'type': ['array', 'null'], 'maxItems': 64,
        'items': {'type': 'string', 'pattern': '^[0-9a-fA-F:]{1,64}$'}}
_BOOL = {'type': ['boolean', 'null']}
CONNECTOR = {
    'type': 'object',
    # A field may be null: python-openstackclient sends every field it
    # knows, null where the user gave none.
    'properties': {
        'host': {'type': ['string', 'null'], 'minLength': 1,
                 'maxLength': 255},
        'ip': _SHORT,
        'initiator': {'type': ['string', 'null'], 'maxLength': 223},
        'nqn': {'type': ['string', 'null'], 'maxLength': 223},
        'nvme_hostid': {'type': ['string', 'null'], 'maxLength': 64},
        'uuid': {'type': ['string', 'null'], 'maxLength': 64},
        'system uuid': {'type': ['string', 'null'], 'maxLength': 64},
        'wwpns': _WWN,
        'wwnns': _WWN,
        'platform': _SHORT,
        'os_type': _SHORT,
        'multipath': _BOOL,
        'enforce_multipath': _BOOL,
        'do_local_attach': _BOOL,
        'nvme_native_multipath': _BOOL,
        'mountpoint': _SHORT,
        'mode': {'type': ['string', 'null'], 'enum': ['rw', 'ro', None]},
    },
    'propertyNames': {'maxLength': 64},
    'maxProperties': 64,
    'additionalProperties': {
        'anyOf': [
            {'type': ['boolean', 'integer', 'null']},
            {'type': 'string', 'maxLength': 255},
            {'type': 'array', 'maxItems': 64,
             'items': {'type': 'string', 'maxLength': 255}},
        ],
    },
}


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
