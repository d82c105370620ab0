"""``nova-lite-manage volume_attachment``: look at, settle and free volume
attachments (doc/source/admin/recovery.rst).

Exit codes: 0 done, 1 the mapping (or server) was not found, 2 work is
still waiting for a compute host (``reconcile``; ``release``: the host
was asked to detach), 3 refused (``refresh``: the server is not stopped,
or another operation holds the mapping; ``release``: the server's host is
down but not forced down), 4 the connector file cannot be read."""

import json

from oslo_log import log as logging
from oslo_serialization import jsonutils

from nova_lite.compute import api as compute_api
from nova_lite.compute import fencing
from nova_lite.compute import release
from nova_lite.conductor import recovery
from nova_lite import context as nl_context
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import service as service_obj
from nova_lite import policy
from nova_lite import states
from nova_lite import tasks
from nova_lite import volume_client as block_storage
from nova_lite.volume_service import periodic as volume_periodic

LOG = logging.getLogger(__name__)

_BDM_FIELDS = ('instance_uuid', 'volume_id', 'device_name', 'attachment_id',
               'attach_mode', 'delete_on_termination', 'task', 'task_owner',
               'task_step', 'task_updated_at')


def _print(data):
    for key in sorted(data):
        value = data[key]
        if isinstance(value, dict):
            print('%s:' % key)
            for sub in sorted(value):
                print('  %s: %s' % (sub, value[sub]))
        else:
            print('%s: %s' % (key, value))


def _context():
    objects.register_all()
    return nl_context.get_admin_context()


def _show(conf):
    ctxt = _context()
    args = conf.command
    try:
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            ctxt, args.volume_id, args.instance_uuid)
    except exception.NotFound as e:
        print(str(e))
        return 1
    data = {'mapping': {f: getattr(bdm, f, None) for f in _BDM_FIELDS}}
    data['mapping']['connection_info'] = bdm.get_connection_info()
    data['mapping']['task_data'] = bdm.get_task_data() if bdm.task else None
    if bdm.attachment_id:
        policy.init(conf)
        client = block_storage.get_client(conf)
        try:
            attachment = client.attachment_get(
                block_storage.service_context(ctxt), bdm.attachment_id)
        except exception.VolumeAttachmentNotFound:
            attachment = 'not found in block storage'
        data['attachment'] = attachment
    if args.json:
        print(jsonutils.dumps(data, indent=2, sort_keys=True))
    else:
        _print(data)
    return 0


def _read_connector(path):
    with open(path) as f:
        connector = jsonutils.loads(f.read())
    if not isinstance(connector, dict) or not connector.get('host'):
        raise ValueError('not a connector: a JSON object with a "host"')
    return connector


def _refresh(conf):
    """Nova's ``volume_attachment refresh``: a new attachment, made with
    the connector in ``connector_path`` (os-brick's
    ``get_connector_properties`` of the server's host, as JSON), replaces
    the mapping's; the server must
    be stopped, and is locked meanwhile. Recorded as a task on the mapping
    (``refreshing``): if this command dies, the conductor's settling
    finishes it once the mapping has the new attachment, and rolls it back
    before (the new attachment deleted), then unlocks the server."""
    ctxt = _context()
    args = conf.command
    try:
        connector = _read_connector(args.connector_path)
    except (OSError, ValueError) as e:
        print('Cannot read the connector from %s: %s' % (
            args.connector_path, e))
        return 4
    try:
        instance, bdm = _server_and_mapping(ctxt, args)
    except exception.NotFound as e:
        print(str(e))
        return 1
    if instance.vm_state != states.STOPPED or instance.task_state:
        print('Server %s must be stopped (SHUTOFF, no task) to refresh its '
              'volume attachment; it is %s (task %s).' % (
                  instance.uuid, instance.vm_state, instance.task_state))
        return 3
    policy.init(conf)
    client = block_storage.get_client(conf)
    svc = block_storage.service_context(ctxt)
    owner = service_obj.owner_name(tasks.MANAGE_BINARY, conf.host)
    try:
        bdm.start_task(tasks.REFRESHING, owner, tasks.ACCEPTED,
                       tasks.task_data(ctxt))
    except exception.VolumeTaskInProgress as e:
        print(e.format_message())
        return 3
    locked_here = not instance.locked
    if locked_here:
        instance.locked = True
        instance.locked_by = 'admin'
        instance.locked_reason = tasks.REFRESH_LOCK_REASON
        instance.save()
    else:
        print('Server %s is locked already (%s); it stays locked.' % (
            instance.uuid, instance.locked_reason))
    old_attachment_id = bdm.attachment_id
    new = None
    try:
        new = client.attachment_create(svc, bdm.volume_id, instance.uuid,
                                       connector=connector,
                                       mode=bdm.attach_mode)
        crashpoint.hit(crashpoint.MANAGE_REFRESH_AFTER_CREATE)
        bdm.move_task(tasks.RESERVED, data=dict(
            bdm.get_task_data(), new_attachment_id=new['id'],
            old_attachment_id=old_attachment_id))
        bdm.move_task(tasks.REFRESHED, attachment_id=new['id'],
                      connection_info=jsonutils.dumps(
                          new['connection_info']))
        crashpoint.hit(crashpoint.MANAGE_REFRESH_AFTER_MOVE)
    except Exception:
        if new is not None and bdm.task_step != tasks.REFRESHED:
            block_storage.delete_attachment(svc, client, new['id'])
        bdm.end_task()
        if locked_here:
            _unlock(instance)
        raise
    # Complete the new attachment, delete the old one, end the task and
    # unlock: the same steps as the settling of a refresh that got here.
    recovery.finish_refresh(ctxt, client, bdm)
    print('Volume %s of server %s: attachment %s replaced by %s.' % (
        bdm.volume_id, instance.uuid, old_attachment_id, new['id']))
    return 0


def _server_and_mapping(ctxt, args):
    """The server ``args.instance_uuid`` and its mapping of
    ``args.volume_id``; ``NotFound`` when either is missing."""
    instance = instance_obj.Instance.get_by_uuid(ctxt, args.instance_uuid)
    return instance, bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
        ctxt, args.volume_id, args.instance_uuid)


def _unlock(instance):
    recovery.unlock_refreshed(instance)


def _describe(item):
    """A settled item (``tasks.Settled``, an ``Instance`` deleted, a
    ``volume_service.periodic.VolumeOperation``) or a mapping with a task, as a
    dict."""
    if isinstance(item, volume_periodic.VolumeOperation):
        return dict(item)
    if isinstance(item, instance_obj.Instance):
        return {'server': item.uuid, 'operation': 'delete'}
    if isinstance(item, tasks.Settled):
        return {'server': item.instance_uuid, 'volume': item.volume_id,
                'operation': item.task}
    return {'server': item.instance_uuid, 'volume': tasks.volume_of(item),
            'operation': item.task}


def _owner(conf):
    """This command settles under its own name: a conductor's work,
    even one of this host, is another service's (its worker may be
    holding it)."""
    return service_obj.owner_name(tasks.MANAGE_BINARY, conf.host)


def _reconcile(conf):
    """The conductor's settling (``conductor.recovery``) and block
    storage's (``volume_service.periodic``: its periodic runs in the API
    processes), once each."""
    ctxt = _context()
    policy.init(conf)
    client = block_storage.get_client(conf)
    settled = recovery.settle(ctxt, conf, client, None, conf.host,
                              owner=_owner(conf))
    try:
        settled += volume_periodic.settle(ctxt, conf)
    except Exception:
        LOG.exception('Could not settle stalled volume operations')
    done = [dict(_describe(item), outcome=outcome)
            for item, outcome in settled]
    waiting = []
    for bdm in bdm_obj.BlockDeviceMapping.get_with_tasks(ctxt):
        if tasks.binary_of(bdm.task_owner) != service_obj.COMPUTE_BINARY:
            continue
        host = bdm.task_owner.split(':', 1)[1]
        waiting.append(dict(_describe(bdm), step=bdm.task_step,
                            owner=bdm.task_owner,
                            owner_state=fencing.host_state(ctxt, conf,
                                                           host)))
    if conf.command.json:
        print(json.dumps({'settled': done, 'waiting_for_host': waiting},
                         indent=2, sort_keys=True))
    else:
        for item in done:
            if 'server' not in item:
                print('settled: %(operation)s of volume %(volume)s: '
                      '%(outcome)s' % item)
                continue
            print('settled: %(operation)s of server %(server)s: '
                  '%(outcome)s' % item + (' (volume %s)' % item['volume']
                                          if 'volume' in item else ''))
        for item in waiting:
            print('waiting for %(owner)s (%(owner_state)s): %(operation)s '
                  'of volume %(volume)s of server %(server)s at step '
                  '%(step)s' % item)
        if any(item['owner_state'] == fencing.DOWN for item in waiting):
            print('A host that is down is silent, not dead: its work waits '
                  'for it. Once it is stopped for good, force it down (PUT '
                  '/v2.1/os-services/{id} with "forced_down": true, '
                  'microversion 2.53) and its work is settled at once; or '
                  'free one volume with "nova-lite-manage volume_attachment '
                  'release SERVER VOLUME --force-down".')
        if not done and not waiting:
            print('Nothing to settle.')
    return 2 if waiting else 0


def _release(conf):
    """Free a volume of a server, whatever holds it: the one admin command
    for a volume a host that is gone for good holds (or an attach in
    flight on it). The server's host decides how:

    * up: the volume is detached through the host, as the Compute API's
      detach does (exit 2: the host was asked), unless ``--force-down``
      (below);
    * no host (shelved-offloaded), or forced down (fenced): the operation
      in flight on the mapping, if any, is settled now as the conductor
      settles a fenced host's work (an attach rolled back, a detach
      finished), then the volume is detached without the host;
    * down but not forced down (silent: its guest may still write the
      disk): refused (exit 3), unless ``--force-down``.

    With ``--force-down`` the administrator vouches that the host is
    stopped for good, whether it still reads up or not: the host's
    compute service is forced down first (all its servers' work is
    settled as for any fenced host), then as for a fenced host. The
    volume is recorded as a stale disk of the host (``compute.release``),
    which the host removes when it comes back, before it can be let go.
    """
    ctxt = _context()
    args = conf.command
    policy.init(conf)
    try:
        instance, bdm = _server_and_mapping(ctxt, args)
    except exception.NotFound as e:
        print(str(e))
        return 1
    client = block_storage.get_client(conf)
    offloaded = instance.vm_state == states.SHELVED_OFFLOADED or \
        not instance.host
    state = None if offloaded else fencing.host_state(ctxt, conf,
                                                      instance.host)
    if state == fencing.DOWN and not args.force_down:
        print('Host %s of server %s is down but not forced down: it is '
              'silent, and its guest may still use volume %s. Once the '
              'host is stopped for good, run this again with '
              '--force-down (or force it down: PUT /v2.1/os-services/'
              '{id} with "forced_down": true, microversion 2.53).' % (
                  instance.host, instance.uuid, bdm.volume_id))
        return 3
    if args.force_down and state in (fencing.UP, fencing.DOWN):
        # As the flag says, whether the host still reads up or not: the
        # administrator vouches that it is stopped for good.
        fencing.force_down(ctxt, instance.host)
        print('Host %s forced down: its servers\' work is settled without '
              'it, and it removes what it no longer owns when it comes '
              'back.' % instance.host)
        state = fencing.FENCED
    if state == fencing.UP:
        try:
            compute_api.get_api(conf).volumes.detach(ctxt, instance,
                                                     bdm.volume_id)
        except exception.NovaLiteException as e:
            print(e.format_message())
            return 3
        print('Host %s was asked to detach volume %s from server %s.' % (
            instance.host, bdm.volume_id, instance.uuid))
        return 2
    outcome = None
    if bdm.task is not None:
        outcome = recovery.settle_fenced_mapping(
            ctxt, conf, client, bdm, _owner(conf), conf.host)
        print('Settled the %s of volume %s of server %s: %s.' % (
            bdm.task if outcome is None else outcome[0].task,
            args.volume_id, instance.uuid,
            outcome[1] if outcome else 'left as it was'))
    try:
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            ctxt, args.volume_id, args.instance_uuid)
    except exception.VolumeBDMNotFound:
        print('Volume %s is free of server %s.' % (args.volume_id,
                                                   instance.uuid))
        return 0
    try:
        bdm.start_task(tasks.DETACHING, _owner(conf), tasks.ACCEPTED,
                       tasks.task_data(ctxt, local=True,
                                       keep_volume=not offloaded))
    except exception.VolumeTaskInProgress as e:
        print(e.format_message())
        return 3
    instance_action.InstanceAction.action_start(
        ctxt, instance.uuid, instance_action.DETACH_VOLUME)
    release.detach_locally(ctxt, client, bdm)
    print('Volume %s detached from server %s without its host.' % (
        args.volume_id, instance.uuid))
    return 0


def add_parsers(subparsers):
    parser = subparsers.add_parser(
        'volume_attachment', help='Look at and settle volume attachments.')
    sub = parser.add_subparsers(dest='volume_attachment_command')
    sub.required = True
    show = sub.add_parser('show', help="A server's mapping of a volume and "
                          'its attachment in block storage.')
    show.add_argument('instance_uuid')
    show.add_argument('volume_id')
    show.add_argument('--json', action='store_true')
    show.set_defaults(func=_show)
    refresh = sub.add_parser(
        'refresh', help="Replace a stopped server's attachment of a volume "
        "by one made with the connector in a file (Nova's refresh).")
    refresh.add_argument('instance_uuid')
    refresh.add_argument('volume_id')
    refresh.add_argument('connector_path',
                         help='A JSON file: the connector of the host, as '
                         "os-brick's get_connector_properties gives it.")
    refresh.set_defaults(func=_refresh)
    reconcile = sub.add_parser(
        'reconcile', help='Settle interrupted volume operations once and '
        'print what was done and what waits for a compute host.')
    reconcile.add_argument('--json', action='store_true')
    reconcile.set_defaults(func=_reconcile)
    release_cmd = sub.add_parser(
        'release', help='Free a volume of a server, whatever holds it: '
        'detached through its host when it is up, without it when it is '
        'forced down or the server has none (the operation in flight '
        'settled first).')
    release_cmd.add_argument('instance_uuid')
    release_cmd.add_argument('volume_id')
    release_cmd.add_argument(
        '--force-down', action='store_true',
        help='The server\'s host is stopped for good (even if it still '
        'reads up): force its compute service down first (fencing it: all '
        'its servers\' work is settled without it).')
    release_cmd.set_defaults(func=_release)
