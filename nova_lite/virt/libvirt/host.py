"""A compute host's connection to libvirtd, and libvirt's events.

One ``Host`` per driver: a connection opened on first use and opened
again after libvirtd went away (its close callback, or a dead
connection found on use). libvirt delivers events through an event loop
the process registers once (``virEventRegisterDefaultImpl``, before any
connection is opened) and runs on a thread of its own
(``virEventRunDefaultImpl``); its keepalive also notices a libvirtd that
stopped answering.

Device events: a live unplug is a request the guest answers (or never
does); libvirt says how it ended with ``DEVICE_REMOVED`` or
``DEVICE_REMOVAL_FAILED``, naming the device by its alias. The driver
registers a ``DeviceWaiter`` (domain uuid, alias) *before* it asks for
the unplug, so that an event that comes at once is not lost.

Lifecycle events: a domain that started, stopped (shut down, crashed,
destroyed by anyone), paused or resumed is reported to the handler the
driver sets (``set_lifecycle_handler``: the compute manager syncs that
server's power state). As Nova's host does, a "stopped" event is held
``LIFECYCLE_DELAY`` seconds and dropped if another event of that domain
comes meanwhile (a reboot stops and starts a domain); the others go at
once. The handler runs on the event loop thread: it must only hand the
work off.
"""

import base64
import threading
import uuid as uuid_lib
from xml.sax import saxutils

from oslo_log import log as logging
from oslo_utils import excutils

from nova_lite import exception

try:
    import libvirt
except ImportError:     # the ``libvirt`` extra is not installed
    libvirt = None

LOG = logging.getLogger(__name__)

REMOVED = 'removed'
REMOVAL_FAILED = 'removal failed'

# libvirt keepalive: a probe every 5 s, the connection is dead after 3
# probes without an answer.
KEEPALIVE_INTERVAL = 5
KEEPALIVE_COUNT = 3

# The namespace of the uuids of the secrets made here (uuid5 of the
# secret's usage): two processes defining one secret agree on its uuid.
SECRET_NAMESPACE = uuid_lib.UUID('9d1c8a6e-5b8f-4e4a-a2a8-4c1f2f7d1e55')

# Seconds a "stopped" lifecycle event waits for a "started" one of the same
# domain (a reboot) before it is reported (Nova's host waits as long).
LIFECYCLE_DELAY = 15

_loop_lock = threading.Lock()
_loop_thread = None


def require_libvirt():
    if libvirt is None:
        raise exception.HypervisorUnavailable(
            host='-', reason='libvirt-python is not installed (install '
            "nova_lite's libvirt extra: pip install 'nova_lite[libvirt]')")


def start_event_loop():
    """Register libvirt's default event loop and run it on a daemon
    thread, once per process."""
    global _loop_thread
    with _loop_lock:
        if _loop_thread is not None:
            return
        # libvirt prints every error on stderr by default; they are
        # raised as libvirtError (and logged where they matter).
        libvirt.registerErrorHandler(_ignore_error, None)
        libvirt.virEventRegisterDefaultImpl()
        _loop_thread = threading.Thread(target=_run_event_loop,
                                        name='libvirt-event-loop',
                                        daemon=True)
        _loop_thread.start()


def _ignore_error(ctx, error):
    pass


def _run_event_loop():
    while True:
        try:
            libvirt.virEventRunDefaultImpl()
        except Exception:
            LOG.exception('libvirt event loop iteration failed')


def error_code(exc):
    try:
        return exc.get_error_code()
    except Exception:
        return None


def error_message(exc):
    try:
        return exc.get_error_message() or str(exc)
    except Exception:
        return str(exc)


class DeviceWaiter(object):
    def __init__(self, uuid, alias):
        self.uuid = uuid
        self.alias = alias
        self.result = None
        self._event = threading.Event()

    def set(self, result):
        self.result = result
        self._event.set()

    def wait(self, timeout):
        """REMOVED, REMOVAL_FAILED, or None after ``timeout`` seconds."""
        self._event.wait(timeout)
        return self.result


class Host(object):
    def __init__(self, uri, host_name):
        require_libvirt()
        self.uri = uri
        self.host_name = host_name
        self._conn = None
        self._lock = threading.Lock()
        self._waiters = []
        self._waiters_lock = threading.Lock()
        self._lifecycle_handler = None
        # domain uuid -> the timer of its delayed "stopped" event.
        self._delayed = {}
        self._delayed_lock = threading.Lock()

    # -- the connection --------------------------------------------------
    def get_connection(self):
        """The open connection (opened again when libvirtd went away);
        ``HypervisorUnavailable`` when libvirtd does not answer."""
        with self._lock:
            conn = self._conn
            if conn is not None:
                try:
                    if conn.isAlive():
                        return conn
                except libvirt.libvirtError:
                    pass
                LOG.warning('The connection to %s is dead; reconnecting',
                            self.uri)
                self._forget(conn)
            self._conn = self._open()
            return self._conn

    def _open(self):
        start_event_loop()
        try:
            conn = libvirt.open(self.uri)
        except libvirt.libvirtError as e:
            raise exception.HypervisorUnavailable(host=self.host_name,
                                                  reason=error_message(e))
        try:
            conn.setKeepAlive(KEEPALIVE_INTERVAL, KEEPALIVE_COUNT)
        except libvirt.libvirtError as e:
            LOG.warning('No keepalive on %s: %s', self.uri, e)
        conn.registerCloseCallback(self._closed, None)
        conn.domainEventRegisterAny(
            None, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
            self._device_removed, None)
        conn.domainEventRegisterAny(
            None, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED,
            self._device_removal_failed, None)
        conn.domainEventRegisterAny(
            None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE,
            self._lifecycle, None)
        LOG.info('Connected to %s', self.uri)
        return conn

    def _forget(self, conn):
        if self._conn is conn:
            self._conn = None
        try:
            conn.close()
        except Exception:
            pass

    def _closed(self, conn, reason, opaque):
        # On the event loop thread: the next use opens a new connection.
        LOG.warning('The connection to %s closed (reason %s)', self.uri,
                    reason)
        with self._lock:
            if self._conn is conn:
                self._conn = None

    # -- domains ---------------------------------------------------------
    def lookup(self, uuid):
        """The domain of server ``uuid``; None if libvirt has none."""
        conn = self.get_connection()
        try:
            return conn.lookupByUUIDString(uuid)
        except libvirt.libvirtError as e:
            if error_code(e) == libvirt.VIR_ERR_NO_DOMAIN:
                return None
            raise

    def list_domains(self):
        return self.get_connection().listAllDomains(0)

    # -- device events -----------------------------------------------------
    def device_waiter(self, uuid, alias):
        waiter = DeviceWaiter(uuid, alias)
        with self._waiters_lock:
            self._waiters.append(waiter)
        return waiter

    def forget_waiter(self, waiter):
        with self._waiters_lock:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _notify(self, dom, alias, result):
        try:
            uuid = dom.UUIDString()
        except Exception:
            LOG.exception('Device event without a domain uuid')
            return
        with self._waiters_lock:
            matched = [w for w in self._waiters
                       if w.uuid == uuid and w.alias == alias]
            for waiter in matched:
                self._waiters.remove(waiter)
        LOG.debug('Device %s of domain %s: %s (%d waiting)', alias, uuid,
                  result, len(matched))
        for waiter in matched:
            waiter.set(result)

    def _device_removed(self, conn, dom, alias, opaque):
        self._notify(dom, alias, REMOVED)

    def _device_removal_failed(self, conn, dom, alias, opaque):
        self._notify(dom, alias, REMOVAL_FAILED)

    # -- lifecycle events --------------------------------------------------
    def set_lifecycle_handler(self, handler):
        """``handler(uuid)`` is called when the domain ``uuid`` started,
        stopped, paused or resumed (a stop after ``LIFECYCLE_DELAY``)."""
        self._lifecycle_handler = handler

    def _lifecycle(self, conn, dom, event, detail, opaque):
        # On the event loop thread: no libvirt call, no wait.
        if event not in (libvirt.VIR_DOMAIN_EVENT_STARTED,
                         libvirt.VIR_DOMAIN_EVENT_STOPPED,
                         libvirt.VIR_DOMAIN_EVENT_SUSPENDED,
                         libvirt.VIR_DOMAIN_EVENT_RESUMED):
            return
        try:
            uuid = dom.UUIDString()
        except Exception:
            LOG.exception('Lifecycle event without a domain uuid')
            return
        LOG.debug('Lifecycle event %s (detail %s) of domain %s', event,
                  detail, uuid)
        with self._delayed_lock:
            pending = self._delayed.pop(uuid, None)
            if pending is not None:
                pending.cancel()
            if event == libvirt.VIR_DOMAIN_EVENT_STOPPED and \
                    LIFECYCLE_DELAY > 0:
                timer = threading.Timer(LIFECYCLE_DELAY, self._emit_delayed,
                                        args=(uuid,))
                timer.daemon = True
                self._delayed[uuid] = timer
                timer.start()
                return
        self._emit(uuid)

    def _emit_delayed(self, uuid):
        with self._delayed_lock:
            timer = self._delayed.get(uuid)
            if timer is None or timer is not threading.current_thread():
                return  # cancelled, or superseded
            del self._delayed[uuid]
        self._emit(uuid)

    def _emit(self, uuid):
        handler = self._lifecycle_handler
        if handler is None:
            return
        try:
            handler(uuid)
        except Exception:
            LOG.exception('The lifecycle event of domain %s was not handled',
                          uuid)

    def cancel_delayed_events(self):
        with self._delayed_lock:
            for timer in self._delayed.values():
                timer.cancel()
            self._delayed.clear()

    # -- secrets -----------------------------------------------------------
    def ensure_secret(self, usage, password):
        """Define (or update) the iSCSI secret ``usage`` with
        ``password``: what a disk's ``<auth>`` names."""
        conn = self.get_connection()
        try:
            secret = conn.secretLookupByUsage(
                libvirt.VIR_SECRET_USAGE_TYPE_ISCSI, usage)
        except libvirt.libvirtError as e:
            if error_code(e) != libvirt.VIR_ERR_NO_SECRET:
                raise
            secret = conn.secretDefineXML(
                "<secret ephemeral='no' private='yes'>"
                '<uuid>%s</uuid>'
                "<usage type='iscsi'><target>%s</target></usage>"
                '</secret>' % (uuid_lib.uuid5(SECRET_NAMESPACE, usage),
                               saxutils.escape(usage)))
        secret.setValue(password.encode())

    def delete_secret(self, usage):
        conn = self.get_connection()
        try:
            conn.secretLookupByUsage(libvirt.VIR_SECRET_USAGE_TYPE_ISCSI,
                                     usage).undefine()
        except libvirt.libvirtError as e:
            if error_code(e) != libvirt.VIR_ERR_NO_SECRET:
                raise

    def lookup_secret_by_uuid(self, uuid):
        """The libvirt secret ``uuid``; None when libvirt has none."""
        try:
            return self.get_connection().secretLookupByUUIDString(uuid)
        except libvirt.libvirtError as e:
            if error_code(e) != libvirt.VIR_ERR_NO_SECRET:
                raise
            return None

    def ensure_ceph_secret(self, uuid, usage_name, key):
        """Define the ceph secret ``uuid`` (usage name ``usage_name``)
        holding the cephx ``key`` (base64, as keyrings write it) unless
        libvirt has a secret ``uuid``; True when it was defined here."""
        if self.lookup_secret_by_uuid(uuid) is not None:
            return False
        secret = self.get_connection().secretDefineXML(
            "<secret ephemeral='no' private='yes'>"
            '<uuid>%s</uuid>'
            "<usage type='ceph'><name>%s</name></usage>"
            '</secret>' % (saxutils.escape(uuid),
                           saxutils.escape(usage_name)))
        try:
            # libvirt keeps the key's bytes (virsh secret-set-value
            # decodes its base64 argument the same way).
            secret.setValue(base64.b64decode(key))
        except Exception:
            with excutils.save_and_reraise_exception():
                secret.undefine()
        return True

    def delete_secret_by_uuid(self, uuid):
        secret = self.lookup_secret_by_uuid(uuid)
        if secret is None:
            return
        try:
            secret.undefine()
        except libvirt.libvirtError as e:
            if error_code(e) != libvirt.VIR_ERR_NO_SECRET:
                raise
