"""[recovery] options: settling work whose owner died or stopped moving."""

from oslo_config import cfg

recovery_group = cfg.OptGroup(
    'recovery',
    title='Recovery options',
    help="""
How nova-lite-conductor and nova-lite-compute settle volume operations
whose owning process died or stopped moving (an attach, detach or swap in
flight, the volumes of a build, unshelve or delete). Each service takes its
own unfinished work back when it starts; a periodic task settles work that
has not moved for ``stalled_after`` seconds, and at once the work of a
service an administrator forced down. A service that only misses its
heartbeats keeps its work. Block storage settles its own operations (an
extend, a delete or a migration whose process died, the exports a
restarted target daemon lost) in the processes that serve it: every API
process and nova-lite-all.
""")

ALL_OPTS = [
    cfg.IntOpt(
        'settle_interval',
        default=20,
        min=0,
        help="""
Seconds between two runs of the periodic task that settles stalled work,
in nova-lite-conductor and in nova-lite-compute, and of block storage's
settling in the volume services (nova-lite-volume, and the one
nova-lite-all runs; its first run one interval after the service starts). 0
disables the periodic tasks (work is then settled only when its owner
starts again, or by ``nova-lite-manage volume_attachment reconcile``;
block storage's, only by that command).

Related options:

* ``stalled_after``
* ``[DEFAULT] service_down_time``
"""),
    cfg.IntOpt(
        'stalled_after',
        default=60,
        min=1,
        help="""
Seconds after its last recorded step that an operation counts as
stalled and is settled by the periodic task: work an API process accepted
whose message was lost is sent again, a conductor's that stopped moving is
rolled back (a take-over: the conductor, should it move again, finds its
work taken at its next write). Long waits (``long_rpc_timeout``,
``[compute] multiattach_reserve_timeout``) keep their operation moving
and need not be covered. Keep it well above the longest step a virt
driver or backend takes; nova-lite-conductor and nova-lite-compute refuse
to start when it is below ``[DEFAULT] service_down_time``, or below twice
``[cinder] timeout`` with ``[volume] client = cinder``.

Related options:

* ``settle_interval``
"""),
]


def register_opts(conf):
    conf.register_group(recovery_group)
    conf.register_opts(ALL_OPTS, group=recovery_group)


def list_opts():
    return {recovery_group: ALL_OPTS}
