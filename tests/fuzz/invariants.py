"""What must hold after any sequence of requests, once async work is done.

* No server task and no mapping task is left running (``task_state``,
  ``block_device_mappings.task``): everything the requests started has
  finished or been rolled back.
* Every volume mapping of a live server that names an attachment names
  one that exists (no dangling mapping).
* A volume that is ``available`` has no live attachment holding a host
  connection, and no live attachment belongs to a deleted volume (no
  orphaned connection).
* A volume that is ``available`` has no export to any host: its backend
  holds no connection to it (``driver.connections(volume)`` is empty),
  whatever the database says (``available_exports``).
"""

import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import states
from nova_lite.volume import backends as backend_conf
from nova_lite.volume import status as st
from nova_lite.volume_service import drivers
from tests.fixtures import system


def _running_tasks(conn):
    tasks = conn.execute(sa.select(models.Instance.uuid,
                                   models.Instance.task_state).where(
        models.Instance.vm_state != states.DELETED,
        models.Instance.task_state.is_not(None))).all()
    tasks += conn.execute(sa.select(models.BlockDeviceMapping.uuid,
                                    models.BlockDeviceMapping.task).where(
        models.BlockDeviceMapping.task.is_not(None))).all()
    return tasks


def backend_hosts(conf, volume_id):
    """The hosts the backend of volume ``volume_id`` holds connected to
    it (sorted)."""
    vol = models.Volume
    with db_api.get_engine().connect() as conn:
        row = conn.execute(sa.select(
            vol.id, vol.name_id, vol.host, vol.size, vol.provider_location,
            vol.provider_auth, vol.multiattach, vol.encrypted).where(
                vol.id == volume_id)).one()
    driver = drivers.get_backends(conf).get(row.host)
    return sorted(driver.connections(backend_conf.volume_dict(row))) if (
        driver) else []


def available_exports(conf):
    """``[(volume id, hosts its backend holds connected)]`` of the live
    ``available`` volumes whose backend still holds a connection (the
    backends of ``conf`` that record them: ``fake`` and ``file``)."""
    vol = models.Volume
    with db_api.get_engine().connect() as conn:
        rows = conn.execute(sa.select(
            vol.id, vol.name_id, vol.host, vol.size, vol.provider_location,
            vol.provider_auth, vol.multiattach, vol.encrypted).where(
                vol.deleted.is_(False), vol.status == st.AVAILABLE)).all()
    backends = drivers.get_backends(conf)
    found = []
    for row in rows:
        driver = backends.get(row.host)
        if driver is None:
            continue
        hosts = sorted(driver.connections(backend_conf.volume_dict(row)))
        if hosts:
            found.append((row.id, hosts))
    return found


def assert_settled(test, timeout=30):
    engine = db_api.get_engine()

    def settled():
        with engine.connect() as conn:
            return not _running_tasks(conn)
    with engine.connect() as conn:
        before = _running_tasks(conn)
    system.wait_for(settled, timeout=timeout,
                    message='tasks still running: %s' % (before,))
    bdm = models.BlockDeviceMapping
    att = models.VolumeAttachment
    vol = models.Volume
    with engine.connect() as conn:
        dangling = conn.execute(
            sa.select(bdm.instance_uuid, bdm.volume_id, bdm.attachment_id)
            .join(models.Instance,
                  models.Instance.uuid == bdm.instance_uuid)
            .outerjoin(att, sa.and_(att.id == bdm.attachment_id,
                                    att.deleted.is_(False)))
            .where(models.Instance.vm_state != states.DELETED,
                   bdm.destination_type == 'volume',
                   bdm.attachment_id.is_not(None),
                   att.id.is_(None))).all()
        test.assertEqual([], dangling, 'mappings naming no attachment')
        orphans = conn.execute(
            sa.select(vol.id, vol.status, att.id, att.attach_status)
            .join(att, att.volume_id == vol.id)
            .where(att.deleted.is_(False),
                   att.attach_status.in_(st.LIVE_ATTACHMENT),
                   sa.or_(vol.deleted.is_(True),
                          sa.and_(vol.status == st.AVAILABLE,
                                  att.connection_info.is_not(None))))
        ).all()
        test.assertEqual([], orphans, 'connections of unattached volumes')
    test.assertEqual([], available_exports(test.conf),
                     'backend connections of available volumes')
