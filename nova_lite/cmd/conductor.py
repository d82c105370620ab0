"""nova-lite-conductor: runs the attach, build and unshelve workflows."""

import sys

from nova_lite.cmd import worker
from nova_lite.conductor import service


def main(argv=None):
    return worker.run(service.create, argv)


if __name__ == '__main__':
    sys.exit(main())
