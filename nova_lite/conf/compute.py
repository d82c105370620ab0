"""[compute] and [fake_driver] options of nova-lite-compute."""

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
    conf.register_group(compute_group)
    conf.register_opts(COMPUTE_OPTS, group=compute_group)
    conf.register_group(fake_driver_group)
    conf.register_opts(FAKE_DRIVER_OPTS, group=fake_driver_group)


def list_opts():
    return {compute_group: COMPUTE_OPTS, fake_driver_group: FAKE_DRIVER_OPTS}
