"""The host's connector properties, read once and kept while the host
stays the same.

os-brick's ``get_connector_properties`` probes every protocol it knows
(``cat`` of the iSCSI initiator name, ``findmnt``, ``blkid``,
``dmidecode``, the NVMe host NQN and id, the FC HBAs): 0.4-0.6 s of
subprocesses on a test machine, and its answer changes only when the
host does. ``ConnectorProperties`` asks os-brick once and answers from
memory while what os-brick read is unchanged: the files it reads (by
inode, size and modification time), the host name, ``my_ip`` and the
multipath flags. A change of any of them (an operator writes a new
initiator name, the machine is renamed) makes the next call ask
os-brick again. The compute service asks at start (``init_host``), so
the first attach pays nothing either.
"""

import copy
import os
import socket
import threading

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# What os-brick's connectors read from the host's files.
WATCHED_PATHS = (
    '/etc/iscsi/initiatorname.iscsi',   # ISCSIConnector: the initiator
    '/etc/nvme/hostnqn',                # NVMeOFConnector: nqn
    '/etc/nvme/hostid',                 # NVMeOFConnector: host id
    '/sys/class/fc_host',               # FibreChannelConnector: HBAs
)


def _stat(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class ConnectorProperties(object):
    """os-brick's properties of this host, cached while the host is the
    same (see the module's docstring). ``read`` is the function that asks
    os-brick; ``args`` gives what it is asked with, ``(my_ip, multipath,
    enforce_multipath, host)``, read at each call (configuration can be
    reloaded). os-brick's answer is never handed out itself, only
    copies."""

    def __init__(self, read, args, paths=WATCHED_PATHS):
        self._read = read
        self._args = args
        self._paths = tuple(paths)
        self._lock = threading.Lock()
        self._props = None
        self._fingerprint = None
        self.reads = 0

    def fingerprint(self, args):
        """What the properties depend on, cheaply read (a few stats)."""
        return (args, socket.gethostname(),
                tuple(_stat(p) for p in self._paths))

    def get(self):
        args = tuple(self._args())
        fingerprint = self.fingerprint(args)
        with self._lock:
            if self._props is None or fingerprint != self._fingerprint:
                if self._props is not None:
                    LOG.info('The host changed (initiator name, host name '
                             'or multipath); reading its connector '
                             'properties again')
                self._props = self._read(*args)
                self._fingerprint = fingerprint
                self.reads += 1
            return copy.deepcopy(self._props)
