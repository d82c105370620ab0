"""``nova-lite-manage volume_attachment``: look at and settle volume
attachments (doc/source/admin/recovery.rst).

Exit codes: 0 done, 1 the mapping (or server) was not found, 2 work is
still waiting for a compute host (``reconcile``)."""

import json

from oslo_serialization import jsonutils

from nova_lite.compute import tasks
from nova_lite.conductor import recovery
from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite import objects
from nova_lite.objects import service as service_obj
from nova_lite import policy
from nova_lite.volume import client as volume_client

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
        bdm = objects.BlockDeviceMapping.get_by_volume_and_instance(
            ctxt, args.volume_id, args.instance_uuid)
    except exception.NotFound as e:
        print(str(e))
        return 1
    data = {'mapping': {f: getattr(bdm, f, None) for f in _BDM_FIELDS}}
    data['mapping']['connection_info'] = bdm.get_connection_info()
    data['mapping']['task_data'] = bdm.get_task_data() if bdm.task else None
    if bdm.attachment_id:
        policy.init(conf)
        client = volume_client.get_client(conf)
        try:
            attachment = client.attachment_get(
                volume_client.service_context(ctxt), bdm.attachment_id)
        except exception.VolumeAttachmentNotFound:
            attachment = 'not found in block storage'
        data['attachment'] = attachment
    if args.json:
        print(jsonutils.dumps(data, indent=2, sort_keys=True))
    else:
        _print(data)
    return 0


def _describe(item):
    if isinstance(item, recovery.VolumeOperation):
        return dict(item)
    if isinstance(item, objects.Instance):
        return {'server': item.uuid, 'operation': 'delete'}
    return {'server': item.instance_uuid, 'volume': item.volume_id,
            'operation': item.task}


def _reconcile(conf):
    ctxt = _context()
    policy.init(conf)
    client = volume_client.get_client(conf)
    settled = recovery.settle(ctxt, conf, client, None, conf.host)
    done = [dict(_describe(item), outcome=outcome)
            for item, outcome in settled]
    down = service_obj.down_owners(ctxt, conf)
    waiting = []
    for bdm in objects.BlockDeviceMapping.get_with_tasks(ctxt):
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
    reconcile = sub.add_parser(
        'reconcile', help='Settle interrupted volume operations once and '
        'print what was done and what waits for a compute host.')
    reconcile.add_argument('--json', action='store_true')
    reconcile.set_defaults(func=_reconcile)
