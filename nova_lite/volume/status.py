"""The volume and attachment status machine (API-CONTRACT.md 5.4), as data.

Every move below is made in the database by a compare-and-swap
(``UPDATE ... WHERE status IN (<from>)``, rowcount checked) in
``nova_lite.volume.db``; this module only says which moves exist, so that
the rules are read (and unit-tested) in one place.

Volume moves (``VOLUME_MOVES``, keyed by operation), from -> to:

* reserve: available, downloading -> reserved
* reserve_multiattach: available, in-use, downloading -> reserved
* reserve_same_instance: in-use, while that instance has an ``attached``
  attachment (live migration) -> reserved
* connect: reserved, attaching, in-use -> attaching
* complete: anything but deleting/deleted (no check, as Cinder) -> in-use
* begin_detaching: in-use (attached, not migrating) -> detaching
* roll_detaching: detaching -> in-use
* delete: available, error, error_restoring, error_extending,
  error_managing, with no live attachment -> deleting
* create_done / create_failed: creating -> available / error
* create_settled: creating, unmoved for ``[recovery] stalled_after``
  seconds (its process died, as Cinder's volume service finds a volume
  stuck creating at its start) -> error; a migration's temporary volume
  is the migration's to settle
* retype: available, in-use (only available when the multiattach flag
  changes), not migrating -> the same status, with the new type
* delete_failed: deleting -> error_deleting
* delete_busy: deleting -> available (the backend refused: its storage
  is still in use, Cinder's ``VolumeIsBusy``)
* extend: available, or in-use (Cinder's 3.42) (not migrating, still
  of the size checked) -> extending, with the new size (so the quota
  counts it at once)
* extend_done: extending -> available (the backend grew it), then the
  status its attachments give it (in-use for a volume extended while
  attached) in the same transaction
* extend_failed: extending -> error_extending, with the former size
* extend_settled: extending, unmoved for ``[recovery] stalled_after``
  seconds (its process died) -> available with the size the backend
  holds, then the status its attachments give it (as extend_done), or
  error_extending when the backend cannot tell
* force_delete: any status, while no attachment is ``attached`` and the
  volume is not migrating -> deleting
* an attachment deleted or failed: recomputed (below)

Cinder's legacy (pre-3.27) attach actions, each one compare-and-swap or
one transaction:

* legacy_reserve (``os-reserve``): available -> attaching (a multiattach
  volume also from in-use)
* unreserve (``os-unreserve``): attaching -> recomputed from its
  attachments (in-use if one is attached, else available); from any other
  status nothing happens (as Cinder)
* legacy_attach (``os-attach``): available, attaching -> in-use (a
  multiattach volume also from in-use), with a new ``attached``
  attachment that has no connection; a non-multiattach volume only while
  no other instance or host holds a live attachment
* ``os-detach``: the attachment delete move below, then recomputed
* ``os-update_readonly_flag``: only while available (no move: the flag
  is written under the volume's row lock)

Attachment moves (``ATTACHMENT_MOVES``), from -> to:

* reserve: (a new row) -> reserved
* connect: reserved, attaching, attached -> attaching
* connect_failed: reserved, attaching, attached -> error_attaching
* complete: reserved, attaching, attached -> attached
* delete: any not deleted -> detached (and deleted)

After an attachment is deleted or fails to connect, the volume's status is
recomputed from its remaining live attachments, ignoring ``error_*`` ones:
``attached`` gives ``in-use``; ``attaching``, ``detaching`` and ``reserved``
give the same word; none gives ``available`` (Cinder's order: attached >
attaching > detaching > reserved). It is left alone while the volume is
being deleted, and while it migrates (``MIGRATING``) or uploads with no
attachment left (a migration's swap deletes the old attachment before
the volume takes the new one). The volume's ``attach_status`` is always the
same summary of its attachments (``detached`` when none).

A migration (``migration_status`` of the volume migrated, Cinder's values;
nova_lite/volume/migration.py has the workflow): ``starting`` (compare-and-
swap from ``NOT_MIGRATING``, with its status available or in-use), then
``migrating`` once the temporary volume on the target backend exists
(its own ``migration_status`` is ``target:<id>``), then ``success`` (the
volume has the target's storage) or ``error`` (rolled back). While a
volume migrates, or is a migration's target, nothing else moves it:
reserve, detach, extend, retype, delete and another migration are
refused; the target is reserved only by the compute service (the
migration's swap).
"""

# -- volume statuses --------------------------------------------------------
AVAILABLE = 'available'
RESERVED = 'reserved'
ATTACHING = 'attaching'
IN_USE = 'in-use'
DETACHING = 'detaching'
DOWNLOADING = 'downloading'
CREATING = 'creating'
DELETING = 'deleting'
DELETED = 'deleted'
ERROR = 'error'
ERROR_DELETING = 'error_deleting'
UPLOADING = 'uploading'
EXTENDING = 'extending'
ERROR_EXTENDING = 'error_extending'

# -- attachment (and volume attach_status) values ----------------------------
ATTACHED = 'attached'
DETACHED = 'detached'
ERROR_ATTACHING = 'error_attaching'
ERROR_DETACHING = 'error_detaching'

ATTACH_STATUSES = (ATTACHED, ATTACHING, DETACHED, RESERVED, ERROR_ATTACHING,
                   ERROR_DETACHING, DELETED)

LIVE_ATTACHMENT = (RESERVED, ATTACHING, ATTACHED)

MAINTENANCE = 'maintenance'

# -- migration_status (Cinder's values) ---------------------------------------
MIGRATION_STARTING = 'starting'
MIGRATION_MIGRATING = 'migrating'
MIGRATION_COMPLETING = 'completing'
MIGRATION_SUCCESS = 'success'
MIGRATION_ERROR = 'error'
# A migration in progress (of the volume migrated).
MIGRATING = (MIGRATION_STARTING, MIGRATION_MIGRATING, MIGRATION_COMPLETING)
# Cinder's AVAILABLE_MIGRATION_STATUS: no migration holds the volume.
NOT_MIGRATING = (None, MIGRATION_ERROR, MIGRATION_SUCCESS, 'deleting')
# The statuses a volume may migrate from.
MIGRATE_FROM = (AVAILABLE, IN_USE)
TARGET_PREFIX = 'target:'


# What an administrator may set with os-reset_status (Cinder's admin
# action): every volume status nova_lite uses, whatever the moves allow.
RESETTABLE = (AVAILABLE, RESERVED, ATTACHING, IN_USE, DETACHING, CREATING,
              DELETING, ERROR, ERROR_DELETING, MAINTENANCE, DOWNLOADING,
              UPLOADING, EXTENDING, ERROR_EXTENDING)
RESETTABLE_ATTACH = (ATTACHED, DETACHED)
RESETTABLE_MIGRATION = ('migrating', 'error', 'success', 'completing',
                        'none', 'starting')

# Volume statuses that only say where its attachments stand: a force detach
# with nothing left to detach recomputes these (and leaves e.g. error).
ATTACHMENT_DRIVEN = (AVAILABLE, RESERVED, ATTACHING, IN_USE, DETACHING)

# No change of a volume's metadata in these statuses (Cinder's rule), and
# no update of the volume at all (name, description, metadata, bootable) in
# maintenance.
METADATA_FROZEN = (MAINTENANCE, UPLOADING)
UPDATE_FROZEN = (MAINTENANCE,)

# A volume may be cloned (``source_volid``) from these statuses (Cinder's
# SRC_VOL_PROCEED_STATUS); while a clone of it is creating, it cannot be
# deleted (Cinder's volume service holds the source's delete lock).
CLONE_FROM = (AVAILABLE, IN_USE)

# Retype: from these statuses; only from available when multiattach changes
# (the multi-attach spec: no retype of attachment parameters while in-use).
RETYPE_FROM = (AVAILABLE, IN_USE)
RETYPE_MULTIATTACH_FROM = (AVAILABLE,)

VOLUME_MOVES = {
    'reserve': ((AVAILABLE, DOWNLOADING), RESERVED),
    'reserve_multiattach': ((AVAILABLE, IN_USE, DOWNLOADING), RESERVED),
    'reserve_same_instance': ((IN_USE,), RESERVED),
    'connect': ((RESERVED, ATTACHING, IN_USE), ATTACHING),
    'complete': (None, IN_USE),
    'begin_detaching': ((IN_USE,), DETACHING),
    'roll_detaching': ((DETACHING,), IN_USE),
    'delete': ((AVAILABLE, ERROR, 'error_restoring', ERROR_EXTENDING,
                'error_managing'), DELETING),
    'create_done': ((CREATING,), AVAILABLE),
    'create_failed': ((CREATING,), ERROR),
    'create_settled': ((CREATING,), ERROR),
    'delete_failed': ((DELETING,), ERROR_DELETING),
    'delete_busy': ((DELETING,), AVAILABLE),
    'legacy_reserve': ((AVAILABLE,), ATTACHING),
    'legacy_reserve_multiattach': ((AVAILABLE, IN_USE), ATTACHING),
    'legacy_attach': ((AVAILABLE, ATTACHING), IN_USE),
    'legacy_attach_multiattach': ((AVAILABLE, ATTACHING, IN_USE), IN_USE),
    'extend': ((AVAILABLE, IN_USE), EXTENDING),
    'extend_done': ((EXTENDING,), AVAILABLE),
    'extend_failed': ((EXTENDING,), ERROR_EXTENDING),
    'extend_settled': ((EXTENDING,), AVAILABLE),
    'extend_unsettled': ((EXTENDING,), ERROR_EXTENDING),
}

# os-unreserve: only from attaching; the new status is recomputed.
UNRESERVE_FROM = (ATTACHING,)
# os-update_readonly_flag: only while available (Cinder's rule).
READONLY_UPDATE_FROM = (AVAILABLE,)
ATTACH_MODES = ('rw', 'ro')

# Cinder's administrator metadata keys that every user sees in the
# volume's ``metadata`` (nova_lite keeps only ``readonly``: an attachment
# row already says its own mode, which Cinder copied to ``attached_mode``).
READONLY = 'readonly'
VISIBLE_ADMIN_METADATA = (READONLY,)

# 'complete' has no precondition on the volume (as in Cinder) other than
# that the volume still exists and is not going away.
NOT_COMPLETABLE = (DELETING, DELETED)

ATTACHMENT_MOVES = {
    'reserve': (None, RESERVED),
    'connect': (LIVE_ATTACHMENT, ATTACHING),
    'connect_failed': (LIVE_ATTACHMENT, ERROR_ATTACHING),
    'complete': (LIVE_ATTACHMENT, ATTACHED),
    'delete': ('live', DETACHED),
    'legacy_attach': (None, ATTACHED),
}

# Cinder's order when several attachments disagree (smallest wins).
_PRIORITY = (ATTACHED, ATTACHING, DETACHING, RESERVED)
_VOLUME_STATUS_OF = {
    ATTACHED: IN_USE,
    ATTACHING: ATTACHING,
    DETACHING: DETACHING,
    RESERVED: RESERVED,
}


def reserve_from(multiattach):
    """Volume statuses from which a reservation may be made."""
    key = 'reserve_multiattach' if multiattach else 'reserve'
    return VOLUME_MOVES[key][0]


def legacy_reserve_from(multiattach):
    """Volume statuses from which ``os-reserve`` may move a volume."""
    key = ('legacy_reserve_multiattach' if multiattach
           else 'legacy_reserve')
    return VOLUME_MOVES[key][0]


def legacy_attach_from(multiattach):
    """Volume statuses from which ``os-attach`` may attach a volume."""
    key = ('legacy_attach_multiattach' if multiattach
           else 'legacy_attach')
    return VOLUME_MOVES[key][0]


def readonly_value(flag):
    """The ``readonly`` admin metadata value of ``flag``, as Cinder
    writes it ('True' or 'False')."""
    return str(bool(flag))


def attach_mode_allowed(readonly, mode):
    """Whether a volume whose ``readonly`` admin metadata is
    ``readonly`` (None when unset) may be attached in ``mode``: a
    read-only volume only 'ro'."""
    return readonly != readonly_value(True) or mode == 'ro'


def visible_admin_metadata(items):
    """The part of a volume's admin metadata (``(key, value)`` pairs)
    every user sees in its ``metadata``."""
    return {key: value for key, value in items
            if key in VISIBLE_ADMIN_METADATA}


def attach_status_of(attach_statuses):
    """The volume's ``attach_status`` summarising its attachments'."""
    for candidate in _PRIORITY:
        if candidate in attach_statuses:
            return candidate
    return DETACHED


def recompute(volume_status, migration_status, attach_statuses):
    """``(status, attach_status)`` of a volume after its attachments
    changed; ``attach_statuses`` are those of its remaining live
    attachments (``error_*`` ones are ignored)."""
    statuses = [s for s in attach_statuses if not s.startswith('error')]
    attach_status = attach_status_of(statuses)
    if volume_status in (DELETING, DELETED):
        return volume_status, attach_status
    if not statuses and (migration_status in MIGRATING or
                         volume_status == UPLOADING):
        return volume_status, attach_status
    if attach_status == DETACHED:
        return AVAILABLE, DETACHED
    return _VOLUME_STATUS_OF[attach_status], attach_status


def or_str(items):
    """Cinder's ``build_or_str``: 'available or downloading'."""
    return ' or '.join(items)


def migration_target(volume_id):
    """The ``migration_status`` of the temporary volume of ``volume_id``'s
    migration (Cinder's)."""
    return TARGET_PREFIX + volume_id


def is_migrating(migration_status):
    """Whether a migration holds the volume (migrated or target)."""
    return migration_status not in NOT_MIGRATING
