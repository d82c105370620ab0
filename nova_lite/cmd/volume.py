"""``nova-lite-manage volume``: block storage's backends on this node
(doc/source/admin/iscsi.rst).

* ``nova-lite-manage volume iscsi-forget-backend NAME``: remove the
  sentinel target of ``iscsi`` backend ``NAME``, retired (no longer in
  ``[volume] enabled_backends``), from the node's tgtd, and the file that
  marks it. Its options are read from its group (``[NAME]``) when the
  configuration still has one (``target_prefix``, ``volumes_dir``,
  ``tgt_control_port``...), else they are the defaults.

Exit codes: 0 done (also when there was nothing to remove), 3 refused
(the backend is still enabled, or tgtd still exports volumes of it), 4
tgtd could not be asked."""

from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume_service.drivers import iscsi

REFUSED = 3
FAILED = 4


def _forget_backend(conf):
    name = conf.command.backend
    if name in conf.volume.enabled_backends:
        print('Backend %s is enabled ([volume] enabled_backends): refused; '
              'retire it first' % name)
        return REFUSED
    conf.register_opts(backend_conf.COMMON_OPTS, group=name)
    conf.register_opts(iscsi.ISCSIDriver.OPTS, group=name)
    driver = iscsi.ISCSIDriver(conf, name)
    ctxt = nl_context.get_admin_context()

    def owned(storage_ids):
        return volume_db.storage_on_backend(ctxt, name, storage_ids)
    try:
        removed = driver.forget(owned)
    except iscsi.TgtadmError as e:
        print('Cannot ask tgtd: %s' % e)
        return FAILED
    except exception.VolumeBackendAPIException as e:
        print('Refused: %s' % e)
        return REFUSED
    for iqn in removed:
        print('Removed the sentinel target %s' % iqn)
    if not removed:
        print('tgtd has no sentinel target of backend %s' % name)
    return 0


def add_parsers(subparsers):
    parser = subparsers.add_parser(
        'volume', help="Block storage's backends on this node.")
    sub = parser.add_subparsers(dest='volume_command')
    sub.required = True
    forget = sub.add_parser(
        'iscsi-forget-backend',
        help='Remove the sentinel target of a retired iscsi backend from '
        "this node's tgtd.")
    forget.add_argument('backend', help='The name of the backend (its '
                        'former group in enabled_backends).')
    forget.set_defaults(func=_forget_backend)
