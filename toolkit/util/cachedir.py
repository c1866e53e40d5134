"""Where the toolkit cache is: $TOOLKIT_CACHE_DIR, else platformdirs' user cache folder for the toolkit.

Every package that keeps files there (downloads, roots, ccache, zig, the compile check's results) asks here;
what lies inside is toolkit/sources/cache.py's concern.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_CACHE_DIR = "TOOLKIT_CACHE_DIR"
APP_NAME = "ort-amdgpu-toolkit"


def default_cache_dir() -> Path:
    override = os.environ.get(ENV_CACHE_DIR)
    if override:
        return Path(override).expanduser().resolve()
    # Imported here: a bare container's Python runs the modules that ask for the cache without platformdirs,
    # with TOOLKIT_CACHE_DIR set.
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))
