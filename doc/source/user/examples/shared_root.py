"""Several servers created at once on one read-only multiattach root
volume (2.105), with openstacksdk, against nova-lite-all.

    export OS_CLIENT_CONFIG_FILE=$PWD/state/clouds.yaml
    python3 doc/source/user/examples/shared_root.py
"""

import openstack

admin = openstack.connect(cloud='nova-lite')
conn = openstack.connect(cloud='nova-lite-demo')
block = conn.block_storage

# A multiattach volume type: an administrator's job.
if admin.block_storage.find_type('multiattach') is None:
    admin.block_storage.create_type(
        name='multiattach', extra_specs={'multiattach': '<is> True'})

root = block.wait_for_status(
    block.create_volume(size=1, name='shared-root', volume_type='multiattach'),
    'available')
print('volume', root.name, 'multiattach', root.is_multiattach)

# Two servers in one request, both booting from the volume, read-only.
# Up to 2.104 (as in Nova) a volume mapping with min_count above 1 is 400.
resp = conn.compute.post('/servers', microversion='2.105', json={'server': {
    'name': 'reader', 'flavorRef': '1', 'networks': 'none',
    'min_count': 2,
    'block_device_mapping_v2': [{
        'uuid': root.id, 'source_type': 'volume',
        'destination_type': 'volume', 'boot_index': 0,
        'attach_mode': 'ro'}]}})
print('create:', resp.status_code)
servers = sorted(conn.compute.servers(name='reader'), key=lambda s: s.name)
for server in servers:
    server = conn.compute.wait_for_server(server)
    print('server', server.name, server.status)

# Block storage has one attachment per server, each read-only.
root = block.get_volume(root)
print('volume', root.status, len(root.attachments), 'attachments')
for att in block.attachments(volume_id=root.id):
    shown = block.get('/attachments/%s' % att.id, microversion='3.54')
    print('attachment', att.status, shown.json()['attachment']['attach_mode'])

# Deleting the servers gives the volume back.
for server in servers:
    conn.compute.delete_server(server)
for server in servers:
    conn.compute.wait_for_delete(server)
root = block.wait_for_status(root, 'available')
print('volume', root.status, len(root.attachments), 'attachments')
block.delete_volume(root)
