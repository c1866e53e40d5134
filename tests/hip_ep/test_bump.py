"""`bump` follows ROCm/hip-ep upstream as it does the umbrella: a revision of the mirror's bare repository (one a copy
left without its refs/ folder, read through the toolkit's shadow), the series judged on it, a real configure in the
ROCm 7 root surveyed, and the report of it. 20 commits before the pin, everything still applies and matches."""

from __future__ import annotations

import subprocess
import sys

from tests.support.real_umbrella_support import MIRROR
from tests.support.tools import ROOT


def test_bump_reports_an_earlier_commit_of_the_mirror_with_the_umbrellas_report(hipep, tmp_path):
    report = tmp_path / "bump.md"
    proc = subprocess.run([sys.executable, "-m", "toolkit", "bump", "--recipe", "hip-ep", "--to", "main~20", "--check",
                           "--root", "debian-sid-rocm7", "--mirror", MIRROR.as_uri(), "--offline", "--report",
                           str(report)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    text = report.read_text()
    assert "# bump hip-ep: 6f3347267aa7 -> 7d4133f4b1ac" in text
    assert "- verdict: **automatic**: nothing needs a person" in text
    for patch in ("0001-link-llvm-statically.patch", "0002-protobuf-without-cmake-config.patch",
                  "0003-proto-path-of-installed-protobuf.patch"):
        assert f"| {patch} | keep | applies cleanly |" in text
    assert "Unchanged: 5 of 5 requests." in text
    assert "- the tree installs: `libhip-compiler.so`, `libhipgpu.so`" in text
    # --check writes nothing.
    assert "6f3347267aa7bb3a3373485df2e42ebe2d306640" in (ROOT / "recipes" / "hip-ep.toml").read_text()
