"""Upstream tempest against nova_lite behind a real Keystone.

    python3 tools/dev.py test tempest        # builds the venvs, then this
    python -m tests.tempest.runner [--regex R] [--concurrency N] [--keep]

What it runs, on this machine:

* Keystone (``tests.fixtures.keystone.KeystoneServer``: its own
  virtualenv, uWSGI, MariaDB, fernet) with nova_lite's catalog entries;
* nova_lite's production layout (``tests.integration.deployment``: the API
  under uWSGI, a conductor and two compute hosts, RabbitMQ, MariaDB) with
  ``auth_strategy = keystone`` and block storage reached through the
  catalog with a service token;
* tempest (``.venv-tempest``, pinned in ``tempest-constraints.txt``) in a
  workspace of its own, with a ``tempest.conf`` generated here
  (``tempest_conf``) on ``SCOPE``, minus ``exclude-list.txt`` (one line of
  reason per entry).

It prints every test that did not pass with its reason, the counts (passed,
skipped by reason, excluded, failed), writes them as JSON to
``--results`` and exits 1 when a test failed. Without the tempest or
Keystone virtualenv, RabbitMQ or MariaDB it exits 0 saying it skipped, or,
with ``NOVA_LITE_REQUIRE_INTEGRATION=1`` (CI), fails.
"""

import argparse
import collections
import configparser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import fixtures

from tests.fixtures import keystone
from tests.fixtures import required
from tests.integration import deployment

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.environ.get('NOVA_LITE_TEMPEST_VENV',
                      os.path.join(ROOT, '.venv-tempest'))
EXCLUDE_LIST = os.path.join(HERE, 'exclude-list.txt')

# The tests a volume-attachment control plane answers for (issue 20).
SCOPE = (r'^tempest\.api\.(compute\.volumes|compute\.admin\.test_volume_swap'
         r'|compute\.servers\.test_create_server|compute\.servers\.'
         r'test_servers|volume\.)')

# Images are not nova_lite's: any UUID is accepted as imageRef.
IMAGE_REF = '70a599e0-31e7-49b7-b260-868f441e862b'
IMAGE_REF_ALT = '5a3b7bd3-0a4c-4b5f-8d39-1c4a9a8a3f11'
MULTIATTACH_TYPE = 'multiattach'


def tempest_conf(ks, deploy, workspace):
    """tempest.conf for this Keystone and deployment: what nova_lite does
    is enabled, what it does not (networks, snapshots, backups, guest
    access) is switched off by tempest's own flags, images by the exclude
    list."""
    return {
        'DEFAULT': {'log_file': os.path.join(workspace, 'tempest.log'),
                    'debug': 'false'},
        'auth': {
            'use_dynamic_credentials': 'true',
            # Tempest would create networks and routers for each project.
            'create_isolated_networks': 'false',
            'admin_username': 'admin',
            'admin_password': keystone.ADMIN_PASSWORD,
            'admin_project_name': 'admin',
            'admin_domain_name': 'Default',
        },
        'identity': {'uri_v3': ks.url, 'auth_version': 'v3',
                     'region': keystone.REGION},
        'identity-feature-enabled': {'api_v2': 'false'},
        'service_available': {
            'nova': 'true', 'cinder': 'true',
            # Listed so that servers boot without tempest creating
            # networks; its endpoint answers 404.
            'neutron': 'true',
            # tempest's compute admin base class needs an image client
            # whatever the test; the tests that use images are in the
            # exclude list.
            'glance': 'true',
            'swift': 'false', 'horizon': 'false',
        },
        # Tests use the reader role where the policies have it (nova_lite
        # enforces the new project-scoped defaults, as both services do).
        'enforce_scope': {'nova': 'true', 'cinder': 'true'},
        'compute': {
            'image_ref': IMAGE_REF, 'image_ref_alt': IMAGE_REF_ALT,
            'flavor_ref': '1', 'flavor_ref_alt': '2',
            'build_timeout': '120', 'build_interval': '1',
            'min_microversion': '2.1', 'max_microversion': '2.100',
            'volume_device_name': 'vdb',
            'min_compute_nodes': str(len(deploy.compute_hosts)),
        },
        'compute-feature-enabled': {
            'swap_volume': 'true', 'volume_multiattach': 'true',
            'shelve': 'true',
            'attach_encrypted_volume': 'false', 'snapshot': 'false',
            'resize': 'false', 'pause': 'false', 'suspend': 'false',
            'rescue': 'false', 'console_output': 'false',
            'interface_attach': 'false', 'cold_migration': 'false',
            'live_migration': 'false', 'metadata_service': 'false',
            'config_drive': 'false', 'personality': 'false',
            'change_password': 'false', 'disk_config': 'false',
            'enable_instance_password': 'true', 'ide_bus': 'false',
            'hostname_fqdn_sanitization': 'true',
        },
        'volume': {
            'build_timeout': '120', 'build_interval': '1',
            'min_microversion': '3.0', 'max_microversion': '3.71',
            # vendor_name: tempest's default, 'Open Source' (what the
            # backends report, as Cinder's reference drivers do).
            'storage_protocol': 'iSCSI',
            # The deployment's two file backends: the multi-backend and
            # retype-with-migration tests move volumes between them.
            'backend_names': 'file,file2',
            'volume_type_multiattach': MULTIATTACH_TYPE,
        },
        'volume-feature-enabled': {
            'multi_backend': 'true',
            'backup': 'false', 'snapshot': 'false', 'clone': 'false',
            'manage_snapshot': 'false', 'manage_volume': 'false',
            'extend_attached_volume': 'false',
            'extend_volume_with_snapshot': 'false',
            'enable_volume_image_dep_tests': 'false',
        },
        'network-feature-enabled': {'floating_ips': 'false',
                                    'port_security': 'false'},
        'validation': {'run_validation': 'false'},
    }


def create_multiattach_type(ks, deploy):
    """The volume type tempest's multiattach tests use (devstack makes
    the same one)."""
    resp = deploy.admin_api.post(
        '/v3/%s/types' % ks.projects['admin'].id,
        body={'volume_type': {'name': MULTIATTACH_TYPE, 'extra_specs': {
            'multiattach': '<is> True'}}})
    if resp.status != 200:
        raise AssertionError('creating the multiattach type: %r' % resp)


def _write_conf(sections, path):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict(sections)
    with open(path, 'w') as f:
        parser.write(f)


def _tempest(*args, cwd, check=True):
    argv = [os.path.join(VENV, 'bin', 'tempest')] + list(args)
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    return subprocess.run(argv, cwd=cwd, env=env, check=check)


def results(workspace):
    """[{id, status, reason}] of the last run in ``workspace``."""
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    stream = subprocess.run(
        [os.path.join(VENV, 'bin', 'stestr'), 'last', '--subunit'],
        cwd=workspace, env=env, stdout=subprocess.PIPE).stdout
    if not stream:
        return []       # tempest failed before running a test
    parsed = subprocess.run(
        [os.path.join(VENV, 'bin', 'python'),
         os.path.join(HERE, 'results.py')],
        input=stream, stdout=subprocess.PIPE, check=True, env=env).stdout
    return [json.loads(line) for line in parsed.decode().splitlines()]


def excluded():
    """{regex: reason} of the exclude list."""
    reasons = {}
    with open(EXCLUDE_LIST) as f:
        for line in f:
            regex, _, reason = line.partition('#')
            if regex.strip():
                reasons[regex.strip()] = reason.strip()
    return reasons


def report(tests, out=sys.stdout):
    by_status = collections.Counter(t['status'] for t in tests)
    skips = collections.Counter(
        t['reason'].splitlines()[0] if t['reason'] else '(no reason)'
        for t in tests if t['status'] == 'skip')
    for test in tests:
        if test['status'] == 'fail':
            out.write('FAILED %s\n    %s\n' % (
                test['id'], test['reason'][-1500:].replace('\n', '\n    ')))
    out.write('\nskipped, by reason:\n')
    for reason, count in skips.most_common():
        out.write('  %4d  %s\n' % (count, reason[:160]))
    out.write('excluded by tests/tempest/exclude-list.txt: %d entries\n'
              % len(excluded()))
    out.write('tempest: %d passed, %d skipped, %d failed\n' % (
        by_status['success'], by_status['skip'], by_status['fail']))
    return by_status


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--regex', default=SCOPE)
    parser.add_argument('--concurrency', type=int, default=4)
    parser.add_argument('--results', help='write the results as JSON here')
    parser.add_argument('--keep', action='store_true',
                        help='keep the workspace and logs')
    args = parser.parse_args(argv)

    if not os.path.exists(os.path.join(VENV, 'bin', 'tempest')):
        message = ('tempest is not installed in %s: python3 tools/dev.py '
                   'test tempest builds it' % VENV)
        if os.environ.get(deployment.REQUIRE_ENV) == '1':
            sys.exit(message)
        print('tempest tier skipped: ' + message)
        return 0
    ks = keystone.KeystoneServer(deployment.executable('uwsgi'))
    # Every process names the file backend's volume service alike (Cinder's
    # active-active backend_host): volumes and /v3/os-services agree.
    deploy = deployment.Deployment('mysql', keystone=ks, extra_conf={
        'volume': {'enabled_backends': 'file,file2'},
        'file': {'backend_host': 'block-storage'},
        'file2': {'volume_driver': 'file', 'backend_host': 'block-storage'}})
    try:
        deploy.setUp()
    except fixtures.MultipleExceptions as e:
        cause = required.first_cause(e)
        if isinstance(cause, unittest.SkipTest):
            print('tempest tier skipped: %s' % cause)
            return 0
        raise cause
    workspace = tempfile.mkdtemp(prefix='nova-lite-tempest-')
    try:
        create_multiattach_type(ks, deploy)
        _tempest('init', workspace, cwd=workspace)
        conf = os.path.join(workspace, 'etc', 'tempest.conf')
        _write_conf(tempest_conf(ks, deploy, workspace), conf)
        _tempest('run', '--config-file', conf, '--regex', args.regex,
                 '--exclude-list', EXCLUDE_LIST,
                 '--concurrency', str(args.concurrency),
                 cwd=workspace, check=False)
        tests = results(workspace)
        counts = report(tests)
        if args.results:
            with open(args.results, 'w') as f:
                json.dump(tests, f, indent=1)
        failed = counts['fail'] > 0 or counts['success'] == 0
        if failed or args.keep:
            _keep_logs(ks, deploy, workspace)
            print('workspace and logs kept in %s' % workspace)
            workspace = None
        return 1 if failed else 0
    finally:
        deploy.cleanUp()
        if workspace is not None:
            shutil.rmtree(workspace, ignore_errors=True)


def _keep_logs(ks, deploy, workspace):
    logs = os.path.join(workspace, 'logs')
    os.makedirs(logs, exist_ok=True)
    for directory, prefix in ((deploy.path, 'nova-lite-'),
                              (ks.path, 'keystone-')):
        for name in os.listdir(directory):
            if name.endswith('.log') or name.endswith('.conf'):
                shutil.copy(os.path.join(directory, name),
                            os.path.join(logs, prefix + name))


if __name__ == '__main__':
    sys.exit(main())
