#!/usr/bin/env python3
"""Attach and detach on the real data plane, phase by phase, judged by the
guest.

Starts the production layout of the real-data tier
(``tests/integration/realdata/base.py``: the API under uWSGI,
``nova-lite-conductor`` and one ``nova-lite-compute`` with the libvirt
driver under TCG, RabbitMQ, MariaDB, the ``iscsi`` backend on the node's
tgtd with CHAP, and ``rbd`` on the machine's one-node Ceph where it is
installed) and one test guest. Then ``--runs`` times, alternating 2.100
(the API answers when the attach is done) and 2.101 (it answers 202 at
once), attaches a volume of ``--backend`` (``iscsi``, the default, or
``rbd``) through the REST API and detaches it again, timing from the
request:

``attach``, from the request, by what an observer sees of it:

* ``api``: until the mapping is in the database (its task's first step,
  ``accepted``, written by the API);
* ``conductor``: until the conductor took it (``reserving``);
* ``reservation``: until block storage reserved the volume (``reserved``:
  the host named a device, an attachment was made);
* ``handover``: until the host took the attach (``connecting``);
* ``export``: until the host is connected (``connected``: the backend
  exported the LUN to the host's initiator with CHAP credentials; on
  ``rbd``, made or read the host's cephx identity and the monitors);
* ``hot-plug + guest``: until the guest's agent lists the disk by its
  serial (libvirt's hot-plug of the network disk, then the guest's ACPI
  hot-plug and virtio-blk probe; ``tools/bench/guest_hotplug.py`` splits
  these two);
* ``complete``: until the mapping's task ended (the host completed the
  attachment); ``to_guest`` is the sum up to the guest, ``answer`` the
  API's answer (2.100: once the attach is done; 2.101: 202 at once).

``detach``: ``api`` (until the detach's task is seen), ``handover``
(until the host took it), ``guest release`` (until the guest no longer
lists the disk: libvirt's unplug request, the guest's release, the
device-removed event) and ``unexport`` (until the mapping is deleted: the
host recorded the release, deleted the attachment, the LUN unexported).

The observer polls the mapping's row in the database and then the
guest's agent, every ``--poll-interval`` seconds (default 5 ms) after
the previous poll ended. An agent call over the virtio-serial channel
takes 10 to 25 ms under TCG, so that is the resolution: a step shorter
than a poll is counted in the next phase (the phases add up to the
total, never more), and a guest that released a disk within one poll of
the host taking the detach shows a ``guest release`` of 0. Before each
detach the guest must list the disk in three polls in a row (a listing
without it in between is counted in ``flickers``). Prints one JSON
document with p50/p99 (nearest rank) per phase and mode, in
milliseconds, the load average before and after and the run's length.
Under TCG the guest's phases depend on the host's load: quote the load
with the figures.

Needs what the real-data tier needs (root, libvirtd, tgtd, the test guest,
RabbitMQ and MariaDB; see doc/source/contributor/integration-tests.rst).
Without it, it says what is missing and exits with status 2::

    .venv/bin/python tools/bench/realdata_attach.py --runs 20
"""

import argparse
import json
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import attach_load  # noqa: E402  (its percentiles and set-up)
import sqlalchemy as sa  # noqa: E402

from tests.guest import agent  # noqa: E402
from tests.guest import fixture as guest_fixture  # noqa: E402
from tests.integration import deployment as deploy  # noqa: E402
from tests.integration.realdata import base as realdata  # noqa: E402

SYNC = '2.100'
ASYNC = '2.101'
IMAGE_REF = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
TIMEOUT = 120

# (phase, the step that ends it). An attach's guest sees the disk once
# libvirt hot-plugged it, before the host completes the attachment and
# ends the task (``complete``); a detach's guest lets go before the host
# records it, deletes the attachment and unexports (``unexport``).
ATTACH_PHASES = [('api', 'accepted'), ('conductor', 'reserving'),
                 ('reservation', 'reserved'), ('handover', 'connecting'),
                 ('export', 'connected'), ('hot-plug + guest', 'guest'),
                 ('complete', 'done')]
DETACH_PHASES = [('api', 'accepted'), ('handover', 'guest_detaching'),
                 ('guest release', 'guest'), ('unexport', 'gone')]


def log(message, *args):
    print('realdata_attach: ' + (message % args if args else message),
          file=sys.stderr, flush=True)


class Observer(object):
    """Polls the mapping of (server, volume) and the guest; records when
    each step was first seen, in seconds after ``t0``."""

    _BY_VOLUME = sa.text(
        'SELECT uuid, task, task_step FROM block_device_mappings '
        'WHERE instance_uuid = :s AND volume_id = :v')
    _BY_UUID = sa.text('SELECT uuid, task, task_step FROM '
                       'block_device_mappings WHERE uuid = :u')

    def __init__(self, engine, guest, interval):
        self.engine = engine
        self.guest = guest
        self.interval = interval

    def mapping(self, server_id, volume_id):
        with self.engine.connect() as conn:
            return conn.execute(self._BY_VOLUME, {'s': server_id,
                                                  'v': volume_id}).first()

    def watch(self, server_id, volume_id, t0, attach, mapping_uuid=None):
        """Poll until the guest has the disk and the attach's task ended
        (``attach``), or until the guest lost it and the mapping is gone;
        returns {step: seconds after t0} with ``done`` (the task ended),
        ``gone`` (the row deleted) and ``guest``."""
        seen = {}
        deadline = t0 + TIMEOUT
        with self.engine.connect() as conn:
            while time.monotonic() < deadline:
                now = time.monotonic() - t0
                if mapping_uuid is None:
                    row = conn.execute(self._BY_VOLUME, {
                        's': server_id, 'v': volume_id}).first()
                else:
                    row = conn.execute(self._BY_UUID,
                                       {'u': mapping_uuid}).first()
                conn.commit()
                if row is not None and row.task:
                    seen.setdefault(row.task_step, now)
                elif row is not None and seen:
                    seen.setdefault('done', now)
                elif row is None and seen:
                    seen.setdefault('gone', now)
                if self.guest.has_disk(volume_id) == attach:
                    seen.setdefault('guest', now)
                if 'guest' in seen and ('done' if attach else 'gone') in seen:
                    return seen
                time.sleep(self.interval)
        raise RuntimeError('%s of %s: not settled within %ss (seen %s)' % (
            'attach' if attach else 'detach', volume_id, TIMEOUT, seen))


def phases(seen, order):
    """Seconds per phase, in ``order``: a phase ends when its step was
    first seen; a step not seen (shorter than a poll) is counted in the
    next phase."""
    out = {}
    last = 0.0
    for name, step in order:
        if step in seen and seen[step] >= last:
            out[name] = seen[step] - last
            last = seen[step]
        else:
            out[name] = 0.0
    return out, last


def _timed(method, *args, **kwargs):
    """Start ``method`` on a thread; the dict it fills: ``status`` and
    ``at`` (its answer's time after the returned ``t0``)."""
    answered = {}
    t0 = time.monotonic()

    def call():
        resp = method(*args, **kwargs)
        answered['status'] = resp.status
        answered['at'] = time.monotonic() - t0
    thread = threading.Thread(target=call)
    thread.start()
    return t0, thread, answered


def _stable(guest, volume_id, interval):
    """Wait until the guest lists the disk in three polls in a row; the
    listings without it meanwhile."""
    stable = flickers = 0
    deadline = time.monotonic() + 30
    while stable < 3:
        if guest.has_disk(volume_id):
            stable += 1
        else:
            stable = 0
            flickers += 1
        if time.monotonic() > deadline:
            raise RuntimeError('the guest does not keep the disk')
        time.sleep(interval)
    return flickers


def cycle(client, observer, guest, server_id, volume_id, interval, rows):
    """One attach and detach at ``client``'s microversion; appends their
    phases to ``rows``; returns the flickers seen between them."""
    path = '/v2.1/servers/%s/os-volume_attachments' % server_id
    t0, thread, answered = _timed(client.post, path, body={
        'volumeAttachment': {'volumeId': volume_id}})
    seen = observer.watch(server_id, volume_id, t0, True)
    thread.join()
    if answered.get('status') not in (200, 202):
        raise RuntimeError('attach answered %s' % answered)
    split, total = phases(seen, ATTACH_PHASES)
    split.update(total=total, answer=answered['at'], to_guest=seen['guest'])
    rows['attach'].append(split)
    mapping_uuid = observer.mapping(server_id, volume_id).uuid
    flickers = _stable(guest, volume_id, interval)
    t0, thread, answered = _timed(client.delete,
                                  '%s/%s' % (path, volume_id))
    seen = observer.watch(server_id, volume_id, t0, False,
                          mapping_uuid=mapping_uuid)
    thread.join()
    if answered.get('status') != 202:
        raise RuntimeError('detach answered %s' % answered)
    while client.get('/v3/demo/volumes/%s' % volume_id).body[
            'volume']['status'] != 'available':
        time.sleep(interval)
    split, total = phases(seen, DETACH_PHASES)
    split.update(total=total, answer=answered['at'], to_guest=seen['guest'])
    rows['detach'].append(split)
    return flickers


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=20,
                        help='attach/detach cycles (alternating modes)')
    parser.add_argument('--poll-interval', type=float, default=0.005)
    parser.add_argument('--backend', choices=(realdata.ISCSI,
                                              realdata.RBD),
                        default=realdata.ISCSI,
                        help='the volume\'s backend: iscsi (tgtd, CHAP) '
                             'or rbd (the machine\'s one-node Ceph)')
    args = parser.parse_args(argv)
    began = time.monotonic()
    load_before = os.getloadavg()
    deployment = realdata.RealDataDeployment(
        'mysql', compute_hosts=('bench-%d' % os.getpid(),))
    log('starting the real-data deployment (uWSGI, conductor, compute '
        'with libvirt, RabbitMQ, MariaDB, %s)', 'iscsi on tgtd' if
        args.backend == realdata.ISCSI else 'rbd on Ceph')
    if not attach_load.set_up(deployment):
        return 2
    if args.backend not in deployment.backends:
        log('no %s backend here: %s', args.backend, deployment.no_ceph)
        deployment.cleanUp()
        return 2
    import libvirt
    from nova_lite.virt.libvirt import config as vconfig
    results = {SYNC: {'attach': [], 'detach': []},
               ASYNC: {'attach': [], 'detach': []}}
    engine = sa.create_engine(deployment.connection_url)
    api = deploy.HTTPClient(deployment.base_url, token='demo:demo',
                            compute_version='2.37', volume_version='3.27')
    server_id = None
    try:
        resp = api.post('/v2.1/servers', body={'server': {
            'name': 'bench', 'flavorRef': '1', 'imageRef': IMAGE_REF,
            'networks': 'none'}})
        server_id = resp.body['server']['id']
        deadline = time.monotonic() + 300
        while api.get('/v2.1/servers/%s' % server_id).body[
                'server']['status'] != 'ACTIVE':
            if time.monotonic() > deadline:
                raise RuntimeError('the server did not become ACTIVE')
            time.sleep(0.2)
        conn = libvirt.open(guest_fixture.uri())
        root = vconfig.parse(conn.lookupByUUIDString(server_id).XMLDesc(0))
        path = vconfig.channel_paths(root)[
            deployment.guest_image['channel']]
        guest = agent.wait_ready(path, timeout=realdata.BOOT_TIMEOUT)
        resp = api.post('/v3/demo/volumes', body={'volume': {
            'size': 1, 'volume_type': deployment.volume_type(
                args.backend)}})
        if resp.status != 202:
            raise RuntimeError('volume create: %r' % resp)
        volume_id = resp.body['volume']['id']
        while api.get('/v3/demo/volumes/%s' % volume_id).body[
                'volume']['status'] != 'available':
            time.sleep(0.1)
        observer = Observer(engine, guest, args.poll_interval)
        flickers = 0
        log('server %s, volume %s: %d cycles', server_id, volume_id,
            args.runs)
        for run in range(args.runs):
            mode = SYNC if run % 2 == 0 else ASYNC
            flickers += cycle(api.as_(compute_version=mode), observer,
                              guest, server_id, volume_id,
                              args.poll_interval, results[mode])
            log('run %d (%s): attach to guest %.0f ms, detach to guest '
                '%.0f ms', run + 1, mode,
                results[mode]['attach'][-1]['to_guest'] * 1000,
                results[mode]['detach'][-1]['to_guest'] * 1000)
        guest.close()
        conn.close()
    finally:
        if server_id is not None:
            # Its domain goes with it (the deployment's cleanup stops the
            # services, not the node's guests).
            api.delete('/v2.1/servers/%s' % server_id)
            deadline = time.monotonic() + TIMEOUT
            while (api.get('/v2.1/servers/%s' % server_id).status != 404 and
                   time.monotonic() < deadline):
                time.sleep(0.2)
        engine.dispose()
        deployment.cleanUp()
    report = {}
    for mode, ops in results.items():
        report[mode] = {}
        for op, rows in ops.items():
            if rows:
                report[mode][op] = {
                    name: attach_load.summary_ms([r[name] for r in rows])
                    for name in rows[0]}
    print(json.dumps({
        'backend': args.backend,
        'runs': args.runs,
        'poll_interval_s': args.poll_interval,
        'load_before': [round(x, 2) for x in load_before],
        'load_after': [round(x, 2) for x in os.getloadavg()],
        'run_seconds': round(time.monotonic() - began, 1),
        'flickers': flickers,
        'milliseconds': report,
    }, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
