"""nova-lite-compute: one per hypervisor host (``--host NAME`` or
``[DEFAULT] host``)."""

import sys

from nova_lite.cmd import worker
from nova_lite.compute.host import service


def main(argv=None):
    return worker.run(service.create, argv)


if __name__ == '__main__':
    sys.exit(main())
