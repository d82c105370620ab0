"""The real-data tier: the production layout (``tests.integration``'s
deployment: uWSGI, conductor, two compute services, RabbitMQ, a database
server) with ``compute_driver = libvirt`` on this machine's libvirtd and
the ``iscsi`` backend on its tgtd (``file`` beside it), each server a test
guest (``tools/guest/build.py``) whose agent is the judge:
a test passes when the guest read the bytes, or failed to write them.
``base.RealDataTestCase`` is the scaffolding; see its docstring."""
