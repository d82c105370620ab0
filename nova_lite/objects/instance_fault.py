"""Instance faults: the errors a server met (``fault`` in server show)."""

import traceback as tb_module

from oslo_versionedobjects import fields
import sqlalchemy as sa

from nova_lite.db import api as db_api
from nova_lite.db import models
from nova_lite import exception
from nova_lite.objects import base

# Faults longer than this are cut (the column is a VARCHAR(255)).
_MAX_MESSAGE = 255


@db_api.context_manager.writer
def _create(context, values):
    fault = models.InstanceFault(**values)
    context.session.add(fault)
    context.session.flush()
    return fault


@db_api.context_manager.reader
def _latest_by_instances(context, instance_uuids):
    newest = (sa.select(sa.func.max(models.InstanceFault.id))
              .where(models.InstanceFault.instance_uuid.in_(instance_uuids))
              .group_by(models.InstanceFault.instance_uuid))
    return context.session.execute(
        sa.select(models.InstanceFault)
        .where(models.InstanceFault.id.in_(newest))).scalars().all()


def message_and_code(exc):
    """(message, code) as Nova records them: the message of a nova_lite
    exception, only the class name of anything else (it may hold
    internals), with a 500 code."""
    if isinstance(exc, exception.NovaLiteException):
        return exc.format_message(), exc.code
    return exc.__class__.__name__, 500


@base.NovaLiteObjectRegistry.register
class InstanceFault(base.NovaLiteObject, base.NovaLiteTimestampObject):
    VERSION = '1.0'

    fields = dict(base.NovaLiteTimestampObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'instance_uuid': fields.UUIDField(),
        'code': fields.IntegerField(),
        'message': fields.StringField(),
        'details': fields.StringField(nullable=True),
        'host': fields.StringField(nullable=True),
    })

    @classmethod
    def record(cls, context, instance_uuid, exc, host=None, exc_tb=None):
        """Record ``exc`` (with its traceback) as the server's fault."""
        message, code = message_and_code(exc)
        details = ''.join(tb_module.format_exception(
            type(exc), exc, exc_tb or exc.__traceback__))
        db_obj = _create(context, {
            'instance_uuid': instance_uuid,
            'code': code,
            'message': message[:_MAX_MESSAGE],
            'details': details,
            'host': host,
        })
        return cls._from_db_object(context, None, db_obj)

    @classmethod
    def get_latest_for_instances(cls, context, instance_uuids):
        """{instance uuid: newest fault}, one query."""
        if not instance_uuids:
            return {}
        return {f.instance_uuid: cls._from_db_object(context, None, f)
                for f in _latest_by_instances(context, list(instance_uuids))}
