"""Scaffolding of the real-data tier.

``RealDataDeployment`` is ``tests.integration.deployment.Deployment``
with the libvirt driver: before anything starts it checks that libvirtd
answers and that the test guest builds (``tests.guest.fixture``: a skip
saying what is missing, a failure with ``NOVA_LITE_REQUIRE_LIBVIRT=1``),
makes a directory QEMU's user can reach and points the compute services'
``instances_path`` and the ``file`` backend's ``volumes_dir`` into it,
and configures ``[libvirt]`` for the guest (TCG, its kernel, initramfs
and agent channel; no shutdown grace). Both compute services share the
machine's libvirtd; each sees the domains it made.

``RealDataTestCase`` adds, on top of ``IntegrationTestCase``'s API
helpers, what only the guest and the host can tell:

* ``guest(server_id)``: the agent of the server's guest
  (``tests.guest.agent.Guest``: ``disks()``, ``read``, ``write``,
  ``wait_for_disk``...), found through the domain's live XML;
* ``domain_disks(server_id)``: ``{target dev: serial}`` of the domain
  (the live XML, or the definition with ``inactive=True``);
* ``host_write``/``host_read``: bytes of a ``file`` volume on the host.

Add scenarios as ``test_*.py`` modules of this package (one backend is
enough: the database is not what they prove)::

    class TestDataPath(base.RealDataTestCase):
        def test_guest_reads_the_volume(self):
            server_id = self.active_server()
            ...
"""

import os

from oslo_utils import uuidutils

from tests.guest import agent
from tests.guest import fixture as guest_fixture
from tests.integration import base
from tests.integration import deployment as deploy

# A guest boots in ~5 s idle, ~15 s on a loaded two-core machine (TCG).
BOOT_TIMEOUT = 180


class RealDataDeployment(deploy.Deployment):
    def __init__(self, backend, **kwargs):
        tag = uuidutils.generate_uuid()[:8]
        kwargs.setdefault('compute_hosts', ('compute1-%s' % tag,
                                            'compute2-%s' % tag))
        super().__init__(backend, **kwargs)

    def _setUp(self):
        self.useFixture(guest_fixture.Libvirtd())
        self.guest_image = self.useFixture(guest_fixture.GuestImage()).guest
        self.shared = self.useFixture(guest_fixture.SharedDir()).path
        self.volumes_dir = os.path.join(self.shared, 'volumes')
        os.makedirs(self.volumes_dir, mode=0o755)
        conf = {
            'DEFAULT': {
                'compute_driver': 'libvirt',
                'instances_path': os.path.join(self.shared, 'instances'),
                'shutdown_timeout': 0,
                'my_ip': '127.0.0.1',
            },
            'libvirt': {
                'virt_type': 'qemu',
                'connection_uri': guest_fixture.uri(),
                'kernel_path': self.guest_image['kernel'],
                'initrd_path': self.guest_image['initramfs'],
                'kernel_cmdline': self.guest_image['cmdline'],
                'guest_channels': self.guest_image['channel'],
                # A guest that ignores an unplug fails in seconds.
                'device_detach_attempts': 3,
                'device_detach_timeout': 5,
            },
            'volume': {'enabled_backends': 'file'},
            'file': {'volume_driver': 'file',
                     'volumes_dir': self.volumes_dir},
        }
        for section, options in self.extra_conf.items():
            conf.setdefault(section, {}).update(options)
        self.extra_conf = conf
        super()._setUp()


class RealDataTestCase(base.IntegrationTestCase):
    BACKEND = 'mysql'

    @classmethod
    def make_deployment(cls):
        return RealDataDeployment(cls.BACKEND, extra_conf=cls.EXTRA_CONF)

    def setUp(self):
        super().setUp()
        self._guests = {}

    def active_server(self, **fields):
        server_id = self.create_server(**fields)
        self.wait_for_server_status(server_id, 'ACTIVE')
        return server_id

    # -- the hypervisor's view -------------------------------------------
    def _domain(self, server_id):
        import libvirt
        conn = libvirt.open(guest_fixture.uri())
        self.addCleanup(conn.close)
        return conn.lookupByUUIDString(server_id)

    def domain_disks(self, server_id, inactive=False):
        import libvirt
        from nova_lite.virt.libvirt import config as vconfig
        flags = libvirt.VIR_DOMAIN_XML_INACTIVE if inactive else 0
        root = vconfig.parse(self._domain(server_id).XMLDesc(flags))
        return {dev: disk['serial']
                for dev, disk in vconfig.disks(root).items()}

    def guest(self, server_id, reconnect=False):
        """The agent of the server's running guest (connected once per
        test and server; ``reconnect`` after the guest was started again:
        a power cycle, an unshelve)."""
        guest = None if reconnect else self._guests.get(server_id)
        if guest is None:
            from nova_lite.virt.libvirt import config as vconfig
            root = vconfig.parse(self._domain(server_id).XMLDesc(0))
            path = vconfig.channel_paths(root).get(
                self.deployment.guest_image['channel'])
            self.assertIsNotNone(path, 'server %s has no agent channel' %
                                 server_id)
            guest = agent.wait_ready(path, timeout=BOOT_TIMEOUT)
            self.addCleanup(guest.close)
            self._guests[server_id] = guest
        return guest

    # -- the volume's bytes on the host -----------------------------------
    def volume_path(self, volume_id):
        return os.path.join(self.deployment.volumes_dir,
                            'volume-%s' % volume_id)

    def host_write(self, volume_id, offset, data):
        with open(self.volume_path(volume_id), 'r+b') as f:
            f.seek(offset)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    def host_read(self, volume_id, offset, length):
        with open(self.volume_path(volume_id), 'rb') as f:
            f.seek(offset)
            return f.read(length)
