"""nova_lite's version, from pbr (git tags or the installed metadata)."""

import pbr.version

version_info = pbr.version.VersionInfo('nova_lite')


def version_string():
    try:
        return version_info.version_string()
    except Exception:
        return 'unknown'
