"""`root make` on a root the cache already holds says it reused it (not only its path), without debootstrap."""

import json
import os
import subprocess
import sys

from tests.support.tools import ROOT
from toolkit.buildroot import ENV_BUILDROOT, make
from toolkit.recipe import packageset


def test_root_make_on_a_made_root_says_reused(tmp_path):
    spec_file = tmp_path / "tiny.toml"
    spec_file.write_text('[root]\nsuite = "sid"\n[packages]\ntiny = ["hello"]\n')
    cache = tmp_path / "cache"
    root = make.root_path(packageset.load(str(spec_file)), cache)
    (root / "usr").mkdir(parents=True)
    (root / make.INFO).parent.mkdir(parents=True)
    (root / make.INFO).write_text(json.dumps({"made": "2026-11-25T10:00:00Z"}))
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop(ENV_BUILDROOT, None)
    proc = subprocess.run([sys.executable, "-m", "toolkit", "root", "make", str(spec_file)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(root)
    assert f"root: tiny: reused (made 2026-11-25T10:00:00Z): {root}" in proc.stderr
