"""Small helpers shared by the API, compute and block storage."""


def isotime(value):
    """A datetime as Nova and Cinder views show it: naive UTC with
    microseconds (``2026-11-21T20:36:50.000000``), or None."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = (value - value.utcoffset()).replace(tzinfo=None)
    return value.strftime('%Y-%m-%dT%H:%M:%S.%f')
