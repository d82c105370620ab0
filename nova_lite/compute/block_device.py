"""``block_device_mapping_v2`` of a server create request, checked and
turned into block device mappings (API-CONTRACT.md 4.1).

nova_lite has no image service and cannot create volumes for a server, so
two kinds of mapping are supported: an existing volume (``source_type`` and
``destination_type`` ``volume``; boot from volume with ``boot_index`` 0)
and the image root disk (``image`` to ``local``, boot index 0, with
``imageRef``). Anything else is refused with 400.

``attach_mode`` (``ro``/``rw``, accepted by the schema from 2.105) applies
to volume mappings only, and defaults to ``rw`` for them; with
``destination_type`` ``local`` (the image root disk included) it is 400, as
the volume-multiattach-enhancements spec says: a local disk is not a
block-storage attachment, so there is no mode to pass on, and the request
is refused rather than silently ignored.
"""

from oslo_utils import strutils

from nova_lite import device_names
from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.objects import block_device as bdm_obj


def _boot_index(value):
    if value is None:
        return None
    index = int(value)
    return index if index >= 0 else None


def _bool(value):
    if isinstance(value, bool):
        return value
    return strutils.bool_from_string(value, strict=True)


def parse_request(items, image_ref):
    """Checked dicts (``source_type``, ``volume_id``, ``boot_index``,
    ``device_name``, ``delete_on_termination``, ``tag``, ``attach_mode``)
    for the mappings of ``items``; 400 errors as Nova's."""
    parsed = []
    for item in items or []:
        if item.get('no_device'):
            continue
        source = item.get('source_type')
        if source is None:
            raise exception.InvalidBDMFormat(
                details=_('Missing source_type field.'))
        dest = item.get('destination_type') or (
            'local' if source in ('image', 'blank') else 'volume')
        uuid = item.get('uuid') or item.get('%s_id' % source)
        if source == 'blank' and uuid:
            raise exception.InvalidBDMFormat(
                details=_('Invalid device UUID.'))
        if source != 'blank' and not uuid:
            raise exception.InvalidBDMFormat(
                details=_('Missing device UUID.'))
        if item.get('volume_type') is not None and (
                dest == 'local' or source == 'volume'):
            raise exception.InvalidBDMFormat(
                details=_('Specifying a volume_type with destination_type='
                          'local or source_type=volume is not supported.'))
        attach_mode = item.get('attach_mode')
        if attach_mode is not None and dest == 'local':
            raise exception.InvalidBDMFormat(
                details=_('attach_mode is only supported with '
                          'destination_type=volume: a local disk is not '
                          'attached from block storage.'))
        boot_index = _boot_index(item.get('boot_index'))
        if source == 'image' and dest == 'local':
            if not image_ref or boot_index != 0:
                raise exception.InvalidBDMFormat(
                    details=_('Mapping image to local is not supported.'))
        elif not (source == 'volume' and dest == 'volume'):
            raise exception.InvalidBDMFormat(
                details=_('nova_lite supports existing volumes '
                          '(source_type volume) and the image root disk '
                          'only, not %(src)s to %(dst)s.') %
                {'src': source, 'dst': dest})
        parsed.append({
            'source_type': source,
            'volume_id': uuid if source == 'volume' else None,
            'image_id': uuid if source == 'image' else None,
            'boot_index': boot_index,
            'device_name': item.get('device_name'),
            'delete_on_termination': _bool(
                item.get('delete_on_termination', False)),
            'tag': item.get('tag'),
            'attach_mode': ((attach_mode or bdm_obj.ATTACH_MODE_RW)
                            if dest == 'volume' else None),
        })
    indexes = sorted(p['boot_index'] for p in parsed
                     if p['boot_index'] is not None)
    if indexes and indexes != list(range(len(indexes))):
        raise exception.InvalidBDMBootSequence()
    if not indexes and not image_ref:
        raise exception.InvalidBDMBootSequence()
    return parsed


def volume_ids(parsed):
    return [p['volume_id'] for p in parsed if p['volume_id']]


def attach_modes(parsed):
    """The attach modes asked for the volumes of ``parsed``."""
    return {p['attach_mode'] for p in parsed if p['attach_mode']}


def _image_root(context, instance_uuid, image_id, root):
    bdm = bdm_obj.BlockDeviceMapping.new_volume(
        context, instance_uuid, None, device_name=root, boot_index=0,
        delete_on_termination=True)
    bdm.source_type = bdm_obj.SOURCE_IMAGE
    bdm.destination_type = bdm_obj.DESTINATION_LOCAL
    bdm.image_id = image_id
    return bdm


def build_mappings(context, instance_uuid, parsed, image_ref):
    """BlockDeviceMapping objects (not yet created) for one server: the
    root disk at ``/dev/vda`` and the other volumes on the next free
    names (a requested name is kept)."""
    root = device_names.DEFAULT_ROOT_DEVICE
    bdms = []
    has_root = any(p['boot_index'] == 0 for p in parsed)
    if not has_root:
        bdms.append(_image_root(context, instance_uuid, image_ref, root))
    used = {root} | {p['device_name'] for p in parsed
                     if p['device_name'] and p['boot_index'] != 0}
    next_index = 1
    for p in sorted(parsed, key=lambda p: (p['boot_index'] is None,
                                           p['boot_index'] or 0)):
        if p['boot_index'] == 0:
            name = root
        elif p['device_name']:
            name = p['device_name']
        else:
            while True:
                name = '/dev/vd%s' % device_names.device_letters(next_index)
                next_index += 1
                if name not in used:
                    break
            used.add(name)
        if p['source_type'] == 'image':
            bdm = _image_root(context, instance_uuid, p['image_id'], root)
        else:
            bdm = bdm_obj.BlockDeviceMapping.new_volume(
                context, instance_uuid, p['volume_id'], device_name=name,
                boot_index=p['boot_index'], tag=p['tag'],
                delete_on_termination=p['delete_on_termination'],
                attach_mode=p['attach_mode'])
        bdms.append(bdm)
    return bdms
