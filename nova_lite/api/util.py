"""Small helpers shared by the API handlers: times as the views show
them, and the paging of lists (``limit``, ``marker``, ``offset``, sort)
for both APIs."""

from nova_lite import exception
from nova_lite.i18n import _


# -- paging ------------------------------------------------------------------
# Both APIs page in SQL: a list request reads one page (plus one row, to
# know whether there is another), whatever the number of rows before it.

def limit_param(req):
    """The page size: ``limit`` capped at ``[api] max_limit`` (the query
    schemas have checked it is a non-negative integer)."""
    max_limit = req.environ['nova_lite.conf'].api.max_limit
    if 'limit' not in req.GET:
        return max_limit
    return min(int(req.GET['limit']), max_limit)


def page_params(req, default_sort_dir='desc'):
    """limit, marker, offset, sort key and direction of a Cinder-style
    list request."""
    get = req.GET
    offset = int(get['offset']) if 'offset' in get else None
    sort_key, sort_dir = 'created_at', default_sort_dir
    if get.get('sort'):
        first = get['sort'].split(',')[0]
        sort_key, _sep, direction = first.partition(':')
        sort_dir = direction or default_sort_dir
    else:
        sort_key = get.get('sort_key', sort_key)
        sort_dir = get.get('sort_dir', sort_dir)
    if sort_dir not in ('asc', 'desc'):
        raise exception.InvalidInput(
            reason=_('Unknown sort direction, must be desc or asc'))
    return {'limit': limit_param(req), 'marker': get.get('marker'),
            'offset': offset, 'sort_key': sort_key, 'sort_dir': sort_dir}


def next_links(req, items, limit, explicit):
    """Cinder's ``<collection>_links`` when a page is full: the same URL
    (``/volumes`` or ``/volumes/detail``) with the last item as marker."""
    if not explicit or not items or len(items) < limit:
        return None
    params = dict(req.GET)
    params['marker'] = items[-1].id
    query = '&'.join('%s=%s' % kv for kv in sorted(params.items()))
    return [{'rel': 'next',
             'href': '%s?%s' % (req.path_url, query)}]
