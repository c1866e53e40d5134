"""Running `publish` as a user does, on the real recipe's release layout, and reading what it said and what the
index then lists (tests/release/test_publish.py, tests/release/test_index_rules.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.package_index import simple_page
from tests.support.tools import ROOT
from toolkit.recipe.wheel import WheelSettings
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml

USER, PASSWORD = "releaser", "pw-Zq7/x+y@1"
RECIPE = ROOT / "recipes" / "umbrella-ep-real.toml"
SETTINGS = read(WheelSettings, load_toml(RECIPE).table("wheel"))
META = SETTINGS.distribution                                    # onnxruntime-ep-amdgpu
VARIANTS = [f"{META}-{variant}" for variant, _ in SETTINGS.rocm_variants]


def run_publish(dist: Path, url: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TWINE_")}
    # keyring stays out of the way: credentials come only from what the test gives
    clean.update({"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", "PYTHONPATH": str(ROOT)}, **(env or {}))
    return subprocess.run([sys.executable, "-m", "toolkit", "publish", str(dist), "--repository-url", url, *args],
                          cwd=ROOT, capture_output=True, text=True, env=clean, timeout=300)


def index_files(base: str) -> list[str]:
    """The wheels the index lists on its /simple/ pages of the meta-package and the variants."""
    pages = "".join(simple_page(base, name) for name in [META, *VARIANTS])
    return sorted(set(re.findall(r">([^<>]+\.whl)<", pages)))


def error_line(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """The one `error:` line of a failed publish (exit 2, no traceback) with its hint: each needle is in them."""
    lines = proc.stderr.splitlines()
    errors = [n for n, line in enumerate(lines) if line.startswith("error:")]
    assert proc.returncode == 2 and len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    said = "\n".join(lines[errors[0]:errors[0] + 2])
    for needle in needles:
        assert needle in said, (needle, said)
    return said
