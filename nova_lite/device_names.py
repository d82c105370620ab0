"""Linux disk names of a server's block devices (``/dev/vda``,
``/dev/vdb``, ...), as the API side names the volumes of a new server and
the host side picks the name of an attach: what both sides share, kept out
of either (Nova's ``nova/block_device.py`` keeps the same)."""

import string

#: The root disk of every server.
DEFAULT_ROOT_DEVICE = '/dev/vda'


def device_letters(index):
    """0 -> 'a', 25 -> 'z', 26 -> 'aa' (the Linux disk naming)."""
    letters = ''
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = string.ascii_lowercase[rest] + letters
    return letters


def split(name):
    """'/dev/vdb' -> ('vd', 'b'); None for names that do not parse."""
    if not name:
        return None
    base = name.rsplit('/', 1)[-1]
    for prefix in ('xvd', 'vd', 'sd', 'hd'):
        if base.startswith(prefix) and base[len(prefix):].isalpha():
            return prefix, base[len(prefix):]
    return None
