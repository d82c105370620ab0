"""Links of compute resources, as Nova builds them.

``self`` is the versioned URL (``<base>/v2.1[/<project_id>]/servers/<id>``),
``bookmark`` the unversioned one (``<base>[/<project_id>]/servers/<id>``);
the project segment appears when the request URL had it. ``[api]
compute_link_prefix`` replaces the scheme and host seen in the request.
"""


def _base(req):
    prefix = req.environ['nova_lite.conf'].api.compute_link_prefix
    return prefix.rstrip('/') if prefix else req.host_url


def collection_url(req, collection):
    """``<base>/v2.1[/<project_id>]/<collection>``."""
    return '%s%s/%s' % (_base(req), req.script_name, collection)


def resource_links(req, collection, resource_id):
    script = req.script_name
    parts = script.strip('/').split('/', 1)
    unversioned = '/' + parts[1] if len(parts) > 1 else ''
    base = _base(req)
    return [
        {'rel': 'self', 'href': '%s%s/%s/%s' % (
            base, script, collection, resource_id)},
        {'rel': 'bookmark', 'href': '%s%s/%s/%s' % (
            base, unversioned, collection, resource_id)},
    ]


def bookmark(req, collection, resource_id):
    return resource_links(req, collection, resource_id)[1]
