"""Version discovery documents: ``/``, ``/v2.1``, ``/v3`` and ``/volume``.

These are not under microversion control and need no token, as in Nova; they
advertise each sub-API's ``min_version``/``version`` so that keystoneauth,
openstacksdk and the clients negotiate microversions.
"""

from oslo_serialization import jsonutils
import webob
import webob.dec

from nova_lite.api import microversion

COMPUTE_UPDATED = '2013-07-23T11:33:21Z'
VOLUME_UPDATED = '2023-08-31T00:00:00Z'
DOCS_URL = 'https://docs.openstack.org/'


def _base_url(req, conf):
    prefix = conf.api.compute_link_prefix
    return (prefix.rstrip('/') if prefix else req.host_url)


def compute_version_entry(base):
    """The one compute version nova_lite serves, v2.1.

    Nova also lists ``v2.0`` (DEPRECATED), its legacy v2 compatibility
    mode (the v2.1 code without microversions, with relaxed validation).
    nova_lite does not serve it, so it does not advertise it: ``/v2`` is
    an unversioned path like any other (300, pointing at ``/v2.1``), and
    every client in use (novaclient, openstacksdk, tempest) speaks v2.1.
    """
    return {
        'id': 'v2.1',
        'status': 'CURRENT',
        'version': str(microversion.COMPUTE.max),
        'min_version': str(microversion.COMPUTE.min),
        'updated': COMPUTE_UPDATED,
        'links': [{'rel': 'self', 'href': base + '/v2.1/'}],
    }


def compute_version_document(base):
    v21 = dict(compute_version_entry(base))
    v21['links'] = [
        {'rel': 'self', 'href': base + '/v2.1/'},
        {'rel': 'describedby', 'type': 'text/html', 'href': DOCS_URL},
    ]
    v21['media-types'] = [{
        'base': 'application/json',
        'type': 'application/vnd.openstack.compute+json;version=2.1'}]
    return {'version': v21}


def volume_versions(base, prefix=''):
    """Cinder's version list; ``prefix``: the path the block-storage API
    is mounted at (``''`` or ``'/volume'``)."""
    return {'versions': [{
        'id': 'v3.0',
        'status': 'CURRENT',
        'version': str(microversion.VOLUME.max),
        'min_version': str(microversion.VOLUME.min),
        'updated': VOLUME_UPDATED,
        'links': [
            {'rel': 'describedby', 'type': 'text/html', 'href': DOCS_URL},
            {'rel': 'self', 'href': base + prefix + '/v3/'},
        ],
        'media-types': [{
            'base': 'application/json',
            'type': 'application/vnd.openstack.volume+json;version=3'}],
    }]}


def _json(status, body):
    resp = webob.Response(status=status, content_type='application/json',
                          charset='UTF-8')
    resp.body = jsonutils.dump_as_bytes(body)
    return resp


class RootApp(object):
    """``GET /``: Nova's version list (the compute API owns port 8774)."""

    def __init__(self, conf):
        self.conf = conf

    @webob.dec.wsgify
    def __call__(self, req):
        base = _base_url(req, self.conf)
        if req.path_info.strip('/'):
            # Nova answers any other unversioned path with 300 choices.
            v21 = compute_version_entry(base)
            return _json(300, {'choices': [{
                'id': v21['id'], 'status': v21['status'],
                'links': [{'rel': 'self',
                           'href': base + '/v2.1' + req.path_info}],
                'media-types': compute_version_document(
                    base)['version']['media-types']}]})
        return _json(200, {'versions': [compute_version_entry(base)]})


def compute_root(conf):
    @webob.dec.wsgify
    def app(req):
        return _json(200, compute_version_document(_base_url(req, conf)))
    return app


def volume_root(conf):
    @webob.dec.wsgify
    def app(req):
        return _json(200, volume_versions(_base_url(req, conf)))
    return app


def volume_choices(conf, prefix):
    """Cinder's root: the version list with 300 Multiple Choices, at
    ``prefix`` (``/volume``, where devstack and the keystone tier register
    the block-storage endpoint) and any unversioned path below it."""
    @webob.dec.wsgify
    def app(req):
        return _json(300, volume_versions(_base_url(req, conf), prefix))
    return app
