"""The libvirt driver's XML: what a domain and a volume's disk say."""

from xml.etree import ElementTree as etree

from nova_lite import exception
from nova_lite.virt.libvirt import config
from tests import base

VOLUME = '5bd4b4b2-1111-4c1e-9a3f-2f5c0d7c9e01'
IQN = 'iqn.2010-10.org.openstack:volume-%s' % VOLUME
INITIATOR = 'iqn.1993-08.org.debian:01:abcdef'


def file_info(**data):
    info = {'driver_volume_type': 'file',
            'data': dict({'path': '/srv/volumes/volume-1',
                          'access_mode': 'rw'}, **data),
            'serial': VOLUME}
    return info


def iscsi_info(**data):
    return {'driver_volume_type': 'iscsi',
            'data': dict({'target_portal': '127.0.0.1:3260',
                          'target_iqn': IQN, 'target_lun': 1,
                          'auth_method': 'CHAP', 'auth_username': 'user1',
                          'auth_password': 'secret1', 'access_mode': 'rw',
                          'volume_id': VOLUME}, **data),
            'serial': VOLUME}


SECRET_UUID = '3c1c9b9e-6c1b-4f7e-8a55-0d3c2b1a0f01'
KEY = 'AQBmS/1lAAAAABAAw0aVJ0bP1tS2a4X2bFw0aQ=='
KEYRING = '[client.cinder]\n\tkey = %s\n' % KEY


def rbd_info(**data):
    return {'driver_volume_type': 'rbd',
            'data': dict({'name': 'volumes/volume-%s' % VOLUME,
                          'hosts': ['10.0.0.1', '10.0.0.2'],
                          'ports': ['6789', '3300'],
                          'cluster_name': 'ceph', 'auth_enabled': True,
                          'auth_username': 'cinder', 'secret_type': 'ceph',
                          'secret_uuid': SECRET_UUID, 'discard': True,
                          'access_mode': 'rw', 'volume_id': VOLUME,
                          'keyring': KEYRING}, **data),
            'serial': VOLUME}


def element(disk):
    return etree.fromstring(config.disk_xml(disk))


class FileDiskTest(base.TestCase):
    def test_file_volume_is_a_file_disk_with_the_volume_id_as_serial(self):
        disk, secret = config.volume_disk(file_info(), '/dev/vdb')
        self.assertIsNone(secret)
        root = element(disk)
        self.assertEqual('file', root.get('type'))
        self.assertEqual('disk', root.get('device'))
        self.assertEqual('/srv/volumes/volume-1',
                         root.find('source').get('file'))
        self.assertEqual({'dev': 'vdb', 'bus': 'virtio'},
                         root.find('target').attrib)
        self.assertEqual(VOLUME, root.find('serial').text)
        self.assertEqual({'name': 'qemu', 'type': 'raw', 'cache': 'none'},
                         root.find('driver').attrib)
        self.assertIsNone(root.find('readonly'))
        self.assertIsNone(root.find('shareable'))

    def test_read_only_by_the_mode_or_the_access_mode(self):
        for info, mode in ((file_info(), 'ro'),
                           (file_info(access_mode='ro'), 'rw')):
            disk, _ = config.volume_disk(info, '/dev/vdc', mode=mode)
            self.assertIsNotNone(element(disk).find('readonly'))

    def test_unknown_access_mode_is_refused(self):
        self.assertRaises(exception.InvalidVolumeAttachMode,
                          config.volume_disk, file_info(access_mode='rx'),
                          '/dev/vdb')

    def test_multiattach_is_shareable_with_cache_none(self):
        info = dict(file_info(), multiattach=True)
        disk, _ = config.volume_disk(info, '/dev/vdb',
                                     cachemodes=['file=writeback'])
        root = element(disk)
        self.assertIsNotNone(root.find('shareable'))
        self.assertEqual('none', root.find('driver').get('cache'))

    def test_cachemodes_pick_the_mode_of_a_source_type(self):
        disk, _ = config.volume_disk(
            file_info(), '/dev/vdb',
            cachemodes=['network=writeback', 'file=directsync'])
        self.assertEqual('directsync',
                         element(disk).find('driver').get('cache'))

    def test_discard(self):
        disk, _ = config.volume_disk(file_info(discard=True), '/dev/vdb')
        self.assertEqual('unmap', element(disk).find('driver').get(
            'discard'))

    def test_flat_connection_info(self):
        info = {'driver_volume_type': 'file', 'path': '/srv/v2',
                'serial': VOLUME}
        disk, _ = config.volume_disk(info, '/dev/vdd')
        self.assertEqual('/srv/v2', element(disk).find('source').get(
            'file'))

    def test_sd_names_are_sata_others_refused(self):
        disk, _ = config.volume_disk(file_info(), '/dev/sdb')
        self.assertEqual('sata', disk.bus)
        self.assertRaises(exception.NotSupported, config.volume_disk,
                          file_info(), '/dev/xvdb')

    def test_unknown_volume_type_refused(self):
        info = {'driver_volume_type': 'sheepdog', 'data': {'name': 'v'}}
        self.assertRaises(exception.NotSupported, config.volume_disk, info,
                          '/dev/vdb')

    def test_file_without_path_refused(self):
        info = {'driver_volume_type': 'file', 'data': {}}
        self.assertRaises(exception.InvalidVolume, config.volume_disk,
                          info, '/dev/vdb')

    def test_copy_destination_has_source_and_driver_only(self):
        disk, _ = config.volume_disk(file_info(), '/dev/vdb')
        root = etree.fromstring(config.disk_xml(disk, for_copy=True))
        self.assertEqual(['driver', 'source'], [c.tag for c in root])


class IscsiDiskTest(base.TestCase):
    def test_network_disk_on_qemus_initiator_with_chap_secret(self):
        disk, secret = config.volume_disk(iscsi_info(), '/dev/vdb',
                                          initiator=INITIATOR,
                                          host='compute1')
        root = element(disk)
        self.assertEqual('network', root.get('type'))
        source = root.find('source')
        self.assertEqual('iscsi', source.get('protocol'))
        self.assertEqual('%s/1' % IQN, source.get('name'))
        self.assertEqual({'name': '127.0.0.1', 'port': '3260'},
                         source.find('host').attrib)
        self.assertEqual(INITIATOR,
                         source.find('initiator/iqn').get('name'))
        self.assertEqual('user1', source.find('auth').get('username'))
        usage = 'nova-lite:compute1:%s' % IQN
        self.assertEqual({'type': 'iscsi', 'usage': usage},
                         source.find('auth/secret').attrib)
        self.assertEqual((usage, 'secret1'), secret)
        self.assertEqual(VOLUME, root.find('serial').text)

    def test_without_chap_no_auth(self):
        disk, secret = config.volume_disk(
            iscsi_info(auth_method=None), '/dev/vdb', initiator=INITIATOR,
            host='compute1')
        self.assertIsNone(secret)
        self.assertIsNone(element(disk).find('source/auth'))

    def test_lun_zero_and_flat_form(self):
        info = {'driver_volume_type': 'iscsi', 'target_portal': '10.0.0.5',
                'target_iqn': IQN, 'target_lun': 0}
        disk, _ = config.volume_disk(info, '/dev/vdb', initiator=INITIATOR)
        root = element(disk)
        self.assertEqual('%s/0' % IQN, root.find('source').get('name'))
        self.assertEqual({'name': '10.0.0.5', 'port': '3260'},
                         root.find('source/host').attrib)

    def test_ipv6_portal(self):
        self.assertEqual(('::1', '3261'), config.parse_portal('[::1]:3261'))
        self.assertEqual(('::1', '3260'), config.parse_portal('[::1]'))

    def test_read_only_target(self):
        disk, _ = config.volume_disk(iscsi_info(access_mode='ro'),
                                     '/dev/vdb', initiator=INITIATOR)
        self.assertIsNotNone(element(disk).find('readonly'))

    def test_no_initiator_name_refused(self):
        self.assertRaises(exception.NotSupported, config.volume_disk,
                          iscsi_info(), '/dev/vdb', initiator=None)

    def test_other_auth_method_refused(self):
        self.assertRaises(exception.NotSupported, config.volume_disk,
                          iscsi_info(auth_method='kerberos'), '/dev/vdb',
                          initiator=INITIATOR)

    def test_missing_target_refused(self):
        self.assertRaises(exception.InvalidVolume, config.volume_disk,
                          iscsi_info(target_iqn=None), '/dev/vdb',
                          initiator=INITIATOR)


class RbdDiskTest(base.TestCase):
    def test_network_disk_on_librbd_with_cephx(self):
        disk, secret = config.volume_disk(rbd_info(), '/dev/vdb',
                                          host='compute1')
        self.assertIsNone(secret)
        root = element(disk)
        self.assertEqual(('network', 'disk'),
                         (root.get('type'), root.get('device')))
        self.assertEqual({'name': 'qemu', 'type': 'raw', 'cache': 'none',
                          'discard': 'unmap'}, root.find('driver').attrib)
        source = root.find('source')
        self.assertEqual({'protocol': 'rbd',
                          'name': 'volumes/volume-%s' % VOLUME},
                         source.attrib)
        self.assertEqual([{'name': '10.0.0.1', 'port': '6789'},
                          {'name': '10.0.0.2', 'port': '3300'}],
                         [h.attrib for h in source.findall('host')])
        self.assertEqual({'username': 'cinder'},
                         source.find('auth').attrib)
        self.assertEqual({'type': 'ceph', 'uuid': SECRET_UUID},
                         source.find('auth/secret').attrib)
        self.assertIsNone(source.find('initiator'))
        self.assertEqual({'dev': 'vdb', 'bus': 'virtio'},
                         root.find('target').attrib)
        self.assertEqual(VOLUME, root.find('serial').text)
        self.assertIsNone(root.find('readonly'))
        self.assertIsNone(root.find('shareable'))

    def test_a_host_without_a_port_gets_cephs(self):
        disk, _ = config.volume_disk(
            rbd_info(hosts=['[::1]', '10.0.0.2'], ports=['3300']),
            '/dev/vdb')
        self.assertEqual([('::1', '3300'), ('10.0.0.2', '6789')],
                         disk.hosts)

    def test_no_auth_when_auth_is_disabled(self):
        disk, _ = config.volume_disk(rbd_info(auth_enabled=False),
                                     '/dev/vdb')
        self.assertIsNone(element(disk).find('source/auth'))
        self.assertIsNone(disk.secret_uuid)

    def test_block_storages_user_and_secret_win(self):
        operators = '0b0b0b0b-1111-4222-8333-444444444444'
        disk, _ = config.volume_disk(rbd_info(), '/dev/vdb',
                                     rbd_user='nova',
                                     rbd_secret_uuid=operators)
        auth = element(disk).find('source/auth')
        self.assertEqual('cinder', auth.get('username'))
        self.assertEqual({'type': 'ceph', 'uuid': SECRET_UUID},
                         auth.find('secret').attrib)

    def test_the_operators_fill_in_what_block_storage_leaves_out(self):
        operators = '0b0b0b0b-1111-4222-8333-444444444444'
        # No secret named: the operator's, with block storage's user.
        disk, _ = config.volume_disk(rbd_info(secret_uuid=None),
                                     '/dev/vdb', rbd_user='nova',
                                     rbd_secret_uuid=operators)
        self.assertEqual(('cinder', operators),
                         (disk.auth_username, disk.secret_uuid))
        # No user named: the operator's.
        disk, _ = config.volume_disk(rbd_info(auth_username=None),
                                     '/dev/vdb', rbd_user='nova')
        self.assertEqual(('nova', SECRET_UUID),
                         (disk.auth_username, disk.secret_uuid))
        # Authentication, with the operator's user and secret, even where
        # block storage disables it.
        disk, _ = config.volume_disk(rbd_info(auth_enabled=False),
                                     '/dev/vdb', rbd_user='nova',
                                     rbd_secret_uuid=operators)
        self.assertEqual(('nova', operators),
                         (disk.auth_username, disk.secret_uuid))
        # Neither names a secret: refused.
        self.assertRaises(exception.InvalidVolume, config.volume_disk,
                          rbd_info(secret_uuid=None), '/dev/vdb')

    def test_rbd_user_alone_changes_nothing(self):
        disk, _ = config.volume_disk(rbd_info(), '/dev/vdb',
                                     rbd_user='nova')
        self.assertEqual(('cinder', SECRET_UUID),
                         (disk.auth_username, disk.secret_uuid))

    def test_read_only_multiattach_and_no_discard(self):
        info = dict(rbd_info(access_mode='ro', discard=False),
                    multiattach=True)
        disk, _ = config.volume_disk(info, '/dev/vdc',
                                     cachemodes=['network=writeback'])
        root = element(disk)
        self.assertIsNotNone(root.find('readonly'))
        self.assertIsNotNone(root.find('shareable'))
        self.assertEqual({'name': 'qemu', 'type': 'raw', 'cache': 'none'},
                         root.find('driver').attrib)

    def test_network_cachemode_applies(self):
        disk, _ = config.volume_disk(rbd_info(), '/dev/vdb',
                                     cachemodes=['network=writeback'])
        self.assertEqual('writeback',
                         element(disk).find('driver').get('cache'))

    def test_missing_or_bad_name_refused(self):
        for name in (None, '', 'image-without-pool'):
            self.assertRaises(exception.InvalidVolume, config.volume_disk,
                              rbd_info(name=name), '/dev/vdb')

    def test_auth_without_secret_uuid_or_user_refused(self):
        for missing in ('secret_uuid', 'auth_username'):
            self.assertRaises(exception.InvalidVolume, config.volume_disk,
                              rbd_info(**{missing: None}), '/dev/vdb')

    def test_other_secret_type_refused(self):
        self.assertRaises(exception.NotSupported, config.volume_disk,
                          rbd_info(secret_type='iscsi'), '/dev/vdb')

    def test_copy_destination_has_the_hosts_and_the_auth(self):
        disk, _ = config.volume_disk(rbd_info(), '/dev/vdb')
        root = etree.fromstring(config.disk_xml(disk, for_copy=True))
        self.assertEqual(['driver', 'source'], [c.tag for c in root])
        self.assertEqual(2, len(root.findall('source/host')))
        self.assertEqual(SECRET_UUID,
                         root.find('source/auth/secret').get('uuid'))
        self.assertEqual('cinder',
                         root.find('source/auth').get('username'))

    def test_keyring_key(self):
        self.assertEqual(KEY, config.ceph_key(rbd_info(), 'cinder'))
        self.assertIsNone(config.ceph_key(rbd_info(), 'admin'))
        self.assertIsNone(config.ceph_key(rbd_info(keyring=None),
                                          'cinder'))
        # Several sections, spaces as a keyring file may have them.
        keyring = ('[client.admin]\n key = %s\n'
                   '[client.cinder]\n  caps mon = "allow r"\n'
                   '  key=%s\n' % ('AAAA', KEY))
        self.assertEqual(KEY, config.ceph_key(rbd_info(keyring=keyring),
                                              'cinder'))
        self.assertRaises(exception.InvalidVolume, config.ceph_key,
                          rbd_info(keyring='[client.cinder]\nkey = !!\n'),
                          'cinder')

    def test_own_secret_usage(self):
        usage = config.ceph_secret_usage('cinder', SECRET_UUID)
        self.assertTrue(usage.startswith('client.cinder secret'))
        self.assertTrue(config.is_own_ceph_secret(usage, SECRET_UUID))
        self.assertFalse(config.is_own_ceph_secret('client.cinder secret',
                                                   SECRET_UUID))
        self.assertFalse(config.is_own_ceph_secret(
            usage, '0b0b0b0b-1111-4222-8333-444444444444'))


class SourceTest(base.TestCase):
    """``element_source`` of a disk's XML is its ``disk_source``: what a
    swap and a disconnect recognize a volume by."""

    def test_round_trips(self):
        for info, kwargs in ((file_info(), {}),
                             (iscsi_info(), {'initiator': INITIATOR}),
                             (rbd_info(), {}),
                             (rbd_info(auth_enabled=False), {})):
            disk, _ = config.volume_disk(info, '/dev/vdb', **kwargs)
            self.assertEqual(config.disk_source(disk),
                             config.element_source(element(disk)))
        disk, _ = config.volume_disk(rbd_info(), '/dev/vdb')
        self.assertEqual(('network', 'rbd', 'volumes/volume-%s' % VOLUME,
                          '10.0.0.1', '6789'), config.disk_source(disk))

    def test_protocol_and_port_tell_sources_apart(self):
        rbd, _ = config.volume_disk(rbd_info(), '/dev/vdb')
        other_pool, _ = config.volume_disk(
            rbd_info(name='images/volume-%s' % VOLUME), '/dev/vdb')
        other_port, _ = config.volume_disk(rbd_info(ports=['6790']),
                                           '/dev/vdb')
        sources = {config.disk_source(d) for d in (rbd, other_pool,
                                                   other_port)}
        self.assertEqual(3, len(sources))

    def test_default_ports_of_xml_without_one(self):
        rbd = config.parse(
            "<disk type='network'><source protocol='rbd' name='p/i'>"
            "<host name='10.0.0.1'/></source></disk>")
        iscsi = config.parse(
            "<disk type='network'><source protocol='iscsi' name='iqn/1'>"
            "<host name='10.0.0.1'/></source></disk>")
        self.assertEqual(('network', 'rbd', 'p/i', '10.0.0.1', '6789'),
                         config.element_source(rbd))
        self.assertEqual(('network', 'iscsi', 'iqn/1', '10.0.0.1', '3260'),
                         config.element_source(iscsi))

    def test_mirror_source_and_secrets_in_use(self):
        disk, _ = config.volume_disk(rbd_info(), '/dev/vdb')
        root = config.parse(
            "<domain><devices><disk type='file' device='disk'>"
            "<source file='/srv/v1'/><target dev='vdb'/>"
            "<mirror type='network' job='copy'>%s</mirror></disk>"
            "<disk type='network' device='disk'><source protocol='rbd' "
            "name='p/i'><auth username='x'><secret type='ceph' "
            "uuid='other'/></auth></source><target dev='vdc'/></disk>"
            "<disk type='network' device='disk'><source protocol='iscsi' "
            "name='iqn/1'><auth username='x'><secret type='iscsi' "
            "usage='u'/></auth></source><target dev='vdd'/></disk>"
            "</devices></domain>" % config.to_xml(
                config.disk_element(disk, for_copy=True).find('source')))
        self.assertEqual(config.disk_source(disk), config.mirror_source(
            config.disks(root)['vdb']['element']))
        self.assertEqual({SECRET_UUID, 'other'},
                         config.ceph_secret_uuids(root))


class DomainTest(base.TestCase):
    def guest(self, **kwargs):
        values = dict(
            uuid='0e8c1a52-7f5c-4c59-b9c5-7c0b6a3e8f11',
            name='instance-0e8c1a52-7f5c-4c59-b9c5-7c0b6a3e8f11',
            virt_type='qemu', memory_mb=512, vcpus=2,
            kernel='/srv/guest/vmlinuz', initrd='/srv/guest/initramfs.img',
            cmdline='console=ttyS0', console_log='/srv/i/u/console.log',
            host='compute1', title='my\nserver', num_pcie_ports=4,
            channels=['org.nova_lite.guest.0'], flavor='m1.tiny')
        values.update(kwargs)
        return config.Guest(**values)

    def test_domain(self):
        disk, _ = config.volume_disk(file_info(), '/dev/vdb')
        root = etree.fromstring(config.domain_xml(self.guest(disks=[disk])))
        self.assertEqual('qemu', root.get('type'))
        self.assertEqual('0e8c1a52-7f5c-4c59-b9c5-7c0b6a3e8f11',
                         root.find('uuid').text)
        self.assertEqual('my server', root.find('title').text)
        self.assertEqual('512', root.find('memory').text)
        self.assertEqual('MiB', root.find('memory').get('unit'))
        self.assertEqual('2', root.find('vcpu').text)
        self.assertEqual('q35', root.find('os/type').get('machine'))
        self.assertEqual('/srv/guest/vmlinuz', root.find('os/kernel').text)
        self.assertEqual('/srv/guest/initramfs.img',
                         root.find('os/initrd').text)
        self.assertEqual('console=ttyS0', root.find('os/cmdline').text)
        self.assertIsNotNone(root.find('features/acpi'))
        models = [c.get('model') for c in root.findall(
            "devices/controller[@type='pci']")]
        self.assertEqual(['pcie-root'] + ['pcie-root-port'] * 4, models)
        self.assertEqual('none', root.find(
            "devices/controller[@type='usb']").get('model'))
        self.assertEqual('none', root.find('devices/memballoon').get(
            'model'))
        self.assertEqual('/srv/i/u/console.log',
                         root.find('devices/serial/log').get('file'))
        channel = root.find('devices/channel')
        self.assertEqual('unix', channel.get('type'))
        self.assertEqual({'type': 'virtio', 'name': 'org.nova_lite.guest.0'},
                         channel.find('target').attrib)
        self.assertIsNone(channel.find('source').get('path'))
        self.assertEqual(['vdb'], list(config.disks(root)))
        self.assertEqual('compute1', config.domain_host(root))
        self.assertIsNone(root.find('cpu'))

    def test_kvm_gets_the_host_cpu_model(self):
        root = etree.fromstring(config.domain_xml(
            self.guest(virt_type='kvm')))
        self.assertEqual('host-model', root.find('cpu').get('mode'))

    def test_optional_parts(self):
        root = etree.fromstring(config.domain_xml(
            self.guest(initrd=None, cmdline=None, title=None, channels=[],
                       num_pcie_ports=0)))
        for path in ('os/initrd', 'os/cmdline', 'title', 'devices/channel'):
            self.assertIsNone(root.find(path), path)
        self.assertEqual(1, len(root.findall(
            "devices/controller[@type='pci']")))

    def test_reading_a_domain_nova_lite_did_not_make(self):
        root = config.parse("<domain type='kvm'><name>other</name>"
                            "<devices><disk type='file'><target dev='vda'/>"
                            "</disk></devices></domain>")
        self.assertIsNone(config.domain_host(root))
        self.assertEqual({'vda': None}, {d: v['serial'] for d, v in
                                         config.disks(root).items()})

    def test_channel_paths_of_the_live_xml(self):
        root = config.parse(
            "<domain><devices><channel type='unix'>"
            "<source mode='bind' path='/run/x/agent'/>"
            "<target type='virtio' name='org.nova_lite.guest.0'/>"
            "</channel></devices></domain>")
        self.assertEqual({'org.nova_lite.guest.0': '/run/x/agent'},
                         config.channel_paths(root))


class FindVolumeDiskTest(base.TestCase):
    """A volume's disk is told by its serial or its source, never by the
    device name alone."""

    def _disks(self, *specs):
        root = config.parse(
            '<domain><devices>%s</devices></domain>' % ''.join(
                "<disk type='file'><source file='%s'/><target dev='%s'/>"
                "<serial>%s</serial></disk>" % spec for spec in specs))
        return config.disks(root)

    def _file(self, serial, path):
        return {'driver_volume_type': 'file', 'serial': serial,
                'data': {'path': path}}

    def test_by_serial_at_the_device(self):
        disks = self._disks(('/v/a', 'vdb', 'A'), ('/v/b', 'vdc', 'B'))
        self.assertEqual('vdb', config.find_volume_disk(
            disks, 'vdb', self._file('A', '/v/a'))[0])

    def test_by_serial_elsewhere(self):
        disks = self._disks(('/v/a', 'vdb', 'A'), ('/v/b', 'vdc', 'B'))
        self.assertEqual('vdc', config.find_volume_disk(
            disks, 'vdb', self._file('B', '/v/b'))[0])

    def test_by_source_when_the_serial_is_the_old_one(self):
        disks = self._disks(('/v/new', 'vdb', 'OLD'))
        self.assertEqual('vdb', config.find_volume_disk(
            disks, 'vdb', self._file('NEW', '/v/new'))[0])

    def test_another_volume_is_never_the_answer(self):
        disks = self._disks(('/v/a', 'vdb', 'A'))
        self.assertEqual((None, None), config.find_volume_disk(
            disks, 'vdb', self._file('B', '/v/b')))

    def test_nothing_to_tell_by_is_the_device(self):
        disks = self._disks(('/v/a', 'vdb', 'A'))
        self.assertEqual('vdb', config.find_volume_disk(
            disks, 'vdb', None)[0])

    def test_iscsi_and_rbd_sources(self):
        iscsi = {'driver_volume_type': 'iscsi', 'data': {
            'target_iqn': 'iqn.x:v', 'target_portal': '10.0.0.1:3260',
            'target_lun': 1}}
        self.assertEqual(
            ('network', 'iscsi', 'iqn.x:v/1', '10.0.0.1', '3260'),
            config.volume_identity(iscsi)[1])
        rbd = {'driver_volume_type': 'rbd', 'data': {
            'name': 'volumes/volume-1', 'hosts': ['10.0.0.2'],
            'ports': [6789]}}
        self.assertEqual(
            ('network', 'rbd', 'volumes/volume-1', '10.0.0.2', '6789'),
            config.volume_identity(rbd)[1])
