"""Small helpers shared by the API, compute and block storage."""

import errno
import os

from oslo_utils import timeutils


def utcnow():
    """The one clock of every time nova_lite writes into a row and
    compares with one: naive UTC, to the microsecond (every ``DateTime``
    column keeps microseconds: ``DATETIME(6)`` on MariaDB). Two moves of
    one row within a second stay two different times, so a
    compare-and-swap on a last move tells them apart."""
    return timeutils.utcnow()


def isotime(value):
    """A datetime as Nova and Cinder views show it: naive UTC with
    microseconds (``2026-11-21T20:36:50.000000``), or None."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = (value - value.utcoffset()).replace(tzinfo=None)
    return value.strftime('%Y-%m-%dT%H:%M:%S.%f')


# Bytes copied between two checks of ``copy_data``'s ``progress``.
COPY_CHUNK = 4 * 1024 * 1024


def data_extents(fd, size=None):
    """``(offset, length)`` of the parts of open file ``fd`` that hold
    data (its holes are skipped: a sparse volume of many GiB copies in no
    time); the whole file when the file system cannot tell (no
    SEEK_DATA)."""
    if size is None:
        size = os.fstat(fd).st_size
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:      # only a hole is left
                return
            yield offset, size - offset     # SEEK_DATA not supported
            return
        end = os.lseek(fd, start, os.SEEK_HOLE)
        yield start, end - start
        offset = end


def copy_data(source, dest, progress=None):
    """Copy the bytes of file (or block device) ``source`` into ``dest``,
    which must exist and be at least as large: data extents only, holes
    left alone (``dest`` reads zeros there, as a new volume does).
    ``progress()`` is called between chunks (a migration's heartbeat; it
    may raise to stop the copy). Returns the number of bytes copied."""
    copied = 0
    src = os.open(source, os.O_RDONLY)
    try:
        dst = os.open(dest, os.O_WRONLY)
        try:
            size = os.fstat(src).st_size
            for offset, length in list(data_extents(src, size)):
                end = offset + length
                while offset < end:
                    chunk = os.pread(src, min(COPY_CHUNK, end - offset),
                                     offset)
                    if not chunk:
                        break
                    os.pwrite(dst, chunk, offset)
                    offset += len(chunk)
                    copied += len(chunk)
                    if progress is not None:
                        progress()
            os.fsync(dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return copied


def copy_file_data(source, dest, progress=None):
    """Copy the data of open file ``source`` into ``dest`` at the same
    offsets (both volumes opened as files: ``VolumeDriver.open_volume``),
    ``dest`` at least as large and reading zeros where ``source`` has
    none: only ``source.extents()`` (``(offset, length)`` of its parts
    holding data) are copied. ``progress()`` is called between chunks (a
    migration's heartbeat; it may raise to stop the copy). Returns the
    number of bytes copied."""
    copied = 0
    for offset, length in list(source.extents()):
        end = offset + length
        while offset < end:
            source.seek(offset)
            chunk = source.read(min(COPY_CHUNK, end - offset))
            if not chunk:
                break
            dest.seek(offset)
            dest.write(chunk)
            offset += len(chunk)
            copied += len(chunk)
            if progress is not None:
                progress()
    return copied
