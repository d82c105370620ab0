"""oslo.messaging plumbing shared by every RPC API and service.

One transport per configuration: all services of one process (the embedded
``nova-lite-all``) must share it, since the in-process transport is the
broker. ``get_client``/``get_server`` wrap oslo.messaging with nova_lite's
serializer (request context + versioned objects) and the exception modules
allowed to cross RPC, so a domain error raised in a worker reaches the caller
as itself.

What a sent message is worth (RabbitMQ; doc/source/admin/config.rst for the
production settings):

* every publish waits for the broker's confirm (oslo.messaging's rabbit
  driver always turns publisher confirms on): a cast returns once the
  broker has taken the message, and raises if it nacked it;
* every client publishes with the *mandatory* flag (oslo.messaging's
  ``TransportOptions(at_least_once=True)``): a message that no queue would
  take (its consumer never declared one, or the queue went with a broker
  restart) is returned by the broker and raises ``MessageUndeliverable``
  instead of being dropped in silence;
* messages are persistent, and with ``[oslo_messaging_rabbit]
  rabbit_quorum_queue`` or ``amqp_durable_queues`` the queues of the
  conductor and compute topics are durable: a confirmed cast survives a
  restart of the broker;
* ``retry``: how many times a send reconnects to an unreachable broker
  before it raises ``MessageDeliveryFailure`` (None: until it is back).
  The API's clients use ``[DEFAULT] rpc_send_retries``, so that a request
  answers 503 in seconds; the services' wait for the broker.
"""

import threading
import weakref

import oslo_messaging as messaging
from oslo_messaging.rpc import dispatcher
from oslo_serialization import jsonutils

from nova_lite import context as nl_context
from nova_lite.objects import base as objects_base

ALLOWED_EXMODS = ['nova_lite.exception']

# id(conf) -> (weakref to conf, _Messaging). ConfigOpts is not hashable.
_STATE = {}
_LOCK = threading.Lock()


class _Messaging(object):
    def __init__(self, conf):
        self.transport = messaging.get_rpc_transport(
            conf, allowed_remote_exmods=ALLOWED_EXMODS)
        if (conf.oslo_messaging_notifications.transport_url
                in (None, conf.transport_url)):
            # Notifications ride the RPC transport unless an operator points
            # them elsewhere; with the in-process transport they must share
            # the one broker.
            self.notification_transport = messaging.get_notification_transport(
                conf, url=conf.transport_url,
                allowed_remote_exmods=ALLOWED_EXMODS)
        else:
            self.notification_transport = (
                messaging.get_notification_transport(
                    conf, allowed_remote_exmods=ALLOWED_EXMODS))

    def cleanup(self):
        self.transport.cleanup()
        if self.notification_transport is not self.transport:
            self.notification_transport.cleanup()


def init(conf):
    """Transports for ``conf``, created on first use and then shared."""
    with _LOCK:
        ref, state = _STATE.get(id(conf), (None, None))
        if ref is None or ref() is not conf:
            state = _Messaging(conf)
            _STATE[id(conf)] = (weakref.ref(conf), state)
        return state


def cleanup(conf):
    with _LOCK:
        ref, state = _STATE.pop(id(conf), (None, None))
    if state is not None and ref() is conf:
        state.cleanup()


class RequestContextSerializer(messaging.Serializer):
    """Carries the RequestContext and versioned objects over RPC."""

    def __init__(self, base=None):
        self._base = base or objects_base.NovaLiteObjectSerializer()

    def serialize_entity(self, context, entity):
        return self._base.serialize_entity(context, entity)

    def deserialize_entity(self, context, entity):
        return self._base.deserialize_entity(context, entity)

    def serialize_context(self, context):
        return context.to_dict()

    def deserialize_context(self, context):
        return nl_context.RequestContext.from_dict(context)


class JsonPayloadSerializer(messaging.NoOpSerializer):
    @staticmethod
    def serialize_entity(context, entity):
        return jsonutils.to_primitive(entity, convert_instances=True)


# Publish with the mandatory flag (the module docstring).
_MANDATORY = messaging.TransportOptions(at_least_once=True)


def get_client(conf, target, version_cap=None, retry=None):
    """An RPC client; ``retry``: reconnections to an unreachable broker
    before a send fails (None or -1: no limit)."""
    if retry is not None and retry < 0:
        retry = None
    return messaging.get_rpc_client(
        init(conf).transport, target, version_cap=version_cap,
        serializer=RequestContextSerializer(), retry=retry,
        transport_options=_MANDATORY)


def get_server(conf, target, endpoints, executor='threading'):
    access_policy = dispatcher.DefaultRPCAccessPolicy
    return messaging.get_rpc_server(
        init(conf).transport, target, endpoints, executor=executor,
        serializer=RequestContextSerializer(), access_policy=access_policy)


def get_notifier(conf, publisher_id):
    """A versioned notifier (``[oslo_messaging_notifications] driver``
    decides where notifications go; unset means nowhere)."""
    return messaging.Notifier(
        init(conf).notification_transport, publisher_id=publisher_id,
        serializer=RequestContextSerializer(JsonPayloadSerializer()),
        topics=['versioned_notifications'])
