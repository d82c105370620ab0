"""The block-storage service layer for volume types: types, their extra
specs and encryption, and what the backends can do for them.

``Types`` is ``nova_lite.volume.api.API().types``; the same rules as
there: policy checked
here, rows from ``nova_lite.volume.db.types``.

Private types (Cinder's volume type access): a type with ``is_public``
false is seen (list, show, extra specs) and used (volume create, retype)
only by administrators and by the projects an administrator gave access
(``type_access_add``); for everyone else it does not exist (404).
``visible_to`` and ``list_filter`` are the two rules, as data for
``nova_lite.volume.db.types``.

The default type: a volume created without a type gets the type named by
``[volume] default_volume_type`` (``__DEFAULT__``, which the schema
creates, as Cinder's does); ``GET /v3/types/default`` shows it, and it
cannot be deleted (400), as in Cinder. Whoever may show types sees it,
private or not (Cinder looks it up as an administrator).

Encryption: a type may carry Cinder's encryption specs
(``/v3/types/{id}/encryption``), changed only while no volume uses the
type. nova_lite has no key manager, so it refuses to create volumes of an
encrypted type (400); a multiattach type with encryption gets Cinder's own
refusal first (the multi-attach spec: no multiattach with encryption).
"""

from oslo_utils import strutils

from nova_lite import exception
from nova_lite.i18n import _
from nova_lite.policies import volume_backends as backend_policies
from nova_lite.policies import volume_type_access as access_policies
from nova_lite.policies import volume_types as type_policies
from nova_lite.volume import backends as backend_conf
from nova_lite.volume.db import types as type_db
from nova_lite.volume import placement
from nova_lite.volume import services as volume_services
from nova_lite.volume import views

MULTIATTACH_SPEC = 'multiattach'
MULTIATTACH_TRUE = '<is> True'

ENCRYPTION_KEYS = ('provider', 'control_location', 'cipher', 'key_size')


def is_multiattach_type(extra_specs):
    """Cinder's exact test of the type's ``multiattach`` extra spec."""
    return extra_specs.get(MULTIATTACH_SPEC) == MULTIATTACH_TRUE


def target(project_id):
    return {'project_id': project_id}


def visible_to(ctxt):
    """Whose types ``ctxt`` sees: None, every type (administrators); else
    its project's, public types and the private ones it has access to."""
    return None if ctxt.is_admin else ctxt.project_id


def list_filter(ctxt, is_public):
    """Cinder's reading of ``GET /types?is_public=``, as ``(is_public,
    visible_to)`` for ``type_db.type_get_all``. Users always get the public
    types and the private ones their project has access to, whatever they
    ask. Administrators get the same by default (with their own project's
    access), only private types with a false value, and every type with
    ``None``; another value is 400."""
    if not ctxt.is_admin or is_public is None:
        return True, ctxt.project_id
    if is_public.lower() == 'none':
        return None, None
    try:
        wanted = strutils.bool_from_string(is_public, strict=True)
    except ValueError:
        raise exception.InvalidInput(
            reason=_('Invalid is_public filter [%s]') % is_public)
    return wanted, ctxt.project_id


class Types(object):
    """``volume.api.API().types``."""

    def __init__(self, conf):
        self.conf = conf

    # -- volume types ---------------------------------------------------------
    def get_all(self, ctxt, is_public=None):
        """``is_public``: the query parameter, as given (see
        ``list_filter``)."""
        ctxt.can(type_policies.GET_ALL, target=target(ctxt.project_id))
        is_public, project_id = list_filter(ctxt, is_public)
        return type_db.type_get_all(ctxt, is_public=is_public,
                                    visible_to=project_id)

    def get(self, ctxt, type_id):
        ctxt.can(type_policies.GET, target=target(ctxt.project_id))
        return type_db.type_get(ctxt, type_id, visible_to=visible_to(ctxt))

    def default(self, ctxt):
        """The default volume type (Cinder's ``get_default_volume_type``,
        without per-project defaults); 500 when no type has the configured
        name."""
        name = self.conf.volume.default_volume_type
        try:
            return type_db.type_get_by_name(ctxt, name)
        except exception.VolumeTypeNotFound:
            raise exception.VolumeTypeDefaultMisconfiguredError(
                volume_type_name=name)

    def get_default(self, ctxt):
        """``GET /v3/types/default``."""
        ctxt.can(type_policies.GET, target=target(ctxt.project_id))
        return self.default(ctxt)

    def create(self, ctxt, name, description=None, is_public=True,
               extra_specs=None):
        ctxt.can(type_policies.CREATE, target=target(ctxt.project_id))
        return type_db.type_create(ctxt, name, description, is_public,
                                   extra_specs)

    def update(self, ctxt, type_id, values):
        ctxt.can(type_policies.UPDATE, target=target(ctxt.project_id))
        return type_db.type_update(ctxt, type_id, values)

    def delete(self, ctxt, type_id):
        ctxt.can(type_policies.DELETE, target=target(ctxt.project_id))
        # As Cinder: the default type must be there to delete any type.
        if self.default(ctxt).id == type_id:
            raise exception.VolumeTypeDefaultDeletionError(
                volume_type_id=type_id)
        type_db.type_destroy(ctxt, type_id)

    def extra_specs_get(self, ctxt, type_id, key=None):
        rule = (type_policies.EXTRA_SPECS_SHOW if key
                else type_policies.EXTRA_SPECS_INDEX)
        ctxt.can(rule, target=target(ctxt.project_id))
        vtype = type_db.type_get(ctxt, type_id, visible_to=visible_to(ctxt))
        specs = views.visible_extra_specs(ctxt, vtype)
        if key is None:
            return specs
        if key not in specs:
            raise exception.VolumeTypeExtraSpecsNotFound(
                volume_type_id=type_id, extra_specs_key=key)
        return {key: specs[key]}

    def extra_specs_update(self, ctxt, type_id, specs, single=False):
        rule = (type_policies.EXTRA_SPECS_UPDATE if single
                else type_policies.EXTRA_SPECS_CREATE)
        ctxt.can(rule, target=target(ctxt.project_id))
        type_db.type_extra_specs_update(ctxt, type_id, specs)
        return specs

    def extra_spec_delete(self, ctxt, type_id, key):
        ctxt.can(type_policies.EXTRA_SPECS_DELETE,
                 target=target(ctxt.project_id))
        type_db.type_extra_spec_delete(ctxt, type_id, key)

    # -- volume type access (private types) ---------------------------
    def access_get_all(self, ctxt, type_id):
        """The projects that may use the private type (404 for a public
        one)."""
        ctxt.can(access_policies.GET_ALL_FOR_TYPE,
                 target=target(ctxt.project_id))
        return type_db.type_access_get_all(ctxt, type_id)

    def access_add(self, ctxt, type_id, project_id):
        ctxt.can(access_policies.ADD_PROJECT, target=target(ctxt.project_id))
        type_db.type_access_add(ctxt, type_id, project_id)

    def access_remove(self, ctxt, type_id, project_id):
        ctxt.can(access_policies.REMOVE_PROJECT,
                 target=target(ctxt.project_id))
        type_db.type_access_remove(ctxt, type_id, project_id)

    # -- backends -------------------------------------------------------
    def backend_capabilities(self, ctxt, hostname):
        """``(backend name, capabilities)`` asked of the backend now (which
        refreshes the cached report). ``hostname`` is a backend name, or
        Cinder's ``host@backend[#pool]``."""
        ctxt.can(backend_policies.CAPABILITIES,
                 target=target(ctxt.project_id))
        name = backend_conf.backend_of(hostname)
        caps = None
        if name in placement.enabled(self.conf):
            caps = placement.capability(self.conf, name, refresh=True)
        if caps is None:
            raise exception.VolumeBackendNotFound(host=hostname)
        return name, caps

    def backend_pools(self, ctxt, name=None, volume_type=None):
        """``[(pool name, capabilities)]`` as last reported, only those
        named ``name`` (a pool's ``host@backend#pool`` or its backend's
        name) or able to host ``volume_type`` when given. A pool's name is
        what ``os-vol-host-attr:host`` shows for its volumes."""
        ctxt.can(backend_policies.GET_POOLS,
                 target=target(ctxt.project_id))
        pools = placement.capabilities(
            self.conf, exclude=volume_services.unschedulable_backends(
                ctxt, self.conf)).items()
        if name:
            pools = [(n, c) for n, c in pools
                     if name in (n, backend_conf.volume_host(self.conf, n))]
        if volume_type:
            specs = views.extra_specs_of(type_db.type_get_by_name_or_id(
                ctxt, volume_type))
            pools = [(n, c) for n, c in pools if backend_conf.fits(
                c, specs, is_multiattach_type(specs))]
        return [(backend_conf.volume_host(self.conf, n), c) for n, c in pools]

    # -- volume type encryption -----------------------------------------
    def encryption_get(self, ctxt, type_id, key=None):
        """The type's encryption row (None: not encrypted); with ``key``,
        ``{key: value}`` (404 when not encrypted or no such key)."""
        ctxt.can(type_policies.ENCRYPTION_GET,
                 target=target(ctxt.project_id))
        type_db.type_get(ctxt, type_id)
        row = type_db.type_encryption_get(ctxt, type_id)
        if key is None:
            return row
        view = views.encryption_view(row) if row is not None else {}
        if key not in view:
            raise exception.VolumeTypeEncryptionNotFound(type_id=type_id)
        return {key: view[key]}

    def encryption_create(self, ctxt, type_id, specs):
        ctxt.can(type_policies.ENCRYPTION_CREATE,
                 target=target(ctxt.project_id))
        return type_db.type_encryption_create(ctxt, type_id,
                                              _encryption(specs))

    def encryption_update(self, ctxt, type_id, specs):
        ctxt.can(type_policies.ENCRYPTION_UPDATE,
                 target=target(ctxt.project_id))
        return type_db.type_encryption_update(ctxt, type_id,
                                              _encryption(specs))

    def encryption_delete(self, ctxt, type_id):
        ctxt.can(type_policies.ENCRYPTION_DELETE,
                 target=target(ctxt.project_id))
        type_db.type_encryption_delete(ctxt, type_id)

    def is_encrypted(self, ctxt, type_id):
        return type_db.type_encryption_get(ctxt, type_id) is not None


def _encryption(specs):
    values = {k: specs[k] for k in ENCRYPTION_KEYS if k in specs}
    if values.get('key_size') is not None:
        values['key_size'] = int(values['key_size'])
    return values
