"""The unshelve workflow: back to a compute host.

A ``shelved`` server still has its host: the host powers it on again. A
``shelved_offloaded`` server has none: the conductor picks one (the
requested ``host`` if it is up, else the up, enabled host with the fewest
servers, as for a build), writes it with a compare-and-swap on
``task_state = 'unshelving' AND host IS NULL`` and casts; the host names the
volumes that have no device name yet, connects every volume and spawns the
guest (``compute/shelve_ops.unshelve``).

If no host can be found, or the cast fails, the server goes back to where
it was (``task_state`` cleared, no host) with a fault, and the failure is
the event ``conductor_unshelve_instance``'s error.
"""

from oslo_log import log as logging

from nova_lite.conductor import build
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import instance_action
from nova_lite.objects import instance_fault
from nova_lite.objects import service as service_obj
from nova_lite import states

LOG = logging.getLogger(__name__)

EVENT = 'conductor_unshelve_instance'


def _choose_host(context, conf, requested):
    if requested is None:
        return build.select_host(context, conf)
    if requested not in service_obj.up_hosts(context, conf):
        raise exception.NoValidHost(
            reason=_('The requested host %s is not an enabled compute '
                     'host that is up.') % requested)
    return requested


def _give_up(context, instance, exc):
    """Back to shelved(_offloaded), idle, with the fault."""
    host = None if instance.vm_state == states.SHELVED_OFFLOADED else \
        instance.host
    try:
        states.move(instance, 'abandon', from_task=states.UNSHELVING,
                    host=host)
    except (exception.UnexpectedTaskStateError, exception.InstanceNotFound):
        return
    instance_fault.InstanceFault.record(context, instance.uuid, exc)


def unshelve_instance(context, conf, compute_rpcapi, instance, host=None):
    try:
        with instance_action.EventReporter(context, EVENT, conf.host,
                                           instance.uuid):
            if instance.vm_state == states.SHELVED_OFFLOADED:
                instance.host = _choose_host(context, conf, host)
                instance.save(expected_task_state=[states.UNSHELVING],
                              expected_host=None)
            compute_rpcapi.unshelve_instance(context, instance)
    except (exception.UnexpectedTaskStateError, exception.InstanceNotFound):
        LOG.info('Server %s changed while it was being unshelved; leaving '
                 'it as it is', instance.uuid)
    except Exception as exc:
        LOG.warning('Unshelving server %s failed: %s', instance.uuid, exc)
        _give_up(context, instance, exc)
