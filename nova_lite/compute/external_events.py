"""Events other services send about servers (Nova's
``os-server-external-events``): the rules, for the API handler and for
nova_lite's own block storage (``nova_lite.volume.servers``).

Each event names a server and, for the volume events, the volume (its
``tag``). An event is accepted (``200``) when its server exists and is on a
host: it is then cast to that host (compute RPC
``external_instance_event``, one message per host), which acts on it
later; the sender is not told how that went (as in Nova: the instance
action ``extend_volume`` and its event ``compute_extend_volume`` say it).
It is refused, and nothing is sent, when the server does not exist or is
deleted (``404``), when it has no host (not scheduled yet, or
shelved-offloaded: ``422``), or when a ``volume-extended`` event names no
volume (``400``).

What a host does with each event (``compute.host.manager``):

* ``volume-extended``: the guest's disk of that volume is resized to the
  volume's new size (block storage's), so the guest sees it;
* any other event (``volume-reimaged``, the network, power and
  accelerator events): nothing in nova_lite waits for it (Nova's hosts
  hand such events to the operation waiting for them, a rebuild of a
  volume-backed server for ``volume-reimaged``; nova_lite has none), so
  the host logs it and drops it, as Nova's does with an event nothing
  waits for.
"""

import collections

from oslo_log import log as logging

from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action

LOG = logging.getLogger(__name__)

VOLUME_EXTENDED = 'volume-extended'
VOLUME_REIMAGED = 'volume-reimaged'
POWER_UPDATE = 'power-update'
ACCELERATOR_REQUEST_BOUND = 'accelerator-request-bound'
# Nova's names, in the order its microversions added them.
NETWORK_EVENTS = ('network-changed', 'network-vif-plugged',
                  'network-vif-unplugged', 'network-vif-deleted')
STATUSES = ('failed', 'completed', 'in-progress')

# The host's step of a ``volume-extended`` event (the instance action
# ``extend_volume``'s event, as Nova's).
COMPUTE_EXTEND_EVENT = 'compute_extend_volume'

ACCEPTED = 200
NO_TAG = 400
NOT_FOUND = 404
NO_HOST = 422


def _needs_tag(event):
    return event['name'] == VOLUME_EXTENDED and event.get('tag') is None


class ExternalEvents(object):
    def __init__(self, compute_rpcapi):
        self.compute_rpcapi = compute_rpcapi

    def create(self, context, events):
        """Accept or refuse each event (``{'server_uuid', 'name', 'tag',
        'status'}``, the tag and status optional) and send the accepted
        ones to their servers' hosts. Returns one ``(code, event)`` per
        event, in order: the code as above, the event as sent on (its
        status ``completed`` when accepted, ``failed`` otherwise). A
        caller acting as an administrator or a service: any project's
        servers."""
        instances = instance_obj.get_by_uuids(
            context, [e['server_uuid'] for e in events])
        results = []
        accepted = []
        for event in events:
            event = dict(event)
            instance = instances.get(event['server_uuid'])
            if instance is None:
                code = NOT_FOUND
            elif _needs_tag(event):
                code = NO_TAG
            elif not instance.host:
                code = NO_HOST
            else:
                code = ACCEPTED
                accepted.append(event)
            event['status'] = 'completed' if code == ACCEPTED else 'failed'
            if code != ACCEPTED:
                LOG.debug('Dropping event %s:%s for server %s (%s)',
                          event['name'], event.get('tag'),
                          event['server_uuid'], code)
            results.append((code, event))
        if accepted:
            if not self.compute_rpcapi.can_send_external_events():
                # Hosts capped below compute RPC 1.5: nothing is recorded
                # or sent (503).
                raise exception.ServiceTooOld(reason=_(
                    'nova-lite-compute too old for external events'))
            self._send(context, instances, accepted)
        return results

    def volume_extended(self, context, volume_id, instance_uuids):
        """``volume-extended`` of ``volume_id`` to each server of
        ``instance_uuids`` (what Cinder sends after it extended an
        attached volume); ``create``'s answer."""
        return self.create(context, [
            {'server_uuid': uuid, 'name': VOLUME_EXTENDED, 'tag': volume_id}
            for uuid in instance_uuids])

    def _send(self, context, instances, events):
        """Record the instance action a user follows (``extend_volume``
        for ``volume-extended``, as Nova) and cast each host its events."""
        by_host = collections.defaultdict(list)
        for event in events:
            instance = instances[event['server_uuid']]
            if event['name'] == VOLUME_EXTENDED:
                instance_action.InstanceAction.action_start(
                    context, instance.uuid, instance_action.EXTEND_VOLUME)
            LOG.info('Creating event %s:%s for server %s on %s',
                     event['name'], event.get('tag'), instance.uuid,
                     instance.host)
            by_host[instance.host].append(event)
        for host, host_events in by_host.items():
            uuids = {e['server_uuid'] for e in host_events}
            self.compute_rpcapi.external_instance_event(
                context, [instances[u] for u in sorted(uuids)],
                host_events, host)
