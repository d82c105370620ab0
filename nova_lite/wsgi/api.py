"""WSGI entry point for uWSGI: ``--module nova_lite.wsgi.api:application``.

Configuration, as OpenStack services take it under uWSGI:

* ``OS_NOVA_LITE_CONFIG_FILE``: a file, or several separated by ``:``;
* or ``--config-file``/``--config-dir`` given through uWSGI's ``pyargv``
  (uWSGI puts them in ``sys.argv``);
* else oslo.config's default locations (``/etc/nova-lite/nova-lite.conf``).
"""

import sys

from nova_lite.api import app as api_app


def _argv():
    # Only uWSGI's sys.argv holds our arguments (pyargv); other WSGI
    # servers (gunicorn, mod_wsgi) leave their own there.
    if 'uwsgi' in sys.modules:
        return sys.argv[1:]
    return []


def init_application():
    """pbr ``wsgi_scripts`` hook."""
    return api_app.init_application(argv=_argv(), clock_tick=True)


application = init_application()
