"""/v2.1/os-server-external-events: other OpenStack services tell the
compute service about servers (Nova's API, for the service role or an
administrator): Cinder's ``volume-extended`` after it extended an attached
volume, ``volume-reimaged``...

Each event is answered with its own ``code`` (200 accepted and sent to the
server's host, 400 a ``volume-extended`` without its volume id as
``tag``, 404 no such server, 422 a server on no host); the response is 200
when every event was accepted, else 207 (Multi-Status), as Nova's has
been since it stopped answering 404 when none was accepted. The rules
are ``nova_lite.compute.external_events``'s.
"""

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import server_external_events as schema
from nova_lite.api import validation
from nova_lite.compute import api as compute_api
from nova_lite.compute import external_events
from nova_lite.policies import server_external_events as policies


def _serialize(code, event):
    view = {'name': event['name'], 'server_uuid': event['server_uuid'],
            'status': event['status'], 'code': code}
    if event.get('tag') is not None:
        view['tag'] = event['tag']
    return view


@validation.request_body(schema.CREATE, mv.COMPUTE_MIN,
                         mv.before(mv.VOLUME_EXTENDED_EVENT))
@validation.request_body(schema.CREATE_V251, mv.VOLUME_EXTENDED_EVENT,
                         mv.before(mv.POWER_UPDATE_EVENT))
@validation.request_body(schema.CREATE_V276, mv.POWER_UPDATE_EVENT,
                         mv.before(mv.ACCELERATOR_EVENT))
@validation.request_body(schema.CREATE_V282, mv.ACCELERATOR_EVENT,
                         mv.before(mv.VOLUME_REIMAGED_EVENT))
@validation.request_body(schema.CREATE_V293, mv.VOLUME_REIMAGED_EVENT)
@validation.response(200, schema.CREATE_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.VOLUME_EXTENDED_EVENT))
@validation.response(200, schema.CREATE_RESPONSE_V251,
                     mv.VOLUME_EXTENDED_EVENT,
                     mv.before(mv.POWER_UPDATE_EVENT))
@validation.response(200, schema.CREATE_RESPONSE_V276,
                     mv.POWER_UPDATE_EVENT, mv.before(mv.ACCELERATOR_EVENT))
@validation.response(200, schema.CREATE_RESPONSE_V282,
                     mv.ACCELERATOR_EVENT,
                     mv.before(mv.VOLUME_REIMAGED_EVENT))
@validation.response(200, schema.CREATE_RESPONSE_V293,
                     mv.VOLUME_REIMAGED_EVENT)
@validation.response(207, schema.CREATE_RESPONSE, mv.COMPUTE_MIN,
                     mv.before(mv.VOLUME_EXTENDED_EVENT))
@validation.response(207, schema.CREATE_RESPONSE_V251,
                     mv.VOLUME_EXTENDED_EVENT,
                     mv.before(mv.POWER_UPDATE_EVENT))
@validation.response(207, schema.CREATE_RESPONSE_V276,
                     mv.POWER_UPDATE_EVENT, mv.before(mv.ACCELERATOR_EVENT))
@validation.response(207, schema.CREATE_RESPONSE_V282,
                     mv.ACCELERATOR_EVENT,
                     mv.before(mv.VOLUME_REIMAGED_EVENT))
@validation.response(207, schema.CREATE_RESPONSE_V293,
                     mv.VOLUME_REIMAGED_EVENT)
def create_external_events(req, body):
    ctxt = req.environ['nova_lite.context']
    ctxt.can(policies.CREATE, target={})
    api = compute_api.get_api(req.environ['nova_lite.conf'])
    results = api.events.create(ctxt, body['events'])
    view = {'events': [_serialize(code, event) for code, event in results]}
    if all(code == external_events.ACCEPTED for code, _event in results):
        return view
    return router.reply(207, view)
