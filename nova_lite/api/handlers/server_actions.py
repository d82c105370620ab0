"""POST /v2.1/servers/{server_id}/action: os-stop, os-start, pause,
unpause, lock, unlock, shelve, shelveOffload, unshelve, restore and
forceDelete. Each returns 202 with no body; the state guards (409) and the
lock (409) are checked before anything is cast to the compute host or the
conductor. Lock takes an optional ``locked_reason`` from 2.73; unshelve an
availability zone from 2.77 and a host (administrators) from 2.91.
"""

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.handlers import servers
from nova_lite.api.schemas import servers as schema
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.policies import deferred_delete as deferred_delete_policies
from nova_lite.policies import lock_server as lock_policies
from nova_lite.policies import pause_server as pause_policies
from nova_lite.policies import servers as server_policies
from nova_lite.policies import shelve as shelve_policies


def _run(req, server_id, rule, operation):
    """Check ``rule`` on the server and run ``operation(api)`` (the
    compute API's method) on it."""
    ctxt = req.environ['nova_lite.context']
    api, instance = servers.get_instance(req, ctxt, server_id, rule)
    operation(api)(ctxt, instance)
    return router.reply(202)


@validation.request_body(schema.STOP, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def stop_server(req, server_id, body):
    return _run(req, server_id, server_policies.STOP, lambda api: api.stop)


@validation.request_body(schema.START, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def start_server(req, server_id, body):
    return _run(req, server_id, server_policies.START, lambda api: api.start)


@validation.request_body(schema.PAUSE, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def pause_server(req, server_id, body):
    return _run(req, server_id, pause_policies.PAUSE, lambda api: api.pause)


@validation.request_body(schema.UNPAUSE, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def unpause_server(req, server_id, body):
    return _run(req, server_id, pause_policies.UNPAUSE,
                lambda api: api.unpause)


@validation.request_body(schema.LOCK, mv.COMPUTE_MIN,
                         mv.before(mv.LOCKED_REASON))
@validation.request_body(schema.LOCK_V273, mv.LOCKED_REASON)
@validation.response(202, None, mv.COMPUTE_MIN)
def lock_server(req, server_id, body):
    ctxt = req.environ['nova_lite.context']
    api, instance = servers.get_instance(req, ctxt, server_id,
                                         lock_policies.LOCK)
    reason = None
    if mv.want(req).matches(mv.LOCKED_REASON) and body['lock'] is not None:
        reason = body['lock'].get('locked_reason')
    api.lock(ctxt, instance, reason=reason)
    return router.reply(202)


@validation.request_body(schema.UNLOCK, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def unlock_server(req, server_id, body):
    ctxt = req.environ['nova_lite.context']
    api, instance = servers.get_instance(req, ctxt, server_id,
                                         lock_policies.UNLOCK)
    if not api.is_expected_locked_by(ctxt, instance):
        ctxt.can(lock_policies.UNLOCK_OVERRIDE,
                 target={'project_id': instance.project_id})
    api.unlock(ctxt, instance)
    return router.reply(202)


@validation.request_body(schema.SHELVE, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def shelve_server(req, server_id, body):
    return _run(req, server_id, shelve_policies.SHELVE,
                lambda api: api.shelving.shelve)


@validation.request_body(schema.SHELVE_OFFLOAD, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def shelve_offload_server(req, server_id, body):
    return _run(req, server_id, shelve_policies.SHELVE_OFFLOAD,
                lambda api: api.shelving.shelve_offload)


@validation.request_body(schema.UNSHELVE, mv.COMPUTE_MIN,
                         mv.before(mv.UNSHELVE_AVAILABILITY_ZONE))
@validation.request_body(schema.UNSHELVE_V277, mv.UNSHELVE_AVAILABILITY_ZONE,
                         mv.before(mv.UNSHELVE_TO_HOST))
@validation.request_body(schema.UNSHELVE_V291, mv.UNSHELVE_TO_HOST)
@validation.response(202, None, mv.COMPUTE_MIN)
def unshelve_server(req, server_id, body):
    ctxt = req.environ['nova_lite.context']
    want = mv.want(req)
    api, instance = servers.get_instance(req, ctxt, server_id,
                                         shelve_policies.UNSHELVE)
    target = body['unshelve']
    if not want.matches(mv.UNSHELVE_AVAILABILITY_ZONE) or \
            not isinstance(target, dict):
        target = {}
    host = target.get('host')
    if host is not None:
        ctxt.can(shelve_policies.UNSHELVE_TO_HOST,
                 target={'project_id': instance.project_id})
    try:
        api.shelving.unshelve(
            ctxt, instance, availability_zone=target.get('availability_zone'),
            host=host, target_given=bool(target))
    except exception.ComputeHostNotFound as exc:
        # The host is in the body: a bad request, not a 404.
        raise exception.InvalidInput(message=exc.format_message())
    return router.reply(202)


@validation.request_body(schema.RESTORE, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def restore_server(req, server_id, body):
    return _run(req, server_id, deferred_delete_policies.RESTORE,
                lambda api: api.restore)


@validation.request_body(schema.FORCE_DELETE, mv.COMPUTE_MIN)
@validation.response(202, None, mv.COMPUTE_MIN)
def force_delete_server(req, server_id, body):
    return _run(req, server_id, deferred_delete_policies.FORCE,
                lambda api: api.force_delete)


ACTIONS = {
    'os-stop': stop_server,
    'os-start': start_server,
    'pause': pause_server,
    'unpause': unpause_server,
    'lock': lock_server,
    'unlock': unlock_server,
    'shelve': shelve_server,
    'shelveOffload': shelve_offload_server,
    'unshelve': unshelve_server,
    'restore': restore_server,
    'forceDelete': force_delete_server,
}
