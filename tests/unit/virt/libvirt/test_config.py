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
        info = {'driver_volume_type': 'rbd', 'data': {'name': 'pool/v'}}
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
