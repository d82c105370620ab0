"""The virt driver of nova-lite-compute: ``[DEFAULT] compute_driver`` and
the options of the libvirt driver (``[libvirt]`` and the [DEFAULT] ones
Nova's libvirt hosts read), with Nova's names where Nova has them."""

from oslo_config import cfg
from oslo_utils import netutils

DEFAULT_OPTS = [
    cfg.StrOpt(
        'compute_driver',
        default='fake',
        choices=[
            ('fake', 'Guests kept in memory (the embedded default; no '
                     'hypervisor needed).'),
            ('libvirt', 'Real guests: QEMU domains through libvirt (needs '
                        'the ``libvirt`` extra and a running libvirtd).'),
        ],
        help="""
The virt driver of this compute host: what its servers are.

Related options:

* ``[libvirt]``: the options of the libvirt driver.
"""),
    cfg.StrOpt(
        'instances_path',
        help="""
Directory where the libvirt driver keeps each server's files (its console
log), one directory per server uuid. Unset means ``$state_path/instances``.
QEMU runs as its own user (``user`` in libvirt's ``qemu.conf``): the
directory and its parents must be searchable by it, as must the ``file``
volume backend's ``volumes_dir``.
"""),
    cfg.StrOpt(
        'my_ip',
        default=netutils.get_my_ipv4(),
        sample_default='<host_ipv4>',
        help="""
IP address of this compute host, as its volume connector (what block
storage exports volumes to) reports it.
"""),
    cfg.IntOpt(
        'shutdown_timeout',
        default=60,
        min=0,
        help="""
Seconds the libvirt driver waits for a guest to shut down when a server is
stopped (an ACPI power-button press) before it powers the guest off. 0
powers it off at once.
"""),
    cfg.BoolOpt(
        'resume_guests_state_on_host_boot',
        default=False,
        help="""
Whether the libvirt driver starts again, when nova-lite-compute starts, the
guests of servers that were running and whose guest is shut off (the host
rebooted). A guest that is still running is never touched; a guest libvirt
no longer has is always defined again (and started if its server was
running).
"""),
]

libvirt_group = cfg.OptGroup(
    'libvirt',
    title='Libvirt driver options',
    help="""
Options of the libvirt virt driver (``[DEFAULT] compute_driver =
libvirt``): each server a QEMU domain booted from a kernel and initramfs
the host is configured with, its volumes hot-plugged as virtio disks whose
serial is the volume id.
""")

LIBVIRT_OPTS = [
    cfg.StrOpt(
        'virt_type',
        choices=[
            ('kvm', 'Hardware virtualization (``/dev/kvm``).'),
            ('qemu', "QEMU's emulator (TCG): slow, works everywhere."),
        ],
        help="""
The domain type of the guests. Unset: ``kvm`` when ``/dev/kvm`` can be
opened *and* the CPU advertises hardware virtualization (``vmx`` or ``svm``
in ``/proc/cpuinfo``), else ``qemu``. An openable ``/dev/kvm`` alone proves
nothing: in a virtual machine without nested virtualization it may open and
still hang every guest. The driver logs its choice at start; set ``qemu``
to force the emulator, ``kvm`` only where the CPU has vmx or svm.
"""),
    cfg.StrOpt(
        'connection_uri',
        default='qemu:///system',
        help="""
The libvirt connection URI (empty: ``qemu:///system``).
"""),
    cfg.StrOpt(
        'kernel_path',
        help="""
The kernel every guest boots (direct kernel boot). Required with the
libvirt driver: there is no image service, and the built-in flavors carry no
extra specs to choose another. ``tools/guest/build.py`` builds a test guest
(Debian's kernel and a busybox initramfs).
"""),
    cfg.StrOpt(
        'initrd_path',
        help='The initramfs every guest boots with (direct kernel boot).'),
    cfg.StrOpt(
        'kernel_cmdline',
        default='console=ttyS0',
        help="""
The kernel command line of every guest. The console log of each server
(``$instances_path/<uuid>/console.log``) is the guest's first serial port:
keep ``console=ttyS0`` to see the guest's messages there.
"""),
    cfg.ListOpt(
        'guest_channels',
        default=['org.nova_lite.guest.0'],
        help="""
Names of the virtio-serial channels each guest gets, each a unix socket on
the host that libvirt creates (its path is in the domain's XML). The test
guest's agent listens on ``org.nova_lite.guest.0``; add
``org.qemu.guest_agent.0`` for qemu-guest-agent.
"""),
    cfg.IntOpt(
        'num_pcie_ports',
        default=8,
        min=0,
        max=28,
        help="""
Number of PCIe root ports of each guest (machine type q35). Every
hot-plugged volume takes one, as do the guest's own virtio devices: this
bounds how many volumes a running server can take. 0 lets libvirt add only
the ports the guest's devices need at start (Nova's default), which leaves
none free for hot-plug.
"""),
    cfg.IntOpt(
        'device_detach_attempts',
        default=8,
        min=1,
        help="""
Maximum number of times the driver asks the guest to release a disk (a
live unplug) before the detach fails. The volume then stays attached and
the server gets an instance fault.

Related options:

* ``device_detach_timeout``
"""),
    cfg.IntOpt(
        'device_detach_timeout',
        default=20,
        min=1,
        help="""
Seconds the driver waits, after each unplug request, for libvirt's event
that the guest released the disk (or refused to) before it asks again.

Related options:

* ``device_detach_attempts``
"""),
    cfg.ListOpt(
        'disk_cachemodes',
        default=['file=none', 'network=none'],
        help="""
Cache modes of volume disks per source type (``file``: the ``file``
backend's volumes; ``network``: iSCSI and RBD), e.g.
``file=directsync,network=writeback``. A source type not listed gets
``none``, as in Nova. A shareable disk (a multiattach volume) is
always ``none``, as in Nova: every writer must bypass the host's page
cache. ``none`` needs a file system with ``O_DIRECT`` (not tmpfs) under the
``file`` backend's volumes.
"""),
    cfg.StrOpt(
        'rbd_user',
        help="""
The Ceph (RADOS) client name, without ``client.``, that RBD volumes
authenticate as where block storage names none (its ``connection_info``
has no ``auth_username``), or where it asks for no authentication and
``rbd_secret_uuid`` is set (Nova's rule).

Related options:

* ``rbd_secret_uuid``
"""),
    cfg.StrOpt(
        'rbd_secret_uuid',
        help="""
The uuid of the libvirt secret (usage type ``ceph``) holding the cephx key
RBD volumes authenticate with where block storage's ``connection_info``
names no ``secret_uuid``, or where it asks for no authentication (Nova's
rule: block storage's own user and secret win when it sends them). The
operator defines this secret on every compute host (``virsh
secret-define``, ``virsh secret-set-value``): the driver never defines nor
removes it. A secret that block storage names and the host lacks is
defined from the keyring it sends (nova_lite's ``rbd`` backend sends each
host its own identity's; Cinder sends one with ``rbd_keyring_conf``), and
removed when a volume is disconnected and no domain of the host's
libvirtd uses it any more; without a keyring the operator must define it.

Related options:

* ``rbd_user``
"""),
    cfg.StrOpt(
        'iscsi_initiator_name',
        regex=r'^(iqn|eui|naa)\.[^\s,]{1,219}$',
        help="""
The iSCSI initiator name of this compute host: what its connector gives
block storage (which exports volumes to it) and what its guests' iSCSI
disks log in with. Unset means os-brick's (the machine's
``/etc/iscsi/initiatorname.iscsi``). Each compute host needs a name of its
own: two hosts sharing one are told apart by the target only through
their connections' CHAP accounts (the ``iscsi`` backend logs an error for
each such connection, and refuses it without ``use_chap_auth``). Set it
where several compute hosts run on one machine.
"""),
    cfg.IntOpt(
        'swap_volume_timeout',
        default=600,
        min=1,
        help="""
Seconds a volume swap may take to copy the old volume into the new one
(libvirt's block copy) before it is cancelled; the guest then keeps the old
volume and the swap fails.
"""),
]


def register_opts(conf):
    conf.register_opts(DEFAULT_OPTS)
    conf.register_group(libvirt_group)
    conf.register_opts(LIBVIRT_OPTS, group=libvirt_group)


def list_opts():
    return {'DEFAULT': DEFAULT_OPTS, libvirt_group: LIBVIRT_OPTS}
