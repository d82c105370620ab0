"""``/identity``: identity version discovery only.

nova_lite has no identity service (noauth2, or a real Keystone with
``auth_strategy = keystone``). Some clients still insist on an identity v3
proxy before doing anything else: python-openstackclient's ``openstack
volume list`` builds one (for ``--project``) and reads its version document
even when it makes no identity call. So that such clients work against
``nova-lite-all``, ``/identity`` and ``/identity/v3`` answer with a v3
version document, and every other identity path is 404. The
``clouds.yaml`` that nova-lite-all writes points
``identity_endpoint_override`` here.
"""

from oslo_serialization import jsonutils
import webob
import webob.dec

IDENTITY_UPDATED = '2020-04-07T00:00:00Z'


def version_document(base):
    return {'version': {
        'id': 'v3.14',
        'status': 'stable',
        'updated': IDENTITY_UPDATED,
        'links': [{'rel': 'self', 'href': base + '/identity/v3/'}],
        'media-types': [{
            'base': 'application/json',
            'type': 'application/vnd.openstack.identity-v3+json'}],
    }}


def identity_app(conf):
    @webob.dec.wsgify
    def app(req):
        resp = webob.Response(content_type='application/json',
                              charset='UTF-8')
        if req.path_info.strip('/') in ('', 'v3'):
            resp.body = jsonutils.dump_as_bytes(
                version_document(req.host_url))
            return resp
        resp.status = 404
        resp.body = jsonutils.dump_as_bytes({'itemNotFound': {
            'code': 404,
            'message': 'nova_lite has no identity service: only identity '
                       'version discovery is served here.'}})
        return resp
    return app
