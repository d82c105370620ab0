"""POST /v2.1/servers/{server_id}/action: os-stop, os-start, pause,
unpause, lock and unlock. Each returns 202 with no body; the state guards
(409) and the lock (409) are checked before anything is cast to the compute
host. Lock takes an optional ``locked_reason`` from 2.73.
"""

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.handlers import servers
from nova_lite.api.schemas import servers as schema
from nova_lite.api import validation
from nova_lite.policies import lock_server as lock_policies
from nova_lite.policies import pause_server as pause_policies
from nova_lite.policies import servers as server_policies

LOCKED_REASON = '2.73'


def _run(req, server_id, rule, method_name):
    ctxt = req.environ['nova_lite.context']
    api, instance = servers.get_instance(req, ctxt, server_id, rule)
    getattr(api, method_name)(ctxt, instance)
    return router.reply(202)


@validation.request_body(schema.STOP, '2.1')
@validation.response(202, None, '2.1')
def stop_server(req, server_id, body):
    return _run(req, server_id, server_policies.STOP, 'stop')


@validation.request_body(schema.START, '2.1')
@validation.response(202, None, '2.1')
def start_server(req, server_id, body):
    return _run(req, server_id, server_policies.START, 'start')


@validation.request_body(schema.PAUSE, '2.1')
@validation.response(202, None, '2.1')
def pause_server(req, server_id, body):
    return _run(req, server_id, pause_policies.PAUSE, 'pause')


@validation.request_body(schema.UNPAUSE, '2.1')
@validation.response(202, None, '2.1')
def unpause_server(req, server_id, body):
    return _run(req, server_id, pause_policies.UNPAUSE, 'unpause')


@validation.request_body(schema.LOCK, '2.1', '2.72')
@validation.request_body(schema.LOCK_V273, '2.73')
@validation.response(202, None, '2.1')
def lock_server(req, server_id, body):
    ctxt = req.environ['nova_lite.context']
    api, instance = servers.get_instance(req, ctxt, server_id,
                                         lock_policies.LOCK)
    reason = None
    if mv.want(req).matches(LOCKED_REASON) and body['lock'] is not None:
        reason = body['lock'].get('locked_reason')
    api.lock(ctxt, instance, reason=reason)
    return router.reply(202)


@validation.request_body(schema.UNLOCK, '2.1')
@validation.response(202, None, '2.1')
def unlock_server(req, server_id, body):
    ctxt = req.environ['nova_lite.context']
    api, instance = servers.get_instance(req, ctxt, server_id,
                                         lock_policies.UNLOCK)
    if not api.is_expected_locked_by(ctxt, instance):
        ctxt.can(lock_policies.UNLOCK_OVERRIDE,
                 target={'project_id': instance.project_id})
    api.unlock(ctxt, instance)
    return router.reply(202)


ACTIONS = {
    'os-stop': stop_server,
    'os-start': start_server,
    'pause': pause_server,
    'unpause': unpause_server,
    'lock': lock_server,
    'unlock': unlock_server,
}
