"""nova-lite-conductor: runs the attach, build and unshelve workflows."""

import sys

from nova_lite.cmd import worker
from nova_lite import services


def main(argv=None):
    return worker.run(services.conductor_service, argv)


if __name__ == '__main__':
    sys.exit(main())
