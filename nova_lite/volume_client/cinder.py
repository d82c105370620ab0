"""``[volume] client = cinder``: the VolumeClient over REST, with
python-cinderclient on a keystoneauth1 session, as Nova calls Cinder.

It works against nova_lite's own ``/v3`` and against a real Cinder, at the
microversions Nova uses: volume show at 3.48 (list and create too),
attachments at 3.44 (3.54 when a ``mode`` is given). An attachment's show
and delete ask nova_lite's own 3.72 first, which adds the attachments
sharing the host connection; a block storage that does not offer it (a
real Cinder: 406) is asked at 3.44 from then on, and the answer says the
shared connections are not known (None). Errors come back as the same
``nova_lite.exception`` classes, with the server's message, that the
``local`` client raises; an attachment call that fails on the server's
side (5xx, e.g. Cinder's volume service did not answer its RPC call) or
cannot reach it says which call of which attachment failed, which is what
the instance action's event and fault then show.

Authentication
--------------

Every request carries the token of the context it is made for (the user's
token, which travels with the request context over RPC), at
``[volume] endpoint_override`` or, when that is unset, the
``block-storage`` endpoint from the Keystone catalog as seen by the
``[cinder]`` auth plugin (``[cinder] region_name``/``interface``).

Service requests (``nova_lite.volume_client.service_context(ctxt)``, e.g.
compute deleting a server's attachment, which the OSSA-2023-003 rule
refuses to users) must prove they come from a service:

* ``[api] auth_strategy = keystone``: configure a service user in
  ``[cinder]`` (``auth_type = password``, ``auth_url``, ``username``...);
  service requests then send its token as ``X-Service-Token``
  (keystoneauth's ``ServiceTokenAuthWrapper``) and keystonemiddleware on
  the block-storage side turns it into the ``service`` service role;
* a context without a token (the conductor's and the compute hosts'
  settling, periodic tasks) is sent, when ``[cinder]`` has an auth
  plugin, with the service user's own token at its project's URL (as
  Nova's admin auth does; the user needs Cinder's ``admin`` role to act
  on other projects' attachments), plus its service token for a service
  request;
* ``noauth2`` (development): there are no real tokens; the user's token
  (``user:project``) is sent with the service token ``service:service``
  in ``X-Service-Token`` (noauth2's service user, which has the
  ``service`` role), as keystoneauth would send a real one. A client
  cannot claim the role with an ``X-Service-Roles`` header: noauth2
  removes identity headers as keystonemiddleware does. A context without
  a token (a periodic task's) is sent as ``user:project`` from the
  context.
"""

import copy

from cinderclient import client as cinder_client
from cinderclient import exceptions as cinder_exc
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import service_token
from keystoneauth1 import token_endpoint

from nova_lite import api_version
from nova_lite import context as nl_context
from nova_lite import exception
from nova_lite.volume_client import base

GROUP = 'cinder'
# noauth2's service token (its user 'service' has the service role).
NOAUTH_SERVICE_TOKEN = 'service:service'
SERVICE_TYPE = 'block-storage'


def _translate(exc, not_found, operation=None):
    """A cinderclient/keystoneauth error as the nova_lite exception the
    local client would raise (``not_found`` for a 404; None: a
    ``NotFound`` with the server's message). ``operation`` (e.g.
    ``attachment_update of attachment <id>``) is named in the message of
    an unreachable block storage and of its server errors (5xx: Cinder's
    own message says only that it failed, e.g. when its volume service
    did not answer its RPC call)."""
    if isinstance(exc, ks_exc.ClientException) and not isinstance(
            exc, ks_exc.HttpError):
        return exception.ServiceUnavailable(
            message='The block-storage API cannot be reached%s: %s' % (
                ' (%s)' % operation if operation else '', exc))
    code = getattr(exc, 'code', None)
    message = getattr(exc, 'message', None) or str(exc)
    if operation and isinstance(code, int) and code >= 500:
        request_id = getattr(exc, 'request_id', None)
        message = 'Block storage failed %s (HTTP %s%s): %s' % (
            operation, code,
            ', request %s' % request_id if request_id else '', message)
    if code == 404:
        return (exception.NotFound(message=message) if not_found is None
                else not_found)
    if code == 400:
        return exception.InvalidVolume(message=message)
    if code == 401:
        return exception.NotAuthenticated(message=message)
    if code == 403:
        return exception.Forbidden(message=message)
    if code == 409:
        if 'using the Compute API' in message:
            return exception.ConflictNovaUsingAttachment(message=message)
        return exception.ResourceConflict(message=message)
    if code == 413:
        return exception.OverQuota(message=message)
    return exception.VolumeBackendAPIException(message=message)


class CinderClient(base.VolumeClient):
    def __init__(self, conf):
        super().__init__(conf)
        self._session = ks_loading.load_session_from_conf_options(
            conf, GROUP)
        self._service_auth = ks_loading.load_auth_from_conf_options(
            conf, GROUP)
        # Whether the block storage offers nova_lite's 3.72 (None: not
        # asked yet).
        self._shared_connections = None

    # -- plumbing -------------------------------------------------------
    def _endpoint(self, ctxt):
        if self.conf.volume.endpoint_override:
            return self.conf.volume.endpoint_override
        if self._service_auth is None:
            raise exception.ServiceUnavailable(
                message='[volume] client = cinder needs [volume] '
                        'endpoint_override or a [cinder] auth plugin to '
                        'find the block-storage endpoint')
        url = self._session.get_endpoint(
            auth=self._service_auth, service_type=SERVICE_TYPE,
            interface=self.conf.cinder.interface,
            region_name=self.conf.cinder.region_name)
        # The catalog's block-storage URL ends with the project of the
        # token it came from (/v3/$(project_id)s): the service user's.
        # A request made with the user's token must name the user's
        # project there, as Nova's does with the user's own catalog.
        if not ctxt.auth_token:
            # Sent with the service user's own token (``_client``): its
            # project's URL, as the catalog has it.
            return url
        service_project = self._service_auth.get_project_id(self._session)
        path = url.rstrip('/').split('/')
        if (ctxt.project_id and service_project and
                path[-1] == service_project):
            path[-1] = ctxt.project_id
            url = '/'.join(path)
        return url

    @staticmethod
    def _token(ctxt):
        if ctxt.auth_token:
            return ctxt.auth_token
        # noauth2 only: a context without a token (periodic tasks).
        return '%s:%s' % (ctxt.user_id or 'admin',
                          ctxt.project_id or 'admin')

    def _client(self, ctxt, version):
        endpoint = self._endpoint(ctxt)
        if not ctxt.auth_token and self._service_auth is not None:
            # A context without a token (settling, periodic tasks): as
            # Nova's admin auth, the [cinder] service user's own token
            # (it has the admin role), plus its service token for a
            # service request.
            auth = self._service_auth
        else:
            auth = token_endpoint.Token(endpoint, self._token(ctxt))
        headers = {}
        if nl_context.is_service_request(ctxt):
            if self._service_auth is not None:
                auth = service_token.ServiceTokenAuthWrapper(
                    user_auth=auth, service_auth=self._service_auth)
            else:
                # noauth2: the service user's token, in noauth2's form.
                headers['X-Service-Token'] = NOAUTH_SERVICE_TOKEN
        return cinder_client.Client(
            version, session=self._session, auth=auth,
            endpoint_override=endpoint, additional_headers=headers,
            global_request_id=getattr(ctxt, 'global_id', None))

    def _call(self, not_found, fn, *args, operation=None):
        try:
            return fn(*args)
        except (cinder_exc.ClientException, ks_exc.ClientException) as e:
            raise _translate(e, not_found, operation)

    @staticmethod
    def _version(version):
        return str(version)

    def _attachment_call(self, ctxt, not_found, fn, operation=None):
        """``fn(cinderclient)`` for an attachment's show or delete: at
        nova_lite's 3.72 while the block storage offers it, else at 3.44.
        Returns ``(result, whether 3.72 answered)``."""
        if self._shared_connections is not False:
            cs = self._client(ctxt, self._version(
                api_version.CLIENT_SHARED_CONNECTIONS_VERSION))
            try:
                result = fn(cs)
            except cinder_exc.NotAcceptable:
                # A real Cinder (its maximum is below 3.72): ask as Nova
                # does, now and from now on.
                self._shared_connections = False
            except (cinder_exc.ClientException, ks_exc.ClientException) as e:
                raise _translate(e, not_found, operation)
            else:
                self._shared_connections = True
                return result, True
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        return self._call(not_found, fn, cs, operation=operation), False

    # -- the contract ---------------------------------------------------
    def get(self, ctxt, volume_id):
        cs = self._client(
            ctxt, self._version(api_version.CLIENT_VOLUME_VERSION))
        volume = self._call(exception.VolumeNotFound(volume_id=volume_id),
                            cs.volumes.get, volume_id)
        return base.client_volume(volume.to_dict())

    def get_all(self, ctxt, limit=None, offset=None):
        cs = self._client(
            ctxt, self._version(api_version.CLIENT_VOLUME_VERSION))
        search_opts = {'offset': offset} if offset else None
        volumes = self._call(None, lambda: cs.volumes.list(
            detailed=True, search_opts=search_opts, limit=limit))
        return [base.client_volume(v.to_dict()) for v in volumes]

    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None):
        cs = self._client(
            ctxt, self._version(api_version.CLIENT_VOLUME_VERSION))
        if snapshot_id:
            # As Nova: the snapshot first (nova_lite's /v3 has none).
            self._call(exception.SnapshotNotFound(snapshot_id=snapshot_id),
                       cs.volume_snapshots.get, snapshot_id)
        volume = self._call(None, lambda: cs.volumes.create(
            size, name=name, description=description,
            volume_type=volume_type, availability_zone=availability_zone,
            snapshot_id=snapshot_id, metadata=metadata or None))
        return base.client_volume(volume.to_dict())

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mode=None):
        version = (api_version.CLIENT_ATTACHMENT_MODE_VERSION if mode
                   else api_version.CLIENT_ATTACHMENT_VERSION)
        cs = self._client(ctxt, self._version(version))
        kwargs = {'mode': mode} if mode else {}
        attachment = self._call(
            exception.VolumeNotFound(volume_id=volume_id),
            lambda: cs.attachments.create(volume_id, connector,
                                          instance_uuid, **kwargs),
            operation='attachment_create of volume %s' % volume_id)
        return base.client_attachment(attachment)

    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        if mountpoint and 'mountpoint' not in connector:
            connector = copy.deepcopy(connector)
            connector['mountpoint'] = mountpoint
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        attachment = self._call(
            exception.VolumeAttachmentNotFound(attachment_id=attachment_id),
            cs.attachments.update, attachment_id, connector,
            operation='attachment_update of attachment %s' % attachment_id)
        return base.client_attachment(attachment.to_dict())

    def attachment_complete(self, ctxt, attachment_id):
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        self._call(
            exception.VolumeAttachmentNotFound(attachment_id=attachment_id),
            cs.attachments.complete, attachment_id,
            operation='attachment_complete of attachment %s' % attachment_id)

    def attachment_get(self, ctxt, attachment_id):
        attachment, _shared = self._attachment_call(
            ctxt,
            exception.VolumeAttachmentNotFound(attachment_id=attachment_id),
            lambda cs: cs.attachments.show(attachment_id).to_dict(),
            operation='attachment_get of attachment %s' % attachment_id)
        # A real Cinder does not report shared connections: None (unknown).
        result = base.client_attachment(
            attachment,
            shared=attachment.get('shared_connections_by_attachment'))
        result.setdefault('shared_connections_by_attachment', None)
        return result

    def attachment_get_all(self, ctxt, instance_id=None, volume_id=None):
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        search_opts = {key: value for key, value in (
            ('instance_id', instance_id), ('volume_id', volume_id))
            if value}
        attachments = self._call(None, lambda: cs.attachments.list(
            search_opts=search_opts, detailed=True))
        return [base.client_attachment(a.to_dict()) for a in attachments]

    def attachment_delete(self, ctxt, attachment_id):
        not_found = exception.VolumeAttachmentNotFound(
            attachment_id=attachment_id)
        # cinderclient's delete drops the body; read it through the HTTP
        # client to return the shared connections.
        (_resp, body), _shared = self._attachment_call(
            ctxt, not_found,
            lambda cs: cs.client.delete('/attachments/%s' % attachment_id),
            operation='attachment_delete of attachment %s' % attachment_id)
        shared = (body or {}).get('shared_connections_by_attachment')
        return {'shared_connections':
                None if shared is None else list(shared)}

    def begin_detaching(self, ctxt, volume_id):
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        self._call(exception.VolumeNotFound(volume_id=volume_id),
                   cs.volumes.begin_detaching, volume_id)

    def roll_detaching(self, ctxt, volume_id):
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        self._call(exception.VolumeNotFound(volume_id=volume_id),
                   cs.volumes.roll_detaching, volume_id)

    def delete(self, ctxt, volume_id):
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        self._call(exception.VolumeNotFound(volume_id=volume_id),
                   cs.volumes.delete, volume_id)

    def migrate_volume_completion(self, ctxt, volume_id, new_volume_id,
                                  error=False):
        cs = self._client(ctxt, self._version(
            api_version.CLIENT_ATTACHMENT_VERSION))
        body = self._call(exception.VolumeNotFound(volume_id=volume_id),
                          cs.volumes.migrate_volume_completion, volume_id,
                          new_volume_id, error)
        return {'save_volume_id': body['save_volume_id']}
