"""Client side of the volume service's RPC API (namespace ``volume``):
block storage's service layer (``volume/api.py`` and the modules it
reaches) asks the volume service (``nova-lite-volume``, Cinder's
cinder-volume) that enables a backend to run that backend's driver.

A message goes to ``Target(topic=TOPIC, server=<backend name>)``: the
volume's ``host`` column holds its backend's name, and every volume
service that enables a backend consumes that backend's queue (several
services enabling one backend, as Cinder's ``backend_host`` of
active-active services, share it). Volumes travel as the plain dicts the
drivers take (``volume.backends.volume_dict``). ``[upgrade_levels]
volume`` caps the version sent (a rolling upgrade whose storage nodes are
still older).

Every method is a call: the caller moves the volume's row by what the
backend answered. A delete, a disconnect or an extend already done is not
an error, and a connect asked again connects the host again (the
attachment's connect move records it once); a create asked again fails
(the storage exists), and its caller's volume goes to ``error``:
oslo.messaging acknowledges a call's message before the handler runs, so
it is delivered at most once. The errors of
a backend come back as the exceptions the callers catch
(``VolumeBackendAPIException``, ``VolumeIsBusy``, ``InvalidVolume``...:
``nova_lite.exception``, an allowed remote module, ``nova_lite.rpc``).
A call waits up to ``[DEFAULT] long_rpc_timeout`` for a service that
works on it (its heartbeats, ``call_monitor_timeout``) and fails with
``MessagingTimeout`` after ``rpc_response_timeout`` s without one.

API version history (bump the minor version for every change, pin each
method to the lowest version that carries its arguments, and keep
``manager.RPC_API_VERSION`` in step; ``tests/unit/test_rpcapi.py``
checks):

* 1.0 - Initial version: create_volume, create_cloned_volume,
  delete_volume, extend_volume, volume_size, initialize_connection,
  terminate_connection, copy_volume_data, get_capabilities.
"""

import oslo_messaging as messaging

from nova_lite import rpc

TOPIC = 'nova-lite-volume'
NAMESPACE = 'volume'
RPC_API_VERSION = '1.0'


class VolumeAPI(object):
    def __init__(self, conf, retry=None):
        """``retry``: reconnections to an unreachable broker before a send
        fails (None: wait for it; ``nova_lite.rpc.get_client``)."""
        self.conf = conf
        target = messaging.Target(topic=TOPIC, namespace=NAMESPACE,
                                  version=RPC_API_VERSION)
        self.client = rpc.get_client(
            conf, target, version_cap=conf.upgrade_levels.volume,
            retry=retry)

    def _call(self, ctxt, backend, method, timeout=None, **kwargs):
        cctxt = self.client.prepare(
            server=backend, version='1.0',
            timeout=timeout or self.conf.long_rpc_timeout,
            call_monitor_timeout=self.conf.rpc_response_timeout)
        return cctxt.call(ctxt, method, backend=backend, **kwargs)

    def create_volume(self, ctxt, backend, volume):
        """Make the volume's storage; the row's updates (a dict)."""
        return self._call(ctxt, backend, 'create_volume', volume=volume)

    def create_cloned_volume(self, ctxt, backend, volume, src_volume):
        """Make ``volume``'s storage holding ``src_volume``'s data (the
        service beats the clone's ``updated_at`` while it copies); the
        row's updates."""
        return self._call(ctxt, backend, 'create_cloned_volume',
                          volume=volume, src_volume=src_volume)

    def delete_volume(self, ctxt, backend, volume):
        return self._call(ctxt, backend, 'delete_volume', volume=volume)

    def extend_volume(self, ctxt, backend, volume, new_size):
        return self._call(ctxt, backend, 'extend_volume', volume=volume,
                          new_size=new_size)

    def volume_size(self, ctxt, backend, volume):
        return self._call(ctxt, backend, 'volume_size', volume=volume)

    def initialize_connection(self, ctxt, backend, volume, connector):
        return self._call(ctxt, backend, 'initialize_connection',
                          volume=volume, connector=connector)

    def terminate_connection(self, ctxt, backend, volume, connector):
        return self._call(ctxt, backend, 'terminate_connection',
                          volume=volume, connector=connector)

    def copy_volume_data(self, ctxt, backend, source, target):
        """A migration's copy, run by the service of the source's
        ``backend`` (which must enable the target's too): the bytes
        copied, or None when the source's backend keeps no data. The
        service beats the migration's ``updated_at`` while it copies."""
        return self._call(ctxt, backend, 'copy_volume_data', source=source,
                          target=target)

    def get_capabilities(self, ctxt, backend, max_age, timeout=None):
        """The backend's capabilities as last reported, asked again when
        older than ``max_age`` seconds (0: now)."""
        return self._call(ctxt, backend, 'get_capabilities',
                          timeout=timeout or self.conf.rpc_response_timeout,
                          max_age=max_age)
