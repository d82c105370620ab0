"""Named crash points: where the fault-injection tier kills a process.

A workflow marks the places between its durable steps with
``crashpoint.hit(NAME)``. In a normal process that is a set lookup and
nothing more. A process started with the environment variable
``NOVA_LITE_CRASH_AT`` naming one or more points (comma separated) kills
itself with SIGKILL when it reaches one of them: no ``finally`` block, no
``atexit`` handler, no message acknowledgement runs, exactly as when the
kernel's OOM killer or a power cut ends it.

``NOVA_LITE_CRASH_MARK``, when set, is a file path that makes the crash
happen once: the first process to reach an armed point creates the file
(``O_CREAT | O_EXCL``) and dies; every later arrival, in that process's
restarted successor or in another uWSGI worker started with the same
environment, finds the file and goes on. The file holds the point's name
and the process id, so the test knows the crash happened.

These are test-only settings: they are environment variables, not
configuration options, so that no configuration file can switch them on.
Every point is declared in ``POINTS`` below (one place to read them all;
the integration tier's crash matrix iterates over it), and ``hit`` refuses
an undeclared name, so a typo fails the test that reaches it instead of
never crashing.
"""

import os
import signal

CRASH_AT_ENV = 'NOVA_LITE_CRASH_AT'
CRASH_MARK_ENV = 'NOVA_LITE_CRASH_MARK'

# name -> (process that reaches it, what has been written when it is hit).
# Names are <workflow>.<where>. Workflows add their points here.
POINTS = {}


def declare(name, process, description):
    """Declare a crash point (at import of this module); returns name."""
    if name in POINTS:
        raise ValueError('crash point %s declared twice' % name)
    POINTS[name] = (process, description)
    return name


def _armed():
    value = os.environ.get(CRASH_AT_ENV, '')
    return frozenset(p.strip() for p in value.split(',') if p.strip())


_ARMED = _armed()


def reload_from_environment():
    """Read ``NOVA_LITE_CRASH_AT`` again (tests that change it in-process);
    returns the armed points."""
    global _ARMED
    _ARMED = _armed()
    return _ARMED


def _claim_mark(name):
    """True if this process is the one to crash (the mark file was created
    now, or no mark file is used)."""
    mark = os.environ.get(CRASH_MARK_ENV)
    if not mark:
        return True
    try:
        fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, 'w') as f:
        f.write('%s %d\n' % (name, os.getpid()))
        f.flush()
        os.fsync(f.fileno())
    return True


def hit(name):
    """Die here (SIGKILL) if the point is armed; otherwise do nothing."""
    if name not in POINTS:
        raise ValueError('undeclared crash point %s' % name)
    if name in _ARMED and _claim_mark(name):
        os.kill(os.getpid(), signal.SIGKILL)
