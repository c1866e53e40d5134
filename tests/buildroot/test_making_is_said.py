"""Issue 35, item 11: a build root is never made silently. Making one says so first (where, what it runs, roughly
how long and large); compile-check's dry run says whether the root is there or would be made."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.tools import ROOT
from toolkit.buildroot import ENV_BUILDROOT, make
from toolkit.recipe import packageset


def _toolkit(*args: str, cache, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "TOOLKIT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), **env}
    full.pop(ENV_BUILDROOT, None)
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=120)


def test_making_a_root_says_so_before_it_starts_with_what_the_last_one_took(tmp_path):
    """The Debian mirror is refused right after the line (nothing is made here), which shows the line comes
    first. An earlier root's record in the cache gives the estimate."""
    spec_file = tmp_path / "tiny.toml"
    spec_file.write_text('[root]\nsuite = "sid"\n[packages]\ntiny = ["hello", "make"]\n')
    cache = tmp_path / "cache"
    earlier = cache / "roots" / "other-0123456789abcdef"
    (earlier / make.INFO).parent.mkdir(parents=True)
    (earlier / make.INFO).write_text(json.dumps({"name": "other", "made": "2026-11-25T10:00:00Z",
                                                 "seconds": {"debootstrap": 20.4, "apt": 80.0},
                                                 "bytes": 5 * 1024**3}))
    root = make.root_path(packageset.load(str(spec_file)), cache)
    proc = _toolkit("root", "make", str(spec_file), cache=cache, TOOLKIT_DEBIAN_MIRROR="not-a-url")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0] == (f"[toolkit] root: tiny: not in the toolkit cache; making it now at {root} (debootstrap, then "
                        "apt-get install of 2 packages from a Debian mirror: the last root made here (other) took "
                        "100 s and 5.0 GiB, once)")
    assert lines[1].startswith("error: env TOOLKIT_DEBIAN_MIRROR=not-a-url: expected the Debian archive's base URL")
    assert not root.exists()


def test_compile_check_dry_run_says_whether_the_root_is_missing_and_would_be_made(tmp_path):
    cache = tmp_path / "cache"
    args = ("compile-check", "--dry-run", "--recipe", "onnxruntime-rocm-ep", "--engine", "both",
            "--build-dir", str(tmp_path / "b"))
    root = make.root_path(packageset.load("debian-sid-rocm"), cache)
    missing = _toolkit(*args, cache=cache, PATH="/usr/bin:/bin")
    assert missing.returncode == 0, missing.stderr
    said = [line for line in missing.stdout.splitlines() if "build root debian-sid-rocm" in line]
    n = len(packageset.load("debian-sid-rocm").packages)
    assert said == [f"  compile-check: build root debian-sid-rocm: missing, would be made at {root} (debootstrap, "
                    f"then apt-get install of {n} packages from a Debian mirror: typically several minutes and "
                    "about 5 GiB, once)"] * 2
    assert not cache.exists(), "a dry run made something"
    (root / "usr").mkdir(parents=True)
    ready = _toolkit(*args, cache=cache)
    assert [line for line in ready.stdout.splitlines() if "build root" in line and "compile-check: build" in line] \
        == [f"  compile-check: build root debian-sid-rocm: ready at {root}"] * 2
