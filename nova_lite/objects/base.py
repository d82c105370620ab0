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


_PLANS = {}  # (object class, row class) -> _plan(); classes live forever


def _plan(cls, row_cls, field_names):
    """How to copy each of ``field_names`` from a row: (name, attribute
    name, field, pass-through type or None, whether the setter must run)."""
    plan = []
    for name in field_names:
        field = cls.fields[name]
        plan.append((name, _ATTRNAME % name, field,
                     _PASS_THROUGH.get(type(field._type)),
                     # The setter refuses to change a read-only field.
                     field.read_only))
    return tuple(plan)


_ROW_PLANS = {}  # (object class, column names) -> _row_plan()


def _row_plan(cls, columns):
    """``_plan()`` for rows whose values are in the order of ``columns``
    (names), for the columns that are fields, each with its position."""
    plan = _ROW_PLANS.get((cls, columns))
    if plan is None:
        names = [name for name in columns if name in cls.fields]
        plan = _ROW_PLANS[(cls, columns)] = tuple(
            entry + (columns.index(entry[0]),)
            for entry in _plan(cls, None, names))
    return plan


_PRIMITIVE_PLANS = {}  # object class -> _primitive_plan()


def _primitive_plan(cls):
    """(name, attribute name, field, pass-through type or None) for every
    field of ``cls``, and whether any field holds a versioned object."""
    plan = _PRIMITIVE_PLANS.get(cls)
    if plan is None:
        plan = _PRIMITIVE_PLANS[cls] = (
            tuple((name, _ATTRNAME % name, field,
                   _PASS_THROUGH.get(type(field._type)))
                  for name, field in cls.fields.items()),
            any(isinstance(field._type, fields.Object)
                for field in cls.fields.values()))
    return plan


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

    # Every RPC call and cast carries objects (a server, a mapping) both
    # ways, and oslo.versionedobjects converts each field through its
    # field type. The two methods below do what it does, field for field,
    # with the field types' conversions skipped where they return the value
    # unchanged: a ``str``, ``int`` or ``bool`` of a string, UUID, integer
    # or boolean field, and None (to a primitive always; from one, for a
    # nullable field). Other values, other versions and version manifests
    # go through oslo.versionedobjects.

    def obj_to_primitive(self, target_version=None, version_manifest=None):
        if ((target_version is not None and
                target_version != self.VERSION) or version_manifest):
            return super().obj_to_primitive(target_version, version_manifest)
        plan, has_objects = _primitive_plan(type(self))
        values = self.__dict__
        primitive = {}
        for name, attrname, field, kind in plan:
            if attrname not in values:
                continue
            value = values[attrname]
            if value is None or (kind is not None and type(value) is kind):
                primitive[name] = value
            else:
                primitive[name] = field.to_primitive(self, name, value)
        key = self._obj_primitive_key
        obj = {
            key('name'): self.obj_name(),
            key('namespace'): self.OBJ_PROJECT_NAMESPACE,
            key('version'): self.VERSION,
            key('data'): primitive,
        }
        if has_objects:
            changed = self.obj_what_changed()
        else:
            changed = [name for name in self._changed_fields
                       if name in self.fields]
        changes = [name for name in changed if name in primitive]
        if changes:
            obj[key('changes')] = changes
        return obj

    @classmethod
    def _obj_from_primitive(cls, context, objver, primitive):
        self = cls()
        self._context = context
        self.VERSION = objver
        objdata = primitive[cls._obj_primitive_key('data')]
        for name, attrname, field, kind in _primitive_plan(cls)[0]:
            if name not in objdata:
                continue
            value = objdata[name]
            if (not field.read_only and (
                    (kind is not None and type(value) is kind) or
                    (value is None and field.nullable))):
                setattr(self, attrname, value)
            else:
                setattr(self, name, field.from_primitive(self, name, value))
        self._changed_fields = {
            x for x in primitive.get(cls._obj_primitive_key('changes'), [])
            if x in self.fields}
        return self

    def obj_reset_changes(self, fields=None, recursive=False):
        super().obj_reset_changes(fields, recursive=recursive)

    @staticmethod
    def _from_db_fields(obj, db_obj, field_names, plan=None):
        """Copy ``field_names`` from a database row onto ``obj``.

        What the field setters would do, with less overhead (this runs for
        every field of every object loaded: a list of 50 block device
        mappings has 1,200 of them). A row's values were coerced by their
        fields when they were written and come back with their column's
        Python type: where coercion would return the value unchanged (a
        ``str`` for a string or UUID field, an ``int``, a ``bool``, ``None``
        for a nullable field) it is stored as is; other values (datetimes,
        which get their UTC tzinfo) are coerced by the field, as the setter
        does. Read-only fields go through the setter and its check.
        """
        if plan is None:
            plan = _plan(type(obj), type(db_obj), field_names)
        changed = obj._changed_fields
        for name, attrname, field, kind, use_setter in plan:
            value = getattr(db_obj, name)
            if use_setter:
                setattr(obj, name, value)
                continue
            if not (type(value) is kind or (value is None and field.nullable)):
                value = field.coerce(obj, name, value)
            setattr(obj, attrname, value)
            changed.add(name)

    @classmethod
    def _from_db_object(cls, context, obj, db_obj):
        key = (cls, type(db_obj))
        plan = _PLANS.get(key)
        if plan is None:
            # The row class's mapped attributes that are fields.
            plan = _PLANS[key] = _plan(cls, type(db_obj), [
                f for f in cls.fields if hasattr(type(db_obj), f)])
        cls._from_db_fields(obj, db_obj, None, plan=plan)
        obj._context = context
        obj.obj_reset_changes()
        return obj

    @classmethod
    def _from_db_row(cls, context, obj, row, columns):
        """``_from_db_object`` for a Core result row (or any sequence) of
        the columns named ``columns`` (a tuple, in the row's order), e.g.
        a ``sa.select(table)``'s ``tuple(table.c.keys())``: the values are
        read by position, which is cheaper than a Row's attribute access.
        What is stored is what ``_from_db_fields`` stores: the loop is the
        same one with ``row[index]`` for ``getattr`` (kept inline in both:
        it runs for every field of every object loaded, where a shared
        helper call per field would cost what the fast path saves);
        ``tests/unit/objects/test_base.py`` compares the two."""
        changed = obj._changed_fields
        for name, attrname, field, kind, use_setter, index in _row_plan(
                cls, columns):
            value = row[index]
            if use_setter:
                setattr(obj, name, value)
                continue
            if not (type(value) is kind or (value is None and field.nullable)):
                value = field.coerce(obj, name, value)
            setattr(obj, attrname, value)
            changed.add(name)
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


def reads(context):
    """One reader transaction for ``with``: the objects' reads inside it
    join it (one snapshot, one BEGIN and one end instead of one per read).
    Keep calls that leave the process (block storage, RPC) outside it."""
    return db_api.context_manager.reader.connection.using(context)


def require_found(obj, exc_class, **kwargs):
    if obj is None:
        raise exc_class(**kwargs)
    return obj


__all__ = ['NovaLiteObject', 'NovaLiteObjectRegistry', 'exception']
