"""nova-lite-volume: the volume service (Cinder's cinder-volume), which
drives the block-storage backends of ``[volume] enabled_backends`` for
the API processes (``nova_lite.volume_service.service``). Run it on the storage
node (the one with tgtd for ``iscsi``), as root where a backend needs
it."""

import sys

from nova_lite.cmd import worker
from nova_lite.volume_service import service


def main(argv=None):
    return worker.run(service.create, argv)


if __name__ == '__main__':
    sys.exit(main())
