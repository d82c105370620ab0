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


class NovaLiteObject(ovo_base.VersionedObject):
    OBJ_SERIAL_NAMESPACE = 'nova_lite_object'
    OBJ_PROJECT_NAMESPACE = 'nova_lite'

    def obj_reset_changes(self, fields=None, recursive=False):
        super().obj_reset_changes(fields, recursive=recursive)

    @staticmethod
    def _from_db_fields(obj, db_obj, field_names):
        for name in field_names:
            setattr(obj, name, getattr(db_obj, name))

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
