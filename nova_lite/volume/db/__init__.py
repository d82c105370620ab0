"""Queries of the block-storage tables, used by block storage's service
layer (``volume/api.py``, ``attachment_api.py``, ``migration.py``,
``settling.py``), one module per aggregate; callers import the module they use:

* ``volumes``: volumes (reads, lists, create, update, the volume's own
  moves, Cinder's legacy ``os-reserve``/``os-unreserve`` and readonly
  flag, retype, extend, delete) and their metadata;
* ``attachments``: attachments (reads, lists, the attachment moves, the
  stored connector, Cinder's legacy ``os-attach``);
* ``types``: volume types, their extra specs, encryption and access;
* ``common``: what those share (statement helpers, the volume row lock,
  the status recompute, the readonly admin metadata, the type row lock);
  not used outside this package.

One ``@reader``/``@writer`` function is one transaction, in session mode
(``ctxt.session``), the project's one data-access mode. Status moves are
compare-and-swaps through ``db_api.conditional_update``
(``volumes.volume_move``, ``attachments._attachment_move``), except those
whose condition ties two columns together (a reservation: the statuses
allowed by ``multiattach``; a retype, an extend, a migration's moves),
``UPDATE ... WHERE <expected>`` statements of their own, rowcount
checked; the expected statuses come from ``nova_lite.volume.status``. A
writer that changes a volume or its attachments first takes the volume
row with ``SELECT ... FOR UPDATE`` (a no-op on SQLite, whose writers are
serialised by ``BEGIN IMMEDIATE``), so that the volume's derived
``attach_status`` is recomputed from a consistent set of attachments on
MariaDB and PostgreSQL too; the CAS conditions are what decide who wins.
No backend call is made inside a transaction: the service layer calls
drivers between two.

The status moves and the single-object reads run several times in every
attach and detach, so they are Core statements on the tables, built once
at import with bound parameters and run with ``ctxt.session.execute``:
building a statement each call costs about as much as running it on
SQLite. ``volumes.volume_get`` and ``attachments.attachment_get`` return
read-only records (named tuples filled from labelled columns, by name)
with what the views and the service layer use; list functions and the
volume type functions return ORM rows with what the views need already
loaded (relationships are ``lazy='raise'``): a list is a fixed number of
queries.
"""
