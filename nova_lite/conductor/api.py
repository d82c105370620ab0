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

    def attach_volume(self, context, instance, volume_id, device=None,
                      tag=None, delete_on_termination=False,
                      multiattach=False, do_cast=False):
        """Attach a volume; returns the device name unless ``do_cast``."""
        return self.conductor_rpcapi.attach_volume(
            context, instance, volume_id, device, tag,
            delete_on_termination, multiattach, do_cast=do_cast)
