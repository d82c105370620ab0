"""Server side of the volume service's RPC API (``volume.rpcapi``): the
drivers of the backends this service enables (``[volume]
enabled_backends``), and block storage's settling of them.

Each handler runs one driver operation on the backend the message names
and answers what the driver answered; the caller (block storage's service
layer, ``volume/api.py``...) moves the rows. Handlers are idempotent as the
driver interface is (``drivers.base``): a delete, a disconnect or an
extend asked again is not an error; a connect asked again connects the
host again (one more ``initialize_connection`` of the attachment, which
its connect move records once). A failure other than a domain error
(``nova_lite.exception``) comes back as ``VolumeBackendAPIException``
carrying its text, so that it crosses RPC as an exception the callers
catch.

The long copies (a clone's, a migration's) beat the row the caller's
settling watches (the clone's ``updated_at``, the migration source's),
and stop when that work was settled meanwhile, as they did in the API
process.

``init_host`` ensures the backends' exports (what a restarted target
daemon or node lost is exported again) before the service consumes its
queues. Block storage's settling of this service's backends and the
export check run on periodics of their own (``volume_service.periodic``,
started by ``volume_service.service``), with ``settling``
(``volume_service.settling``): this manager's drivers, called in this
process.
"""

import functools
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_lite import crashpoint
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite import manager
from nova_lite import utils
from nova_lite.volume import api as volume_api
from nova_lite.volume.db import migration as migration_db
from nova_lite.volume.db import volumes as volume_db
from nova_lite.volume import rpcapi
from nova_lite.volume import status as st
from nova_lite.volume_service import drivers
from nova_lite.volume_service import settling

LOG = logging.getLogger(__name__)

RPC_API_VERSION = rpcapi.RPC_API_VERSION

# Seconds between two heartbeats of a long copy.
HEARTBEAT = 1.0


def _backend_errors(func):
    """A driver's failure as an exception the caller catches: domain
    errors as themselves, anything else as VolumeBackendAPIException;
    either logged when it is the backend's."""
    @functools.wraps(func)
    def wrapper(self, context, backend, **kwargs):
        try:
            return func(self, context, backend, **kwargs)
        except exception.VolumeBackendAPIException as e:
            # The backend's own failure: the operator reads it in this
            # service's log, as in cinder-volume's.
            LOG.error('%s on backend %s failed: %s', func.__name__, backend,
                      e.format_message())
            raise
        except exception.NovaLiteException:
            raise
        except Exception as e:
            LOG.exception('%s on backend %s failed', func.__name__, backend)
            raise exception.VolumeBackendAPIException(
                data='%s on backend %s: %s' % (func.__name__, backend, e))
    return messaging.expected_exceptions(exception.NovaLiteException)(
        wrapper)


def _heartbeat(beat):
    """A ``progress`` callable that calls ``beat`` at most every
    ``HEARTBEAT`` seconds."""
    last = [time.monotonic()]

    def progress():
        now = time.monotonic()
        if now - last[0] < HEARTBEAT:
            return
        last[0] = now
        beat()
    return progress


class VolumeManager(manager.Manager):
    target = messaging.Target(namespace=rpcapi.NAMESPACE,
                              version=RPC_API_VERSION)

    def __init__(self, conf, host):
        super().__init__(conf, host)
        # The drivers are loaded here: a wrong configuration fails at
        # the start of the service.
        self.backends = drivers.get_backends(conf)
        self._settling = None

    @property
    def settling(self):
        """Block storage's settling of this service's backends
        (``volume_service.settling``), its migrations' through block
        storage's service layer given this manager as its backends."""
        if self._settling is None:
            api = volume_api.API(self.conf, backends=self)
            self._settling = settling.Settling(self.conf, self.backends,
                                               api.migration)
        return self._settling

    def _driver(self, backend):
        return drivers.get_driver(self.conf, backend)

    # -- start and periodic tasks --------------------------------------
    def init_host(self, context):
        """Export again what the backends' target daemons lost while this
        service was away (a node reboot, a tgtd restart), before the
        service consumes its queues."""
        for volume_id, outcome in self.settling.ensure_exports(
                context):
            LOG.info('Export of volume %s at start: %s', volume_id, outcome)

    # -- the RPC API ---------------------------------------------------
    @_backend_errors
    def create_volume(self, context, backend, volume):
        updates = self._driver(backend).create_volume(volume) or {}
        crashpoint.hit(crashpoint.VOLUME_SERVICE_CREATE_AFTER_BACKEND)
        return updates

    @_backend_errors
    def create_cloned_volume(self, context, backend, volume, src_volume):
        def beat():
            if not volume_db.volume_touch(context, volume['id'],
                                          st.CREATING):
                raise exception.InvalidVolume(reason=_(
                    'volume %s was settled while its data was copied') %
                    volume['id'])
        return self._driver(backend).create_cloned_volume(
            volume, src_volume, progress=_heartbeat(beat)) or {}

    @_backend_errors
    def delete_volume(self, context, backend, volume):
        self._driver(backend).delete_volume(volume)

    @_backend_errors
    def extend_volume(self, context, backend, volume, new_size):
        self._driver(backend).extend_volume(volume, new_size)
        crashpoint.hit(crashpoint.VOLUME_SERVICE_EXTEND_AFTER_BACKEND)

    @_backend_errors
    def volume_size(self, context, backend, volume):
        return self._driver(backend).volume_size(volume)

    @_backend_errors
    def initialize_connection(self, context, backend, volume, connector):
        info = self._driver(backend).initialize_connection(volume, connector)
        crashpoint.hit(crashpoint.VOLUME_SERVICE_CONNECT_AFTER_BACKEND)
        return info

    @_backend_errors
    def terminate_connection(self, context, backend, volume, connector):
        self._driver(backend).terminate_connection(volume, connector)
        crashpoint.hit(crashpoint.VOLUME_SERVICE_DISCONNECT_AFTER_BACKEND)

    @_backend_errors
    def copy_volume_data(self, context, backend, source, target):
        """A migration's copy from ``source`` (of ``backend``) to
        ``target`` (of a backend this service enables too), each opened
        as a file (``VolumeDriver.open_volume``), beating the
        migration's ``updated_at``; stops when the migration was settled
        meanwhile. The bytes copied, or None when ``backend`` keeps no
        data."""
        if target['host'] not in self.backends:
            raise exception.VolumeBackendAPIException(data=_(
                'the volume service of backend %(src)s does not enable '
                'backend %(dst)s: a migration copies between two backends '
                'of one volume service') % {'src': backend,
                                            'dst': target['host']})
        source_file = self._driver(backend).open_volume(source, 'r')
        if source_file is None:
            LOG.info('Volume %s: its backend %s keeps no data to copy',
                     source['id'], backend)
            return None

        def beat():
            if not migration_db.migration_touch(context, source['id']):
                raise exception.VolumeMigrationFailed(reason=_(
                    'the migration of volume %s was settled meanwhile') %
                    source['id'])
        with source_file:
            target_file = self._driver(target['host']).open_volume(
                target, 'w')
            if target_file is None:
                raise exception.InvalidVolume(reason=_(
                    'backend %(backend)s keeps no data: volume %(id)s '
                    'cannot be copied there') % {'backend': target['host'],
                                                 'id': source['id']})
            with target_file:
                crashpoint.hit(crashpoint.VOLUME_SERVICE_MIGRATE_MID_COPY)
                copied = utils.copy_file_data(source_file, target_file,
                                              progress=_heartbeat(beat))
        LOG.info('Volume %s: %d bytes copied to %s', source['id'], copied,
                 target['host'])
        return copied

    @_backend_errors
    def get_capabilities(self, context, backend, max_age):
        return self._driver(backend).reported_capabilities(max_age)
