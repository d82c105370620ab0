"""The compute host's side: its manager (the RPC doorway), the volume and
shelve steps it runs, the virt driver interface, its settling after a
restart and its service. Only the host imports it (an import contract in
``setup.cfg``)."""
