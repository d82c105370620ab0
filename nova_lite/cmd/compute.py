"""nova-lite-compute: one per hypervisor host (``--host NAME`` or
``[DEFAULT] host``)."""

import sys

from nova_lite.cmd import worker
from nova_lite import services


def main(argv=None):
    return worker.run(services.compute_service, argv)


if __name__ == '__main__':
    sys.exit(main())
