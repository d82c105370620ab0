"""oslo.versionedobjects base for objects that travel over RPC.

Only objects that cross RPC are versioned objects (placement's lesson: the
rest can be plain functions). Each object module keeps its query functions
beside it, as ``@db_api.context_manager.reader``/``writer`` functions taking
the context first: one data-access mode for the whole project (as
``volume.db``): enginefacade session-mode transactions running statements
built once at import, rows read by column name (``_from_db_object`` for ORM
rows, ``_from_db_row`` for Core rows through ``result.mappings()``). Every
compare-and-swap of an object is ``conditional_update`` or
``conditional_destroy`` (``db_api``'s, Cinder's shape); times are
``utils.utcnow()``, to the microsecond. Object versions are pinned by
fingerprint in ``tests/unit/objects/test_objects.py``: bump the version
when fields or remotable methods change.
"""

from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

from nova_lite.db import api as db_api
from nova_lite import exception
from nova_lite import utils


class NovaLiteObjectRegistry(ovo_base.VersionedObjectRegistry):
    notification_classes = []

    def registration_hook(self, cls, index):
        # Make the newest version of each registered class reachable as
        # nova_lite.objects.<Name>.
        from nova_lite import objects
        version = tuple(int(x) for x in cls.VERSION.split('.'))
        current = getattr(objects, cls.obj_name(), None)
        if current is None or version >= tuple(
                int(x) for x in current.VERSION.split('.')):
            setattr(objects, cls.obj_name(), cls)


_FIELDS_OF_ROWS = {}  # (object class, row class) -> field names


class NovaLiteObject(ovo_base.VersionedObject):
    OBJ_SERIAL_NAMESPACE = 'nova_lite_object'
    OBJ_PROJECT_NAMESPACE = 'nova_lite'

    # {version: fields added in that version}: a peer of an older version
    # gets the object without them (``obj_make_compatible``).
    FIELDS_SINCE = {}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        for version, names in self.FIELDS_SINCE.items():
            if target < versionutils.convert_version_to_tuple(version):
                for name in names:
                    primitive.pop(name, None)

    @staticmethod
    def _from_db_fields(obj, db_obj, field_names):
        """Copy ``field_names`` from a database row onto ``obj`` through
        the fields' setters (coercion, read-only checks)."""
        for name in field_names:
            setattr(obj, name, getattr(db_obj, name))

    @classmethod
    def _new(cls, context, obj):
        """``obj``, or (None) a new object of ``context``. The context of
        an object is given when it is made: oslo.versionedobjects has no
        public way to set it later."""
        return cls(context) if obj is None else obj

    @classmethod
    def _from_db_object(cls, context, obj, db_obj):
        """``obj`` (None: a new object of ``context``) loaded from the ORM
        row ``db_obj``: every field the row class maps; no changes left
        to save."""
        obj = cls._new(context, obj)
        key = (cls, type(db_obj))
        names = _FIELDS_OF_ROWS.get(key)
        if names is None:
            names = _FIELDS_OF_ROWS[key] = [
                f for f in cls.fields if hasattr(type(db_obj), f)]
        cls._from_db_fields(obj, db_obj, names)
        obj.obj_reset_changes()
        return obj

    @classmethod
    def _from_db_row(cls, context, obj, row):
        """``_from_db_object`` for a Core result row read by name (a
        ``RowMapping``: ``result.mappings()``): the fields it has."""
        obj = cls._new(context, obj)
        for name in cls.fields:
            if name in row:
                setattr(obj, name, row[name])
        obj.obj_reset_changes()
        return obj

    # -- compare-and-swap -------------------------------------------------
    # ``model``: the ORM model of the object's table; ``IDENTITY``: the
    # fields that name its row in every statement.
    model = None
    IDENTITY = ('uuid',)

    def _identity(self):
        return {name: getattr(self, name) for name in self.IDENTITY}

    def conditional_update(self, values, expected_values=None, filters=(),
                           context=None):
        """Write ``values`` on this object's row if it still holds
        ``expected_values`` (``{field: expected}``: a value, a list of
        them, None for NULL, ``db_api.Not(...)``) and matches ``filters``:
        one compare-and-swap (``db_api.conditional_update``), the shape of
        Cinder's. True if the row moved: the values, and ``updated_at``,
        are then this object's too; False if it did not (another process
        moved it first, or it is gone). ``context``: the transaction to
        write in (default: the object's)."""
        values = dict(values)
        if 'updated_at' in self.fields:
            values.setdefault('updated_at', utils.utcnow())
        expected = dict(expected_values or {}, **self._identity())
        if not db_api.conditional_update(context or self._context,
                                         self.model, values, expected,
                                         filters):
            return False
        for name, value in values.items():
            setattr(self, name, value)
        self.obj_reset_changes(list(values))
        return True

    def conditional_destroy(self, expected_values=None, filters=(),
                            context=None):
        """Delete this object's row if it still holds ``expected_values``
        and matches ``filters`` (as ``conditional_update``); True if it
        was deleted."""
        expected = dict(expected_values or {}, **self._identity())
        return db_api.conditional_destroy(context or self._context,
                                          self.model, expected, filters)


class NovaLiteTimestampObject(object):
    fields = {
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }


class NovaLiteObjectSerializer(ovo_base.VersionedObjectSerializer):
    OBJ_BASE_CLASS = NovaLiteObject


class ObjectListBase(ovo_base.ObjectListBase):
    pass


def reads(context):
    """One reader transaction for ``with``: the objects' reads inside it
    join it (one snapshot, one BEGIN and one end instead of one per read).
    Keep calls that leave the process (block storage, RPC) outside it."""
    return db_api.context_manager.reader.using(context)


__all__ = ['NovaLiteObject', 'NovaLiteObjectRegistry', 'exception']
