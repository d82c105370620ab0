"""Client of the test guest's agent (``tools/guest/build.py``).

The agent listens on the guest's virtio-serial channel
``org.nova_lite.guest.0``; on the host the channel is a unix socket that
libvirt makes (its path is in the domain's live XML). One request per
line, ``<id> <COMMAND> <args>``, one answer per line, ``<id> OK ...`` or
``<id> ERR <message>``; answers whose id is not the one asked for (left
over from an earlier client) are skipped.

The guest sees a virtio disk's serial cut to 20 bytes (virtio-blk's
limit): ``Guest`` finds disks by the volume id's first 20 characters.
"""

import base64
import socket
import time

SERIAL_BYTES = 20


class GuestError(Exception):
    """The guest answered ERR (a refused write, an unknown disk...)."""


class Timeout(Exception):
    """The guest did not answer, or not as awaited, before a deadline."""


def guest_serial(volume_id):
    return (volume_id or '-')[:SERIAL_BYTES]


class Guest(object):
    def __init__(self, socket_path, connect_timeout=60.0, timeout=30.0):
        self.path = socket_path
        self.timeout = timeout
        self._ids = 0
        self._buffer = b''
        deadline = time.monotonic() + connect_timeout
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(socket_path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise Timeout('no agent socket at %s' % socket_path)
                time.sleep(0.2)

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _line(self, deadline):
        while b'\n' not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout('no answer from the guest at %s' % self.path)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise Timeout('the guest channel %s closed' % self.path)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b'\n')
        return line.decode(errors='replace').strip()

    def call(self, command, *args, timeout=None):
        """Send a command; the text after OK, or GuestError."""
        self._ids += 1
        ident = str(self._ids)
        line = ' '.join([ident, command] + [str(a) for a in args])
        self.sock.sendall(line.encode() + b'\n')
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            answer = self._line(deadline)
            got, _, rest = answer.partition(' ')
            if got != ident:
                continue    # an answer to an earlier client
            status, _, text = rest.partition(' ')
            if status == 'OK':
                return text
            raise GuestError(text or answer)

    def ping(self, timeout=None):
        return self.call('PING', timeout=timeout) == 'pong'

    def disks(self):
        """``{guest serial: {'name', 'size', 'ro'}}`` (serial ``-`` for a
        disk without one)."""
        result = {}
        for entry in self.call('LIST').split():
            name, serial, size, ro = entry.split(',')
            result[serial] = {'name': name, 'size': int(size),
                              'ro': ro == '1'}
        return result

    def has_disk(self, volume_id):
        return guest_serial(volume_id) in self.disks()

    def read(self, volume_id, offset, length):
        text = self.call('READ', guest_serial(volume_id), offset, length)
        return base64.b64decode(text)

    def write(self, volume_id, offset, data):
        self.call('WRITE', guest_serial(volume_id), offset,
                  base64.b64encode(data).decode())

    def flush(self, volume_id):
        self.call('FLUSH', guest_serial(volume_id))

    def ignore_unplug(self):
        """From now on the guest ignores unplug requests."""
        return self.call('IGNORE_UNPLUG')

    def wait_for(self, predicate, timeout=60.0, what='the guest'):
        """Poll ``predicate(self)`` until true; Timeout after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self):
                return
            if time.monotonic() > deadline:
                raise Timeout('%s: not within %ss' % (what, timeout))
            time.sleep(0.1)

    def wait_for_disk(self, volume_id, timeout=60.0):
        self.wait_for(lambda g: g.has_disk(volume_id), timeout,
                      'disk %s in the guest' % volume_id)

    def wait_for_no_disk(self, volume_id, timeout=60.0):
        self.wait_for(lambda g: not g.has_disk(volume_id), timeout,
                      'disk %s gone from the guest' % volume_id)


def wait_ready(socket_path, timeout=120.0):
    """A connected ``Guest`` whose agent answered a ping."""
    deadline = time.monotonic() + timeout
    guest = Guest(socket_path, connect_timeout=timeout)
    while True:
        try:
            if guest.ping(timeout=max(1.0, min(5.0, deadline -
                                               time.monotonic()))):
                return guest
        except Timeout:
            if time.monotonic() > deadline:
                guest.close()
                raise
