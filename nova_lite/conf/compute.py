"""[compute] and [fake_driver] options of nova-lite-compute, and the
[DEFAULT] options of shelving and deferred delete (Nova's names)."""

from oslo_config import cfg

compute_group = cfg.OptGroup(
    'compute',
    title='Compute service options',
    help='Options of nova-lite-compute, one per hypervisor host.')

COMPUTE_OPTS = [
    cfg.IntOpt(
        'workers',
        default=8,
        min=1,
        help="""
Number of threads that handle incoming RPC messages in one compute service.
Operations on one server are serialized by a per-server lock whatever this
value is.
"""),
    cfg.IntOpt(
        'max_disk_devices_to_attach',
        default=-1,
        min=-1,
        help="""
Maximum number of disk devices (root disk and volumes) a server may have on
this host. -1 means unlimited. Attaching one more fails with 403.
"""),
    cfg.FloatOpt(
        'multiattach_reserve_timeout',
        default=60.0,
        min=0.0,
        help="""
Seconds an attach (or a server build) waits for a multiattach volume that
another server's attach or detach holds ``reserved``, ``attaching`` or
``detaching`` before it gives up. The block storage refuses a new
reservation in those states (as Cinder does); they last as long as one
host takes to connect the volume, so attaches of one multiattach volume to
several servers at once succeed one after the other. 0 fails at once.
"""),
    cfg.FloatOpt(
        'periodic_interval',
        default=60.0,
        min=0.1,
        help="""
Seconds between two runs of the compute host's periodic tasks: offloading
servers shelved for longer than ``[DEFAULT] shelved_offload_time`` (when it
is above 0) and deleting servers soft-deleted for longer than ``[DEFAULT]
reclaim_instance_interval`` (when it is above 0). A server waits at most
this much longer than those options say.
"""),
]

# [DEFAULT], as in Nova: read by the API and by the compute hosts.
DEFAULT_OPTS = [
    cfg.IntOpt(
        'shelved_offload_time',
        default=0,
        min=-1,
        help="""
Seconds a shelved server keeps its compute host before it is offloaded.

A shelved server is powered off but stays on its host (status ``SHELVED``)
and holds the host's resources; offloading releases them: the guest is
destroyed, its volumes' connections to the host are closed (their
attachments are kept) and the server has no host (``SHELVED_OFFLOADED``);
unshelving then schedules it again, possibly elsewhere.

* ``0``: offload as soon as the server is shelved.
* ``-1``: never offload automatically (an administrator can still use the
  ``shelveOffload`` action).
* ``N`` > 0: a periodic task of each compute host offloads servers that
  have been shelved for more than N seconds (checked every
  ``[compute] periodic_interval`` seconds).
"""),
    cfg.IntOpt(
        'reclaim_instance_interval',
        default=0,
        min=0,
        help="""
Seconds a deleted server is kept, restorable, before it is really deleted.

``0`` (the default) deletes servers at once. With N > 0, ``DELETE
/servers/{id}`` soft-deletes a server on a compute host: it is powered off
and shown as ``SOFT_DELETED`` with its volumes still attached, the
``restore`` action brings it back, ``forceDelete`` deletes it now, and a
periodic task of its compute host deletes it for good once it has been
soft-deleted for more than N seconds (checked every ``[compute]
periodic_interval`` seconds). A server without a host (not built, or
shelved-offloaded) is always deleted at once.
"""),
]

# [DEFAULT], as in Nova: the hypervisor's truth. A compute host aligns the
# database with its guests (power-state sync, lifecycle events) and
# decides what to do with the guests of deleted servers.
HYPERVISOR_TRUTH_OPTS = [
    cfg.IntOpt(
        'sync_power_state_interval',
        default=600,
        help="""
Seconds between two power-state syncs of a compute host: each server of the
host with no task in progress is compared with what the hypervisor says of
its guest. A server whose guest stopped, crashed or was destroyed behind the
control plane's back becomes ``SHUTOFF``; a stopped server whose guest runs
has its guest stopped (the sync never starts a guest). The libvirt driver's
lifecycle events make the same sync, for one server, promptly. ``0`` syncs
at every periodic run of the host (``[DEFAULT] report_interval``); a
negative value disables the periodic sync (events still sync).
"""),
    cfg.StrOpt(
        'running_deleted_instance_action',
        default='reap',
        choices=[
            ('noop', 'Do nothing.'),
            ('log', 'Log each such guest.'),
            ('shutdown', 'Power each such guest off.'),
            ('reap', 'Destroy each such guest.'),
        ],
        help="""
What a compute host does with a guest of its hypervisor whose server the
database says was deleted (deleted without this host while it was fenced,
say), once it was deleted more than ``running_deleted_instance_timeout``
seconds ago. A guest whose server the database does not know at all (a
guest of another deployment sharing the hypervisor, or a database restored
from a backup) is only logged, whatever this option says.

Related options: ``running_deleted_instance_timeout``,
``running_deleted_instance_poll_interval``.
"""),
    cfg.IntOpt(
        'running_deleted_instance_timeout',
        default=0,
        min=0,
        help="""
Seconds a server must have been deleted before
``running_deleted_instance_action`` applies to its guest.
"""),
    cfg.StrOpt(
        'instance_name_template',
        default='instance-%08x',
        help="""
How a server's instance name is made: the name of its libvirt domain, and
the API's ``OS-EXT-SRV-ATTR:instance_name``. ``%d``/``%x`` forms take the
server's database row id (the default: ``instance-00000001``);
``%(uuid)s`` takes its uuid. Deployments sharing one libvirtd must use
templates whose names cannot collide (libvirt refuses a second domain of
one name): a prefix of their own, or ``instance-%(uuid)s``. Changing it
renames a domain the next time it is started (or found shut off when the
compute service starts); domains are found by their uuid, never by name.
"""),
    cfg.IntOpt(
        'running_deleted_instance_poll_interval',
        default=1800,
        min=0,
        help="""
Seconds between two looks of a compute host for the guests of deleted
servers (``running_deleted_instance_action``), checked at every periodic run
(``[DEFAULT] report_interval``). The host also looks at start and whenever
it finds itself forced down, no longer forced down, or silent for longer
than ``service_down_time``. ``0`` disables the periodic look.
"""),
]

fake_driver_group = cfg.OptGroup(
    'fake_driver',
    title='Fake virt driver options',
    help="""
The fake virt driver records guests and their block devices in memory. Its
delays reproduce a busy or slow hypervisor in tests and benchmarks.
""")

FAKE_DRIVER_OPTS = [
    cfg.FloatOpt(
        'reserve_delay',
        default=0.0,
        min=0.0,
        help='Seconds added to every device-name reservation.'),
    cfg.FloatOpt(
        'attach_delay',
        default=0.0,
        min=0.0,
        help='Seconds added to every volume attach in the guest.'),
]


def register_opts(conf):
    conf.register_opts(DEFAULT_OPTS)
    conf.register_opts(HYPERVISOR_TRUTH_OPTS)
    conf.register_group(compute_group)
    conf.register_opts(COMPUTE_OPTS, group=compute_group)
    conf.register_group(fake_driver_group)
    conf.register_opts(FAKE_DRIVER_OPTS, group=fake_driver_group)


def list_opts():
    return {'DEFAULT': DEFAULT_OPTS + HYPERVISOR_TRUTH_OPTS,
            compute_group: COMPUTE_OPTS,
            fake_driver_group: FAKE_DRIVER_OPTS}
