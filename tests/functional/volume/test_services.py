"""/v3 os-services and os-hosts: the block-storage services under
Cinder's names, their status, and what a disabled backend means."""

import datetime

import sqlalchemy as sa

from nova_lite import context as nl_context
from nova_lite.db import api as db_api
from nova_lite.db import models
from tests.functional import api_samples
from tests.functional.volume import base


class ServicesTest(base.VolumeTestCase):

    def services(self, query='', api=None, expect=200):
        resp = (api or self.admin).get('/v3/os-services' + query)
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body['services'] if expect == 200 else resp

    def update(self, action, body, expect=200, api=None):
        resp = (api or self.admin).put('/v3/os-services/' + action,
                                       body=body)
        self.assertEqual(expect, resp.status, resp.text)
        return resp.body if expect == 200 else resp

    def test_list(self):
        services = self.services()
        self.assertEqual(
            [('cinder-scheduler', 'compute1', 'nova', 'enabled', 'up', None),
             ('cinder-volume', 'compute1@file', 'nova', 'enabled', 'up',
              None)],
            [(s['binary'], s['host'], s['zone'], s['status'], s['state'],
              s['disabled_reason']) for s in services])
        self.assertEqual([None, None], [s['cluster'] for s in services])
        volume = services[1]
        self.assertEqual(('disabled', None, False, 'up'), (
            volume['replication_status'], volume['active_backend_id'],
            volume['frozen'], volume['backend_state']))
        self.assertNotIn('backend_state', services[0])
        # cinder-scheduler: the heartbeat of the conductor, the compute
        # API's view of it; cinder-volume: the volume service's own, a
        # row of its own (binary cinder-volume, host H@backend).
        conductor = [s for s in self.admin.get('/v2.1/os-services').body[
            'services'] if s['binary'] == 'nova-lite-conductor'][0]
        self.assertEqual(conductor['updated_at'], services[0]['updated_at'])
        [row] = self.sys.system.volume_service.service_refs
        self.assertEqual(('compute1@file', 'cinder-volume'),
                         (row.host, row.binary))
        self.assertIsNotNone(volume['updated_at'])

    def test_microversion_fields(self):
        old = self.admin.as_(volume_version='3.0')
        self.assertEqual(
            {'binary', 'host', 'zone', 'status', 'state', 'updated_at',
             'disabled_reason', 'replication_status', 'active_backend_id',
             'frozen'},
            set(self.services(api=old)[1]))
        v37 = self.services(api=self.admin.as_(volume_version='3.7'))
        self.assertIn('cluster', v37[1])
        self.assertNotIn('backend_state', v37[1])

    def test_filters(self):
        def listed(query):
            return [(s['binary'], s['host']) for s in self.services(query)]
        both = [('cinder-scheduler', 'compute1'),
                ('cinder-volume', 'compute1@file')]
        self.assertEqual(both, listed('?host=compute1'))
        self.assertEqual(both[1:], listed('?host=compute1@file'))
        self.assertEqual(both[1:], listed(
            '?host=compute1&binary=cinder-volume'))
        self.assertEqual(both[:1], listed('?binary=cinder-scheduler'))
        self.assertEqual(both[:1], listed('?service=cinder-scheduler'))
        self.assertEqual([], listed('?host=compute'))
        self.assertEqual([], listed('?host=file'))
        self.assertEqual([], listed('?binary=nova-lite-conductor'))

    def test_admin_only(self):
        for method, path, body in [
                ('GET', '/v3/os-services', None),
                ('PUT', '/v3/os-services/disable',
                 {'host': 'compute1', 'binary': 'cinder-scheduler'}),
                ('GET', '/v3/os-hosts', None),
                ('GET', '/v3/os-hosts/compute1@file', None)]:
            resp = self.vol.request(method, path, body=body)
            self.assertEqual(403, resp.status, path)
        self.assertEqual('enabled', self.services()[0]['status'])

    def test_disable_with_reason_and_enable(self):
        body = {'host': 'compute1@file', 'binary': 'cinder-volume'}
        self.assertEqual(
            {'host': 'compute1@file', 'binary': 'cinder-volume',
             'service': 'cinder-volume', 'disabled': True,
             'status': 'disabled', 'disabled_reason': 'disk swap'},
            self.update('disable-log-reason',
                        dict(body, disabled_reason=' disk swap ')))
        volume = self.services('?binary=cinder-volume')[0]
        self.assertEqual(('disabled', 'disk swap', 'up'), (
            volume['status'], volume['disabled_reason'], volume['state']))
        # No enabled backend left: the new volume is error, as Cinder's
        # scheduler leaves it ("no valid backend").
        self.assertEqual('error', self.create_volume()['status'])

        self.assertEqual(
            {'host': 'compute1@file', 'binary': 'cinder-volume',
             'service': 'cinder-volume', 'disabled': False,
             'status': 'enabled', 'disabled_reason': None},
            self.update('enable', body))
        volume = self.services('?binary=cinder-volume')[0]
        self.assertEqual(('enabled', None), (volume['status'],
                                             volume['disabled_reason']))
        self.assertEqual('available', self.create_volume()['status'])

    def test_disable_scheduler_is_recorded(self):
        self.assertEqual(
            {'host': 'compute1', 'binary': 'cinder-scheduler',
             'service': 'cinder-scheduler', 'disabled': True,
             'status': 'disabled'},
            self.update('disable', {'host': 'compute1',
                                    'service': 'cinder-scheduler'}))
        self.assertEqual(['disabled', 'enabled'],
                         [s['status'] for s in self.services()])
        self.assertEqual('available', self.create_volume()['status'])
        # The status rows are no nova_lite service.
        self.assertEqual(
            ['nova-lite-conductor', 'nova-lite-compute'],
            [s['binary'] for s in
             self.admin.get('/v2.1/os-services').body['services']])

    def test_bad_requests(self):
        cases = [
            ('enable', {'host': 'invalid_host', 'binary': 'cinder-volume'},
             404),
            ('disable', {'host': 'compute1', 'binary': 'invalid_binary'},
             404),
            # cinder-volume lives on compute1@file, not compute1
            ('disable', {'host': 'compute1', 'binary': 'cinder-volume'},
             404),
            ('disable', {'host': 'compute1'}, 400),
            ('disable', {'binary': 'cinder-volume'}, 400),
            ('disable', {'host': 'compute1', 'binary': 'cinder-scheduler',
                         'disabled_reason': 'x'}, 400),
            ('disable-log-reason', {'host': 'compute1',
                                    'binary': 'cinder-scheduler'}, 400),
            ('disable-log-reason', {'host': 'compute1',
                                    'binary': 'cinder-scheduler',
                                    'disabled_reason': None}, 400),
            ('disable-log-reason', {'host': 'compute1',
                                    'binary': 'cinder-scheduler',
                                    'disabled_reason': '  '}, 400),
            ('disable-log-reason', {'host': 'compute1',
                                    'binary': 'cinder-scheduler',
                                    'disabled_reason': 'x' * 256}, 400),
            ('freeze', {'host': 'invalid_host'}, 400),
            ('thaw', {'host': 'invalid_host'}, 400),
            # nova_lite has no replication: nothing to freeze
            ('freeze', {'host': 'compute1@file'}, 400),
            ('failover_host', {'host': 'compute1@file'}, 404),
        ]
        for action, body, status in cases:
            resp = self.update(action, body, expect=status)
            self.assertEqual(status, resp.status, (action, body))
        self.assertEqual(['enabled', 'enabled'],
                         [s['status'] for s in self.services()])
        resp = self.update('freeze', {'host': 'invalid_host'}, expect=400)
        self.assertIn('No service found with host=invalid_host',
                      resp.text)

    def test_down_with_their_services(self):
        # cinder-scheduler is the conductor's heartbeat, cinder-volume the
        # volume service's.
        for svc in self.sys.system.services:
            svc.stop()
        for svc in self.sys.system.services:
            svc.wait()
        self.sys.system.services = []
        old = datetime.datetime.utcnow() - datetime.timedelta(
            seconds=self.conf.service_down_time + 5)

        @db_api.context_manager.writer
        def age(context):
            context.session.execute(
                sa.update(models.Service)
                .where(models.Service.binary.in_(
                    ('nova-lite-conductor', 'cinder-volume')))
                .values(last_seen_up=old))
        age(nl_context.get_admin_context())
        self.assertEqual(['down', 'down'],
                         [s['state'] for s in self.services()])
        hosts = self.admin.get('/v3/os-hosts').body['hosts']
        self.assertEqual(['unavailable', 'unavailable'],
                         [h['service-status'] for h in hosts])


class TwoBackendsTest(base.VolumeTestCase):
    CONF = {'volume.enabled_backends': ['fake', 'file']}

    def test_disabled_backend_gets_no_new_volume(self):
        first = self.create_volume()
        self.assertEqual('compute1@fake#fake',
                         self.show_volume(first['id'], api=self.admin)[
                             'os-vol-host-attr:host'])
        resp = self.admin.put('/v3/os-services/disable', body={
            'host': 'compute1@fake', 'binary': 'cinder-volume'})
        self.assertEqual(200, resp.status, resp.text)
        second = self.create_volume()
        self.assertEqual(('available', 'compute1@file#file'), (
            second['status'], self.show_volume(
                second['id'], api=self.admin)['os-vol-host-attr:host']))
        # The volumes already there stay usable.
        attachment = self.reserve(first['id'])
        self.connect(attachment['id'])
        self.complete(attachment['id'])
        self.assertEqual('in-use', self.status(first['id']))


class HostsTest(base.VolumeTestCase):

    def test_list(self):
        hosts = self.admin.get('/v3/os-hosts').body['hosts']
        self.assertEqual(
            [('compute1', 'cinder-scheduler', 'nova', 'available',
              'enabled'),
             ('compute1@file', 'cinder-volume', 'nova', 'available',
              'enabled')],
            [(h['host_name'], h['service'], h['zone'], h['service-status'],
              h['service-state']) for h in hosts])
        self.assertEqual(
            ['compute1@file'],
            [h['host_name'] for h in self.admin.get(
                '/v3/os-hosts?service=cinder-volume').body['hosts']])
        self.assertEqual([], self.admin.get(
            '/v3/os-hosts?zone=elsewhere').body['hosts'])
        # Cinder lists only the enabled services.
        self.admin.put('/v3/os-services/disable', body={
            'host': 'compute1', 'binary': 'cinder-scheduler'})
        self.assertEqual(
            ['compute1@file'],
            [h['host_name'] for h in
             self.admin.get('/v3/os-hosts').body['hosts']])

    def test_show_counts_volumes_per_project(self):
        other = self.vol.as_(token='other:other')
        self.create_volume(size=2)
        self.create_volume(size=3)
        self.create_volume(api=other, size=1)
        gone = self.create_volume(api=other, size=5)
        resp = other.delete('/v3/volumes/%s' % gone['id'])
        self.assertEqual(202, resp.status, resp.text)
        resp = self.admin.get('/v3/os-hosts/compute1@file')
        self.assertEqual(200, resp.status, resp.text)
        self.assertEqual(
            [('(total)', '3', '6'), ('demo', '2', '5'), ('other', '1', '1')],
            [(r['resource']['project'], r['resource']['volume_count'],
              r['resource']['total_volume_gb'])
             for r in resp.body['host']])
        self.assertEqual({('compute1@file', '0', '0')}, {
            (r['resource']['host'], r['resource']['snapshot_count'],
             r['resource']['total_snapshot_gb'])
            for r in resp.body['host']})

    def test_show_only_volume_hosts(self):
        for host in ('compute1', 'nowhere', 'compute1@nothing'):
            resp = self.admin.get('/v3/os-hosts/%s' % host)
            self.assertEqual(404, resp.status, host)


class ServicesSamplesTest(api_samples.SampleAssertions, base.VolumeTestCase):
    """The api-ref samples of os-services and os-hosts
    (api-ref/source/samples/volume-services/); run with
    NOVA_LITE_WRITE_SAMPLES=1 to rewrite them."""

    def _call(self, method, path, name, body=None):
        if body is not None:
            self._sample('volume-services', name + '-req.json', body)
        resp = self.admin.request(method, path, body=body)
        self.assertEqual(200, resp.status, resp.text)
        self._sample('volume-services', name + '-resp.json', resp.body)

    def test_samples(self):
        self.scrub = api_samples.Scrubber('http://localhost')
        self.create_volume(size=2)
        self._call('GET', '/v3/os-services', 'services-list')
        self._call('PUT', '/v3/os-services/disable-log-reason',
                   'service-disable-log-reason', body={
                       'host': 'compute1@file', 'binary': 'cinder-volume',
                       'disabled_reason': 'disk swap'})
        self._call('PUT', '/v3/os-services/disable', 'service-disable',
                   body={'host': 'compute1@file',
                         'binary': 'cinder-volume'})
        self._call('PUT', '/v3/os-services/enable', 'service-enable',
                   body={'host': 'compute1@file',
                         'binary': 'cinder-volume'})
        self._call('GET', '/v3/os-hosts', 'hosts-list')
        self._call('GET', '/v3/os-hosts/compute1@file', 'host-show')
