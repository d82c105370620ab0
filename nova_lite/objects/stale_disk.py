"""Stale disks: volume disks a compute host may still give one of its
guests although the volume is no longer the server's there.

A row is written by whoever frees a volume of a fenced host's server
without the host (``compute.release``: the host still has the disk, and
learns about it only when it comes back), and by the host for a disk it
found in a guest and could not remove. The host deletes the row once
its guest no longer has the disk (``compute.host.recovery``). While a
host has rows it cannot be let go: ``PUT /v2.1/os-services/{id}`` with
``forced_down: false`` answers 409 naming the servers.

Plain rows, not a versioned object: they never travel over RPC.
"""

import collections

from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models

StaleDisk = collections.namedtuple(
    'StaleDisk', ['id', 'host', 'instance_uuid', 'device_name',
                  'volume_id'])

_TABLE = models.StaleDisk.__table__


def _row(row):
    return StaleDisk(row.id, row.host, row.instance_uuid, row.device_name,
                     row.volume_id)


@db_api.context_manager.writer
def _insert(context, values):
    context.session.execute(sa.insert(_TABLE).values(**values))


def record(context, host, instance_uuid, device_name, volume_id):
    """Record that ``host`` may still give the guest of ``instance_uuid``
    volume ``volume_id`` at ``device_name``; recorded already is fine."""
    try:
        _insert(context, {'host': host, 'instance_uuid': instance_uuid,
                          'device_name': device_name,
                          'volume_id': volume_id})
    except db_exc.DBDuplicateEntry:
        pass


@db_api.context_manager.reader
def get_by_host(context, host):
    """The stale disks of ``host``, oldest first."""
    rows = context.session.execute(
        sa.select(_TABLE).where(_TABLE.c.host == host)
        .order_by(_TABLE.c.id)).all()
    return [_row(r) for r in rows]


@db_api.context_manager.writer
def forget(context, disk_ids):
    """Delete the rows ``disk_ids`` (the guest no longer has the disk);
    rows gone already are fine."""
    if disk_ids:
        context.session.execute(
            sa.delete(_TABLE).where(_TABLE.c.id.in_(list(disk_ids))))
