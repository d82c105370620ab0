"""What the real-data fault scenarios (``test_faults.py``) break, without
touching what the node shares.

* ``UnixForwarder``: a Unix socket of the test's own forwarding each
  connection to another one (libvirtd's). A compute service configured
  with ``[libvirt] connection_uri = qemu+unix:///system?socket=<path>``
  reaches the node's libvirtd through it; ``stop()`` removes the socket
  and cuts the connections it carries, which is what the compute service
  sees when libvirtd stops (its QEMU processes go on running, as they do
  when libvirtd stops); ``start()`` lets it connect again. The node's
  libvirtd, shared by every test, is never stopped.
* ``FaultsDeployment``: ``RealDataDeployment`` whose compute services
  reach libvirtd through a ``UnixForwarder`` (``libvirtd_proxy``), and
  a third backend beside the deployment's ``iscsi`` (the default for new
  volumes: the node's tgtd under a target prefix of the deployment's,
  ``tgtd``) and ``file``: ``tgtprivate``, iSCSI on a tgtd of its own
  (``private_tgtd``) that a test may stop and start; a volume type naming
  it (``volume_backend_name``) places a volume there.
"""

import contextlib
import os
import socket
import threading

import fixtures

from tests.fixtures import tgt
from tests.integration.realdata import base

LIBVIRT_SOCKET = '/var/run/libvirt/libvirt-sock'
# Bytes moved per read between the two ends of a forwarded connection.
CHUNK = 1 << 16
ACCEPT_POLL = 0.2

PRIVATE_BACKEND = 'tgtprivate'


class UnixForwarder(fixtures.Fixture):
    """Listens at ``path`` (in a directory of its own) and forwards each
    connection to the Unix socket ``target``, both ways, byte for byte
    (no file descriptors: libvirt's remote protocol passes none for what
    a compute service asks)."""

    def __init__(self, target, name='forward.sock'):
        super().__init__()
        self.target = target
        self.name = name
        self._listener = None
        self._thread = None
        self._conns = set()
        self._lock = threading.Lock()

    def _setUp(self):
        self.path = os.path.join(
            self.useFixture(fixtures.TempDir()).path, self.name)
        self.start()
        self.addCleanup(self.stop)

    @property
    def running(self):
        return self._listener is not None

    def start(self):
        assert not self.running, 'the forwarder is running already'
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen(64)
        # accept() looks every ACCEPT_POLL seconds whether it was stopped
        # (closing a socket does not wake a thread blocked on it).
        listener.settimeout(ACCEPT_POLL)
        self._listener = listener
        self._thread = threading.Thread(target=self._accept,
                                        args=(listener,), daemon=True,
                                        name='forwarder %s' % self.path)
        self._thread.start()

    def stop(self):
        """Stop listening (the socket file goes: a client's connect fails
        as with no daemon) and cut every forwarded connection."""
        listener, self._listener = self._listener, None
        if listener is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self._thread.join(10)
        listener.close()
        with self._lock:
            conns, self._conns = self._conns, set()
        for sock in conns:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener):
        while listener is self._listener:
            try:
                client, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            client.settimeout(None)
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(self.target)
            except OSError:
                client.close()
                upstream.close()
                continue
            with self._lock:
                if listener is not self._listener:
                    client.close()
                    upstream.close()
                    return
                self._conns.update((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst),
                                 daemon=True).start()

    def _pump(self, src, dst):
        try:
            while True:
                data = src.recv(CHUNK)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        # One end closed: the other end sees it closed too.
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with self._lock:
            self._conns.discard(src)
            self._conns.discard(dst)


def backend_conf(tgtd, volumes_dir):
    """The options of an ``iscsi`` backend exporting from ``tgtd``."""
    return {'volume_driver': 'iscsi',
            'volumes_dir': volumes_dir,
            'target_prefix': tgtd.prefix,
            'target_ip_address': tgtd.ip,
            'target_port': tgtd.port,
            'tgt_control_port': tgtd.control_port}


class FaultsDeployment(base.RealDataDeployment):
    """See the module docstring: the real-data deployment (its ``iscsi``
    backend on the node's tgtd, ``file`` beside it) with a second iSCSI
    backend on a tgtd of its own (``private_tgtd``, its LUN files in
    ``private_volumes_dir``), and the compute services reaching libvirtd
    through ``libvirtd_proxy``."""

    def __init__(self, backend, service_recovery=None, **kwargs):
        """``service_recovery``: ``[recovery]`` options of the conductor
        and the compute services alone."""
        self.service_recovery = dict(service_recovery or {})
        super().__init__(backend, **kwargs)

    def _setUp(self):
        self.private_tgtd = self.useFixture(tgt.Tgtd(private=True))
        self.libvirtd_proxy = self.useFixture(
            UnixForwarder(LIBVIRT_SOCKET, 'libvirt-sock'))
        self.private_volumes_dir = self.useFixture(fixtures.TempDir()).path
        conf = {
            'libvirt': {'connection_uri': 'qemu+unix:///system?socket=%s'
                        % self.libvirtd_proxy.path},
            'volume': {'enabled_backends': ','.join(
                base.BACKENDS + (PRIVATE_BACKEND,))},
            PRIVATE_BACKEND: backend_conf(self.private_tgtd,
                                          self.private_volumes_dir),
        }
        for section, options in self.extra_conf.items():
            conf.setdefault(section, {}).update(options)
        self.extra_conf = conf
        super()._setUp()
        self.volumes_dirs[PRIVATE_BACKEND] = self.private_volumes_dir

    def _service(self, name, script, host):
        # The conductor and the compute services settle with
        # ``service_recovery`` (``[recovery]`` options in a file of their
        # own after the deployment's); the volume service, where block
        # storage settles and checks its exports, keeps the defaults.
        proc = super()._service(name, script, host)
        if self.service_recovery and script != 'nova-lite-volume':
            path = os.path.join(self.path, '%s-recovery.conf' % name)
            with open(path, 'w') as f:
                f.write('[recovery]\n' + ''.join(
                    '%s = %s\n' % item
                    for item in sorted(self.service_recovery.items())))
            proc.argv = proc.argv + ['--config-file', path]
        return proc
