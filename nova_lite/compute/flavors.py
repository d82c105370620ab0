"""The built-in flavors.

nova_lite has no flavor management: a small fixed set of Nova's classic
flavors, enough for clients that pick a flavor by name or id. The fake virt
driver does not enforce their sizes.
"""

import collections

from nova_lite import exception

Flavor = collections.namedtuple(
    'Flavor', ['flavorid', 'name', 'memory_mb', 'vcpus', 'root_gb',
               'ephemeral_gb', 'swap', 'rxtx_factor', 'is_public',
               'disabled', 'description', 'extra_specs'])


def _flavor(flavorid, name, memory_mb, vcpus, root_gb, description):
    return Flavor(flavorid=flavorid, name=name, memory_mb=memory_mb,
                  vcpus=vcpus, root_gb=root_gb, ephemeral_gb=0, swap=0,
                  rxtx_factor=1.0, is_public=True, disabled=False,
                  description=description, extra_specs={})


FLAVORS = collections.OrderedDict((f.flavorid, f) for f in [
    _flavor('1', 'm1.tiny', 512, 1, 1, 'Tiny: 1 vCPU, 512 MiB, 1 GiB'),
    _flavor('2', 'm1.small', 2048, 1, 20, 'Small: 1 vCPU, 2 GiB, 20 GiB'),
    _flavor('3', 'm1.medium', 4096, 2, 40, 'Medium: 2 vCPU, 4 GiB, 40 GiB'),
    _flavor('4', 'm1.large', 8192, 4, 80, 'Large: 4 vCPU, 8 GiB, 80 GiB'),
    _flavor('5', 'm1.xlarge', 16384, 8, 160,
            'Extra large: 8 vCPU, 16 GiB, 160 GiB'),
])


def get_all(min_ram=None, min_disk=None):
    """Flavors in id order, optionally with at least this RAM/disk."""
    return [f for f in FLAVORS.values()
            if (min_ram is None or f.memory_mb >= min_ram) and
            (min_disk is None or f.root_gb >= min_disk)]


def get(flavor_id):
    """The flavor with id ``flavor_id``; ``FlavorNotFound`` (404)."""
    flavor = FLAVORS.get(str(flavor_id))
    if flavor is None:
        raise exception.FlavorNotFound(flavor_id=flavor_id)
    return flavor


def from_ref(flavor_ref):
    """The flavor a ``flavorRef`` names: an id, or a URL ending in one."""
    return get(str(flavor_ref).rstrip('/').rsplit('/', 1)[-1])
