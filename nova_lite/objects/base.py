"""oslo.versionedobjects base for objects that travel over RPC.

Only objects that cross RPC are versioned objects (placement's lesson: the
rest can be plain functions). Each object module keeps its query functions
beside it, as ``@db_api.context_manager.reader``/``writer`` functions taking
the context first. Object versions are pinned by fingerprint in
``tests/unit/objects/test_objects.py``: bump the version when fields or
remotable methods change.
"""

from oslo_utils import timeutils
from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

from nova_lite.db import api as db_api
from nova_lite import exception


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
    def _from_db_row(cls, context, obj, row, columns):
        """``_from_db_object`` for a Core result row (or any sequence) of
        the columns named ``columns`` (in the row's order), e.g. a
        ``sa.select(table)``'s ``tuple(table.c.keys())``."""
        obj = cls._new(context, obj)
        for index, name in enumerate(columns):
            if name in cls.fields:
                setattr(obj, name, row[index])
        obj.obj_reset_changes()
        return obj


class NovaLiteTimestampObject(object):
    fields = {
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }


class NovaLiteObjectSerializer(ovo_base.VersionedObjectSerializer):
    OBJ_BASE_CLASS = NovaLiteObject


class ObjectListBase(ovo_base.ObjectListBase):
    pass


def utcnow():
    """Naive UTC now, as stored in the database."""
    return timeutils.utcnow().replace(tzinfo=None, microsecond=0)


def reads(context):
    """One reader transaction for ``with``: the objects' reads inside it
    join it (one snapshot, one BEGIN and one end instead of one per read).
    Keep calls that leave the process (block storage, RPC) outside it."""
    return db_api.context_manager.reader.connection.using(context)


__all__ = ['NovaLiteObject', 'NovaLiteObjectRegistry', 'exception']
