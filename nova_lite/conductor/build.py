"""The build workflow: schedule new servers onto compute hosts.

A server is placed on an enabled compute host that is up (its heartbeat is
recent), the one with the fewest servers; the choice is written with a
compare-and-swap on ``task_state = 'scheduling' AND host IS NULL``, so a
server deleted meanwhile is not built. No host: the server goes to ERROR
with a ``NoValidHost`` fault and gives back the volumes the API reserved
for it (attachments deleted, volume mappings destroyed), so that a volume
is not held by a server that never ran (for a multiattach volume shared by
a 2.105 multi-create, an attachment the API completed at once would even
look attached).
"""

from oslo_log import log as logging

from nova_lite.compute import release
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import block_device as bdm_obj
from nova_lite.objects import instance as instance_obj
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite import states

LOG = logging.getLogger(__name__)

EVENT = 'conductor_schedule_and_build_instances'


def select_host(context, conf):
    """The up, enabled compute host with the fewest servers."""
    hosts = service_obj.up_hosts(context, conf)
    if not hosts:
        raise exception.NoValidHost(
            reason=_('There are not enough hosts available.'))
    counts = instance_obj.count_by_host(context, hosts)
    return min(hosts, key=lambda h: (counts.get(h, 0), hosts.index(h)))


def _set_error(context, instance, exc, volume_client=None):
    try:
        # The state and its fault in one transaction: a client that sees
        # the server ERROR sees why.
        with instance_action.transaction(context):
            states.move(instance, 'schedule_failed')
            instance_fault.InstanceFault.record(context, instance.uuid, exc)
    except (exception.UnexpectedTaskStateError, exception.InstanceNotFound):
        return
    if volume_client is not None:
        _release_volumes(context, volume_client, instance)


def _release_volumes(context, volume_client, instance):
    """Give back the volumes of a server that will never be built."""
    release.release_unbuilt(
        context, volume_client,
        bdm_obj.BlockDeviceMapping.get_all_by_instance(context,
                                                       instance.uuid))


def _build_one(context, conf, compute_rpcapi, instance, volume_client=None):
    try:
        with instance_action.EventReporter(context, EVENT, conf.host,
                                           instance.uuid):
            host = select_host(context, conf)
            instance.host = host
            try:
                instance.save(expected_task_state=[states.SCHEDULING],
                              expected_host=None)
            except (exception.UnexpectedTaskStateError,
                    exception.InstanceNotFound):
                LOG.info('Server %s was deleted before it was scheduled',
                         instance.uuid)
                return
    except exception.NoValidHost as exc:
        LOG.warning('No host for server %s: %s', instance.uuid, exc)
        _set_error(context, instance, exc, volume_client)
        return
    compute_rpcapi.build_and_run_instance(context, instance, host)


def build_instances(context, conf, compute_rpcapi, instances,
                    volume_client=None):
    for instance in instances:
        try:
            _build_one(context, conf, compute_rpcapi, instance, volume_client)
        except Exception as exc:
            LOG.exception('Scheduling server %s failed', instance.uuid)
            _set_error(context, instance, exc, volume_client)
