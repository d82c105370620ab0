"""``nova-lite-manage volume_attachment``: look at and settle volume
attachments (doc/source/admin/recovery.rst).

Exit codes: 0 done, 1 the mapping (or server) was not found, 2 work is
still waiting for a compute host (``reconcile``), 3 refused (``refresh``:
the server is not stopped, or another operation holds the mapping), 4 the
connector file cannot be read."""

import json

from oslo_serialization import jsonutils

from nova_lite.compute import states
from nova_lite.compute import tasks
from nova_lite.conductor import recovery
from nova_lite import context as nl_context
from nova_lite import crashpoint
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import service as service_obj
from nova_lite import policy
from nova_lite.volume import client as block_storage

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
        instance = instance_obj.Instance.get_by_uuid(ctxt, args.instance_uuid)
        bdm = bdm_obj.BlockDeviceMapping.get_by_volume_and_instance(
            ctxt, args.volume_id, args.instance_uuid)
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
            _delete_attachment(client, svc, new['id'])
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


def _delete_attachment(client, svc, attachment_id):
    try:
        client.attachment_delete(svc, attachment_id)
    except exception.VolumeAttachmentNotFound:
        pass


def _unlock(instance):
    recovery.unlock_refreshed(instance)


def _describe(item):
    if isinstance(item, recovery.VolumeOperation):
        return dict(item)
    if isinstance(item, instance_obj.Instance):
        return {'server': item.uuid, 'operation': 'delete'}
    return {'server': item.instance_uuid, 'volume': item.volume_id,
            'operation': item.task}


def _reconcile(conf):
    ctxt = _context()
    policy.init(conf)
    client = block_storage.get_client(conf)
    settled = recovery.settle(ctxt, conf, client, None, conf.host)
    done = [dict(_describe(item), outcome=outcome)
            for item, outcome in settled]
    down = service_obj.down_owners(ctxt, conf)
    waiting = []
    for bdm in bdm_obj.BlockDeviceMapping.get_with_tasks(ctxt):
        if tasks.binary_of(bdm.task_owner) != service_obj.COMPUTE_BINARY:
            continue
        waiting.append(dict(_describe(bdm), step=bdm.task_step,
                            owner=bdm.task_owner,
                            owner_state='down' if bdm.task_owner in down
                            else 'up'))
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
        if not done and not waiting:
            print('Nothing to settle.')
    return 2 if waiting else 0


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
