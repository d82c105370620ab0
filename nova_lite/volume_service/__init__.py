"""The volume service (``nova-lite-volume``, Cinder's cinder-volume role):
the backends' drivers (``drivers``), the server side of its RPC API
(``manager``), the service that runs it (``service``), and block
storage's settling of its backends (``settling``, ``periodic``). Only
the volume service's processes import this package: the API, the
conductor and the compute side reach it over ``nova_lite.volume.rpcapi``
(the import-linter contract ``api-loads-no-driver``).
"""
