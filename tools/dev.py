#!/usr/bin/env python3
"""Quick start for a fresh clone: needs only Python 3.10+.

    python3 tools/dev.py run     # start nova-lite-all on 127.0.0.1:8774
    python3 tools/dev.py test    # run the whole test suite

Both create (once) a virtualenv in ``.venv`` with nova_lite installed in
development mode; ``test`` adds the test requirements. The test tiers:

* unit: no network, no database server;
* functional: the real WSGI app, conductor and compute in-process, SQLite;
* integration: real uWSGI, RabbitMQ, MariaDB and PostgreSQL processes. It
  runs when those services answer on 127.0.0.1 (5672, 3306, 5432). With
  ``CI=true`` it must run: a missing service fails the run. Elsewhere the
  tier is skipped with a message saying what it needs.

The last line is the total: ``tests: N passed, N failed, N skipped``.
"""

import hashlib
import os
import re
import socket
import subprocess
import sys
import venv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, '.venv')
BIN = os.path.join(VENV, 'bin')
PY = os.path.join(BIN, 'python')

RUN_REQS = ['requirements.txt', 'setup.cfg']
TEST_REQS = RUN_REQS + ['test-requirements.txt']
TEST_EXTRAS = 'deploy,mysql,postgresql,bench'

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


def _pip(*args):
    subprocess.check_call([PY, '-m', 'pip', '--disable-pip-version-check',
                           '-q'] + list(args), cwd=ROOT)


def ensure_venv(with_tests):
    """Create .venv and (re)install when the requirements changed."""
    files = TEST_REQS if with_tests else RUN_REQS
    stamp_name = 'test' if with_tests else 'run'
    stamp = os.path.join(VENV, '.nova-lite-%s-stamp' % stamp_name)
    digest = _digest(files, stamp_name)
    if not os.path.exists(PY):
        print('Creating virtualenv in %s' % VENV, flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
        _pip('install', '--upgrade', 'pip', 'setuptools', 'wheel')
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return
    print('Installing nova_lite and its %s requirements into .venv' % (
        'test' if with_tests else 'runtime'), flush=True)
    if with_tests:
        _pip('install', '-e', '.[%s]' % TEST_EXTRAS,
             '-r', 'test-requirements.txt')
    else:
        _pip('install', '-e', '.')
    with open(stamp, 'w') as f:
        f.write(digest)


def cmd_run(argv):
    ensure_venv(with_tests=False)
    exe = os.path.join(BIN, 'nova-lite-all')
    os.execv(exe, [exe] + argv)


_COUNT_RE = re.compile(r'^ - (Passed|Failed|Skipped): (\d+)')


def run_tier(name, path, env):
    """Run one stestr tier, streaming its output; return its counts."""
    print('\n=== %s tests (%s) ===' % (name, path), flush=True)
    counts = {'Passed': 0, 'Failed': 0, 'Skipped': 0}
    proc = subprocess.Popen(
        [PY, '-m', 'stestr', '--test-path', path, 'run', '--color'],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, bufsize=1)
    for line in proc.stdout:
        sys.stdout.write(line)
        match = _COUNT_RE.match(line)
        if match:
            counts[match.group(1)] = int(match.group(2))
    rc = proc.wait()
    if rc != 0 and counts['Failed'] == 0:
        counts['Failed'] = 1   # the runner itself failed (import error...)
    return counts


def _reachable(host, port):
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def cmd_test(argv):
    ensure_venv(with_tests=True)
    ci = os.environ.get('CI', '').lower() == 'true'
    env = dict(os.environ)
    env.setdefault('PYTHONUNBUFFERED', '1')
    tiers = [('unit', './tests/unit'), ('functional', './tests/functional')]
    missing = [n for n, addr in INTEGRATION_SERVICES.items()
               if not _reachable(*addr)]
    if ci:
        env['NOVA_LITE_REQUIRE_DB_BACKENDS'] = '1'
        env['NOVA_LITE_REQUIRE_INTEGRATION'] = '1'
    if not missing or ci:
        tiers.append(('integration', './tests/integration'))
        if missing:
            print('CI=true and %s not reachable on 127.0.0.1: the '
                  'integration tier will fail.' % ', '.join(missing))
    else:
        print('Skipping the integration tier: it needs %s on 127.0.0.1 '
              '(RabbitMQ 5672 guest/guest, MariaDB 3306 root, PostgreSQL '
              '5432 postgres trust). Set CI=true to make it mandatory.' %
              ', '.join(missing))
    if argv:
        tiers = [t for t in tiers if t[0] in argv]
    total = {'Passed': 0, 'Failed': 0, 'Skipped': 0}
    for name, path in tiers:
        counts = run_tier(name, path, env)
        for key in total:
            total[key] += counts[key]
    print('\ntests: %d passed, %d failed, %d skipped' % (
        total['Passed'], total['Failed'], total['Skipped']))
    return 1 if total['Failed'] else 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ('run', 'test'):
        print(__doc__)
        return 2
    if sys.argv[1] == 'run':
        return cmd_run(sys.argv[2:])
    return cmd_test(sys.argv[2:])


if __name__ == '__main__':
    sys.exit(main())
