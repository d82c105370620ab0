"""A server's instance name (Nova's ``Instance.name``): what ``[DEFAULT]
instance_name_template`` makes of it, shown by the API as
``OS-EXT-SRV-ATTR:instance_name`` and given by the libvirt driver to its
domain."""

# What a template may name besides the row id (``instance-%08x``): the
# server's uuid, display name or host (``instance-%(uuid)s``).
_FIELDS = ('uuid', 'display_name', 'host', 'project_id')


def instance_name(template, instance):
    """``template % id`` (the row id), or ``template % {field: value}``
    for a template naming fields; a template that fits neither (or an
    instance with no row id) gives ``instance-<uuid>``."""
    row_id = getattr(instance, 'id', None)
    try:
        if row_id is None:
            raise TypeError('no row id')
        return template % row_id
    except TypeError:
        fields = {name: getattr(instance, name, None) for name in _FIELDS}
        fields['name'] = fields['display_name']
        try:
            return template % fields
        except (KeyError, TypeError, ValueError):
            return 'instance-%s' % instance.uuid
    except ValueError:
        return 'instance-%s' % instance.uuid
