#!/usr/bin/env python3
"""Attach and detach on the real data plane, phase by phase, judged by the
guest, beside the hypervisor's own hot-plug of the same disk.

For each layout of ``--layout`` (``production``: the real-data tier's
production layout, ``tests/integration/realdata/base.py``: the API under
uWSGI, ``nova-lite-conductor`` and one ``nova-lite-compute`` with the
libvirt driver under TCG, RabbitMQ, MariaDB; ``all``: the embedded
default, one ``nova-lite-all`` process with SQLite and the in-process
transport, the same driver and backends), one after the other, it starts
the layout, boots one test guest and makes one 1 GiB volume of each
backend of ``--backend`` (``iscsi``: a LUN of the node's tgtd with CHAP;
``rbd``: an image of the machine's one-node Ceph opened by QEMU's librbd
client; ``cinder``, production layout only: see below). Then ``--runs``
rounds; in each, for each backend and each mode
of ``--modes`` (``2.100``: the API answers once the volume is reserved
and the host named the device, the attach going on after it;
``2.101``: 202 at once; ``2.105-ro``: 2.105 with ``attach_mode: ro`` in
the request body, 202 at once, a read-only disk), two cycles on the same
guest and volume, one right after the other (which goes first alternates
from round to round):

* **nova_lite**: attach the volume through the REST API and detach it
  again;
* **floor**: the hypervisor alone, with nothing of the control plane
  around it (``tools/bench/guest_hotplug.py``'s ``HotPlug``): the same
  disk exported by hand (``iscsi``: the volume's LUN file on the same
  tgtd, a target of its own with LUN 1, a CHAP account of its own and the
  ACL naming the compute host's initiator, read-only for ``ro``, as the
  backend exports it; ``rbd``: the same image with the same cephx
  identity, the connection nova_lite's block storage gave the host),
  then libvirt's ``attachDeviceFlags`` with the disk XML nova_lite's
  libvirt driver writes for that connection (``vconfig.volume_disk``;
  the running guest and the persistent definition, as the driver) and
  ``detachDeviceFlags``. The hand export and the disk's secret are made
  before the attach and removed after the detach, outside the timed
  part (the export's time is reported beside it). The floor's disk has
  no serial (the guest lists it as ``-``): the compute host removes
  from its guests, every periodic run, a volume disk no mapping holds,
  and it leaves disks without a serial alone.

nova_lite's ``attach``, from the request, by what an observer sees of it:

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
  hot-plug and virtio-blk probe: what the floor times alone);
* ``complete``: until the mapping's task ended (the host completed the
  attachment); ``to_guest`` is the sum up to the guest, ``answer`` the
  API's answer (2.100: once the volume is reserved, with the device
name; 2.101 and 2.105: 202 at once).

nova_lite's ``detach``: ``api`` (until the detach's task is seen),
``handover`` (until the host took it), ``guest release`` (until the guest
no longer lists the disk: libvirt's unplug request, the guest's release,
the device-removed event) and ``unexport`` (until the mapping is deleted:
the host recorded the release, deleted the attachment, the LUN
unexported); ``to_guest`` is the request to the guest losing the disk.

``cinder`` runs in a deployment of its own after the layout's own backends
(``tests.integration.realdata.test_cinder.CinderDeployment``: the
production layout behind a real Keystone, ``tests.fixtures.keystone``,
with ``[volume] client = cinder`` reaching upstream Cinder 29,
``tests.fixtures.cinder``, whose RBD driver keeps its volumes on the same
Ceph): its own guest, a volume made in Cinder's API as the ``demo``
member, the attaches through nova_lite's API with the member's Keystone
token. The phases are nova_lite's mapping's steps as for the other
backends; through Cinder's API ``reservation`` is Cinder's attachment
create (after the host named the device), ``export`` a volume show and its
attachment update (cinder-api's RPC call to cinder-volume, the RBD
driver's ``initialize_connection``), ``complete`` its ``os-complete``, a
detach's ``unexport`` its attachment delete. The floor hot-plugs the same
image with the cephx identity Cinder's connection_info names (Cinder's
``rbd_user``, the libvirt secret its ``rbd_secret_uuid`` names, which the
operator defined). Without Cinder's virtualenv (``.venv-cinder``, with the
Ceph bindings), Keystone's or Ceph it says what is missing and exits with
status 2; with ``--layout all`` it refuses (nova-lite-all runs without
Keystone).

The floor's ``attach``: ``attachDeviceFlags`` (the call) and ``guest
sees`` (then until the agent lists the disk); ``to_guest`` their sum,
``export by hand`` the ``tgtadm`` calls before it (``iscsi``, not in
``to_guest``). Its ``detach``, each from just before the call for the
running guest (no phases: the guest usually lets go while that call,
which waits a while for the release, runs): ``detachDeviceFlags`` (the
call's return), ``to_guest`` (the agent no longer lists the disk),
``to_event`` (libvirt's device-removed event), ``total`` (the
definition's disk removed too); ``unexport by hand`` the ``tgtadm`` calls
after it.

``minus_floor``: nova_lite minus the floor, for the request to the guest
seeing the disk (``attach_to_guest``) and to the guest losing it
(``detach_to_guest``): the difference of the p50s and of the p99s, and the
median of the differences of the cycles paired in one round
(``paired_p50``, the figure least moved by a machine whose speed changes
from minute to minute).

The observer polls the mapping's row in the database and then the
guest's agent, every ``--poll-interval`` seconds (default 5 ms) after
the previous poll ended; the floor polls the agent alone at the same
interval while its libvirt call runs. What a poll saw is stamped halfway
through its query or agent call. An agent call over the
virtio-serial channel takes 10 to 25 ms under TCG, so that is the
resolution: a step shorter than a poll is counted in the next phase (the
phases add up to the total, never more), and a guest that released a
disk within one poll shows a ``guest release`` of 0. Before each detach
the guest must list the disk in three polls in a row (a listing without
it in between is counted in ``flickers``).

Prints one JSON document: p50/p99/max (nearest rank) per phase, in
milliseconds, per layout, backend and mode, for nova_lite and for the
floor, and their difference; per layout (``per_layout``) the load
average before and after, the guest's boot (``boot_to_agent_s``), the
set-up until the first round (``setup_s``), the rounds (``rounds_s``)
and the whole (``run_seconds``), those of the deployment beside Cinder
under ``beside_cinder``; the disk XML of each side, per backend
and access mode (``disks``: nova_lite's as the running guest has it). A
short table goes to stderr. Under TCG the guest's phases depend
on the host's load: quote the load with the figures. A full default run
(both layouts, both backends, three modes, 10 rounds) takes 12 to 15
minutes on two cores busy with other tests (load average 10 to 21), less
on idle ones.

Needs what the real-data tier needs (root, libvirtd, tgtd, the test guest,
RabbitMQ and MariaDB, Ceph for ``rbd``; see
doc/source/contributor/integration-tests.rst). Without it, it says what
is missing and exits with status 2::

    .venv/bin/python tools/bench/realdata_attach.py
    .venv/bin/python tools/bench/realdata_attach.py --runs 3 \\
        --backend iscsi --layout production --modes 2.101
    .venv/bin/python tools/bench/realdata_attach.py --runs 3 \\
        --backend rbd,cinder --layout production --modes 2.101
"""

import argparse
import json
import os
import sys
import threading
import time
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import attach_load  # noqa: E402  (its percentiles and set-up)
import fixtures  # noqa: E402
import guest_hotplug  # noqa: E402  (the hypervisor's own hot-plug)
from oslo_serialization import jsonutils  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from nova_lite.db import secrets  # noqa: E402
from nova_lite.virt.libvirt import config as vconfig  # noqa: E402
from nova_lite.virt.libvirt import host as vhost  # noqa: E402
from tests.fixtures import conf as conf_fixture  # noqa: E402
from tests.fixtures import keystone  # noqa: E402
from tests.fixtures import required  # noqa: E402
from tests.guest import agent  # noqa: E402
from tests.guest import fixture as guest_fixture  # noqa: E402
from tests.integration import deployment as deploy  # noqa: E402
from tests.integration.realdata import base as realdata  # noqa: E402
from tests.integration.realdata import test_cinder  # noqa: E402

IMAGE_REF = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
TIMEOUT = 120
PRODUCTION = 'production'
ALL_IN_ONE = 'all'
LAYOUTS = (PRODUCTION, ALL_IN_ONE)
# Volumes of upstream Cinder on the same Ceph, the compute side with
# ``[volume] client = cinder`` (a deployment of its own).
CINDER = 'cinder'
BACKENDS = (realdata.ISCSI, realdata.RBD, CINDER)
DEFAULT_BACKENDS = '%s,%s' % (realdata.ISCSI, realdata.RBD)
DEFAULT_MODES = '2.100,2.101,2.105-ro'
# attach_mode in the body from this microversion on.
ATTACH_MODE_VERSION = (2, 105)

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
FLOOR_ATTACH_PHASES = [('attachDeviceFlags', 'call'),
                       ('guest sees', 'guest')]


def log(message, *args):
    print('realdata_attach: ' + (message % args if args else message),
          file=sys.stderr, flush=True)


def _choices(text, allowed, what):
    chosen = [item.strip() for item in text.split(',') if item.strip()]
    unknown = [item for item in chosen if item not in allowed]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError('%s: one or more of %s, comma '
                                         'separated (not %s)' % (
                                             what, ', '.join(allowed),
                                             text))
    return list(dict.fromkeys(chosen))


def parse_modes(text):
    """``'2.100,2.105-ro'`` -> ``[(name, microversion, attach_mode or
    None)]``; an ``-ro``/``-rw`` suffix is the body's ``attach_mode``,
    which the API takes from 2.105 on."""
    modes = []
    names = [item.strip() for item in text.split(',') if item.strip()]
    for name in dict.fromkeys(names):
        version, _sep, access = name.partition('-')
        try:
            major, minor = (int(part) for part in version.split('.'))
        except ValueError:
            raise argparse.ArgumentTypeError(
                'mode %r: a compute microversion (2.100), with -ro or -rw '
                'from 2.105 on' % name)
        if (major, minor) < (2, 100):
            raise argparse.ArgumentTypeError(
                'mode %r: 2.100 or later' % name)
        if access and (access not in ('ro', 'rw') or
                       (major, minor) < ATTACH_MODE_VERSION):
            raise argparse.ArgumentTypeError(
                'mode %r: attach_mode is ro or rw, from 2.105 on' % name)
        modes.append((name, version, access or None))
    if not modes:
        raise argparse.ArgumentTypeError('modes: at least one')
    return modes


class Observer(object):
    """Polls the mapping of (server, volume) and the guest; records when
    each step was first seen, in seconds after ``t0``."""

    _BY_VOLUME = sa.text(
        'SELECT uuid, task, task_step FROM block_device_mappings '
        'WHERE instance_uuid = :s AND volume_id = :v')
    _BY_UUID = sa.text('SELECT uuid, task, task_step FROM '
                       'block_device_mappings WHERE uuid = :u')
    _CONNECTION = sa.text('SELECT device_name, connection_info FROM '
                          'block_device_mappings WHERE uuid = :u')

    def __init__(self, engine, guest, interval):
        self.engine = engine
        self.guest = guest
        self.interval = interval
        # The deployments store connection credentials encrypted with the
        # tests' [database] secret_keys: this process decrypts with it.
        secrets.configure(types.SimpleNamespace(
            database=types.SimpleNamespace(
                secret_keys=[conf_fixture.SECRET_KEY])))

    def mapping(self, server_id, volume_id):
        with self.engine.connect() as conn:
            return conn.execute(self._BY_VOLUME, {'s': server_id,
                                                  'v': volume_id}).first()

    def connection(self, mapping_uuid):
        """``(device name, connection_info)`` of the mapping, its
        credentials in plain text (the production layout stores them
        encrypted with the tests' ``[database] secret_keys``)."""
        with self.engine.connect() as conn:
            row = conn.execute(self._CONNECTION,
                               {'u': mapping_uuid}).first()
        return row.device_name, jsonutils.loads(
            secrets.decrypt_json(row.connection_info))

    def watch(self, server_id, volume_id, t0, attach, mapping_uuid=None):
        """Poll until the guest has the disk and the attach's task ended
        (``attach``), or until the guest lost it and the mapping is gone;
        returns {step: seconds after t0} with ``done`` (the task ended),
        ``gone`` (the row deleted) and ``guest``."""
        seen = {}
        deadline = t0 + TIMEOUT
        with self.engine.connect() as conn:
            while time.monotonic() < deadline:
                if mapping_uuid is None:
                    query = (self._BY_VOLUME, {'s': server_id,
                                               'v': volume_id})
                else:
                    query = (self._BY_UUID, {'u': mapping_uuid})
                row, now = guest_hotplug.stamped(
                    lambda: conn.execute(*query).first())
                now -= t0
                conn.commit()
                if row is not None and row.task:
                    seen.setdefault(row.task_step, now)
                elif row is not None and seen:
                    seen.setdefault('done', now)
                elif row is None and seen:
                    seen.setdefault('gone', now)
                has, now = guest_hotplug.stamped(self.guest.has_disk,
                                                 volume_id)
                if has == attach:
                    seen.setdefault('guest', now - t0)
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


def _stable(guest, serial, interval):
    """Wait until the guest lists the disk of ``serial`` (None: the one
    without a serial) in three polls in a row; the listings without it
    meanwhile."""
    stable = flickers = 0
    deadline = time.monotonic() + 30
    while stable < 3:
        if guest.has_disk(serial):
            stable += 1
        else:
            stable = 0
            flickers += 1
        if time.monotonic() > deadline:
            raise RuntimeError('the guest does not keep the disk')
        time.sleep(interval)
    return flickers


def cycle(client, observer, guest, server_id, volume_id, interval, rows,
          status, attach_mode=None, on_attached=None):
    """One attach and detach at ``client``'s microversion (with
    ``attach_mode`` in the body, when given); appends their phases to
    ``rows``; ``on_attached(mapping uuid)`` is called once the guest has
    the disk and the attach ended; after the detach, waits until
    ``status(volume_id)`` (block storage's) is ``available``. Returns the
    flickers seen between them."""
    path = '/v2.1/servers/%s/os-volume_attachments' % server_id
    body = {'volumeId': volume_id}
    if attach_mode:
        body['attach_mode'] = attach_mode
    t0, thread, answered = _timed(client.post, path,
                                  body={'volumeAttachment': body})
    seen = observer.watch(server_id, volume_id, t0, True)
    thread.join()
    if answered.get('status') not in (200, 202):
        raise RuntimeError('attach answered %s' % answered)
    split, total = phases(seen, ATTACH_PHASES)
    split.update(total=total, answer=answered['at'], to_guest=seen['guest'])
    rows['attach'].append(split)
    mapping_uuid = observer.mapping(server_id, volume_id).uuid
    if on_attached is not None:
        on_attached(mapping_uuid)
    flickers = _stable(guest, volume_id, interval)
    t0, thread, answered = _timed(client.delete,
                                  '%s/%s' % (path, volume_id))
    seen = observer.watch(server_id, volume_id, t0, False,
                          mapping_uuid=mapping_uuid)
    thread.join()
    if answered.get('status') != 202:
        raise RuntimeError('detach answered %s' % answered)
    while status(volume_id) != 'available':
        time.sleep(interval)
    split, total = phases(seen, DETACH_PHASES)
    split.update(total=total, answer=answered['at'], to_guest=seen['guest'])
    rows['detach'].append(split)
    return flickers


class Floor(object):
    """The hypervisor's own hot-plug of a backend's disk into the guest of
    one layout: what nova_lite's attach of that backend gave the host
    (``learn``) is what it exports by hand and attaches (``cycle``)."""

    def __init__(self, deployment, plug, guest, interval):
        self.deployment = deployment
        self.plug = plug
        self.guest = guest
        self.interval = interval
        # Its own usage names for the CHAP secrets: never the compute
        # host's.
        self.host_name = 'floor-%d' % os.getpid()
        self.secrets = vhost.Host(guest_fixture.uri(), self.host_name)
        self.learned = {}
        self.xml = {}

    def knows(self, backend, access):
        return 'nova_lite' in self.xml.get(backend, {}).get(access, {})

    def learn(self, backend, access, volume_id, mountpoint,
              connection_info):
        """What the floor of ``backend`` attaches: the connection of
        nova_lite's attached volume, the initiator name the driver's disk
        logs in with and its device (read from the running guest, whose
        live XML is kept for the report, per ``access``)."""
        dev = vconfig.target_dev(mountpoint)
        disk = self.plug.disks()[dev]
        iqn = disk['element'].find('source/initiator/iqn')
        self.learned.setdefault(backend, {
            'volume_id': volume_id, 'mountpoint': mountpoint,
            'connection_info': connection_info,
            'initiator': iqn.get('name') if iqn is not None else None})
        self.xml.setdefault(backend, {}).setdefault(access, {})[
            'nova_lite'] = vconfig.to_xml(disk['element']).strip()

    def _connection(self, backend, access):
        """``(connection_info, hand export or None)``: the disk without
        its volume id (no serial)."""
        learned = self.learned[backend]
        if backend == realdata.ISCSI:
            data = vconfig.connection_data(learned['connection_info'])
            export = guest_hotplug.HandExport(
                '%sfloor-%s' % (self.deployment.tgtd.prefix,
                                learned['volume_id']),
                data['target_portal'], self.deployment.tgtd.control_port)
            path = os.path.join(self.deployment.volumes_dirs[backend],
                                'volume-%s' % learned['volume_id'])
            try:
                return export.export(path, learned['initiator'],
                                     mode=access), export
            except Exception:
                export.unexport()
                raise
        # Block storage's connection_info, flat (as Cinder's attachments
        # give it) or with its ``data``.
        info = {k: v for k, v in learned['connection_info'].items()
                if k not in ('serial', 'volume_id')}
        if isinstance(info.get('data'), dict):
            info['data'] = {k: v for k, v in info['data'].items()
                            if k != 'volume_id'}
        vconfig.connection_data(info)['access_mode'] = access
        return info, None

    def cycle(self, backend, access, rows):
        """One hot-plug and unplug of ``backend``'s disk (``access``:
        ``rw`` or ``ro``); appends their phases to ``rows``."""
        if self.guest.has_disk(None):
            raise RuntimeError('the guest lists a disk without a serial: '
                               'the floor could not tell its own')
        learned = self.learned[backend]
        t0 = time.monotonic()
        info, export = self._connection(backend, access)
        exported = time.monotonic() - t0
        undo = None
        try:
            xml, undo = guest_hotplug.prepare_disk(
                self.secrets, info, learned['mountpoint'], mode=access,
                initiator=learned['initiator'], host_name=self.host_name)
            self.xml.setdefault(backend, {}).setdefault(access, {})[
                'floor'] = xml
            attached = self.plug.attach(xml, None)
            flickers = _stable(self.guest, None, self.interval)
            detached = self.plug.detach(
                vconfig.target_dev(learned['mountpoint']))
        finally:
            if undo is not None:
                undo()
            t0 = time.monotonic()
            if export is not None:
                export.unexport()
            unexported = time.monotonic() - t0
        split, _total = phases({'call': attached['call'],
                                'guest': attached['to_guest']},
                               FLOOR_ATTACH_PHASES)
        split['to_guest'] = attached['to_guest']
        if export is not None:
            split['export by hand'] = exported
        rows['attach'].append(split)
        # The guest lets go while libvirt's call waits for the release:
        # no phases, the events from the call's start.
        split = {'detachDeviceFlags': detached['call'],
                 'to_guest': detached['to_guest'],
                 'to_event': detached['to_event'],
                 'total': detached['total']}
        if export is not None:
            split['unexport by hand'] = unexported
        rows['detach'].append(split)
        return flickers


def _wait(api, path, done, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        resp = api.get(path)
        if done(resp):
            return resp
        if time.monotonic() > deadline:
            raise RuntimeError('%s: not within %ss (%r)' % (what, timeout,
                                                            resp))
        time.sleep(0.1)


def _engine(deployment):
    """The database of the deployment's compute side (the mappings)."""
    if deployment.all_in_one:
        return sa.create_engine('sqlite:///%s' % os.path.join(
            deployment.path, 'state', 'nova_lite.sqlite'))
    return sa.create_engine(deployment.connection_url)


def guest_agent(deployment, server_id):
    """The agent of ``server_id``'s guest (its channel found through the
    domain's live XML), once it answers."""
    import libvirt
    conn = libvirt.open(guest_fixture.uri())
    try:
        root = vconfig.parse(conn.lookupByUUIDString(server_id).XMLDesc(0))
    finally:
        conn.close()
    path = vconfig.channel_paths(root)[deployment.guest_image['channel']]
    return agent.wait_ready(path, timeout=realdata.BOOT_TIMEOUT)


class Storage(object):
    """Where the benchmark's volumes are made, looked at and deleted:
    nova_lite's own ``/v3`` (``own``) or Cinder's API (``cinder``), beside
    the compute API client (``compute``) the attaches go through."""

    def __init__(self, compute, volumes, prefix, types):
        self.compute = compute
        self.volumes = volumes
        self.prefix = prefix
        self.types = types

    @classmethod
    def own(cls, deployment):
        """nova_lite's own block storage (noauth2, the ``demo`` project)."""
        api = deploy.HTTPClient(deployment.base_url, token='demo:demo',
                                compute_version='2.37',
                                volume_version='3.27')
        return cls(api, api, '/v3/demo', {
            backend: deployment.volume_type(backend)
            for backend in deployment.backends})

    @classmethod
    def cinder(cls, deployment):
        """Cinder's API, as the ``demo`` member with a Keystone token;
        ``cinder`` volumes of its ``ceph`` type (its RBD backend)."""
        ks = deployment.keystone
        token = ks.token('demo', keystone.USER_PASSWORD, 'demo')
        return cls(
            deploy.HTTPClient(deployment.base_url, token=token,
                              compute_version='2.37'),
            deploy.HTTPClient(deployment.cinder.volume_url(
                ks.projects['demo'].id), token=token, volume_version='3.0'),
            '', {CINDER: test_cinder.TYPE})

    def create(self, backend):
        resp = self.volumes.post('%s/volumes' % self.prefix, body={
            'volume': {'size': 1, 'volume_type': self.types[backend]}})
        if resp.status != 202:
            raise RuntimeError('volume create: %r' % resp)
        return resp.body['volume']['id']

    def status(self, volume_id):
        """The volume's status, None once it is gone."""
        resp = self.volumes.get('%s/volumes/%s' % (self.prefix, volume_id))
        if resp.status == 404:
            return None
        return resp.body['volume']['status']

    def delete(self, volume_id):
        self.volumes.delete('%s/volumes/%s' % (self.prefix, volume_id))


def _wait_status(storage, volume_id, wanted, what):
    deadline = time.monotonic() + TIMEOUT
    while storage.status(volume_id) != wanted:
        if time.monotonic() > deadline:
            raise RuntimeError('%s: not within %ss' % (what, TIMEOUT))
        time.sleep(0.1)


def run_layout(layout, args, results):
    """Start ``layout``, run its rounds into ``results[backend][mode]``
    (nova_lite's own backends in one deployment, then ``cinder`` in one
    beside Cinder); returns what the report says of the layout (of the
    deployment beside Cinder under ``beside_cinder``), or None when this
    machine cannot run it (said why)."""
    own = [b for b in args.backend if b != CINDER]
    # Other deployments share the machine's libvirtd: domain names that
    # cannot collide with theirs.
    kwargs = dict(
        compute_hosts=('bench-%d' % os.getpid(),),
        extra_conf={'DEFAULT': {
            'instance_name_template': 'instance-%(uuid)s'}})
    info = {}
    if own:
        log('%s: starting %s (compute with libvirt, iscsi on tgtd, rbd on '
            'Ceph)', layout, 'nova-lite-all' if layout == ALL_IN_ONE else
            'uWSGI, conductor, compute, RabbitMQ, MariaDB')
        info = run_deployment(layout, realdata.RealDataDeployment(
            'mysql', all_in_one=layout == ALL_IN_ONE, **kwargs),
            Storage.own, own, args, results)
        if info is None:
            return None
    if CINDER in args.backend:
        log('%s: starting Keystone, Cinder (RBD on Ceph) and the production '
            'layout with [volume] client = cinder', layout)
        beside = run_deployment(
            '%s beside Cinder' % layout,
            test_cinder.CinderDeployment('mysql', **kwargs),
            Storage.cinder, [CINDER], args, results)
        if beside is None:
            return None
        info.setdefault('disks', {}).update(beside.pop('disks', {}))
        info['beside_cinder'] = beside
    return info


def start(deployment):
    """Start ``deployment`` (``attach_load.set_up``); False (said why)
    when this machine cannot run it. A fixture that says so before
    fixtures' own ``setUp`` ran (``tests.fixtures.cinder.Cinder``: no
    virtualenv, no Ceph bindings) reaches here as the error of gathering
    its details, the skip in that error's context."""
    try:
        return attach_load.set_up(deployment)
    except fixtures.MultipleExceptions as e:
        cause = required.first_cause(e)
        while cause is not None and not isinstance(
                cause, (unittest.SkipTest, required.Unavailable)):
            cause = cause.__context__
        if cause is None:
            raise
        log('cannot start the system: %s', cause)
        return False


def run_deployment(name, deployment, make_storage, backends, args,
                   results):
    """Start ``deployment``, run the rounds of ``backends`` (volumes made
    through ``make_storage(deployment)``) into
    ``results[backend][mode]``; what the report says of it, or None when
    this machine cannot run it (said why)."""
    began = time.monotonic()
    load_before = os.getloadavg()
    if not start(deployment):
        return None
    missing = [b for b in backends
               if b != CINDER and b not in deployment.backends]
    if missing:
        log('no %s backend here: %s', ', '.join(missing),
            deployment.no_ceph)
        deployment.cleanUp()
        return None
    engine = _engine(deployment)
    server_id = plug = guest = storage = None
    volumes = {}
    flickers = {'nova_lite': 0, 'floor': 0}
    info = {}
    try:
        storage = make_storage(deployment)
        api = storage.compute
        resp = api.post('/v2.1/servers', body={'server': {
            'name': 'bench', 'flavorRef': '1', 'imageRef': IMAGE_REF,
            'networks': 'none'}})
        if resp.status != 202:
            raise RuntimeError('server create: %r' % resp)
        server_id = resp.body['server']['id']
        booted = time.monotonic()
        server = _wait(api, '/v2.1/servers/%s' % server_id,
                       lambda r: r.body['server']['status'] in (
                           'ACTIVE', 'ERROR'),
                       'server %s ACTIVE' % server_id, timeout=300).body[
                           'server']
        if server['status'] != 'ACTIVE':
            raise RuntimeError('server %s went to ERROR: %s' % (
                server_id, server.get('fault')))
        guest = guest_agent(deployment, server_id)
        info['boot_to_agent_s'] = round(time.monotonic() - booted, 1)
        for backend in backends:
            volumes[backend] = storage.create(backend)
        for backend, volume_id in volumes.items():
            _wait_status(storage, volume_id, 'available',
                         'volume %s available' % volume_id)
        observer = Observer(engine, guest, args.poll_interval)
        plug = guest_hotplug.HotPlug(guest_fixture.uri(), server_id, guest,
                                     args.poll_interval)
        floor = Floor(deployment, plug, guest, args.poll_interval)
        log('%s: server %s, volumes %s: %d rounds of %d cycle pairs',
            name, server_id, volumes, args.runs,
            len(volumes) * len(args.modes))
        info['setup_s'] = round(time.monotonic() - began, 1)
        rounds = time.monotonic()
        for run in range(args.runs):
            for backend, volume_id in volumes.items():
                for mode, version, access in args.modes:
                    cell = results[backend][mode]

                    def learn(mapping_uuid, backend=backend,
                              volume_id=volume_id, access=access or 'rw'):
                        if not floor.knows(backend, access):
                            floor.learn(backend, access, volume_id,
                                        *observer.connection(mapping_uuid))

                    def ours():
                        flickers['nova_lite'] += cycle(
                            api.as_(compute_version=version), observer,
                            guest, server_id, volume_id, args.poll_interval,
                            cell['nova_lite'], storage.status,
                            attach_mode=access, on_attached=learn)

                    def floors():
                        flickers['floor'] += floor.cycle(
                            backend, access or 'rw', cell['floor'])

                    # The floor needs one attach of nova_lite first.
                    order = ((ours, floors) if run % 2 == 0 or
                             backend not in floor.learned else
                             (floors, ours))
                    for step in order:
                        step()
                    log('%s %s %s run %d: to the guest %.0f ms (floor '
                        '%.0f), guest lost %.0f ms (floor %.0f)', name,
                        backend, mode, run + 1,
                        cell['nova_lite']['attach'][-1]['to_guest'] * 1000,
                        cell['floor']['attach'][-1]['to_guest'] * 1000,
                        cell['nova_lite']['detach'][-1]['to_guest'] * 1000,
                        cell['floor']['detach'][-1]['to_guest'] * 1000)
        info['rounds_s'] = round(time.monotonic() - rounds, 1)
        info['disks'] = floor.xml
    finally:
        if plug is not None:
            plug.close()
        if guest is not None:
            guest.close()
        if server_id is not None:
            # Its domain goes with it (the deployment's cleanup stops the
            # services, not the node's guests).
            api.delete('/v2.1/servers/%s' % server_id)
            try:
                _wait(api, '/v2.1/servers/%s' % server_id,
                      lambda r: r.status == 404, 'server deleted')
            except RuntimeError as e:
                log('%s', e)
        for volume_id in volumes.values():
            # An rbd image would outlive the deployment on the machine's
            # Ceph.
            storage.delete(volume_id)
        for volume_id in volumes.values():
            try:
                _wait_status(storage, volume_id, None,
                             'volume %s deleted' % volume_id)
            except RuntimeError as e:
                log('%s', e)
        engine.dispose()
        deployment.cleanUp()
    info.update(load_before=[round(x, 2) for x in load_before],
                load_after=[round(x, 2) for x in os.getloadavg()],
                run_seconds=round(time.monotonic() - began, 1),
                flickers=flickers)
    return info


def summarize(rows):
    """``{figure: {p50, p99, max, n}}`` in milliseconds."""
    if not rows:
        return {}
    return {name: attach_load.summary_ms([r[name] for r in rows])
            for name in rows[0]}


def difference(ours, floor, key='to_guest'):
    """nova_lite minus the floor, in milliseconds: of the p50s, of the
    p99s, and the median of the paired cycles' differences."""
    a = [r[key] for r in ours]
    b = [r[key] for r in floor]
    if not a or not b:
        return None

    def ms(value):
        return round(value * 1000.0, 1)
    return {
        'p50': ms(attach_load.percentile(a, 50) -
                  attach_load.percentile(b, 50)),
        'p99': ms(attach_load.percentile(a, 99) -
                  attach_load.percentile(b, 99)),
        'paired_p50': ms(attach_load.percentile(
            [x - y for x, y in zip(a, b)], 50)),
    }


def report_cell(cell):
    return {
        'nova_lite': {op: summarize(rows)
                      for op, rows in cell['nova_lite'].items()},
        'floor': {op: summarize(rows) for op, rows in cell['floor'].items()},
        'minus_floor': {
            'attach_to_guest': difference(cell['nova_lite']['attach'],
                                          cell['floor']['attach']),
            'detach_to_guest': difference(cell['nova_lite']['detach'],
                                          cell['floor']['detach']),
        },
    }


def table(milliseconds):
    """The human-readable summary: one line per layout, backend and mode,
    the request to the guest seeing (losing) the disk, p50/p99."""
    def pair(summary):
        return '%s/%s' % tuple('-' if summary.get(k) is None else
                               '%.0f' % summary[k] for k in ('p50', 'p99'))

    def diff(d):
        return '-' if d is None else '%+.0f/%+.0f (%+.0f)' % (
            d['p50'], d['p99'], d['paired_p50'])
    line = '%-10s %-7s %-8s | %-24s %-11s %-11s | %-24s %-11s %s'
    head = line % ('layout', 'backend', 'mode', 'attach: nova_lite-floor',
                   'nova_lite', 'floor', 'detach: nova_lite-floor',
                   'nova_lite', 'floor')
    lines = ['request -> the guest sees the disk / loses it, ms p50/p99 '
             '(minus floor: p50/p99 (paired p50))', head, '-' * len(head)]
    for layout, backends in milliseconds.items():
        for backend, modes in backends.items():
            for mode, cell in modes.items():
                ours, floor = cell['nova_lite'], cell['floor']
                if not ours.get('attach') or not floor.get('attach'):
                    continue
                lines.append(line % (
                    layout, backend, mode,
                    diff(cell['minus_floor']['attach_to_guest']),
                    pair(ours['attach']['to_guest']),
                    pair(floor['attach']['to_guest']),
                    diff(cell['minus_floor']['detach_to_guest']),
                    pair(ours['detach']['to_guest']),
                    pair(floor['detach']['to_guest'])))
    return '\n'.join(lines)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=10,
                        help='rounds: cycles of nova_lite and of the floor '
                             'per layout, backend and mode (default 10)')
    parser.add_argument('--poll-interval', type=float, default=0.005)
    parser.add_argument('--backend', default=DEFAULT_BACKENDS,
                        type=lambda t: _choices(t, BACKENDS, 'backend'),
                        help='the volumes\' backends: iscsi (tgtd, CHAP), '
                             'rbd (the machine\'s one-node Ceph), cinder '
                             '(upstream Cinder\'s RBD on that Ceph, '
                             'production layout only); default %s' %
                             DEFAULT_BACKENDS)
    parser.add_argument('--layout', default=','.join(LAYOUTS),
                        type=lambda t: _choices(t, LAYOUTS, 'layout'),
                        help='production (uWSGI, conductor, compute, '
                             'RabbitMQ, MariaDB), all (nova-lite-all); '
                             'default both, one after the other')
    parser.add_argument('--modes', default=DEFAULT_MODES, type=parse_modes,
                        help='compute microversions of the attach, '
                             '-ro/-rw for 2.105\'s attach_mode (default '
                             '%s)' % DEFAULT_MODES)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error('--runs: at least 1')
    if CINDER in args.backend and ALL_IN_ONE in args.layout:
        parser.error('--backend cinder: with --layout production only '
                     '(nova-lite-all has no Keystone, which Cinder and '
                     '[volume] client = cinder need)')
    return args


def main(argv=None):
    args = parse_args(argv)
    began = time.monotonic()
    load_before = os.getloadavg()
    results, layouts = {}, {}
    for layout in args.layout:
        results[layout] = {
            backend: {name: {side: {'attach': [], 'detach': []}
                             for side in ('nova_lite', 'floor')}
                      for name, _v, _a in args.modes}
            for backend in args.backend}
        info = run_layout(layout, args, results[layout])
        if info is None:
            return 2
        layouts[layout] = info
    milliseconds = {
        layout: {backend: {mode: report_cell(cell)
                           for mode, cell in modes.items()}
                 for backend, modes in backends.items()}
        for layout, backends in results.items()}
    print(table(milliseconds), file=sys.stderr, flush=True)
    print(json.dumps({
        'runs': args.runs,
        'backends': args.backend,
        'layouts': args.layout,
        'modes': [name for name, _v, _a in args.modes],
        'poll_interval_s': args.poll_interval,
        'load_before': [round(x, 2) for x in load_before],
        'load_after': [round(x, 2) for x in os.getloadavg()],
        'run_seconds': round(time.monotonic() - began, 1),
        'per_layout': {layout: {k: v for k, v in info.items()
                                if k != 'disks'}
                       for layout, info in layouts.items()},
        'disks': {layout: info.get('disks', {})
                  for layout, info in layouts.items()},
        'milliseconds': milliseconds,
    }, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
