#!/usr/bin/env python3
"""Build the test guest: a Debian kernel and a busybox initramfs.

    python3 tools/guest/build.py            # build (or find) it
    python3 tools/guest/build.py --download-kernel
    python3 tools/guest/build.py --install /var/lib/nova-lite/guest

The guest is what the real-data tests attach volumes to: it boots in a
few seconds under QEMU's TCG, prints its block devices on the console
and runs an agent on a virtio-serial port (``org.nova_lite.guest.0``)
that lists its disks with their serials and reads and writes their bytes
on request (``tests/guest/agent.py`` is the client; the protocol is
described in ``AGENT``, below).

Inputs, all from Debian packages:

* the kernel (``linux-image-amd64``): ``boot/vmlinuz-<version>`` and
  ``lib/modules/<version>`` under ``--kernel-root`` (``/`` by default:
  the kernel installed on the machine; the newest one that has its
  modules; without one, the kernel an earlier ``--download-kernel``
  unpacked in the cache). ``--download-kernel`` instead fetches the
  package with ``apt-get download`` and unpacks it with ``dpkg-deb -x``
  under the cache: nothing is installed, so the package's postinst
  (which rebuilds the host's own initramfs, the slow part of installing
  a kernel) never runs and ``/boot`` is left alone. CI uses that;
* ``busybox-static`` (``/bin/busybox``, statically linked): the shell and
  tools of the initramfs;
* the kernel modules the guest needs (``MODULES`` and what they depend on,
  from ``modules.dep``): virtio PCI, virtio-blk, virtio-console. PCIe
  native hot-plug (``pciehp``) and ACPI hot-plug are built into Debian's
  kernel.

The kernel is booted as the uncompressed ELF image inside Debian's
``vmlinuz`` (``vmlinux``, through its PVH entry point) when it has one:
QEMU then loads it directly, without firmware or decompression, which
under TCG cut a boot from ~33 s to ~13 s on a loaded machine (~5 s
idle). Otherwise the ``vmlinuz`` itself is used.

The result is cached under ``.cache/guest/<key>/`` (``vmlinux`` or
``vmlinuz``, ``initramfs.img``), the key a digest of every input and of
this script, so a rebuild happens only when one of them changes. The
initramfs is written here (cpio ``newc``, gzip), deterministic, without
root or the ``cpio`` tool.

A build never deletes or rewrites another: a configuration that points at
a build's files keeps working after a rebuild of other inputs (a new
kernel, a new version of this script). ``--install DIR`` copies the build
to ``DIR/<key>/`` (a directory the compute hosts' QEMU can read, outside
the checkout), the same way; ``--prune`` deletes the cache's other builds
(never an ``--install`` directory's), for when nothing points into the
cache.

It prints the ``[libvirt]`` options of ``nova-lite.conf`` that boot the
guest (``kernel_path``, ``initrd_path``, ``kernel_cmdline``,
``guest_channels``), then, as its last line, JSON: ``{"kernel": ...,
"initramfs": ..., "cmdline": ..., "channel": ...}``.
"""

import argparse
import glob
import gzip
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CACHE = os.path.join(ROOT, '.cache', 'guest')
# Bumped when the layout of the initramfs changes in a way the scripts'
# text does not show.
FORMAT = '2'

CHANNEL = 'org.nova_lite.guest.0'
CMDLINE = 'console=ttyS0 panic=-1 quiet loglevel=3'
MODULES = ['virtio_pci', 'virtio_blk', 'virtio_console']

INIT = r"""#!/bin/busybox sh
# nova_lite test guest: PID 1.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /etc/modules); do
    insmod /lib/modules/$m.ko || echo "nova-lite-guest: insmod $m failed"
done
# The disks the guest booted with, for the console log.
sleep 0.5
for d in /sys/block/vd*; do
    [ -e "$d" ] || continue
    echo "nova-lite-guest: disk ${d##*/} serial=$(cat $d/serial 2>/dev/null)\
 sectors=$(cat $d/size) ro=$(cat $d/ro)"
done
echo "nova-lite-guest: booted"
while true; do
    /bin/agent
    echo "nova-lite-guest: agent exited ($?); restarting"
    sleep 1
done
"""

# The agent: one request per line, one answer per line.
#
#   <id> PING                       -> <id> OK pong
#   <id> LIST                       -> <id> OK <name>,<serial>,<bytes>,<ro> ...
#   <id> READ <serial> <off> <len>  -> <id> OK <base64>
#   <id> WRITE <serial> <off> <b64> -> <id> OK
#   <id> FLUSH <serial>             -> <id> OK
#   <id> IGNORE_UNPLUG              -> <id> OK <n>
#
# or ``<id> ERR <message>``. ``<serial>`` is the disk's serial as the guest
# sees it (virtio-blk keeps 20 bytes: a volume id's first 20 characters);
# "-" when the disk has none. READ drops the disk's page cache first, so
# it reads what the disk has now (after a swap, say); WRITE syncs. A disk
# attached read-only refuses the write (ERR). IGNORE_UNPLUG disables the
# guest's ACPI general-purpose events (how QEMU's q35 signals hot-plug)
# and unbinds the PCIe port driver (native hot-plug): from then on the
# guest never answers an unplug request, as a guest without hot-plug
# support, or a hung one, does not.
AGENT = r"""#!/bin/busybox sh
CHANNEL=@CHANNEL@

port() {
    for p in /sys/class/virtio-ports/*; do
        [ "$(cat $p/name 2>/dev/null)" = "$CHANNEL" ] && echo /dev/${p##*/}
    done
}

disk() {
    for d in /sys/block/vd*; do
        [ -e "$d" ] || continue
        s=$(cat $d/serial 2>/dev/null)
        [ "${s:--}" = "$1" ] && echo /dev/${d##*/} && return 0
    done
    return 1
}

handle() {
    case "$1" in
    PING)
        echo "OK pong" ;;
    LIST)
        out=OK
        for d in /sys/block/vd*; do
            [ -e "$d" ] || continue
            s=$(cat $d/serial 2>/dev/null)
            z=$(cat $d/size 2>/dev/null) || continue
            r=$(cat $d/ro 2>/dev/null) || continue
            # A disk unplugged while listed is left out.
            out="$out ${d##*/},${s:--},$((z * 512)),$r"
        done
        echo "$out" ;;
    READ)
        dev=$(disk "$2") || { echo "ERR no disk with serial $2"; return; }
        blockdev --flushbufs $dev 2>/dev/null
        if dd if=$dev of=/tmp/data bs=65536 skip=$3 count=$4 status=none \
                iflag=skip_bytes,count_bytes 2>/tmp/err; then
            echo "OK $(base64 -w 0 /tmp/data)"
        else
            echo "ERR $(head -1 /tmp/err)"
        fi ;;
    WRITE)
        dev=$(disk "$2") || { echo "ERR no disk with serial $2"; return; }
        echo "$4" | base64 -d > /tmp/data
        if dd if=/tmp/data of=$dev bs=65536 seek=$3 status=none \
                oflag=seek_bytes conv=fsync 2>/tmp/err; then
            echo OK
        else
            echo "ERR $(head -1 /tmp/err)"
        fi ;;
    FLUSH)
        dev=$(disk "$2") || { echo "ERR no disk with serial $2"; return; }
        sync
        blockdev --flushbufs $dev && echo OK || echo "ERR flush failed" ;;
    IGNORE_UNPLUG)
        # ACPI hot-plug (QEMU's q35 default): the unplug request is a
        # general-purpose event; with the GPEs disabled nobody hears it.
        n=0
        for g in /sys/firmware/acpi/interrupts/gpe[0-9A-F][0-9A-F]; do
            [ -e "$g" ] || continue
            echo disable > $g 2>/dev/null && n=$((n + 1))
        done
        # PCIe native hot-plug: without the port driver, no pciehp.
        for p in /sys/bus/pci/drivers/pcieport/0000:*; do
            [ -e "$p" ] || continue
            echo ${p##*/} > /sys/bus/pci/drivers/pcieport/unbind && \
                n=$((n + 1))
        done
        echo "OK $n" ;;
    *)
        echo "ERR unknown command $1" ;;
    esac
}

while true; do
    p=$(port)
    if [ -z "$p" ]; then
        sleep 0.5
        continue
    fi
    echo "nova-lite-guest: agent on $p" > /dev/console
    exec 3<>$p
    while true; do
        # EOF while no client is connected on the host: try again.
        if ! IFS= read -r line <&3; then
            sleep 0.1
            continue
        fi
        set -- $line
        id=$1
        shift
        [ -n "$id" ] || continue
        echo "$id $(handle "$@" 2>&1 | head -1)" >&3
    done
done
""".replace('@CHANNEL@', CHANNEL)


def _digest_file(h, path):
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)


def find_kernel(root):
    """(version, vmlinuz path, modules dir) of the newest kernel under
    ``root`` that has its modules."""
    found = []
    for path in glob.glob(os.path.join(root, 'boot', 'vmlinuz-*')):
        version = os.path.basename(path)[len('vmlinuz-'):]
        modules = os.path.join(root, 'lib', 'modules', version)
        if os.path.isdir(os.path.join(modules, 'kernel')):
            if not os.path.exists(os.path.join(modules, 'modules.dep')):
                # An unpacked package: its postinst would have run depmod.
                if shutil.which('depmod') is None:
                    raise SystemExit('depmod not found (install kmod)')
                subprocess.run(['depmod', '-b', root, version], check=True)
            found.append((version, path, modules))
    if not found:
        raise SystemExit('no kernel with its modules under %s: install '
                         'linux-image-amd64, or run this with '
                         '--download-kernel (Debian and Ubuntu: it fetches '
                         'the package with apt-get download and installs '
                         'nothing)' % root)

    def key(entry):
        return [int(p) if p.isdigit() else p
                for p in re.split(r'[.-]', entry[0])]
    return max(found, key=key)


def module_files(modules_dir, names):
    """The .ko files of ``names`` and their dependencies, in load order
    (dependencies first), relative to ``modules_dir``."""
    deps = {}
    with open(os.path.join(modules_dir, 'modules.dep')) as f:
        for line in f:
            target, _, rest = line.partition(':')
            deps[target] = rest.split()
    by_name = {}
    for target in deps:
        base = os.path.basename(target).split('.ko')[0]
        by_name[base.replace('-', '_')] = target
    order = []

    def visit(target):
        if target in order:
            return
        for dep in reversed(deps.get(target, [])):
            visit(dep)
        order.append(target)
    for name in names:
        target = by_name.get(name)
        if target is None:
            builtin = os.path.join(modules_dir, 'modules.builtin')
            if os.path.exists(builtin) and any(
                    os.path.basename(line.strip()).split('.ko')[0] == name
                    for line in open(builtin)):
                continue
            raise SystemExit('module %s not found in %s' % (
                name, modules_dir))
        visit(target)
    return order


class Cpio(object):
    """A cpio archive in the ``newc`` format the kernel unpacks."""

    def __init__(self):
        self.out = io.BytesIO()
        self.ino = 1

    def _entry(self, name, mode, data=b'', rdev=(0, 0)):
        name = name.encode() + b'\0'
        header = '070701' + ''.join('%08X' % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
            len(name), 0))
        self.ino += 1
        self.out.write(header.encode() + name)
        self.out.write(b'\0' * (-(110 + len(name)) % 4))
        self.out.write(data)
        self.out.write(b'\0' * (-len(data) % 4))

    def directory(self, name):
        self._entry(name, 0o040755)

    def file(self, name, data, mode=0o644):
        self._entry(name, 0o100000 | mode, data)

    def char_device(self, name, major, minor):
        self._entry(name, 0o020600, rdev=(major, minor))

    def finish(self):
        self._entry('TRAILER!!!', 0)
        return self.out.getvalue()


def _is_static(elf):
    """Whether ``elf`` is an executable without an interpreter (no
    ``PT_INTERP``): what runs as PID 1 of an initramfs without libc."""
    if elf[:4] != b'\x7fELF' or elf[4] != 2:
        return False
    phoff, = struct.unpack_from('<Q', elf, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', elf, 0x36)
    return all(struct.unpack_from('<I', elf, phoff + i * phentsize)[0] != 3
               for i in range(phnum))


def read_busybox(path):
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise SystemExit('no busybox at %s (%s): install busybox-static' %
                         (path, e.strerror))
    if not _is_static(data):
        raise SystemExit('%s is not a statically linked x86-64 busybox: '
                         'install busybox-static (the busybox package\'s is '
                         'dynamic)' % path)
    return data


def initramfs(busybox, modules_dir, modules):
    cpio = Cpio()
    for d in ('bin', 'dev', 'etc', 'proc', 'sys', 'tmp', 'lib',
              'lib/modules'):
        cpio.directory(d)
    # The console PID 1 writes to before devtmpfs is mounted.
    cpio.char_device('dev/console', 5, 1)
    cpio.file('bin/busybox', read_busybox(busybox), 0o755)
    cpio.file('init', INIT.encode(), 0o755)
    cpio.file('bin/agent', AGENT.encode(), 0o755)
    names = []
    for target in modules:
        name = os.path.basename(target).split('.ko')[0]
        with open(os.path.join(modules_dir, target), 'rb') as f:
            data = f.read()
        if target.endswith('.xz') or target.endswith('.zst'):
            raise SystemExit('compressed module %s: not supported' % target)
        cpio.file('lib/modules/%s.ko' % name, data)
        names.append(name)
    cpio.file('etc/modules', ('\n'.join(names) + '\n').encode())
    return gzip.compress(cpio.finish(), mtime=0)


# XEN_ELFNOTE_PHYS32_ENTRY: the PVH entry point QEMU boots an ELF at.
PVH_NOTE = 18


def _has_pvh_note(elf):
    """Whether ``elf`` (an x86-64 ELF image) has the PVH entry note."""
    if elf[:4] != b'\x7fELF' or elf[4] != 2:
        return False
    phoff, = struct.unpack_from('<Q', elf, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', elf, 0x36)
    for i in range(phnum):
        p_type, _flags, offset, _va, _pa, filesz = struct.unpack_from(
            '<IIQQQQ', elf, phoff + i * phentsize)
        if p_type != 4:     # PT_NOTE
            continue
        pos, end = offset, offset + filesz
        while pos + 12 <= end:
            namesz, descsz, kind = struct.unpack_from('<III', elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b'\0')
            if name == b'Xen' and kind == PVH_NOTE:
                return True
            pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def extract_vmlinux(bzimage):
    """The uncompressed ELF kernel inside ``bzimage`` when it has the PVH
    entry note (QEMU then boots it directly: no firmware, no
    decompression, which take most of a boot under TCG); None
    otherwise."""
    with open(bzimage, 'rb') as f:
        data = f.read()
    for magic, open_stream in ((b'\xfd7zXZ\x00', lzma.LZMADecompressor),
                               (b'\x1f\x8b\x08', lambda: zlib.decompressobj(
                                   16 + zlib.MAX_WBITS))):
        start = data.find(magic)
        while start >= 0:
            try:
                elf = open_stream().decompress(data[start:])
            except (lzma.LZMAError, zlib.error):
                elf = b''
            if _has_pvh_note(elf):
                return elf
            start = data.find(magic, start + 1)
    return None


def download_kernel(dest):
    """Fetch linux-image-amd64's kernel package and unpack it under
    ``dest`` (nothing installed); returns ``dest``."""
    if shutil.which('apt-get') is None:
        raise SystemExit('--download-kernel needs apt-get (Debian, Ubuntu); '
                         'elsewhere use --kernel-root')
    proc = subprocess.run(
        ['apt-cache', 'depends', '--important', 'linux-image-amd64'],
        capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit('apt-cache knows no linux-image-amd64 (%s): run '
                         'apt-get update' % proc.stderr.strip())
    out = proc.stdout
    packages = re.findall(r'Depends: (linux-image-\S+)', out)
    if not packages:
        raise SystemExit('linux-image-amd64 depends on no kernel package')
    package = packages[0]
    if os.path.exists(os.path.join(dest, '.unpacked-' + package)):
        return dest
    os.makedirs(dest, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(['apt-get', 'download', package], cwd=tmp,
                       check=True)
        (deb,) = glob.glob(os.path.join(tmp, '*.deb'))
        subprocess.run(['dpkg-deb', '-x', deb, dest], check=True)
    open(os.path.join(dest, '.unpacked-' + package), 'w').close()
    return dest


def build(kernel_root=None, busybox='/bin/busybox', cache=CACHE,
          download=False):
    """Build the guest (or find it in the cache); returns its dict.

    ``kernel_root`` None: the machine's kernel (``/``) or, when it has
    none with its modules, the one ``download`` unpacked in the cache
    before."""
    downloaded = os.path.join(cache, 'kernel-root')
    if download:
        kernel_root = download_kernel(downloaded)
    elif kernel_root is None:
        kernel_root = '/'
        if glob.glob(os.path.join(downloaded, '.unpacked-*')):
            try:
                find_kernel('/')
            except SystemExit:
                kernel_root = downloaded
    version, vmlinuz, modules_dir = find_kernel(kernel_root)
    modules = module_files(modules_dir, MODULES)
    read_busybox(busybox)   # missing or dynamic: say what to install
    h = hashlib.sha256()
    h.update(FORMAT.encode())
    with open(os.path.abspath(__file__), 'rb') as f:
        h.update(f.read())
    for path in [vmlinuz, busybox] + [os.path.join(modules_dir, m)
                                      for m in modules]:
        h.update(path.encode())
        _digest_file(h, path)
    key = h.hexdigest()[:16]
    where = os.path.join(cache, key)
    result = {
        'kernel': os.path.join(where, 'vmlinuz'),
        'initramfs': os.path.join(where, 'initramfs.img'),
        'cmdline': CMDLINE,
        'channel': CHANNEL,
        'kernel_version': version,
    }
    if os.path.exists(os.path.join(where, 'guest.json')):
        with open(os.path.join(where, 'guest.json')) as f:
            return json.load(f)
    os.makedirs(cache, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='.build-', dir=cache)
    try:
        elf = extract_vmlinux(vmlinuz)
        if elf is not None:
            result['kernel'] = os.path.join(where, 'vmlinux')
            with open(os.path.join(tmp, 'vmlinux'), 'wb') as f:
                f.write(elf)
        else:
            shutil.copyfile(vmlinuz, os.path.join(tmp, 'vmlinuz'))
        with open(os.path.join(tmp, 'initramfs.img'), 'wb') as f:
            f.write(initramfs(busybox, modules_dir, modules))
        with open(os.path.join(tmp, 'guest.json'), 'w') as f:
            json.dump(result, f, indent=1, sort_keys=True)
        # QEMU runs as its own user: it must read the files.
        os.chmod(tmp, 0o755)
        for name in os.listdir(tmp):
            os.chmod(os.path.join(tmp, name), 0o644)
        try:
            os.rename(tmp, where)
        except OSError:
            # Another build of the same key finished first.
            if not os.path.exists(os.path.join(where, 'guest.json')):
                raise
            shutil.rmtree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    # Builds of other inputs stay: a configuration may point at them.
    return result


def _publish(files, result, dest, key):
    """Copy ``files`` (name: source path) into a new ``dest/<key>/`` with
    ``guest.json`` (``result``), readable by QEMU's user, then rename it
    into place: a directory there is complete and never changes."""
    where = os.path.join(dest, key)
    os.makedirs(dest, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='.install-', dir=dest)
    try:
        for name, source in files.items():
            shutil.copyfile(source, os.path.join(tmp, name))
        with open(os.path.join(tmp, 'guest.json'), 'w') as f:
            json.dump(result, f, indent=1, sort_keys=True)
        os.chmod(tmp, 0o755)
        for name in os.listdir(tmp):
            os.chmod(os.path.join(tmp, name), 0o644)
        try:
            os.rename(tmp, where)
        except OSError:
            # Another install of the same key finished first.
            if not os.path.exists(os.path.join(where, 'guest.json')):
                raise
            shutil.rmtree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def install(result, dest):
    """Copy the build ``result`` to ``dest/<key>/``; returns its dict there.
    Nothing under ``dest`` is ever deleted or rewritten: a new build goes
    to a directory of its own, next to the ones configurations use."""
    dest = os.path.abspath(dest)
    key = os.path.basename(os.path.dirname(result['kernel']))
    where = os.path.join(dest, key)
    installed = dict(result)
    files = {}
    for field in ('kernel', 'initramfs'):
        name = os.path.basename(result[field])
        installed[field] = os.path.join(where, name)
        files[name] = result[field]
    if not os.path.exists(os.path.join(where, 'guest.json')):
        _publish(files, installed, dest, key)
    return installed


def prune(cache, keep):
    """Delete the builds in ``cache`` but ``keep``; returns their paths."""
    gone = []
    for name in sorted(os.listdir(cache)):
        if re.fullmatch('[0-9a-f]{16}', name) and name != keep:
            shutil.rmtree(os.path.join(cache, name), ignore_errors=True)
            gone.append(os.path.join(cache, name))
    return gone


def unreachable(path):
    """The first directory above ``path`` that other users (QEMU runs as
    ``libvirt-qemu``) cannot search; None when there is none."""
    parent = os.path.dirname(os.path.abspath(path))
    chain = []
    while True:
        chain.append(parent)
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    for directory in reversed(chain):
        if not os.stat(directory).st_mode & stat.S_IXOTH:
            return directory
    return None


def config_lines(result):
    """The ``[libvirt]`` options that boot the guest ``result``."""
    return [
        '[libvirt]',
        'kernel_path = %s' % result['kernel'],
        'initrd_path = %s' % result['initramfs'],
        'kernel_cmdline = %s' % result['cmdline'],
        'guest_channels = %s' % result['channel'],
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kernel-root', default=None,
                        help='where boot/vmlinuz-* and lib/modules/* are '
                             '(default: /, or the kernel --download-kernel '
                             'unpacked in the cache before)')
    parser.add_argument('--download-kernel', action='store_true',
                        help='apt-get download the kernel package and '
                             'unpack it (no install)')
    parser.add_argument('--busybox', default='/bin/busybox',
                        help='a statically linked busybox')
    parser.add_argument('--cache', default=CACHE)
    parser.add_argument('--install', metavar='DIR',
                        help='copy the build to DIR/<key>/ (never deleting '
                             'or changing what DIR holds) and print the '
                             'options that point there')
    parser.add_argument('--prune', action='store_true',
                        help="delete the cache's other builds (not those "
                             'of --install): only when no configuration '
                             'points into the cache')
    args = parser.parse_args(argv)
    result = build(args.kernel_root, args.busybox, args.cache,
                   args.download_kernel)
    if args.prune:
        keep = os.path.basename(os.path.dirname(result['kernel']))
        for path in prune(args.cache, keep):
            print('# deleted %s' % path)
    if args.install:
        result = install(result, args.install)
    print('# nova-lite.conf of a libvirt compute host, to boot this guest:')
    for line in config_lines(result):
        print(line)
    blocked = unreachable(result['kernel'])
    if blocked is not None:
        print('# WARNING: %s is not searchable by other users: QEMU '
              '(libvirt-qemu) cannot read the kernel there; --install it '
              'in a directory every parent of which is' % blocked)
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
