"""The driver interface every block-storage backend implements.

A driver is small on purpose: make and remove a volume's storage, make and
break a host's connection to it, and say what it can do. Everything else
(the status machine, attachments, policy) is ``nova_lite.volume.api``'s.

Drivers are used from every process that runs ``volume/api.py`` (the API
for ``/v3``, compute and conductor through the ``local`` client), so a
driver keeps no state that another process would need: whatever it must
remember about a volume it returns from ``create_volume`` as model updates
(stored in the ``volumes`` row) or derives from the volume itself.

Volumes are passed as plain dicts: ``id``, ``size`` (GiB), ``host`` (the
backend name), ``provider_location``, ``multiattach``.
"""

import abc


class VolumeDriver(abc.ABC):
    """One backend: ``conf`` is the whole ConfigOpts, ``backend_conf``
    the backend's own group (e.g. ``[fake1]``)."""

    #: Options of this driver, registered in each backend group using it.
    OPTS = []

    def __init__(self, conf, backend_name):
        self.conf = conf
        self.backend_name = backend_name

    @property
    def backend_conf(self):
        return self.conf[self.backend_name]

    @abc.abstractmethod
    def create_volume(self, volume):
        """Make the volume's storage. Returns a dict of column updates for
        the volume row (``provider_location``), possibly empty."""

    @abc.abstractmethod
    def delete_volume(self, volume):
        """Remove the volume's storage; a volume already gone is not an
        error."""

    @abc.abstractmethod
    def initialize_connection(self, volume, connector):
        """Connect a host. ``connector`` is the host connector; its
        ``mode`` (``ro``/``rw``) is the access mode to grant. Returns
        ``{'driver_volume_type': ..., 'data': {...}}`` with ``data``
        including ``access_mode``."""

    @abc.abstractmethod
    def terminate_connection(self, volume, connector):
        """Disconnect a host (``connector`` as given when connecting; may be
        empty when it is not known)."""

    def get_capabilities(self):
        """What the backend can do, as Cinder reports pool capabilities;
        ``multiattach`` decides whether multiattach volumes may be placed
        here."""
        return {
            'volume_backend_name': self.volume_backend_name,
            'driver': self.__class__.__name__,
            'multiattach': False,
        }

    @property
    def volume_backend_name(self):
        return self.backend_conf.volume_backend_name or self.backend_name

    @staticmethod
    def access_mode(connector):
        mode = (connector or {}).get('mode') or 'rw'
        return mode if mode in ('ro', 'rw') else 'rw'
