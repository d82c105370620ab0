"""``ComputeTaskAPI``: how the API hands workflows to the conductor.

The facade the compute service layer uses; whether an operation waits is
the caller's choice (``do_cast``), so the asynchronous attach of 2.101 is
the same workflow, cast instead of called.
"""

from nova_lite.conductor import rpcapi


class ComputeTaskAPI(object):
    def __init__(self, conf):
        self.conductor_rpcapi = rpcapi.ConductorAPI(conf)

    def build_instances(self, context, instances):
        """Schedule and build new servers (asynchronous)."""
        self.conductor_rpcapi.build_instances(context, instances)

    def unshelve_instance(self, context, instance, host=None):
        """Unshelve (asynchronous); an offloaded server is scheduled again,
        on ``host`` if given."""
        self.conductor_rpcapi.unshelve_instance(context, instance, host=host)

    def attach_volume(self, context, instance, volume_id, device=None,
                      tag=None, delete_on_termination=False,
                      multiattach=False, bdm=None, do_cast=False):
        """Attach a volume (``bdm``: the mapping created for it); returns
        the device name unless ``do_cast``."""
        return self.conductor_rpcapi.attach_volume(
            context, instance, volume_id, device, tag,
            delete_on_termination, multiattach, bdm=bdm, do_cast=do_cast)

    def check_can_attach_volume(self):
        """ServiceTooOld (503) if the conductor cannot take an attach
        with its mapping (RPC 1.2)."""
        self.conductor_rpcapi.check_version('1.2')
