"""A release never ships a test build: hip-ep's default runtime is the mock ([wheel] test_only), so its release is
refused before anything runs, the dry run included, naming the entry and the feature."""

from __future__ import annotations

import subprocess
import sys

from tests.support.tools import ROOT


def test_release_of_a_test_build_is_refused_by_its_dry_run(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "toolkit", "release", "--recipe", "hip-ep", "--dry-run",
                           "--build-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "a release never ships a test build ([wheel] test_only): entry base has mock on (the mock runtime" \
        in proc.stderr
    assert "Traceback" not in proc.stderr and not any(tmp_path.iterdir())
