"""nova-lite-manage: operator commands.

* ``nova-lite-manage db sync [--revision REV]``: create or upgrade the
  schema (alembic) to the newest (or given) revision.
* ``nova-lite-manage db version``: print the schema revision.
* ``nova-lite-manage volume_attachment show SERVER VOLUME [--json]``: the
  server's mapping of the volume (device, attachment, the operation in
  flight and who owns it) beside block storage's attachment.
* ``nova-lite-manage volume_attachment reconcile [--json]``: run the
  settling of interrupted volume operations once (what the conductor's
  periodic task does) and print what it did, then list the operations
  still in compute hosts' hands (only their host settles those, unless it
  is forced down).
* ``nova-lite-manage volume_attachment release SERVER VOLUME
  [--force-down]``: free a volume of a server, whatever holds it (through
  its host when the host is up; without it when the host is forced down,
  or, with ``--force-down``, after forcing it down).
* ``nova-lite-manage volume iscsi-forget-backend NAME``: remove the
  sentinel target of a retired ``iscsi`` backend from the node's tgtd
  (doc/source/admin/iscsi.rst).

doc/source/admin/recovery.rst says when to use them.
"""

import sys

from oslo_config import cfg

from nova_lite.cmd import volume
from nova_lite.cmd import volume_attachment
from nova_lite import config
from nova_lite.db import api as db_api
from nova_lite.db import migration


def _db_sync(conf):
    migration.upgrade(conf, conf.command.revision or 'head')
    print('Database is at revision %s' % migration.version(conf))
    return 0


def _db_version(conf):
    print(migration.version(conf) or 'None')
    return 0


def _add_command_parsers(subparsers):
    db = subparsers.add_parser('db', help='Database schema commands.')
    db_sub = db.add_subparsers(dest='db_command')
    db_sub.required = True
    sync = db_sub.add_parser('sync', help='Upgrade the schema.')
    sync.add_argument('--revision', default=None,
                      help='Target revision (default: head).')
    sync.set_defaults(func=_db_sync)
    ver = db_sub.add_parser('version', help='Print the schema revision.')
    ver.set_defaults(func=_db_version)
    volume_attachment.add_parsers(subparsers)
    volume.add_parsers(subparsers)


COMMAND_OPT = cfg.SubCommandOpt('command', title='Commands',
                                handler=_add_command_parsers)


def main(argv=None):
    conf = cfg.ConfigOpts()
    conf.register_cli_opt(COMMAND_OPT)
    config.parse_args(conf, sys.argv[1:] if argv is None else argv)
    db_api.configure(conf)
    return conf.command.func(conf)


if __name__ == '__main__':
    sys.exit(main())
