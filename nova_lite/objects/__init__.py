"""Versioned objects. ``register_all()`` imports every object module so the
registry (and ``nova_lite.objects.<Name>``) is complete."""


def register_all():
    __import__('nova_lite.objects.service')
    __import__('nova_lite.objects.block_device')
    __import__('nova_lite.objects.instance')
    __import__('nova_lite.objects.instance_action')
    __import__('nova_lite.objects.instance_fault')
