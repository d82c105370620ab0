"""The user guide's journey with openstacksdk, against nova-lite-all.

    export OS_CLIENT_CONFIG_FILE=$PWD/state/clouds.yaml
    python3 doc/source/user/examples/journey.py
"""

import openstack

# Any UUID names an image: nova_lite has no image service.
IMAGE = '70a599e0-31e7-49b7-b260-868f441e862b'

# The member's cloud; compute requests at 2.101 unless told otherwise.
conn = openstack.connect(cloud='nova-lite-demo', compute_api_version='2.101')
block = conn.block_storage

# A server.
server = conn.compute.create_server(
    name='sdk-vm', flavor_id='1', image_id=IMAGE, networks='none')
server = conn.compute.wait_for_server(server)
print('server', server.name, server.status)

# Attach at 2.101: accepted at once (202); the volume becomes in-use.
data = block.wait_for_status(block.create_volume(size=1, name='sdk-data'),
                             'available')
conn.compute.create_volume_attachment(server, volume_id=data.id)
block.wait_for_status(data, 'in-use')
for att in conn.compute.volume_attachments(server):
    print('attached', att.volume_id, att.device)

# Read-only at 2.105, nova_lite's own microversion: openstacksdk does not
# know attach_mode, so the request goes through the compute proxy as is.
ro = block.wait_for_status(block.create_volume(size=1, name='sdk-ro'),
                           'available')
resp = conn.compute.post(
    '/servers/%s/os-volume_attachments' % server.id,
    json={'volumeAttachment': {'volumeId': ro.id, 'attach_mode': 'ro'}},
    microversion='2.105')
print('attach read-only:', resp.status_code)
block.wait_for_status(ro, 'in-use')
shown = conn.compute.get(
    '/servers/%s/os-volume_attachments/%s' % (server.id, ro.id),
    microversion='2.105').json()['volumeAttachment']
print('attach_mode', shown['attach_mode'], 'device', shown['device'])

# Shelve: the server is offloaded; a volume attached now gets its device
# when the server is unshelved.
conn.compute.shelve_server(server)
server = conn.compute.wait_for_server(server, status='SHELVED_OFFLOADED')
later = block.wait_for_status(block.create_volume(size=1, name='sdk-later'),
                              'available')
conn.compute.create_volume_attachment(server, volume_id=later.id)
block.wait_for_status(later, 'in-use')
print('shelved:', sorted((a.device or '-', a.volume_id == later.id)
                         for a in conn.compute.volume_attachments(server)))
conn.compute.unshelve_server(server)
server = conn.compute.wait_for_server(server, status='ACTIVE')
print('unshelved:', sorted((a.device, a.volume_id == later.id)
                           for a in conn.compute.volume_attachments(server)))

# Detach everything, delete the server and the volumes.
for volume in (data, ro, later):
    conn.compute.delete_volume_attachment(server, volume)
    block.wait_for_status(volume, 'available')
conn.compute.delete_server(server)
conn.compute.wait_for_delete(server)
for volume in (data, ro, later):
    block.delete_volume(volume)
    block.wait_for_delete(volume)
print('left:', [s.name for s in conn.compute.servers(name='sdk-vm')],
      [v.name for v in block.volumes() if v.name.startswith('sdk-')])
