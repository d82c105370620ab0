#!/usr/bin/env python3
"""Quick start for a fresh clone: needs only Python 3.10+.

    python3 tools/dev.py run     # start nova-lite-all on 127.0.0.1:8774
    python3 tools/dev.py test    # run the whole test suite

Both create (once) a virtualenv in ``.venv`` with nova_lite installed in
development mode and the command-line clients (``openstack``, ``cinder``,
``nova``); ``test`` adds the test requirements. The test tiers:

* unit: no network, no database server;
* functional: the real WSGI app, conductor and compute in-process, SQLite;
* fuzz: hostile requests generated from every route's schemas, on the same
  in-process system: no 5xx, faults well formed, state sound after
  (``NOVA_LITE_FUZZ_EXAMPLES`` requests per test, 2000 by default);
* integration: real uWSGI, RabbitMQ, MariaDB and PostgreSQL processes, and
  a real Keystone (its own virtualenv, ``.venv-keystone``). It runs when
  those services answer on 127.0.0.1 (5672, 3306, 5432). With ``CI=true``
  it must run: a missing service fails the run. Elsewhere the tier is
  skipped with a message saying what it needs;
  The tier's real-data tests (``tests/integration/realdata``,
  ``test_libvirt_guest``, the Ceph tests, and the functional tier's iSCSI
  tests) boot test guests under QEMU through libvirt, export volumes with
  tgtd and keep them in a one-node Ceph (``tests/fixtures/ceph.py``): they
  need ``HOST_PACKAGES`` and ``CEPH_PACKAGES`` (Debian) and start
  ``libvirtd``, ``tgtd`` and the Ceph daemons when those do not answer.
  Debian's Ceph Python bindings (``rados``, ``rbd``, built for CPython
  3.11 only) are linked into ``.venv`` when its Python is 3.11 (a line
  says so when they cannot be). With ``CI=true`` (or
  ``NOVA_LITE_INSTALL_PACKAGES=1``) ``test`` installs the packages with
  apt-get and downloads the test guest's kernel, and the tests are
  mandatory; elsewhere they skip saying what is missing;
* tempest: upstream tempest (``.venv-tempest``) against the production
  layout behind Keystone (``tests/tempest/runner.py``), on the same
  condition as the integration tier.

The integration tier runs each test class in one worker, the classes
placed by ``tests/integration/durations.json``
(``python3 tools/dev.py durations`` rewrites it from the last run; see
``partition``).

``.venv-keystone``, ``.venv-cinder`` and ``.venv-tempest`` are built with
their own constraints (``tests/tempest/*-constraints.txt``): Keystone's,
Cinder's and tempest's dependencies are not nova_lite's. ``.venv-cinder``
(upstream Cinder 29, 60-75 s and ~330 MB once) serves the integration tier's
real-Cinder tests (``tests/fixtures/cinder.py``), with the Ceph bindings
linked in as into ``.venv``; with ``CI=true`` those tests are mandatory
(``NOVA_LITE_REQUIRE_CINDER=1``).

Each tier's whole output goes to ``.test-logs/<tier>.log``; what is
printed is a line per tier with its counts and time, every failed test as
it fails, a progress line now and then, and at the end of a tier the
tracebacks of its failures (cut to ``FAILURE_LINES`` lines each), so that
a CI log shows why a run failed.
On a terminal, or with ``NOVA_LITE_TEST_VERBOSE=1``, the whole output is
streamed as well. The last line is the total:
``tests: N passed, N failed, N skipped``.

Installs are reproducible: pip takes ``constraints.txt`` (every version
the suite passed with) as constraints. ``NOVA_LITE_LATEST=1`` installs the
newest releases the requirements allow instead (into ``.venv-latest``, so
the pinned ``.venv`` stays as it is), to find out what a new release
breaks; ``python3 tools/dev.py constraints`` rewrites ``constraints.txt``
from the current ``.venv``.
"""

import collections
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import venv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LATEST = os.environ.get('NOVA_LITE_LATEST', '') == '1'
VENV = os.path.join(ROOT, '.venv-latest' if LATEST else '.venv')
CONSTRAINTS = 'constraints.txt'
BIN = os.path.join(VENV, 'bin')
PY = os.path.join(BIN, 'python')

RUN_REQS = ['requirements.txt', 'setup.cfg', CONSTRAINTS]
TEST_REQS = RUN_REQS + ['test-requirements.txt']
TEST_EXTRAS = 'deploy,mysql,postgresql,bench,clients'
# libvirt-python builds only where libvirt's C library is (libvirt-dev):
# elsewhere the tests get os-brick alone and the libvirt tests skip.
LIBVIRT_EXTRA = 'libvirt'
NO_LIBVIRT_EXTRA = 'brick'

# What the real-data tests need from Debian (QEMU, its iSCSI initiator
# and qemu-io, libvirt, tgt, open-iscsi for the host's initiator name
# that os-brick reads, the test guest's busybox and depmod).
# ``test`` installs the missing ones with apt-get when CI=true or
# NOVA_LITE_INSTALL_PACKAGES=1 (as root); elsewhere those tests skip
# saying what is missing. The guest's kernel is downloaded, not installed
# (tools/guest/build.py --download-kernel).
HOST_PACKAGES = ['qemu-system-x86', 'qemu-block-extra', 'qemu-utils',
                 'libvirt-daemon-system', 'libvirt-dev', 'pkg-config',
                 'tgt', 'open-iscsi', 'busybox-static', 'kmod']
# The one-node Ceph of the rbd backend's tests (tests/fixtures/ceph.py)
# and its Python bindings, installed the same way.
CEPH_PACKAGES = ['ceph-mon', 'ceph-mgr', 'ceph-osd', 'ceph-common',
                 'python3-rbd', 'python3-rados']
REAL_DATA_PACKAGES = HOST_PACKAGES + CEPH_PACKAGES
# Debian builds ``rados`` and ``rbd`` for its own Python only; PyPI has
# none. A virtualenv with the system's site-packages breaks (Debian's
# pyOpenSSL against the venv's cryptography), so just these two modules
# are linked into the venv when its Python has the same version.
CEPH_BINDINGS_DIR = '/usr/lib/python3/dist-packages'
CEPH_BINDINGS = ('rados', 'rbd')
# ``run`` installs the clients too: openstack, cinder and nova work against
# nova-lite-all with the clouds.yaml and openrc files it writes.
RUN_EXTRAS = 'clients'

# Side virtualenvs: (directory, what to install, its constraints file).
KEYSTONE_VENV = ('.venv-keystone', 'keystone==30.0.0 PyMySQL',
                 'tests/tempest/keystone-constraints.txt')
TEMPEST_VENV = ('.venv-tempest', 'tempest==47.0.0',
                'tests/tempest/tempest-constraints.txt')
# Upstream Cinder for the real-Cinder tests (tests/fixtures/cinder.py);
# its RBD driver needs Debian's Ceph bindings, linked in as into .venv.
CINDER_VENV = ('.venv-cinder', 'cinder==29.0.0 PyMySQL',
               'tests/tempest/cinder-constraints.txt')

INTEGRATION_SERVICES = {
    'RabbitMQ': ('127.0.0.1', 5672),
    'MariaDB': ('127.0.0.1', 3306),
    'PostgreSQL': ('127.0.0.1', 5432),
}


def _digest(files, extra):
    h = hashlib.sha256(extra.encode())
    for name in files:
        with open(os.path.join(ROOT, name), 'rb') as f:
            h.update(f.read())
    return h.hexdigest()


def _quiet(argv):
    """Run an install command; show its output only if it fails."""
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout)
        raise subprocess.CalledProcessError(proc.returncode, argv)


def _pip(*args):
    _quiet([PY, '-m', 'pip', '--disable-pip-version-check', '-q'] +
           list(args))


def _has_libvirt_library():
    if not _which('pkg-config'):
        return False
    return subprocess.run(['pkg-config', '--exists', 'libvirt'],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


_which = shutil.which


def _missing_packages():
    if not _which('dpkg-query'):
        return []
    out = subprocess.run(
        ['dpkg-query', '-W', '-f', '${Package} ${db:Status-Abbrev}\n'] +
        REAL_DATA_PACKAGES, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True).stdout
    installed = {line.split()[0] for line in out.splitlines()
                 if len(line.split()) > 1 and line.split()[1] == 'ii'}
    return [p for p in REAL_DATA_PACKAGES if p not in installed]


def prepare_host(ci):
    """Install the real-data tests' Debian packages and the test guest's
    kernel where asked to (CI, or NOVA_LITE_INSTALL_PACKAGES=1); say what
    is missing otherwise. The daemons (libvirtd, tgtd, Ceph's) are started
    by the tests' fixtures when they do not answer."""
    install = ci or os.environ.get('NOVA_LITE_INSTALL_PACKAGES') == '1'
    missing = _missing_packages()
    if missing and install:
        if os.geteuid() != 0 or not _which('apt-get'):
            print('Cannot install %s (needs root and apt-get): the '
                  'real-data tests will fail.' % ' '.join(missing),
                  flush=True)
        else:
            print('Installing Debian packages: %s' % ' '.join(missing),
                  flush=True)
            env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
            proc = subprocess.run(
                ['apt-get', 'install', '-y', '-q'] + missing,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, env=env)
            if proc.returncode != 0:
                # A stale package index: refresh it once and retry.
                subprocess.run(['apt-get', 'update', '-q'], env=env,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                proc = subprocess.run(
                    ['apt-get', 'install', '-y', '-q'] + missing,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True, env=env)
            if proc.returncode != 0:
                sys.stdout.write(proc.stdout[-3000:])
                print('apt-get install failed: the real-data tests will '
                      'fail.', flush=True)
        missing = _missing_packages()
    if missing:
        print('Missing Debian packages for the real-data tests (libvirt '
              'guests, iSCSI, Ceph): %s. Those tests skip; install them, '
              'or set NOVA_LITE_INSTALL_PACKAGES=1 (root).' %
              ' '.join(missing),
              flush=True)
        return
    if install:
        proc = subprocess.run(
            [sys.executable, os.path.join(ROOT, 'tools', 'guest',
                                          'build.py'),
             '--download-kernel'], cwd=ROOT, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            sys.stdout.write(proc.stdout[-3000:])
            print('The test guest did not build: the real-data tests will '
                  'fail.', flush=True)


def _venv_python_version(venv_dir):
    """``(major, minor)`` of the venv's Python, from its pyvenv.cfg."""
    try:
        with open(os.path.join(venv_dir, 'pyvenv.cfg')) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        key, sep, value = line.partition('=')
        if sep and key.strip() in ('version', 'version_info'):
            parts = value.strip().split('.')
            if len(parts) >= 2 and parts[0].isdigit() and \
                    parts[1].isdigit():
                return int(parts[0]), int(parts[1])
    return None


def link_ceph_bindings(venv_dir=VENV, source_dir=CEPH_BINDINGS_DIR):
    """Link Debian's ``rados`` and ``rbd`` modules (python3-rados,
    python3-rbd) into the venv's site-packages when they are built for
    the venv's Python version; print one line saying why not otherwise.
    Idempotent: a link already in place is left as it is, a stale one is
    replaced. Returns the paths of the links (empty when none)."""
    version = _venv_python_version(venv_dir)
    if version is None:
        print('Ceph bindings not linked: no Python version in %s' %
              os.path.join(venv_dir, 'pyvenv.cfg'), flush=True)
        return []
    tag = 'cpython-%d%d' % version
    sources = {}
    found = []
    try:
        entries = sorted(os.listdir(source_dir))
    except OSError:
        entries = []
    for name in CEPH_BINDINGS:
        modules = [e for e in entries
                   if e.startswith(name + '.cpython-') and e.endswith('.so')]
        found += modules
        matching = [e for e in modules if e.startswith(
            '%s.%s-' % (name, tag))]
        if matching:
            sources[name] = matching[0]
    missing = [name for name in CEPH_BINDINGS if name not in sources]
    if missing:
        print('Ceph bindings not linked into %s: no %s for its Python '
              '%d.%d in %s (found: %s; Debian\'s python3-rados and '
              'python3-rbd are built for Debian\'s python3 only): the Ceph '
              'tests skip.' % (
                  os.path.basename(venv_dir),
                  ', '.join('%s.%s-*.so' % (name, tag) for name in missing),
                  version[0], version[1], source_dir,
                  ', '.join(found) or 'none'), flush=True)
        return []
    site = os.path.join(venv_dir, 'lib', 'python%d.%d' % version,
                        'site-packages')
    os.makedirs(site, exist_ok=True)
    links = []
    for name in CEPH_BINDINGS:
        target = os.path.join(source_dir, sources[name])
        link = os.path.join(site, sources[name])
        links.append(link)
        if os.path.islink(link) and os.readlink(link) == target:
            continue
        tmp = link + '.nova-lite-tmp'
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(target, tmp)
        os.replace(tmp, link)
    return links


def ensure_venv(with_tests):
    """Create .venv and (re)install when the requirements changed."""
    files = TEST_REQS if with_tests else RUN_REQS
    extras = TEST_EXTRAS
    if with_tests:
        extras += ',' + (LIBVIRT_EXTRA if _has_libvirt_library()
                         else NO_LIBVIRT_EXTRA)
    stamp_name = ('test' if with_tests else 'run') + (
        '-latest' if LATEST else '') + ('-' + extras if with_tests else '')
    stamp = os.path.join(VENV, '.nova-lite-%s-stamp' % stamp_name)
    digest = _digest(files, stamp_name)
    if not os.path.exists(PY):
        print('Creating virtualenv in %s' % VENV, flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
        _pip('install', '--upgrade', 'pip', 'setuptools', 'wheel')
    link_ceph_bindings()
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return
    print('Installing nova_lite and its %s requirements into .venv' % (
        'test' if with_tests else 'runtime'), flush=True)
    pins = ['--upgrade'] if LATEST else ['-c', CONSTRAINTS]
    if with_tests:
        _pip('install', *pins, '-e', '.[%s]' % extras,
             '-r', 'test-requirements.txt')
    else:
        _pip('install', *pins, '-e', '.[%s]' % RUN_EXTRAS)
    with open(stamp, 'w') as f:
        f.write(digest)


def ensure_side_venv(spec):
    """Create a side virtualenv (Keystone's, tempest's) and install its
    one package with its constraints when they changed."""
    directory, requirement, constraints = spec
    path = os.path.join(ROOT, directory)
    python = os.path.join(path, 'bin', 'python')
    stamp = os.path.join(path, '.nova-lite-stamp')
    digest = _digest([constraints], requirement)
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return
    print('Installing %s into %s' % (requirement, directory), flush=True)
    if not os.path.exists(python):
        venv.EnvBuilder(with_pip=True).create(path)
    _quiet([python, '-m', 'pip', '--disable-pip-version-check', '-q',
            'install', '-c', constraints] + requirement.split())
    with open(stamp, 'w') as f:
        f.write(digest)


def build_side_venvs(specs):
    """``ensure_side_venv`` of each spec; Cinder's gets the Ceph
    bindings."""
    for spec in specs:
        ensure_side_venv(spec)
        if spec == CINDER_VENV:
            link_ceph_bindings(os.path.join(ROOT, spec[0]))


def cmd_run(argv):
    ensure_venv(with_tests=False)
    exe = os.path.join(BIN, 'nova-lite-all')
    os.execv(exe, [exe] + argv)


_COUNT_RE = re.compile(r'^ - (Passed|Failed|Skipped): (\d+)')
_FAILED_RE = re.compile(r'\.\.\. FAILED$')
_RESULT_RE = re.compile(r'\.\.\. (ok|FAILED|SKIPPED.*|skip.*)$')
# Seconds between the progress lines of a quiet tier.
PROGRESS_INTERVAL = 60
_FAILURES_START = re.compile(r'^Failed \d+ tests - output below:')
_FAILURES_END = re.compile(r'^=+$')

LOG_DIR = os.path.join(ROOT, '.test-logs')
# Lines printed of each failure's section of the log (its traceback first).
FAILURE_LINES = 80


def _verbose():
    return (os.environ.get('NOVA_LITE_TEST_VERBOSE', '') == '1' or
            sys.stdout.isatty())


def failure_sections(lines):
    """The per-test sections of stestr's "Failed N tests - output below"
    block: [(test id, [lines])]."""
    sections = []
    inside = False
    for i, line in enumerate(lines):
        if _FAILURES_START.match(line):
            inside = True
            continue
        if not inside:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        stripped = line.rstrip('\n')
        if (stripped and nxt.rstrip('\n') == '-' * len(stripped)):
            sections.append((stripped, []))
        elif _FAILURES_END.match(line) and nxt.startswith('Totals'):
            break
        elif sections:
            sections[-1][1].append(line)
    return sections


def _print_failures(lines, log_path):
    for test_id, body in failure_sections(lines):
        body = [line for line in body
                if line.strip() and set(line.strip()) != {'-'}]
        print('\n--- %s' % test_id)
        for line in body[:FAILURE_LINES]:
            sys.stdout.write(line)
        if len(body) > FAILURE_LINES:
            print('    ... %d more lines in %s' % (
                len(body) - FAILURE_LINES, log_path))


def _stream(proc, name, log_path):
    """Copy ``proc``'s output to its log (and to stdout if verbose);
    print failed tests as they fail; return the lines."""
    os.makedirs(LOG_DIR, exist_ok=True)
    verbose = _verbose()
    lines = []
    done = 0
    started = last = time.monotonic()
    with open(log_path, 'w', buffering=1) as log:   # tail -f works
        for line in proc.stdout:
            log.write(line)
            lines.append(line)
            if _RESULT_RE.search(line.rstrip()):
                done += 1
            if verbose:
                sys.stdout.write(line)
                continue
            if _FAILED_RE.search(line.rstrip()):
                sys.stdout.write('%s: %s' % (name, line))
                sys.stdout.flush()
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL:
                last = now
                print('%s: %d tests done in %.0f s' % (name, done,
                                                       now - started),
                      flush=True)
    return lines


# Tests that share one costly fixture run in one worker: the Keystone
# tests share a Keystone and a deployment, the real-Cinder tests (every
# class of the test_cinder* modules) a Keystone, a Cinder and a deployment
# (one per worker otherwise). stestr groups by the text the regex
# matches: the same prefix for every test of a group.
GROUP_REGEX = (r'tests\.integration\.test_keystone\.KeystoneTest\.|'
               r'tests\.integration\.realdata\.test_cinder')


# The integration tier's classes each start a deployment of their own,
# once per worker process that runs one of their tests: a class (or a
# GROUP_REGEX group) runs in one worker. Which worker is chosen from the
# durations a measured run recorded (``python3 tools/dev.py durations``
# writes them), longest first onto the least loaded worker, since a fresh
# clone has no stestr history to balance by; a class with no recorded
# duration counts as the median one.
DURATIONS = os.path.join('tests', 'integration', 'durations.json')
PARTITIONED_TIERS = ('integration',)
# Workers beyond the machine's cores for the partitioned tiers. One more
# (three on two cores) was tried once, with other test runs on the
# machine beside it: two crash-matrix cases missed their deadlines (a host
# seen down for a moment, a crash point not reached in 90 s). Until it is
# measured on an otherwise idle machine, one worker per core.
EXTRA_WORKERS = 0


def test_group(test_id):
    """The scheduling unit of ``test_id``: its GROUP_REGEX group, or its
    class."""
    match = re.match(GROUP_REGEX, test_id)
    if match:
        return match.group(0)
    return test_id.rpartition('.')[0]


def partition(test_ids, durations, workers):
    """``test_ids`` split into at most ``workers`` lists, each group
    (``test_group``) whole, balanced by ``durations`` (seconds per group;
    the median for a group not in it)."""
    groups = collections.OrderedDict()
    for test_id in test_ids:
        groups.setdefault(test_group(test_id), []).append(test_id)
    known = sorted(durations.values())
    default = known[len(known) // 2] if known else 1.0
    loads = [[0.0, i, []] for i in range(max(1, workers))]
    for group in sorted(groups, key=lambda g: (-durations.get(g, default),
                                               g)):
        lightest = min(loads)
        lightest[0] += durations.get(group, default)
        lightest[2].extend(groups[group])
    return [tests for _load, _i, tests in loads if tests]


def _write_worker_file(path, tier_path, env):
    """An stestr ``--worker-file`` for the tier at ``tier_path``: every
    test listed, placed by ``partition``."""
    listed = subprocess.run(
        [PY, '-m', 'stestr', '--test-path', tier_path, 'list'], cwd=ROOT,
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, check=True).stdout
    test_ids = [line.strip() for line in listed.splitlines()
                if line.startswith('tests.')]
    try:
        with open(os.path.join(ROOT, DURATIONS)) as f:
            durations = json.load(f)
    except FileNotFoundError:
        durations = {}
    workers = (os.cpu_count() or 1) + EXTRA_WORKERS
    with open(path, 'w') as f:
        for tests in partition(test_ids, durations, workers):
            f.write('- worker:\n')
            for test_id in tests:
                f.write("  - '^%s$'\n" % re.escape(test_id).replace(
                    "'", "''"))
    return path


def cmd_durations(argv):
    """Write DURATIONS from the last integration run's stestr records."""
    out = subprocess.run(
        [PY, '-m', 'stestr', 'slowest', '--all'], cwd=ROOT,
        stdout=subprocess.PIPE, text=True, check=True).stdout
    durations = collections.defaultdict(float)
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].startswith('tests.integration.'):
            try:
                durations[test_group(parts[0])] += float(parts[1])
            except ValueError:
                continue
    if not durations:
        print('No integration test times in .stestr: run the tier first.')
        return 1
    with open(os.path.join(ROOT, DURATIONS), 'w') as f:
        json.dump({g: round(t, 1) for g, t in sorted(durations.items())},
                  f, indent=1, sort_keys=True)
        f.write('\n')
    print('Wrote %s (%d groups, %.0f s in all)' % (
        DURATIONS, len(durations), sum(durations.values())))
    return 0


def _report(name, counts, started, log_path):
    print('=== %s: %d passed, %d failed, %d skipped in %.0f s (log: %s)' % (
        name, counts['Passed'], counts['Failed'], counts['Skipped'],
        time.monotonic() - started, os.path.relpath(log_path, ROOT)),
        flush=True)


def run_tier(name, path, env):
    """Run one stestr tier; return its counts."""
    print('\n=== %s tests (%s) ===' % (name, path), flush=True)
    started = time.monotonic()
    log_path = os.path.join(LOG_DIR, name + '.log')
    counts = {'Passed': 0, 'Failed': 0, 'Skipped': 0}
    argv = [PY, '-m', 'stestr', '--test-path', path, 'run', '--color',
            '--group-regex', GROUP_REGEX]
    if name in PARTITIONED_TIERS:
        os.makedirs(LOG_DIR, exist_ok=True)
        argv += ['--worker-file', _write_worker_file(
            os.path.join(LOG_DIR, name + '-workers.yaml'), path, env)]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, bufsize=1)
    lines = _stream(proc, name, log_path)
    for line in lines:
        match = _COUNT_RE.match(line)
        if match:
            counts[match.group(1)] = int(match.group(2))
    rc = proc.wait()
    if rc != 0 and counts['Failed'] == 0:
        counts['Failed'] = 1   # the runner itself failed (import error...)
        if not _verbose():
            print('%s: stestr exited with %d; the end of its output:' % (
                name, rc))
            sys.stdout.writelines(lines[-FAILURE_LINES:])
    elif counts['Failed'] and not _verbose():
        _print_failures(lines, log_path)
    _report(name, counts, started, log_path)
    return counts


_TEMPEST_RE = re.compile(r'^tempest: (\d+) passed, (\d+) skipped, '
                         r'(\d+) failed')


def run_tempest(env):
    """Run tests/tempest/runner.py, streaming its output; its counts."""
    print('\n=== tempest (tests/tempest) ===', flush=True)
    started = time.monotonic()
    log_path = os.path.join(LOG_DIR, 'tempest.log')
    counts = {'Passed': 0, 'Failed': 0, 'Skipped': 0}
    proc = subprocess.Popen(
        [PY, '-m', 'tests.tempest.runner'], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        bufsize=1)
    lines = _stream(proc, 'tempest', log_path)
    for line in lines:
        match = _TEMPEST_RE.match(line)
        if match:
            counts = {'Passed': int(match.group(1)),
                      'Skipped': int(match.group(2)),
                      'Failed': int(match.group(3))}
    rc = proc.wait()
    if (rc != 0 or counts['Failed']) and not _verbose():
        # The runner's own report: each failure with its reason, counts.
        report = [i for i, line in enumerate(lines)
                  if line.startswith('FAILED ')]
        start = report[0] if report else max(0, len(lines) - FAILURE_LINES)
        sys.stdout.writelines(lines[start:start + 10 * FAILURE_LINES])
    if rc != 0 and counts['Failed'] == 0:
        counts['Failed'] = 1
    _report('tempest', counts, started, log_path)
    return counts


def _reachable(host, port):
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def cmd_test(argv):
    ci = os.environ.get('CI', '').lower() == 'true'
    prepare_host(ci)
    ensure_venv(with_tests=True)
    env = dict(os.environ)
    env.setdefault('PYTHONUNBUFFERED', '1')
    tiers = [('unit', './tests/unit'), ('functional', './tests/functional'),
             ('fuzz', './tests/fuzz')]
    missing = [n for n, addr in INTEGRATION_SERVICES.items()
               if not _reachable(*addr)]
    if ci:
        env['NOVA_LITE_REQUIRE_DB_BACKENDS'] = '1'
        env['NOVA_LITE_REQUIRE_INTEGRATION'] = '1'
        env['NOVA_LITE_REQUIRE_LIBVIRT'] = '1'
        env['NOVA_LITE_REQUIRE_TGT'] = '1'
        env['NOVA_LITE_REQUIRE_CEPH'] = '1'
        env['NOVA_LITE_REQUIRE_CINDER'] = '1'
    if not missing or ci:
        tiers.append(('integration', './tests/integration'))
        tiers.append(('tempest', None))
        if missing:
            print('CI=true and %s not reachable on 127.0.0.1: the '
                  'integration tier will fail.' % ', '.join(missing))
    else:
        print('Skipping the integration and tempest tiers: they need %s '
              'on 127.0.0.1 '
              '(RabbitMQ 5672 guest/guest, MariaDB 3306 root, PostgreSQL '
              '5432 postgres trust). Set CI=true to make it mandatory.' %
              ', '.join(missing))
    if argv:
        tiers = [t for t in tiers if t[0] in argv]
    names = [t[0] for t in tiers]
    side = []
    if 'integration' in names or 'tempest' in names:
        side.append(KEYSTONE_VENV)
    if 'integration' in names:
        side.append(CINDER_VENV)
    if 'tempest' in names:
        side.append(TEMPEST_VENV)
    # The side virtualenvs are built while the first tiers run (pip
    # waits on downloads and disk more than on the CPU); the integration
    # tier waits for them.
    builder = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    built = builder.submit(build_side_venvs, side)
    builder.shutdown(wait=False)
    total = {'Passed': 0, 'Failed': 0, 'Skipped': 0}
    for name, path in tiers:
        if name in ('integration', 'tempest'):
            built.result()   # raises what the build raised
        if path is None:
            counts = run_tempest(env)
        else:
            counts = run_tier(name, path, env)
        for key in total:
            total[key] += counts[key]
    print('\ntests: %d passed, %d failed, %d skipped' % (
        total['Passed'], total['Failed'], total['Skipped']))
    return 1 if total['Failed'] else 0


def cmd_constraints(argv):
    """Write constraints.txt from the test virtualenv's versions."""
    ensure_venv(with_tests=True)
    frozen = subprocess.check_output(
        [PY, '-m', 'pip', '--disable-pip-version-check', 'freeze',
         '--exclude-editable'], cwd=ROOT, text=True)
    path = os.path.join(ROOT, CONSTRAINTS)
    with open(path) as f:
        header = [line for line in f if line.startswith('#')]
    with open(path, 'w') as f:
        f.writelines(header)
        f.write(frozen)
    print('Wrote %s' % path)
    return 0


def main():
    commands = {'run': cmd_run, 'test': cmd_test,
                'constraints': cmd_constraints, 'durations': cmd_durations}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == '__main__':
    sys.exit(main())
