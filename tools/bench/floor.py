#!/usr/bin/env python3
"""The floor of the attach path: the same libraries doing only the essential
work, measured exactly as ``attach_cycle.py`` measures ``nova-lite-all``.

The performance target of nova_lite is a ratio: within 2-3x of the floor.
The floor's absolute figures depend on the machine (they vary 1.5x from one
day to the next), so this script measures it on the machine at hand, with
``attach_cycle.py``'s own client, series and cycle definition (it imports
``attach_cycle`` and subclasses its ``Bench``), and prints the same JSON.

The floor server
----------------
Started by this script as a subprocess (``floor.py --serve``) on a fresh
state directory and a free loopback port, so that its CPU time and peak RSS
are read from ``/proc`` exactly as ``nova-lite-all``'s are. One process:

* HTTP: ``nova_lite.wsgi.embedded_server`` (waitress with ``[wsgi]
  threads``' default, as ``nova-lite-all`` serves), a WebOb application,
  a Routes mapper, JSON bodies; attach bodies validated with jsonschema
  (Nova's 2.79 schema: ``volumeId`` a UUID, ``device``, ``tag``,
  ``delete_on_termination``); the compute microversion read with
  microversion_parse (2.1 to 2.101); errors 400/404/406/409 as Nova-style
  JSON faults.
* Database: one SQLite file, WAL, ``synchronous = NORMAL`` (as nova_lite),
  SQLAlchemy Core on one plain engine (SQLAlchemy's default pool for a
  file). Tables ``servers``, ``volumes`` and ``attachments``; every step is
  one transaction that begins with its write, a compare-and-swap on the
  volume's status (the reason for a 404 or 409 is looked up only when it
  fails).
* RPC: oslo.messaging on ``inproc://`` (nova_lite's non-polling in-process
  driver, loaded through its entry point), a ``conductor`` and a
  ``compute`` RPC server (``threading`` executor) in the same process, plain
  dict contexts, no serializer.

The requests ``attach_cycle``'s client makes, and what they do:

``POST /v2.1/servers/{id}/os-volume_attachments``
    Validate. At 2.100 (and below) RPC *call* to the conductor: one
    transaction, ``available`` -> ``attaching`` if the server exists and is
    ACTIVE (404/409 otherwise), insert the attachment (``/dev/vdb``); then
    it *casts* to compute: one transaction, ``attaching`` -> ``in-use``
    (``updated_at`` = now) and the attachment ``attached``. 200 with the
    attachment. At 2.101 the API does the conductor's transaction itself
    (a refused attach is still a 404/409) and casts to compute: 202.
``DELETE /v2.1/servers/{id}/os-volume_attachments/{volume_id}``
    One transaction, ``in-use`` -> ``detaching`` if the server has the
    volume attached (404/409 otherwise); cast to compute: one transaction,
    ``detaching`` -> ``available`` and the attachment deleted. 202.
``GET /v2.1/servers/{id}/os-volume_attachments/{volume_id}``
    200 if the attachment row exists, else 404.
``GET /v3/volumes/{id}``
    The volume's ``id``, ``name``, ``size``, ``status`` and ``updated_at``.
``POST /v2.1/servers``, ``GET /v2.1/servers/{id}``, ``POST /v3/volumes``,
``GET /``, ``GET /v2.1/``
    What the benchmark's setup needs: a server is created ACTIVE and a
    volume ``available`` in one INSERT each.

Nothing else: no authentication or policy, no per-request logging, no
request IDs or microversion headers in responses, no response validation,
no notifications, no versioned objects or RPC serializer, no instance
actions or events, no block device mappings, no storage backend or virt
driver, no service records, no quotas, no multiattach, no lists.

The client
----------
``attach_cycle.py``'s, unchanged: the series ``post_attach`` (2.100 and
2.101, with ``attach_complete`` and ``delete_attachment``), ``cycles`` and
``pause`` (one GET of a volume back to back and after a pause),
``peak_rss_mb``, with the same options and defaults. The ``list`` series is
not part of the floor (the report says so).

How to compare: on a quiet machine, run this script and ``attach_cycle.py``
back to back with the same options; the ratios (nova_lite / floor) of the
medians and of ``server_cpu_ms_per_cycle``, and floor / nova_lite of
``per_second``, are what count, not the absolute figures.

    python tools/bench/floor.py [--samples 200] [--warmup 20]
        [--cycle-seconds 20] [--only post_attach,cycles,pause]
        [--output FILE]

``--keep`` leaves the state directory and the server log behind.
"""

import datetime
import json
import logging
import os
import subprocess
import sys
import tempfile
import uuid

import jsonschema
import microversion_parse
from oslo_config import cfg
import oslo_messaging
import routes
import sqlalchemy as sa
import webob
import webob.dec

try:
    import attach_cycle
except ImportError:  # imported from elsewhere than tools/bench
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import attach_cycle

from nova_lite.conf import wsgi as wsgi_conf
from nova_lite.wsgi import embedded_server

WHAT = ('floor: the attach path built from the same building blocks as '
        'nova_lite and nothing else (WebOb + Routes + jsonschema, one '
        'SQLite transaction with a compare-and-swap per step, '
        'oslo.messaging call/cast on inproc://, waitress), '
        'measured with attach_cycle.py\'s client; compare with '
        'attach_cycle.py run back to back, the ratio is what counts')
SERIES = ('post_attach', 'cycles', 'pause')
NOT_IN_FLOOR = {
    'list_attachments': 'not part of the floor: the floor server does not '
                        'list attachments (attach_cycle.py --only list '
                        'measures nova_lite alone)'}

HOST = 'floor-host'
# nova-lite-all's default [wsgi] threads.
THREADS = next(o.default for o in wsgi_conf.ALL_OPTS if o.name == 'threads')
DEVICE_NAME = '/dev/vdb'
RPC_TIMEOUT = 60
SQLITE_BUSY_TIMEOUT = 30
MIN_VERSION = microversion_parse.Version(2, 1)
MAX_VERSION = microversion_parse.Version(2, 101)
ASYNC_ATTACH = microversion_parse.Version(2, 101)
LEGACY_HEADERS = ['X-OpenStack-Nova-API-Version']

# -- database -----------------------------------------------------------------
METADATA = sa.MetaData()
SERVERS = sa.Table(
    'servers', METADATA,
    sa.Column('id', sa.String(36), primary_key=True),
    sa.Column('name', sa.String(255)),
    sa.Column('status', sa.String(16), nullable=False))
VOLUMES = sa.Table(
    'volumes', METADATA,
    sa.Column('id', sa.String(36), primary_key=True),
    sa.Column('name', sa.String(255)),
    sa.Column('size', sa.Integer),
    sa.Column('status', sa.String(16), nullable=False),
    sa.Column('updated_at', sa.DateTime))
ATTACHMENTS = sa.Table(
    'attachments', METADATA,
    sa.Column('id', sa.String(36), primary_key=True),
    sa.Column('volume_id', sa.String(36), nullable=False, index=True),
    sa.Column('server_id', sa.String(36), nullable=False, index=True),
    sa.Column('device', sa.String(255)),
    sa.Column('status', sa.String(16), nullable=False))


class Failed(Exception):
    """A step refused: ``code`` is the HTTP status."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _sqlite_pragmas(dbapi_connection, connection_record):
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute('PRAGMA journal_mode = WAL')
        cursor.execute('PRAGMA synchronous = NORMAL')
    finally:
        cursor.close()


class Database(object):
    """Every method is one transaction. Writer transactions begin with
    their write, so pysqlite's implicit (deferred) BEGIN takes the write
    lock at the first statement and a second writer waits on the busy
    timeout."""

    def __init__(self, path):
        self.engine = sa.create_engine(
            'sqlite:///%s' % path,
            connect_args={'timeout': SQLITE_BUSY_TIMEOUT})
        sa.event.listen(self.engine, 'connect', _sqlite_pragmas)
        METADATA.create_all(self.engine)

    # -- setup and reads ------------------------------------------------------
    def _insert(self, table, row):
        with self.engine.begin() as conn:
            conn.execute(table.insert().values(**row))
        return row

    def _get(self, table, *where):
        with self.engine.connect() as conn:
            row = conn.execute(table.select().where(*where)).first()
        return None if row is None else row._asdict()

    def create_server(self, name):
        return self._insert(SERVERS, {'id': str(uuid.uuid4()), 'name': name,
                                      'status': 'ACTIVE'})

    def create_volume(self, name, size):
        return self._insert(VOLUMES, {
            'id': str(uuid.uuid4()), 'name': name, 'size': size,
            'status': 'available', 'updated_at': _utcnow()})

    def get_server(self, server_id):
        return self._get(SERVERS, SERVERS.c.id == server_id)

    def get_volume(self, volume_id):
        return self._get(VOLUMES, VOLUMES.c.id == volume_id)

    def get_attachment(self, server_id, volume_id):
        return self._get(ATTACHMENTS, ATTACHMENTS.c.server_id == server_id,
                         ATTACHMENTS.c.volume_id == volume_id)

    # -- the attach and detach steps ------------------------------------------
    def reserve(self, server_id, volume_id, device):
        """Conductor: available -> attaching, the attachment inserted."""
        server_ok = sa.exists().where(SERVERS.c.id == server_id,
                                      SERVERS.c.status == 'ACTIVE')
        with self.engine.begin() as conn:
            swapped = self._swap(conn, volume_id, 'available', 'attaching',
                                 server_ok)
            if not swapped:
                if not conn.execute(sa.select(server_ok)).scalar():
                    raise Failed(404, 'Instance %s could not be found.'
                                 % server_id)
                self._volume_conflict(conn, volume_id, 'attach')
            conn.execute(ATTACHMENTS.insert().values(
                id=str(uuid.uuid4()), volume_id=volume_id,
                server_id=server_id, device=device, status='attaching'))

    def complete_attach(self, server_id, volume_id):
        """Compute: attaching -> in-use, the attachment attached."""
        with self.engine.begin() as conn:
            swapped = self._swap(conn, volume_id, 'attaching', 'in-use')
            if swapped:
                conn.execute(ATTACHMENTS.update().where(
                    ATTACHMENTS.c.volume_id == volume_id,
                    ATTACHMENTS.c.server_id == server_id,
                    ATTACHMENTS.c.status == 'attaching').values(
                    status='attached'))
        return bool(swapped)

    def begin_detach(self, server_id, volume_id):
        """API: in-use -> detaching, if the server has the volume."""
        attached = sa.exists().where(ATTACHMENTS.c.volume_id == volume_id,
                                     ATTACHMENTS.c.server_id == server_id)
        with self.engine.begin() as conn:
            swapped = self._swap(conn, volume_id, 'in-use', 'detaching',
                                 attached)
            if not swapped:
                if not conn.execute(sa.select(attached)).scalar():
                    raise Failed(404, 'volume_id not found: %s' % volume_id)
                self._volume_conflict(conn, volume_id, 'detach')

    def complete_detach(self, server_id, volume_id):
        """Compute: detaching -> available, the attachment deleted."""
        with self.engine.begin() as conn:
            swapped = self._swap(conn, volume_id, 'detaching', 'available')
            if swapped:
                conn.execute(ATTACHMENTS.delete().where(
                    ATTACHMENTS.c.volume_id == volume_id,
                    ATTACHMENTS.c.server_id == server_id))
        return bool(swapped)

    @staticmethod
    def _swap(conn, volume_id, status, new_status, *also):
        """The compare-and-swap of the volume's status; rows changed."""
        return conn.execute(VOLUMES.update().where(
            VOLUMES.c.id == volume_id, VOLUMES.c.status == status,
            *also).values(status=new_status, updated_at=_utcnow())).rowcount

    @staticmethod
    def _volume_conflict(conn, volume_id, action):
        status = conn.execute(sa.select(VOLUMES.c.status).where(
            VOLUMES.c.id == volume_id)).scalar()
        if status is None:
            raise Failed(404, 'Volume %s could not be found.' % volume_id)
        raise Failed(409, 'Cannot %s volume %s while it is %s.'
                     % (action, volume_id, status))


# -- RPC endpoints ------------------------------------------------------------
class Conductor(object):
    def __init__(self, db, compute):
        self.db = db
        self.compute = compute

    def attach_volume(self, ctxt, server_id, volume_id, device):
        """None, or the refusal as {'code', 'message'} (a call's caller
        turns it into the response; a cast's is gone)."""
        try:
            self.db.reserve(server_id, volume_id, device)
        except Failed as exc:
            return {'code': exc.code, 'message': exc.message}
        self.compute.cast(ctxt, 'attach_volume', server_id=server_id,
                          volume_id=volume_id)
        return None


class Compute(object):
    def __init__(self, db):
        self.db = db

    def attach_volume(self, ctxt, server_id, volume_id):
        self.db.complete_attach(server_id, volume_id)

    def detach_volume(self, ctxt, server_id, volume_id):
        self.db.complete_detach(server_id, volume_id)


# -- HTTP ---------------------------------------------------------------------
UUID = {'type': 'string', 'format': 'uuid'}
ATTACH_SCHEMA = {
    'type': 'object',
    'properties': {
        'volumeAttachment': {
            'type': 'object',
            'properties': {
                'volumeId': UUID,
                'device': {
                    'type': ['string', 'null'],
                    'pattern': r'(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)'
                               r'[0-9]*$'},
                'tag': {'type': 'string', 'minLength': 1, 'maxLength': 60,
                        'pattern': '^[^,/]*$'},
                'delete_on_termination': {'type': 'boolean'},
            },
            'required': ['volumeId'],
            'additionalProperties': False,
        },
    },
    'required': ['volumeAttachment'],
    'additionalProperties': False,
}
SERVER_SCHEMA = {
    'type': 'object',
    'properties': {'server': {
        'type': 'object',
        'properties': {'name': {'type': 'string', 'minLength': 1,
                                'maxLength': 255},
                       'flavorRef': {'type': ['string', 'integer']},
                       'imageRef': {'type': 'string'},
                       'networks': {'type': ['string', 'array']}},
        'required': ['name', 'flavorRef'],
    }},
    'required': ['server'],
    'additionalProperties': False,
}
VOLUME_SCHEMA = {
    'type': 'object',
    'properties': {'volume': {
        'type': 'object',
        'properties': {'name': {'type': ['string', 'null']},
                       'size': {'type': 'integer', 'minimum': 1}},
        'required': ['size'],
    }},
    'required': ['volume'],
    'additionalProperties': False,
}

FAULT_NAMES = {400: 'badRequest', 404: 'itemNotFound',
               406: 'notAcceptable', 409: 'conflictingRequest'}


def _validator(schema):
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _reply(status, body=None):
    if body is None:
        return webob.Response(status=status)
    return webob.Response(status=status, json_body=body)


def _fault(code, message):
    return _reply(code, {FAULT_NAMES[code]: {'code': code,
                                             'message': message}})


def _isotime(value):
    return None if value is None else value.strftime('%Y-%m-%dT%H:%M:%S.%f')


class FloorAPI(object):
    """The WSGI application: route, parse, validate, one step, reply."""

    def __init__(self, db, conductor, compute):
        self.db = db
        self.conductor = conductor
        self.compute = compute
        self.attach_validator = _validator(ATTACH_SCHEMA)
        self.server_validator = _validator(SERVER_SCHEMA)
        self.volume_validator = _validator(VOLUME_SCHEMA)
        self.mapper = routes.Mapper()
        attachments = '/v2.1/servers/{server_id}/os-volume_attachments'
        for path, method, action in (
                ('/', 'GET', 'versions'),
                ('/v2.1/', 'GET', 'compute_version'),
                ('/v2.1/servers', 'POST', 'create_server'),
                ('/v2.1/servers/{server_id}', 'GET', 'show_server'),
                (attachments, 'POST', 'attach'),
                (attachments + '/{volume_id}', 'GET', 'show_attachment'),
                (attachments + '/{volume_id}', 'DELETE', 'detach'),
                ('/v3/volumes', 'POST', 'create_volume'),
                ('/v3/volumes/{volume_id}', 'GET', 'show_volume')):
            self.mapper.connect(path, action=action,
                                conditions={'method': [method]})

    @webob.dec.wsgify
    def __call__(self, req):
        match = self.mapper.match(environ=req.environ)
        if match is None:
            return _fault(404, 'Not found: %s %s' % (req.method,
                                                     req.path_info))
        handler = getattr(self, match.pop('action'))
        try:
            return handler(req, **match)
        except Failed as exc:
            return _fault(exc.code, exc.message)

    @staticmethod
    def _version(req):
        try:
            text = microversion_parse.get_version(
                req.headers, 'compute', legacy_headers=LEGACY_HEADERS)
            if text is None:
                return MIN_VERSION
            if text == 'latest':
                return MAX_VERSION
            version = microversion_parse.parse_version_string(text)
        except (TypeError, ValueError) as exc:
            raise Failed(400, 'Invalid microversion: %s' % exc)
        if not MIN_VERSION <= version <= MAX_VERSION:
            raise Failed(406, 'Version %s is not supported by the API. '
                         'Minimum is %s and maximum is %s.' % (
                             text, MIN_VERSION, MAX_VERSION))
        return version

    @staticmethod
    def _body(req, validator):
        try:
            body = req.json_body
        except ValueError:
            raise Failed(400, 'Malformed request body')
        error = jsonschema.exceptions.best_match(validator.iter_errors(body))
        if error is not None:
            raise Failed(400, 'Invalid input for field/attribute %s. '
                         'Value: %s. %s' % (
                             '/'.join(str(p) for p in error.path) or '',
                             json.dumps(error.instance), error.message))
        return body

    # -- discovery ------------------------------------------------------------
    def _compute_version_entry(self, req):
        return {'id': 'v2.1', 'status': 'CURRENT',
                'version': str(MAX_VERSION), 'min_version': str(MIN_VERSION),
                'links': [{'rel': 'self',
                           'href': req.host_url + '/v2.1/'}]}

    def versions(self, req):
        return _reply(200, {'versions': [self._compute_version_entry(req)]})

    def compute_version(self, req):
        return _reply(200, {'version': self._compute_version_entry(req)})

    # -- setup ----------------------------------------------------------------
    def create_server(self, req):
        self._version(req)
        body = self._body(req, self.server_validator)
        server = self.db.create_server(body['server']['name'])
        return _reply(202, {'server': {'id': server['id'], 'links': []}})

    def show_server(self, req, server_id):
        self._version(req)
        server = self.db.get_server(server_id)
        if server is None:
            raise Failed(404, 'Instance %s could not be found.' % server_id)
        return _reply(200, {'server': {
            'id': server['id'], 'name': server['name'],
            'status': server['status'], 'OS-EXT-STS:task_state': None}})

    def create_volume(self, req):
        body = self._body(req, self.volume_validator)
        spec = body['volume']
        volume = self.db.create_volume(spec.get('name'), spec['size'])
        return _reply(202, {'volume': self._volume_view(volume)})

    # -- the attach path ------------------------------------------------------
    @staticmethod
    def _volume_view(volume):
        return {'id': volume['id'], 'name': volume['name'],
                'size': volume['size'], 'status': volume['status'],
                'updated_at': _isotime(volume['updated_at'])}

    def show_volume(self, req, volume_id):
        volume = self.db.get_volume(volume_id)
        if volume is None:
            raise Failed(404, 'Volume %s could not be found.' % volume_id)
        return _reply(200, {'volume': self._volume_view(volume)})

    def attach(self, req, server_id):
        version = self._version(req)
        spec = self._body(req, self.attach_validator)['volumeAttachment']
        volume_id = spec['volumeId']
        device = spec.get('device') or DEVICE_NAME
        kwargs = {'server_id': server_id, 'volume_id': volume_id,
                  'device': device}
        if version >= ASYNC_ATTACH:
            # The reservation is written before the 202, so that a refused
            # attach is still a 404/409 to its client; compute is cast to.
            self.db.reserve(server_id, volume_id, device)
            self.compute.cast({}, 'attach_volume', server_id=server_id,
                              volume_id=volume_id)
            return _reply(202)
        refused = self.conductor.call({}, 'attach_volume', **kwargs)
        if refused:
            raise Failed(refused['code'], refused['message'])
        return _reply(200, {'volumeAttachment': {
            'id': volume_id, 'serverId': server_id, 'volumeId': volume_id,
            'device': device, 'tag': spec.get('tag'),
            'delete_on_termination': spec.get('delete_on_termination',
                                              False)}})

    def show_attachment(self, req, server_id, volume_id):
        self._version(req)
        attachment = self.db.get_attachment(server_id, volume_id)
        if attachment is None:
            raise Failed(404, 'Volume %s is not attached to %s.'
                         % (volume_id, server_id))
        return _reply(200, {'volumeAttachment': {
            'id': volume_id, 'serverId': server_id, 'volumeId': volume_id,
            'device': attachment['device']}})

    def detach(self, req, server_id, volume_id):
        self._version(req)
        self.db.begin_detach(server_id, volume_id)
        self.compute.cast({}, 'detach_volume', server_id=server_id,
                          volume_id=volume_id)
        return _reply(202)


def serve(port, state):
    """The floor server, until SIGTERM or SIGINT."""
    logging.basicConfig(level=logging.WARNING)
    os.makedirs(state, exist_ok=True)
    db = Database(os.path.join(state, 'floor.sqlite'))
    # The global ConfigOpts, as a service would use: oslo.messaging
    # registers the [oslo_messaging_tracing] and [oslo_messaging_metrics]
    # options its clients read on every send there only.
    conf = cfg.CONF
    conf([], project='nova-lite-floor', default_config_files=[],
         default_config_dirs=[])
    transport = oslo_messaging.get_rpc_transport(conf, url='inproc://')
    compute = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='compute', server=HOST),
        timeout=RPC_TIMEOUT)
    conductor = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='conductor'),
        timeout=RPC_TIMEOUT)
    # The threading executor: what oslo.messaging picks in a process that
    # eventlet has not monkey-patched (naming it is deprecated).
    rpc_servers = [
        oslo_messaging.get_rpc_server(
            transport, oslo_messaging.Target(topic='conductor', server=HOST),
            [Conductor(db, compute)]),
        oslo_messaging.get_rpc_server(
            transport, oslo_messaging.Target(topic='compute', server=HOST),
            [Compute(db)]),
    ]
    for rpc_server in rpc_servers:
        rpc_server.start()
    httpd = embedded_server.Server(FloorAPI(db, conductor, compute),
                                   '127.0.0.1', port, THREADS)
    try:
        httpd.serve_until_signalled()
    finally:
        for rpc_server in rpc_servers:
            rpc_server.stop()
            rpc_server.wait()
        transport.cleanup()
        db.engine.dispose()
    return 0


# -- the client: attach_cycle's -----------------------------------------------
class FloorBench(attach_cycle.Bench):
    """``attach_cycle.Bench`` with the floor server instead of
    ``nova-lite-all``."""

    def start(self):
        self.workdir = tempfile.mkdtemp(prefix='nova-lite-floor-')
        self.port = attach_cycle.free_port()
        self.log_path = os.path.join(self.workdir, 'floor.log')
        env = dict(os.environ)
        env['PYTHONPATH'] = (attach_cycle.REPO + os.pathsep +
                             env.get('PYTHONPATH', ''))
        with open(self.log_path, 'w') as log:
            self.proc = subprocess.Popen(
                [self.args.python, os.path.abspath(__file__), '--serve',
                 '--port', str(self.port),
                 '--state', os.path.join(self.workdir, 'state')],
                cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT)
        self.client = attach_cycle.Client(self.port,
                                          fresh=self.args.new_connections)

        def up():
            if self.proc.poll() is not None:
                raise attach_cycle.BenchError(
                    'the floor server exited with %s; see %s' % (
                        self.proc.returncode, self.log_path))
            try:
                return self.client.request('GET', '/', timeout=2)[0] < 500
            except OSError:
                return False
        attach_cycle.wait_for(up, 60, 0.1, 'the floor server to answer')

    def run(self):
        report = super().run()
        report['what'] = WHAT
        report['results'].update(NOT_IN_FLOOR)
        report['environment']['libraries'] = {
            name: _version(name) for name in (
                'WebOb', 'Routes', 'jsonschema', 'SQLAlchemy',
                'oslo.messaging', 'microversion_parse')}
        return report


def _version(dist):
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def main(argv=None):
    parser = attach_cycle.build_parser(__doc__.split('\n')[0],
                                       server='the floor server',
                                       series=SERIES)
    parser.add_argument('--serve', action='store_true',
                        help='be the floor server (what the benchmark '
                             'starts)')
    parser.add_argument('--port', type=int, help='with --serve')
    parser.add_argument('--state', help='with --serve: state directory')
    args = parser.parse_args(argv)
    if args.serve:
        if args.port is None or not args.state:
            parser.error('--serve needs --port and --state')
        return serve(args.port, args.state)
    # Bench.run() runs every series it knows unless told; the floor has
    # no list.
    args.only = args.only or ','.join(SERIES)
    return attach_cycle.run_and_print(FloorBench(args))


if __name__ == '__main__':
    sys.exit(main())
