"""WSGI entry point for uWSGI: ``--module nova_lite.wsgi.api:application``.

Configuration comes from ``OS_NOVA_LITE_CONFIG_FILE`` (a file, or several
separated by ``:``) or, when unset, oslo.config's default locations
(``/etc/nova-lite/nova-lite.conf``...), as OpenStack services do under uWSGI.
"""

from nova_lite.api import app as api_app

# uWSGI passes its own argv; configuration comes from files only.
application = api_app.init_application(argv=[])


def init_application():
    """pbr ``wsgi_scripts`` hook."""
    return api_app.init_application(argv=[])
