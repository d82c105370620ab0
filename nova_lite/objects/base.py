"""oslo.versionedobjects base for objects that travel over RPC.

Only objects that cross RPC are versioned objects (placement's lesson: the
rest can be plain functions). Each object module keeps its query functions
beside it, as ``@db_api.context_manager.reader``/``writer`` functions taking
the context first. Object versions are pinned by fingerprint in
``tests/unit/objects/test_objects.py``: bump the version when fields or
remotable methods change.
"""

from oslo_utils import timeutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

from nova_lite import exception

# Where oslo.versionedobjects keeps a field's value on an object.
_ATTRNAME = '_obj_%s'


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


# Field types whose coercion gives back a value of this exact Python type
# unchanged (``str(s)``, ``int(i)``, ``bool(b)``; the UUID type only warns
# about a malformed value and returns ``str(value)``).
_PASS_THROUGH = {
    fields.String: str,
    fields.SensitiveString: str,
    fields.UUID: str,
    fields.Integer: int,
    fields.Boolean: bool,
}


_KINDS = {}  # field -> _pass_through_type(field); fields live with classes


def _pass_through_type(field):
    """The type whose values ``field`` stores as given, or None."""
    try:
        return _KINDS[field]
    except KeyError:
        pass
    # The setter refuses to change a read-only field: keep its check.
    kind = None if field.read_only else _PASS_THROUGH.get(type(field._type))
    _KINDS[field] = kind
    return kind


class NovaLiteObject(ovo_base.VersionedObject):
    OBJ_SERIAL_NAMESPACE = 'nova_lite_object'
    OBJ_PROJECT_NAMESPACE = 'nova_lite'

    def obj_reset_changes(self, fields=None, recursive=False):
        super().obj_reset_changes(fields, recursive=recursive)

    @staticmethod
    def _from_db_fields(obj, db_obj, field_names):
        """Copy ``field_names`` from a database row onto ``obj``.

        A row's values were coerced by their fields when they were written
        and come back with their column's Python type. Where coercion would
        return the value unchanged (a ``str`` for a string or UUID field, an
        ``int``, a ``bool``, ``None`` for a nullable field) the value is
        stored directly, as the field setter would store it, without the
        setter's coercion: that costs 5-20 us a field, and a list of 50
        block device mappings has 1,200 of them. Anything else (datetimes,
        which get their UTC tzinfo; read-only fields) goes through the
        setter.
        """
        obj_fields = obj.fields
        changed = obj._changed_fields
        for name in field_names:
            value = getattr(db_obj, name)
            field = obj_fields[name]
            kind = _pass_through_type(field)
            if kind is not None and (type(value) is kind or (
                    value is None and field.nullable)):
                setattr(obj, _ATTRNAME % name, value)
                changed.add(name)
            else:
                setattr(obj, name, value)

    @classmethod
    def _from_db_object(cls, context, obj, db_obj):
        cls._from_db_fields(obj, db_obj, [
            f for f in obj.fields if hasattr(db_obj, f)])
        obj._context = context
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


def require_found(obj, exc_class, **kwargs):
    if obj is None:
        raise exc_class(**kwargs)
    return obj


__all__ = ['NovaLiteObject', 'NovaLiteObjectRegistry', 'exception']
