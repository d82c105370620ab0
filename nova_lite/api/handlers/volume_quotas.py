"""/v3 os-quota-sets, os-quota-class-sets and limits: the block-storage
quotas (``nova_lite.volume.quotas``)."""

from oslo_utils import strutils

from nova_lite.api import microversion as mv
from nova_lite.api import router
from nova_lite.api.schemas import quotas as schema
from nova_lite.api import validation
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import quotas as policies
from nova_lite import quota
from nova_lite.volume import quotas

_IGNORED = ('id', 'tenant_id', 'class_name', 'skip_validation')


def _ctxt(req):
    return req.environ['nova_lite.context']


def _conf(req):
    return req.environ['nova_lite.conf']


def _values(req, data):
    """The limits of a quota set or class set body; 400 naming the keys
    that are not resources (Cinder's "Bad key(s)")."""
    known = quotas.resources(_ctxt(req), _conf(req))
    bad = sorted(k for k in data if k not in known and k not in _IGNORED)
    if bad:
        raise exception.InvalidInput(reason=_(
            'Bad key(s) in quota set: %s') % ','.join(bad))
    return {name: quota.parse_limit(value, name)
            for name, value in data.items() if name not in _IGNORED}


@validation.query(schema.VOLUME_SHOW_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.VOLUME_SHOW_RESPONSE, mv.VOLUME_MIN)
def show_quota_set(req, target_project_id):
    ctxt = _ctxt(req)
    ctxt.can(policies.VOLUME_SHOW,
             target={'project_id': target_project_id})
    usage = strutils.bool_from_string(req.GET.get('usage', 'false'))
    limits = quotas.limits(ctxt, _conf(req), target_project_id)
    if usage:
        used = quotas.usage(ctxt, target_project_id)
        limits = {name: {'limit': limit, 'in_use': used.get(name, 0),
                         'reserved': 0}
                  for name, limit in limits.items()}
    return {'quota_set': dict(limits, id=target_project_id)}


@validation.query(schema.VOLUME_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.VOLUME_SHOW_RESPONSE, mv.VOLUME_MIN)
def show_quota_set_defaults(req, target_project_id):
    ctxt = _ctxt(req)
    ctxt.can(policies.VOLUME_SHOW,
             target={'project_id': target_project_id})
    return {'quota_set': dict(quotas.defaults(ctxt, _conf(req)),
                              id=target_project_id)}


@validation.request_body(schema.VOLUME_UPDATE, mv.VOLUME_MIN)
@validation.response(200, schema.VOLUME_UPDATE_RESPONSE, mv.VOLUME_MIN)
def update_quota_set(req, target_project_id, body):
    ctxt = _ctxt(req)
    ctxt.can(policies.VOLUME_UPDATE,
             target={'project_id': target_project_id})
    data = body['quota_set']
    skip = strutils.bool_from_string(data.get('skip_validation', True),
                                     strict=True)
    quotas.update(ctxt, target_project_id, _values(req, data),
                  validate=not skip)
    return {'quota_set': quotas.limits(ctxt, _conf(req), target_project_id)}


@validation.response(200, None, mv.VOLUME_MIN)
def delete_quota_set(req, target_project_id):
    ctxt = _ctxt(req)
    ctxt.can(policies.VOLUME_DELETE,
             target={'project_id': target_project_id})
    quotas.delete(ctxt, target_project_id)
    return router.reply(200)


@validation.query(schema.VOLUME_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.VOLUME_CLASS_RESPONSE, mv.VOLUME_MIN)
def show_quota_class_set(req, class_name):
    ctxt = _ctxt(req)
    ctxt.can(policies.VOLUME_CLASS_GET, target={})
    return {'quota_class_set': dict(
        quotas.class_limits(ctxt, _conf(req), class_name), id=class_name)}


@validation.request_body(schema.VOLUME_CLASS_UPDATE, mv.VOLUME_MIN)
@validation.response(200, schema.VOLUME_CLASS_UPDATE_RESPONSE, mv.VOLUME_MIN)
def update_quota_class_set(req, class_name, body):
    ctxt = _ctxt(req)
    ctxt.can(policies.VOLUME_CLASS_UPDATE, target={})
    if len(class_name) > 255:
        raise exception.InvalidInput(reason=_(
            'The quota class name is longer than 255 characters.'))
    quotas.class_update(ctxt, class_name,
                        _values(req, body['quota_class_set']))
    return {'quota_class_set': quotas.class_limits(ctxt, _conf(req),
                                                   class_name)}


@validation.query(schema.VOLUME_QUERY, mv.VOLUME_MIN)
@validation.response(200, schema.VOLUME_LIMITS_RESPONSE, mv.VOLUME_MIN)
def show_limits(req):
    ctxt = _ctxt(req)
    ctxt.can(policies.VOLUME_LIMITS, target={'project_id': ctxt.project_id})
    limits = quotas.limits(ctxt, _conf(req), ctxt.project_id)
    used = quotas.usage(ctxt, ctxt.project_id)
    return {'limits': {'rate': [], 'absolute': {
        'maxTotalVolumes': limits['volumes'],
        'maxTotalSnapshots': limits['snapshots'],
        'maxTotalVolumeGigabytes': limits['gigabytes'],
        'maxTotalBackups': limits['backups'],
        'maxTotalBackupGigabytes': limits['backup_gigabytes'],
        'totalVolumesUsed': used['volumes'],
        'totalGigabytesUsed': used['gigabytes'],
        'totalSnapshotsUsed': 0,
        'totalBackupsUsed': 0,
        'totalBackupGigabytesUsed': 0,
    }}}
