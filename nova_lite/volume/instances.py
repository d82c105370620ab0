"""Does a server nova_lite manages hold an attachment? (OSSA-2023-003)

Cinder refuses to let a user (a request without the service role) delete
an attachment that belongs to a Nova server, since that would leave the
guest with a disk whose connection is gone (bug 2004555): "Detach volume
from instance <id> using the Compute API" (409). Cinder decides it in two
steps, and so does ``volume/attachment_api.py``:

1. from the attachment itself: one with no instance, or with no
   ``connection_info`` (only reserved, never connected), may be deleted;
2. otherwise Cinder asks Nova (``GET /servers/{id}/os-volume_attachments/
   {volume_id}``): deletion is allowed when Nova answers 404 or names a
   different attachment id.

nova_lite's compute and block storage share one database, so step 2 is
this module: the in-database equivalent of asking Nova. It reads
``block_device_mappings`` (the compute side's table) with a plain query
for a row of that instance holding that attachment id (and, for
``os-reset_status``, the servers mapping a volume), and nothing else of
the compute side: no compute module is imported, and the queries name
only the columns they need. A migration asks the same table whether a
swap of its volume is in flight (``swap_in_flight``). Keep it that way;
if compute and block storage ever get separate databases, these become
REST calls to ``/v2.1``.
"""

import sqlalchemy as sa

from nova_lite.db import api as db_api

# The compute table, seen as narrowly as possible.
_BDM = sa.table('block_device_mappings',
                sa.column('instance_uuid'),
                sa.column('attachment_id'),
                sa.column('volume_id'),
                sa.column('task'))
# The compute side's task of a swap (nova_lite.tasks.SWAPPING).
SWAPPING = 'swapping'


@db_api.context_manager.reader
def server_holds_attachment(ctxt, instance_uuid, attachment_id):
    """True if server ``instance_uuid`` has a block device mapping that
    holds ``attachment_id``."""
    row = ctxt.session.execute(
        sa.select(sa.literal(1)).select_from(_BDM).where(
            _BDM.c.instance_uuid == instance_uuid,
            _BDM.c.attachment_id == attachment_id).limit(1)).first()
    return row is not None


@db_api.context_manager.reader
def servers_mapping(ctxt, volume_id):
    """The servers (uuids, sorted) that have a block device mapping of
    ``volume_id``: what Cinder would learn by asking Nova for the
    volume's attachments of each server."""
    return sorted({row[0] for row in ctxt.session.execute(
        sa.select(_BDM.c.instance_uuid).where(
            _BDM.c.volume_id == volume_id)).all()})


@db_api.context_manager.reader
def swap_in_flight(ctxt, volume_id):
    """True if a server's mapping of ``volume_id`` holds a swap in
    progress (a migration's swap: the compute side settles it by its own
    rules, and block storage waits). A migration's swap keeps the mapping
    on the migrated volume's id throughout."""
    row = ctxt.session.execute(
        sa.select(sa.literal(1)).select_from(_BDM).where(
            _BDM.c.volume_id == volume_id,
            _BDM.c.task == SWAPPING).limit(1)).first()
    return row is not None
