"""The user guide's journey with openstacksdk, against nova-lite-all.

    export OS_CLIENT_CONFIG_FILE=$PWD/state/clouds.yaml
    python3 doc/source/user/examples/journey.py
"""

import sys

import openstack

# Any UUID names an image: nova_lite has no image service.
IMAGE = '70a599e0-31e7-49b7-b260-868f441e862b'

# The member's cloud; compute requests at 2.101 unless told otherwise.
conn = openstack.connect(cloud='nova-lite-demo', compute_api_version='2.101')
block = conn.block_storage

# What the journey made: deleted at the end, also when a step fails.
made = {'server': None, 'volumes': []}


def new_volume(name):
    volume = block.create_volume(size=1, name=name)
    made['volumes'].append(volume)
    return block.wait_for_status(volume, 'available')


def journey():
    # A server.
    server = conn.compute.create_server(
        name='sdk-vm', flavor_id='1', image_id=IMAGE, networks='none')
    made['server'] = server
    server = conn.compute.wait_for_server(server)
    print('server', server.name, server.status)

    # Attach at 2.101: accepted at once (202); the volume becomes in-use.
    data = new_volume('sdk-data')
    conn.compute.create_volume_attachment(server, volume_id=data.id)
    block.wait_for_status(data, 'in-use')
    for att in conn.compute.volume_attachments(server):
        print('attached', att.volume_id, att.device)

    # Read-only at 2.105, nova_lite's own microversion: openstacksdk does
    # not know attach_mode, so the request goes through the compute proxy
    # as is.
    ro = new_volume('sdk-ro')
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

    # Shelve: the server is offloaded; a volume attached now gets its
    # device when the server is unshelved.
    conn.compute.shelve_server(server)
    server = conn.compute.wait_for_server(server, status='SHELVED_OFFLOADED')
    later = new_volume('sdk-later')
    conn.compute.create_volume_attachment(server, volume_id=later.id)
    block.wait_for_status(later, 'in-use')
    print('shelved:', sorted((a.device or '-', a.volume_id == later.id)
                             for a in conn.compute.volume_attachments(server)))
    conn.compute.unshelve_server(server)
    server = conn.compute.wait_for_server(server, status='ACTIVE')
    print('unshelved:', sorted((a.device, a.volume_id == later.id)
                               for a in conn.compute.volume_attachments(
                                   server)))

    # Detach everything.
    for volume in (data, ro, later):
        conn.compute.delete_volume_attachment(server, volume)
        block.wait_for_status(volume, 'available')


def clean_up():
    """Delete the server (which detaches its volumes), then the volumes."""
    if made['server'] is not None:
        conn.compute.delete_server(made['server'], ignore_missing=True)
        conn.compute.wait_for_delete(made['server'])
    for volume in made['volumes']:
        try:
            block.wait_for_status(volume, 'available', failures=['error'])
            block.delete_volume(volume)
            block.wait_for_delete(volume)
        except openstack.exceptions.SDKException as e:
            print('volume %s left behind: %s' % (volume.id, e),
                  file=sys.stderr)


try:
    journey()
finally:
    clean_up()
print('left:', [s.name for s in conn.compute.servers(name='sdk-vm')],
      [v.name for v in block.volumes() if v.name.startswith('sdk-')])
